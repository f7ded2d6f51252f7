package io.tbmq.broker.protocol;

import org.jboss.logging.Logger;

import io.netty.handler.codec.mqtt.MqttIdentifierRejectedException;
import io.netty.handler.codec.mqtt.MqttMessage;
import io.netty.handler.codec.mqtt.MqttMessageType;
import io.netty.handler.codec.mqtt.MqttProperties;
import io.netty.handler.codec.mqtt.MqttUnacceptableProtocolVersionException;
import io.netty.handler.codec.mqtt.MqttVersion;
import io.tbmq.broker.codec.InvalidPacket;
import io.tbmq.broker.codec.MqttFrameValidator;
import io.tbmq.broker.codec.ProtocolViolation;
import io.tbmq.broker.util.RateLimitedLog;

/**
 * Ends a connection that broke the protocol, the way the spec asks: CONNACK with a reason code
 * for a bad CONNECT (v5, or 0x01 for an unsupported version), DISCONNECT with a reason code for
 * a v5 client, a plain close for v3 (§4.13). One rate-limited log line each, no stack trace.
 */
final class ProtocolErrors {
    private static final Logger LOG = Logger.getLogger(ProtocolErrors.class);
    private static final RateLimitedLog LINES = new RateLimitedLog(LOG, 10);
    private static final int V3_UNACCEPTABLE_PROTOCOL_VERSION = 0x01;
    private static final int V3_IDENTIFIER_REJECTED = 0x02;

    void handle(Connection c, InvalidPacket invalid) {
        ProtocolViolation v = invalid.violation();
        int code = v.reasonCode();
        c.broker().metrics().protocolViolation(code);
        LINES.info("closing %s: %s", c, v);
        if (invalid.duringConnect() && code == ProtocolViolation.UNSUPPORTED_PROTOCOL_VERSION) {
            // The version is unknown, so answer in the 3.1.1 format every version can read [MQTT-3.1.2-2].
            c.channel().attr(MqttFrameValidator.VERSION).set(MqttVersion.MQTT_3_1_1);
            c.sendAndClose(Packets.connAck(V3_UNACCEPTABLE_PROTOCOL_VERSION, false, MqttProperties.NO_PROPERTIES));
        } else if (invalid.duringConnect() && invalid.version() == MqttVersion.MQTT_5) {
            c.version(MqttVersion.MQTT_5);
            c.sendAndClose(Packets.connAck(code, false, Packets.reasonString(v.getMessage())));
        } else if (invalid.duringConnect()) {
            c.close();
        } else {
            c.disconnect(code, v.getMessage());
        }
    }

    /** A failure inside Netty's decoder on a packet the validator passed: treated as malformed. */
    void decoderFailure(Connection c, MqttMessage message) {
        Throwable cause = message.decoderResult().cause();
        boolean connect = message.fixedHeader() != null && message.fixedHeader().messageType() == MqttMessageType.CONNECT;
        c.broker().metrics().protocolViolation(ProtocolViolation.MALFORMED);
        LINES.info("closing %s: undecodable %s: %s", c, connect ? "CONNECT" : "packet", cause.getMessage());
        if (connect && cause instanceof MqttIdentifierRejectedException) {
            c.sendAndClose(Packets.connAck(c.isV5() ? 0x85 : V3_IDENTIFIER_REJECTED, false, MqttProperties.NO_PROPERTIES));
        } else if (connect && cause instanceof MqttUnacceptableProtocolVersionException) {
            c.sendAndClose(Packets.connAck(V3_UNACCEPTABLE_PROTOCOL_VERSION, false, MqttProperties.NO_PROPERTIES));
        } else if (connect) {
            c.close();
        } else {
            c.disconnect(ProtocolViolation.MALFORMED, "malformed packet");
        }
    }
}
