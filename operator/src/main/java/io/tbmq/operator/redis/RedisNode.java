package io.tbmq.operator.redis;

/** Where the operator reaches Redis pod {@code ordinal} (the pod IP in Kubernetes; a local process in the e2e tests). */
public record RedisNode(int ordinal, String host, int port) {

    @Override
    public String toString() {
        return "redis-" + ordinal + " (" + host + ":" + port + ")";
    }
}
