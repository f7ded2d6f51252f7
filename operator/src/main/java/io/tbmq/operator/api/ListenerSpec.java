package io.tbmq.operator.api;

import io.fabric8.generator.annotation.Max;
import io.fabric8.generator.annotation.Min;

/** One listener: on or off, and its port (the same in the pod and on the Service). */
public class ListenerSpec {
    private boolean enabled;

    @Min(1)
    @Max(65535)
    private int port;

    public ListenerSpec() {
    }

    public ListenerSpec(boolean enabled, int port) {
        this.enabled = enabled;
        this.port = port;
    }

    public boolean isEnabled() {
        return enabled;
    }

    public void setEnabled(boolean enabled) {
        this.enabled = enabled;
    }

    public int getPort() {
        return port;
    }

    public void setPort(int port) {
        this.port = port;
    }
}
