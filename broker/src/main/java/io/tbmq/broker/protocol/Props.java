package io.tbmq.broker.protocol;

import java.util.ArrayList;
import java.util.List;

import io.netty.handler.codec.mqtt.MqttProperties;
import io.netty.handler.codec.mqtt.MqttProperties.MqttPropertyType;
import io.tbmq.broker.record.UserProperty;

/** Typed reads of decoded MQTT 5 properties; absent means the given default. */
final class Props {
    private Props() {
    }

    /** Whether any property at all is present (Netty's isEmpty ignores User Properties). */
    static boolean any(MqttProperties props) {
        return !props.isEmpty() || !props.getProperties(MqttPropertyType.USER_PROPERTY.value()).isEmpty();
    }

    /** An integer property as an unsigned value (Four Byte Integers may exceed Integer.MAX_VALUE). */
    static long unsigned(MqttProperties props, MqttPropertyType type, long absent) {
        MqttProperties.MqttProperty<?> p = props.getProperty(type.value());
        return p == null ? absent : Integer.toUnsignedLong((Integer) p.value());
    }

    static int integer(MqttProperties props, MqttPropertyType type, int absent) {
        MqttProperties.MqttProperty<?> p = props.getProperty(type.value());
        return p == null ? absent : (Integer) p.value();
    }

    static String string(MqttProperties props, MqttPropertyType type) {
        MqttProperties.MqttProperty<?> p = props.getProperty(type.value());
        return p == null ? null : (String) p.value();
    }

    static byte[] binary(MqttProperties props, MqttPropertyType type) {
        MqttProperties.MqttProperty<?> p = props.getProperty(type.value());
        return p == null ? null : (byte[]) p.value();
    }

    static List<UserProperty> userProperties(MqttProperties props) {
        List<? extends MqttProperties.MqttProperty> all = props.getProperties(MqttPropertyType.USER_PROPERTY.value());
        if (all.isEmpty()) {
            return List.of();
        }
        List<UserProperty> out = new ArrayList<>(all.size());
        for (MqttProperties.MqttProperty<?> p : all) {
            MqttProperties.StringPair pair = (MqttProperties.StringPair) p.value();
            out.add(new UserProperty(pair.key, pair.value));
        }
        return List.copyOf(out);
    }
}
