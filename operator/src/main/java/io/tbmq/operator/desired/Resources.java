package io.tbmq.operator.desired;

import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.ResourceRequirements;
import io.fabric8.kubernetes.api.model.ResourceRequirementsBuilder;

/** Requests with a memory limit equal to the request (the JVM and Redis size themselves from it). */
final class Resources {
    private Resources() {
    }

    static ResourceRequirements requests(String cpu, String memory) {
        return new ResourceRequirementsBuilder()
                .addToRequests("cpu", new Quantity(cpu))
                .addToRequests("memory", new Quantity(memory))
                .addToLimits("memory", new Quantity(memory))
                .build();
    }
}
