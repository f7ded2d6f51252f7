package io.tbmq.e2e;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.javaoperatorsdk.operator.Operator;
import io.tbmq.operator.reconciler.TbmqClusterReconciler;
import io.tbmq.operator.redis.RedisEndpoints;

/** The TBMQ operator's reconcilers (TbmqCluster, TbmqUser) run by java-operator-sdk in this JVM, watching one namespace. */
final class InProcessOperator implements AutoCloseable {
    private final Operator operator;

    InProcessOperator(KubernetesClient client, String namespace, RedisEndpoints redis) {
        this(client, java.util.Set.of(namespace), redis, TbmqClusterReconciler.Settings.defaults(true));
    }

    InProcessOperator(KubernetesClient client, java.util.Set<String> namespaces, RedisEndpoints redis,
            TbmqClusterReconciler.Settings settings) {
        operator = new Operator(o -> o.withKubernetesClient(client).withCloseClientOnStop(false));
        operator.register(new TbmqClusterReconciler(redis, settings), c -> c.settingNamespaces(namespaces));
        operator.register(new io.tbmq.operator.reconciler.TbmqUserReconciler(), c -> c.settingNamespaces(namespaces));
        operator.start();
    }

    @Override
    public void close() {
        operator.stop();
    }
}
