package io.tbmq.broker.protocol;

import io.netty.handler.codec.mqtt.MqttMessage;
import io.netty.handler.codec.mqtt.MqttMessageIdVariableHeader;

/** PUBCOMP (§3.7): a QoS 2 delivery to the client is complete; its packet id is free again. */
final class PubCompHandler {

    void handle(Connection c, MqttMessage message) {
        int packetId = ((MqttMessageIdVariableHeader) message.variableHeader()).messageId();
        c.session().onPubcomp(packetId);
    }
}
