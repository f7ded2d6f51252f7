package io.tbmq.broker.protocol;

import java.util.ArrayList;
import java.util.List;

import io.netty.handler.codec.mqtt.MqttProperties;
import io.netty.handler.codec.mqtt.MqttProperties.MqttPropertyType;
import io.netty.handler.codec.mqtt.MqttSubscribeMessage;
import io.netty.handler.codec.mqtt.MqttSubscriptionOption;
import io.netty.handler.codec.mqtt.MqttTopicSubscription;
import io.tbmq.broker.config.MqttConfig;
import io.tbmq.broker.record.OutboundMessage;
import io.tbmq.broker.record.PublishMessage;
import io.tbmq.broker.record.SubscriptionOptions;
import io.tbmq.broker.session.Session;
import io.tbmq.broker.topic.TopicFilter;
import io.tbmq.broker.topic.Topics;

/**
 * SUBSCRIBE (§3.8): one reason code per filter in SUBACK [MQTT-3.8.4-6]. An invalid filter, a
 * filter the ACL does not cover, or one past the subscription limit is refused on its own; the
 * session goes on. Retained messages follow the SUBACK, as the filter's Retain Handling says.
 */
final class SubscribeHandler {
    static final int V3_FAILURE = 0x80;
    static final int UNSPECIFIED_ERROR = 0x80;
    static final int NOT_AUTHORIZED = 0x87;
    static final int TOPIC_FILTER_INVALID = 0x8F;
    static final int QUOTA_EXCEEDED = 0x97;

    void handle(Connection c, MqttSubscribeMessage message) {
        MqttConfig cfg = c.broker().mqtt();
        Session session = c.session();
        int packetId = message.idAndPropertiesVariableHeader().messageId();
        MqttProperties props = message.idAndPropertiesVariableHeader().properties();
        int subscriptionId = c.isV5() ? Props.integer(props, MqttPropertyType.SUBSCRIPTION_IDENTIFIER, 0) : 0;

        List<Integer> codes = new ArrayList<>();
        List<OutboundMessage> retained = new ArrayList<>();
        for (MqttTopicSubscription request : message.payload().topicSubscriptions()) {
            MqttSubscriptionOption option = request.option();
            TopicFilter filter;
            try {
                filter = Topics.parseFilter(request.topicFilter(), cfg.maxTopicLevels());
            } catch (IllegalArgumentException e) {
                codes.add(c.isV5() ? TOPIC_FILTER_INVALID : V3_FAILURE);
                continue;
            }
            if (filter.isShared() && option.isNoLocal()) {
                c.disconnect(0x82, "No Local on a shared subscription [MQTT-3.8.3-4]");
                return;
            }
            if (!c.identity().acl().canSubscribe(filter)) {
                codes.add(c.isV5() ? NOT_AUTHORIZED : V3_FAILURE);
                continue;
            }
            boolean known = session.subscriptions().containsKey(filter.key());
            if (!known && session.subscriptions().size() >= cfg.maxSubscriptionsPerClient()) {
                codes.add(c.isV5() ? QUOTA_EXCEEDED : V3_FAILURE);
                continue;
            }
            int qos = option.qos().value();
            SubscriptionOptions options = new SubscriptionOptions(qos, option.isNoLocal(), option.isRetainAsPublished(),
                    option.retainHandling().value(), subscriptionId);
            boolean existed = c.broker().trie().subscribe(c.clientId(), filter, options);
            session.subscriptions().put(filter.key(), new Session.SubscriptionEntry(filter, options));
            codes.add(qos);
            int handling = options.retainHandling();
            // Retained messages are not sent for shared subscriptions (§4.8.2).
            if (!filter.isShared() && (handling == 0 || handling == 1 && !existed)) {
                int[] ids = subscriptionId == 0 ? new int[0] : new int[] {subscriptionId};
                for (PublishMessage m : c.broker().retained().match(filter)) {
                    // Sent because of a new subscription: RETAIN stays set [MQTT-3.3.1-9].
                    retained.add(new OutboundMessage(m, Math.min(qos, m.qos()), true, ids));
                }
            }
        }
        // Every node mirrors the subscription from this record (tbmq.client.session).
        c.broker().sessions().journal().saved(session, 0);
        c.writeAndFlush(Packets.subAck(packetId, codes, MqttProperties.NO_PROPERTIES));
        for (OutboundMessage m : retained) {
            session.offer(m);
        }
    }
}
