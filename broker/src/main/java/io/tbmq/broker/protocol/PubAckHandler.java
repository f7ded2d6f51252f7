package io.tbmq.broker.protocol;

import io.netty.handler.codec.mqtt.MqttMessage;
import io.netty.handler.codec.mqtt.MqttMessageIdVariableHeader;

/** PUBACK (§3.4): a QoS 1 delivery to the client is complete; the window admits the next message. */
final class PubAckHandler {

    void handle(Connection c, MqttMessage message) {
        int packetId = ((MqttMessageIdVariableHeader) message.variableHeader()).messageId();
        // An unknown id is ignored: it may be a duplicate ack of a message already completed.
        c.session().onPuback(packetId);
    }
}
