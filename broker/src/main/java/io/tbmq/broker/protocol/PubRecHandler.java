package io.tbmq.broker.protocol;

import io.netty.handler.codec.mqtt.MqttMessage;
import io.netty.handler.codec.mqtt.MqttMessageIdVariableHeader;
import io.netty.handler.codec.mqtt.MqttMessageType;
import io.netty.handler.codec.mqtt.MqttProperties;
import io.netty.handler.codec.mqtt.MqttPubReplyMessageVariableHeader;

/**
 * PUBREC (§3.5): the client has a QoS 2 message; the server answers PUBREL [MQTT-4.3.3-4], or
 * PUBREL 0x92 for an id it does not know (v5). A PUBREC with an error code ends the flow.
 */
final class PubRecHandler {
    static final int PACKET_ID_NOT_FOUND = 0x92;

    void handle(Connection c, MqttMessage message) {
        int packetId = ((MqttMessageIdVariableHeader) message.variableHeader()).messageId();
        int reasonCode = message.variableHeader() instanceof MqttPubReplyMessageVariableHeader reply ? reply.reasonCode() & 0xFF : 0;
        if (c.session().onPubrec(packetId, reasonCode)) {
            c.writeAndFlush(Packets.ack(MqttMessageType.PUBREL, packetId, 0, MqttProperties.NO_PROPERTIES));
        } else if (reasonCode < 0x80) {
            c.writeAndFlush(Packets.ack(MqttMessageType.PUBREL, packetId, c.isV5() ? PACKET_ID_NOT_FOUND : 0,
                    MqttProperties.NO_PROPERTIES));
        }
    }
}
