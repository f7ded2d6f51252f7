package io.tbmq.operator.api;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;

import io.fabric8.generator.annotation.Max;
import io.fabric8.generator.annotation.Min;
import io.fabric8.generator.annotation.Pattern;

/** Persistent DEVICE sessions in Redis. */
public class PersistenceSpec {
    public static final String DURATION = "^[0-9]+(ms|s|m|h|d)$";

    @Min(1)
    @Max(65535)
    @JsonPropertyDescription("Messages kept per DEVICE session, oldest trimmed first; at most 65535 (packet ids).")
    private int deviceMessagesLimit = 10000;

    @Pattern(DURATION)
    @JsonPropertyDescription("Lifetime of a stored message without a Message Expiry Interval, e.g. 7d, 12h.")
    private String deviceMessageTtl = "7d";

    public int getDeviceMessagesLimit() {
        return deviceMessagesLimit;
    }

    public void setDeviceMessagesLimit(int deviceMessagesLimit) {
        this.deviceMessagesLimit = deviceMessagesLimit;
    }

    public String getDeviceMessageTtl() {
        return deviceMessageTtl;
    }

    public void setDeviceMessageTtl(String deviceMessageTtl) {
        this.deviceMessageTtl = deviceMessageTtl;
    }
}
