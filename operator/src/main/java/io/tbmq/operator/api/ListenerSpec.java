package io.tbmq.operator.api;

import io.fabric8.generator.annotation.Max;
import io.fabric8.generator.annotation.Min;
import io.fabric8.generator.annotation.ValidationRule;

/** One listener: on or off, and its port (the same in the pod and on the Service). */
@ValidationRule(value = "!has(self.enabled) || !self.enabled || !has(self.port) || self.port != 8080",
        message = "port 8080 is the broker's HTTP port (health checks and metrics)", fieldPath = ".port")
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
