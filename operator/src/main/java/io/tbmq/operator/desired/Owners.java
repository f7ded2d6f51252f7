package io.tbmq.operator.desired;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.tbmq.operator.api.TbmqCluster;

/** Metadata of owned objects: deleting the TbmqCluster lets the garbage collector remove them. */
final class Owners {
    private Owners() {
    }

    static OwnerReference reference(TbmqCluster owner) {
        return new OwnerReferenceBuilder()
                .withApiVersion(HasMetadata.getApiVersion(TbmqCluster.class))
                .withKind(HasMetadata.getKind(TbmqCluster.class))
                .withName(owner.getMetadata().getName())
                .withUid(owner.getMetadata().getUid())
                .withController(true)
                .withBlockOwnerDeletion(true)
                .build();
    }

    static ObjectMetaBuilder meta(TbmqCluster owner, String name, String component) {
        return new ObjectMetaBuilder()
                .withName(name)
                .withNamespace(owner.getMetadata().getNamespace())
                .withLabels(Labels.of(owner.getMetadata().getName(), component))
                .withOwnerReferences(reference(owner));
    }
}
