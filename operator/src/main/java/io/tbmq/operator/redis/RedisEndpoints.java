package io.tbmq.operator.redis;

import io.fabric8.kubernetes.api.model.Pod;

/**
 * Where the operator reaches a Redis pod. In Kubernetes that is the pod IP (CLUSTER MEET wants an
 * address, not a name); the e2e tests put local redis-server processes behind the pods instead.
 */
@FunctionalInterface
public interface RedisEndpoints {

    RedisNode resolve(Pod pod, int ordinal);

    static RedisEndpoints podIp(int port) {
        return (pod, ordinal) -> {
            String ip = pod.getStatus() == null ? null : pod.getStatus().getPodIP();
            if (ip == null || ip.isBlank()) {
                throw new IllegalStateException("pod " + pod.getMetadata().getName() + " has no IP yet");
            }
            return new RedisNode(ordinal, ip, port);
        };
    }
}
