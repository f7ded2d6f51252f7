package io.tbmq.broker.protocol;

import java.util.HashMap;
import java.util.Map;

import io.netty.handler.codec.mqtt.MqttProperties;
import io.netty.handler.codec.mqtt.MqttProperties.MqttPropertyType;

/**
 * Topic Aliases the server uses towards one v5 client, up to the client's Topic Alias Maximum
 * (§3.3.2.3.4): the first PUBLISH on a topic carries topic and alias, later ones only the alias.
 * When all aliases are taken they are reassigned round-robin; each reassignment sends the topic
 * again, so the client's mapping is always current. Event loop only.
 */
final class OutboundTopicAliases {
    private final Map<String, Integer> byTopic = new HashMap<>();
    private final String[] byAlias;
    private int next;

    OutboundTopicAliases(int maximum) {
        this.byAlias = new String[maximum];
    }

    /** Whether {@code topic} has an alias already, so that {@link #apply} sends it without the topic name. */
    boolean knows(String topic) {
        return byTopic.containsKey(topic);
    }

    /** Adds the Topic Alias property and returns the topic name to put in the packet ("" if aliased). */
    String apply(String topic, MqttProperties props) {
        Integer alias = byTopic.get(topic);
        if (alias != null) {
            props.add(new MqttProperties.IntegerProperty(MqttPropertyType.TOPIC_ALIAS.value(), alias));
            return "";
        }
        int slot = next;
        next = (next + 1) % byAlias.length;
        if (byAlias[slot] != null) {
            byTopic.remove(byAlias[slot]);
        }
        byAlias[slot] = topic;
        byTopic.put(topic, slot + 1);
        props.add(new MqttProperties.IntegerProperty(MqttPropertyType.TOPIC_ALIAS.value(), slot + 1));
        return topic;
    }
}
