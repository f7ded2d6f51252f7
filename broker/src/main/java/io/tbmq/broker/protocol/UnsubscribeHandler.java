package io.tbmq.broker.protocol;

import java.util.ArrayList;
import java.util.List;

import io.netty.handler.codec.mqtt.MqttProperties;
import io.netty.handler.codec.mqtt.MqttUnsubscribeMessage;
import io.tbmq.broker.session.Session;
import io.tbmq.broker.topic.TopicFilter;
import io.tbmq.broker.topic.Topics;

/**
 * UNSUBSCRIBE (§3.10): removes each filter that exists; UNSUBACK carries, in v5, 0x00 or 0x11
 * (no subscription existed) per filter [MQTT-3.11.3-1].
 */
final class UnsubscribeHandler {
    static final short SUCCESS = 0x00;
    static final short NO_SUBSCRIPTION_EXISTED = 0x11;
    static final short TOPIC_FILTER_INVALID = 0x8F;

    void handle(Connection c, MqttUnsubscribeMessage message) {
        Session session = c.session();
        int packetId = message.idAndPropertiesVariableHeader().messageId();
        List<Short> codes = new ArrayList<>();
        for (String raw : message.payload().topics()) {
            TopicFilter filter;
            try {
                filter = Topics.parseFilter(raw, c.broker().mqtt().maxTopicLevels());
            } catch (IllegalArgumentException e) {
                codes.add(TOPIC_FILTER_INVALID);
                continue;
            }
            boolean removed = session.subscriptions().remove(filter.key()) != null;
            removed |= c.broker().trie().unsubscribe(c.clientId(), filter);
            codes.add(removed ? SUCCESS : NO_SUBSCRIPTION_EXISTED);
        }
        // Every node mirrors the subscription from this record (tbmq.client.session).
        c.broker().sessions().journal().saved(session, 0);
        c.writeAndFlush(Packets.unsubAck(packetId, codes, MqttProperties.NO_PROPERTIES, c.isV5()));
    }
}
