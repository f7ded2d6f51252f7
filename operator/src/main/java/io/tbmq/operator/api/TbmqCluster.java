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
    /**
     * Annotation naming managed components (kafka, redis; comma-separated) the spec no longer uses
     * (mode EXTERNAL) that the operator may delete. Without it they are kept, with a condition.
     */
    public static final String DELETE_UNUSED = "tbmq.io/delete-unused";

    /** The user asked, by annotation, to delete the unused managed {@code component}. */
    public boolean deleteUnused(String component) {
        String value = getMetadata().getAnnotations() == null ? null : getMetadata().getAnnotations().get(DELETE_UNUSED);
        return value != null && java.util.Arrays.stream(value.split(",")).map(String::trim).anyMatch(component::equals);
    }

    @Override
    protected TbmqClusterStatus initStatus() {
        return new TbmqClusterStatus();
    }
}
