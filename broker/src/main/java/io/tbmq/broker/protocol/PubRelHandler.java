package io.tbmq.broker.protocol;

import io.netty.handler.codec.mqtt.MqttMessage;
import io.netty.handler.codec.mqtt.MqttMessageIdVariableHeader;
import io.netty.handler.codec.mqtt.MqttMessageType;
import io.netty.handler.codec.mqtt.MqttProperties;

/**
 * PUBREL (§3.6): releases a QoS 2 packet id received earlier; always answered with PUBCOMP
 * [MQTT-4.3.3-11], carrying 0x92 (v5) when the id was not known.
 */
final class PubRelHandler {

    void handle(Connection c, MqttMessage message) {
        int packetId = ((MqttMessageIdVariableHeader) message.variableHeader()).messageId();
        boolean known = c.session().release(packetId);
        if (known) {
            c.inboundReleased();
        }
        c.writeAndFlush(Packets.ack(MqttMessageType.PUBCOMP, packetId,
                known || !c.isV5() ? 0 : PubRecHandler.PACKET_ID_NOT_FOUND, MqttProperties.NO_PROPERTIES));
    }
}
