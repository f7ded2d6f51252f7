package io.tbmq.operator.api;

import io.fabric8.crd.generator.annotation.AdditionalPrinterColumn;
import io.fabric8.kubernetes.api.model.Namespaced;
import io.fabric8.kubernetes.client.CustomResource;
import io.fabric8.kubernetes.model.annotation.Group;
import io.fabric8.kubernetes.model.annotation.Kind;
import io.fabric8.kubernetes.model.annotation.Plural;
import io.fabric8.kubernetes.model.annotation.ShortNames;
import io.fabric8.kubernetes.model.annotation.Version;

/**
 * A TBMQ deployment: brokers, their Kafka and their Redis Cluster, sized from one declared number,
 * the target throughput in msg/s (in+out).
 */
@Group("tbmq.io")
@Version("v1alpha1")
@Kind("TbmqCluster")
@Plural("tbmqclusters")
@ShortNames("tbmq")
@AdditionalPrinterColumn(name = "Ready", jsonPath = ".status.conditions[?(@.type==\"Ready\")].status", type = AdditionalPrinterColumn.Type.STRING)
@AdditionalPrinterColumn(name = "Age", jsonPath = ".metadata.creationTimestamp", type = AdditionalPrinterColumn.Type.DATE)
public class TbmqCluster extends CustomResource<TbmqClusterSpec, TbmqClusterStatus> implements Namespaced {

    @Override
    protected TbmqClusterStatus initStatus() {
        return new TbmqClusterStatus();
    }
}
