package io.tbmq.broker.protocol;

import java.nio.charset.StandardCharsets;

import io.netty.handler.codec.mqtt.MqttProperties;
import io.netty.handler.codec.mqtt.MqttProperties.MqttPropertyType;
import io.tbmq.broker.record.MessageProperties;
import io.tbmq.broker.record.PublishMessage;
import io.tbmq.broker.record.UserProperty;

/**
 * The MQTT 5 properties of an outgoing PUBLISH: what the publisher sent, passed through
 * [MQTT-3.3.2-15..20], the remaining Message Expiry Interval [MQTT-3.3.2-6] and the
 * Subscription Identifiers of this subscriber [MQTT-3.3.4-3]. Also the packet's encoded size,
 * to honour the client's Maximum Packet Size.
 */
final class OutboundProperties {
    private OutboundProperties() {
    }

    static MqttProperties of(PublishMessage m, int[] subscriptionIds, long nowMillis) {
        MessageProperties p = m.properties();
        long expiry = m.remainingExpirySeconds(nowMillis);
        if (p.isEmpty() && expiry < 0 && subscriptionIds.length == 0) {
            return MqttProperties.NO_PROPERTIES;
        }
        MqttProperties props = new MqttProperties();
        if (p.payloadFormatIndicator() >= 0) {
            props.add(new MqttProperties.IntegerProperty(MqttPropertyType.PAYLOAD_FORMAT_INDICATOR.value(), p.payloadFormatIndicator()));
        }
        if (expiry >= 0) {
            props.add(new MqttProperties.IntegerProperty(MqttPropertyType.PUBLICATION_EXPIRY_INTERVAL.value(), (int) expiry));
        }
        if (p.contentType() != null) {
            props.add(new MqttProperties.StringProperty(MqttPropertyType.CONTENT_TYPE.value(), p.contentType()));
        }
        if (p.responseTopic() != null) {
            props.add(new MqttProperties.StringProperty(MqttPropertyType.RESPONSE_TOPIC.value(), p.responseTopic()));
        }
        if (p.correlationData() != null) {
            props.add(new MqttProperties.BinaryProperty(MqttPropertyType.CORRELATION_DATA.value(), p.correlationData()));
        }
        for (UserProperty u : p.userProperties()) {
            props.add(new MqttProperties.UserProperty(u.name(), u.value()));
        }
        for (int id : subscriptionIds) {
            props.add(new MqttProperties.IntegerProperty(MqttPropertyType.SUBSCRIPTION_IDENTIFIER.value(), id));
        }
        return props;
    }

    /** Bytes the PUBLISH will take on the wire, fixed header included. */
    static long publishSize(String topic, PublishMessage m, int qos, MqttProperties props) {
        return publishSize(topic, m, qos, props, 0);
    }

    /** The same, with {@code extraProperties} bytes of properties not in {@code props} yet (a Topic Alias: 3). */
    static long publishSize(String topic, PublishMessage m, int qos, MqttProperties props, int extraProperties) {
        long remaining = 2 + utf8Length(topic) + (qos > 0 ? 2 : 0) + m.payload().length;
        long propsLength = (props == MqttProperties.NO_PROPERTIES ? 0 : propertiesLength(m, props)) + extraProperties;
        remaining += varIntSize(propsLength) + propsLength;
        return 1 + varIntSize(remaining) + remaining;
    }

    private static long propertiesLength(PublishMessage m, MqttProperties props) {
        MessageProperties p = m.properties();
        long length = 0;
        for (MqttProperties.MqttProperty<?> property : props.listAll()) {
            int id = property.propertyId();
            if (id == MqttPropertyType.PAYLOAD_FORMAT_INDICATOR.value()) {
                length += 2;
            } else if (id == MqttPropertyType.PUBLICATION_EXPIRY_INTERVAL.value()) {
                length += 5;
            } else if (id == MqttPropertyType.SUBSCRIPTION_IDENTIFIER.value()) {
                length += 1 + varIntSize((Integer) property.value());
            }
        }
        length += stringSize(p.contentType()) + stringSize(p.responseTopic());
        if (p.correlationData() != null) {
            length += 3 + p.correlationData().length;
        }
        for (UserProperty u : p.userProperties()) {
            length += 1 + 2 + utf8Length(u.name()) + 2 + utf8Length(u.value());
        }
        return length;
    }

    /** Identifier byte, two length bytes and the UTF-8 bytes; 0 for an absent property. */
    private static long stringSize(String s) {
        return s == null ? 0 : 3 + utf8Length(s);
    }

    static int utf8Length(String s) {
        return s.getBytes(StandardCharsets.UTF_8).length;
    }

    static int varIntSize(long value) {
        return value < 128 ? 1 : value < 16_384 ? 2 : value < 2_097_152 ? 3 : 4;
    }
}
