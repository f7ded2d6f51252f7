package io.tbmq.broker.record;

/** An MQTT 5 User Property: a name/value pair passed through unchanged [MQTT-3.3.2-17]. */
public record UserProperty(String name, String value) {
}
