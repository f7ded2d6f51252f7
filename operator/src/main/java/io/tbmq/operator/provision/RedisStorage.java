package io.tbmq.operator.provision;

import java.util.Map;

import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.api.model.storage.StorageClass;
import io.fabric8.kubernetes.api.model.DeletionPropagation;
import io.tbmq.operator.api.TbmqCluster;
import io.tbmq.operator.desired.Names;
import io.tbmq.operator.desired.RedisModel;

/**
 * A larger {@code spec.redis.storage.size} on running Redis pods. A StatefulSet's volume templates
 * cannot change, so applying the new size would fail on every reconcile and block everything
 * behind it. Where the StorageClass allows expansion, each volume is expanded and the StatefulSet
 * re-created around its running pods (deleted with its pods orphaned); where it does not, the
 * volumes keep their size and a condition says why. The CRD refuses smaller sizes and other classes.
 */
public final class RedisStorage {
    public static final String NOT_EXPANDED = "RedisStorageNotExpanded";
    static final String DEFAULT_CLASS = "storageclass.kubernetes.io/is-default-class";

    record Decision(String volumeSize, ComponentStatus.Notice notice) {
    }

    private final Applier applier;
    private final EventRecorder events;

    RedisStorage(Applier applier, EventRecorder events) {
        this.applier = applier;
        this.events = events;
    }

    Decision decide(TbmqCluster owner, Names names, StatefulSet existing) {
        String wanted = RedisModel.storage(owner).getSize();
        String current = volumeSize(existing);
        if (current == null || compare(wanted, current) == 0) {
            return new Decision(wanted, null);
        }
        if (compare(wanted, current) < 0) {
            return new Decision(current, new ComponentStatus.Notice(NOT_EXPANDED, "ShrinkRefused", "spec.redis.storage.size "
                    + wanted + " is smaller than the volumes' " + current + "; volumes cannot shrink, they stay " + current));
        }
        String className = existing.getSpec().getVolumeClaimTemplates().get(0).getSpec().getStorageClassName();
        StorageClass sc = storageClass(className);
        if (sc == null || !Boolean.TRUE.equals(sc.getAllowVolumeExpansion())) {
            return new Decision(current, new ComponentStatus.Notice(NOT_EXPANDED, "ExpansionNotAllowed", "spec.redis.storage.size "
                    + wanted + ": StorageClass " + (sc == null ? "(none found)" : sc.getMetadata().getName())
                    + " does not allow volume expansion, so the volumes stay " + current
                    + "; everything else in the spec is applied"));
        }
        int replicas = existing.getSpec().getReplicas() == null ? 0 : existing.getSpec().getReplicas();
        for (int i = 0; i < replicas; i++) {
            PersistentVolumeClaim pvc = applier.client().persistentVolumeClaims().inNamespace(names.namespace())
                    .withName("data-" + names.redisPod(i)).get();
            if (pvc != null) {
                applier.client().persistentVolumeClaims().inNamespace(names.namespace()).withName(pvc.getMetadata().getName())
                        .edit(p -> {
                            p.getSpec().getResources().getRequests().put("storage", new Quantity(wanted));
                            return p;
                        });
            }
        }
        // Re-created by the apply that follows, around the running pods.
        applier.client().apps().statefulSets().inNamespace(names.namespace()).withName(names.redis())
                .withPropagationPolicy(DeletionPropagation.ORPHAN).delete();
        events.normal(owner, "RedisStorageExpanded", "Redis volumes " + current + " -> " + wanted + " (StorageClass "
                + sc.getMetadata().getName() + " expands them in place; the pods keep running)");
        return new Decision(wanted, null);
    }

    private StorageClass storageClass(String name) {
        var classes = applier.client().storage().v1().storageClasses();
        if (name != null && !name.isBlank()) {
            return classes.withName(name).get();
        }
        return classes.list().getItems().stream().filter(c -> c.getMetadata().getAnnotations() != null
                && "true".equals(c.getMetadata().getAnnotations().get(DEFAULT_CLASS))).findFirst().orElse(null);
    }

    static String volumeSize(StatefulSet sts) {
        if (sts == null || sts.getSpec().getVolumeClaimTemplates() == null || sts.getSpec().getVolumeClaimTemplates().isEmpty()) {
            return null;
        }
        Map<String, Quantity> requests = sts.getSpec().getVolumeClaimTemplates().get(0).getSpec().getResources().getRequests();
        Quantity q = requests == null ? null : requests.get("storage");
        return q == null ? null : q.toString();
    }

    static int compare(String a, String b) {
        return Quantity.getAmountInBytes(new Quantity(a)).compareTo(Quantity.getAmountInBytes(new Quantity(b)));
    }
}
