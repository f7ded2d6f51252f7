package io.tbmq.e2e;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.javaoperatorsdk.operator.Operator;
import io.tbmq.operator.reconciler.TbmqClusterReconciler;
import io.tbmq.operator.redis.RedisEndpoints;

/** The TBMQ operator's reconciler run by java-operator-sdk in this JVM, watching one namespace. */
final class InProcessOperator implements AutoCloseable {
    private final Operator operator;

    InProcessOperator(KubernetesClient client, String namespace, RedisEndpoints redis) {
        operator = new Operator(o -> o.withKubernetesClient(client).withCloseClientOnStop(false));
        operator.register(new TbmqClusterReconciler(redis, true), c -> c.settingNamespace(namespace));
        operator.start();
    }

    @Override
    public void close() {
        operator.stop();
    }
}
