package io.tbmq.broker.codec;

import io.netty.handler.codec.mqtt.MqttMessageType;
import io.netty.handler.codec.mqtt.MqttVersion;

/**
 * Passed down the pipeline instead of a packet when {@link MqttFrameValidator} refuses input.
 * The validator discards everything after it; the protocol layer answers (CONNACK or DISCONNECT
 * with the reason code, or a plain close for v3) and closes the connection.
 *
 * @param type the packet type, or null when even the fixed header was unreadable
 * @param version the protocol version of the connection (or of the refused CONNECT), null if unknown
 * @param firstPacket whether it was the first packet of the connection
 */
public record InvalidPacket(ProtocolViolation violation, MqttMessageType type, MqttVersion version, boolean firstPacket) {

    /** The connection's own CONNECT was refused: the answer is a CONNACK, not a DISCONNECT. */
    public boolean duringConnect() {
        return firstPacket && type == MqttMessageType.CONNECT;
    }
}
