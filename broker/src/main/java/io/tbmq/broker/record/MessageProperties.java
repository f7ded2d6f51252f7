package io.tbmq.broker.record;

import java.util.List;

/**
 * The MQTT 5 PUBLISH properties the broker forwards unchanged to subscribers: Payload Format
 * Indicator, Content Type, Response Topic, Correlation Data and User Properties. (Message Expiry
 * is kept as an absolute deadline on the message; Topic Alias and Subscription Identifier are
 * per connection.)
 *
 * @param payloadFormatIndicator 0 or 1, or -1 when absent
 */
public record MessageProperties(int payloadFormatIndicator, String contentType, String responseTopic,
        byte[] correlationData, List<UserProperty> userProperties) {

    public static final MessageProperties NONE = new MessageProperties(-1, null, null, null, List.of());

    public boolean isEmpty() {
        return payloadFormatIndicator < 0 && contentType == null && responseTopic == null && correlationData == null
                && userProperties.isEmpty();
    }
}
