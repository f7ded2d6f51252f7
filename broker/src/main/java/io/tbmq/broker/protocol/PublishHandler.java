package io.tbmq.broker.protocol;

import org.jboss.logging.Logger;

import io.netty.buffer.ByteBufUtil;
import io.netty.handler.codec.mqtt.MqttMessageType;
import io.netty.handler.codec.mqtt.MqttProperties;
import io.netty.handler.codec.mqtt.MqttProperties.MqttPropertyType;
import io.netty.handler.codec.mqtt.MqttPublishMessage;
import io.tbmq.broker.config.MqttConfig;
import io.tbmq.broker.record.MessageProperties;
import io.tbmq.broker.record.PublishMessage;
import io.tbmq.broker.session.Session;
import io.tbmq.broker.topic.Topics;
import io.tbmq.broker.util.Clock;
import io.tbmq.broker.util.RateLimitedLog;

/**
 * PUBLISH from a client (§3.3): resolves the Topic Alias, checks the topic, the receive quota and
 * the ACL, then appends the message to the message log. The PUBACK/PUBREC goes out only when the
 * log (Kafka) acknowledged it, in arrival order; a log failure is a reason code (v5) or a closed
 * connection (v3, which cannot say "failed"), never a silent loss.
 */
final class PublishHandler {
    private static final Logger LOG = Logger.getLogger(PublishHandler.class);
    private static final RateLimitedLog FAILURES = new RateLimitedLog(LOG, 2);
    static final int NOT_AUTHORIZED = 0x87;
    static final int UNSPECIFIED_ERROR = 0x80;
    static final int TOPIC_NAME_INVALID = 0x90;

    void handle(Connection c, MqttPublishMessage message) {
        MqttConfig cfg = c.broker().mqtt();
        int qos = message.fixedHeader().qosLevel().value();
        int packetId = qos > 0 ? message.variableHeader().packetId() : 0;
        String topic = message.variableHeader().topicName();
        MqttProperties props = message.variableHeader().properties();

        if (c.isV5()) {
            int alias = Props.integer(props, MqttPropertyType.TOPIC_ALIAS, -1);
            if (alias != -1) {
                if (alias == 0 || alias > cfg.topicAliasMaximum()) {
                    c.disconnect(0x94, "Topic Alias " + alias + " outside 1.." + cfg.topicAliasMaximum());
                    return;
                }
                if (topic.isEmpty()) {
                    topic = c.alias(alias);
                    if (topic == null) {
                        c.disconnect(0x82, "Topic Alias " + alias + " was never set");
                        return;
                    }
                } else if (Topics.invalidTopicName(topic, cfg.maxTopicLevels()) == null) {
                    c.alias(alias, topic);
                }
            }
        }
        // Wildcards and a missing topic were refused by the frame validator; what is left is a limit.
        String invalid = Topics.invalidTopicName(topic, cfg.maxTopicLevels());
        if (invalid != null) {
            refuse(c, qos, packetId, TOPIC_NAME_INVALID, "topic-invalid", invalid);
            return;
        }
        Session session = c.session();
        if (qos > 0 && c.isV5() && c.inboundInflight() >= cfg.receiveMaximum()) {
            c.disconnect(0x93, "more than " + cfg.receiveMaximum() + " unacknowledged QoS 1/2 PUBLISHes");
            return;
        }
        if (qos == 2 && session.isAwaitingPubrel(packetId)) {
            // A re-sent QoS 2 PUBLISH we already accepted: acknowledge, do not route twice [MQTT-4.3.3-10].
            c.writeAndFlush(Packets.ack(MqttMessageType.PUBREC, packetId, 0,
                    MqttProperties.NO_PROPERTIES));
            return;
        }
        if (!c.mayPublish(topic)) {
            refuse(c, qos, packetId, NOT_AUTHORIZED, "not-authorized", "not authorized to publish to " + topic);
            return;
        }
        if (qos > 0 && c.broker().stores().storeDown()) {
            // Refused visibly rather than accepted into a pipeline that cannot reach its store.
            if (c.isV5()) {
                refuse(c, qos, packetId, UNSPECIFIED_ERROR, "store-down", "persistent session store unavailable");
            } else {
                c.broker().metrics().publishRefused("store-down");
                c.close();
            }
            return;
        }
        String responseTopic = c.isV5() ? Props.string(props, MqttPropertyType.RESPONSE_TOPIC) : null;
        if (responseTopic != null && (responseTopic.indexOf('+') >= 0 || responseTopic.indexOf('#') >= 0)) {
            c.disconnect(0x82, "Response Topic contains wildcards [MQTT-3.3.2-14]");
            return;
        }

        PublishMessage routed = toMessage(c, message, topic, qos, props, responseTopic);
        c.broker().metrics().messageIn(qos, routed.payload().length);
        InboundAcks.Slot slot = null;
        if (qos > 0) {
            slot = c.acks().reserve(packetId, qos);
            c.inboundReceived();
        }
        InboundAcks.Slot reserved = slot;
        c.broker().publisher().publish(routed).whenComplete((ok, error) -> c.channel().eventLoop().execute(() -> {
            if (error != null) {
                c.broker().metrics().publishFailed();
                FAILURES.info("publish of %s to %s failed: %s", c.clientId(), routed.topic(), error.getMessage());
                if (qos > 0) {
                    if (c.isV5()) {
                        c.acks().complete(reserved, UNSPECIFIED_ERROR, "message log unavailable");
                    } else {
                        // v3 has no negative PUBACK: closing makes the client publish again after reconnecting.
                        c.close();
                    }
                }
                return;
            }
            if (qos == 2) {
                session.receiveQos2(packetId);
            }
            if (qos > 0) {
                c.acks().complete(reserved, 0, null);
            }
        }));
    }

    /** Not routed; QoS 1/2 still get their ack, in order, with the reason code (v5). */
    private static void refuse(Connection c, int qos, int packetId, int reasonCode, String metric, String reason) {
        LOG.debugf("PUBLISH refused (%s): %s", c, reason);
        c.broker().metrics().publishRefused(metric);
        if (qos == 0) {
            return;
        }
        InboundAcks.Slot slot = c.acks().reserve(packetId, qos);
        c.inboundReceived();
        if (qos == 2 && !c.isV5()) {
            // v3 cannot refuse: the flow completes normally so the client's PUBREL finds its id.
            c.session().receiveQos2(packetId);
        }
        c.acks().complete(slot, c.isV5() ? reasonCode : 0, reason);
    }

    private static PublishMessage toMessage(Connection c, MqttPublishMessage message, String topic, int qos,
            MqttProperties props, String responseTopic) {
        byte[] payload = ByteBufUtil.getBytes(message.payload());
        long now = System.currentTimeMillis();
        MessageProperties properties = MessageProperties.NONE;
        long expiresAt = 0;
        if (c.isV5() && Props.any(props)) {
            long expiry = Props.unsigned(props, MqttPropertyType.PUBLICATION_EXPIRY_INTERVAL, -1);
            expiresAt = expiry < 0 ? 0 : now + expiry * 1000;
            properties = new MessageProperties(Props.integer(props, MqttPropertyType.PAYLOAD_FORMAT_INDICATOR, -1),
                    Props.string(props, MqttPropertyType.CONTENT_TYPE), responseTopic,
                    Props.binary(props, MqttPropertyType.CORRELATION_DATA), Props.userProperties(props));
        }
        return new PublishMessage(topic, qos, message.fixedHeader().isRetain(), payload, properties, c.clientId(),
                Clock.nowMicros(), expiresAt);
    }
}
