package io.tbmq.operator.provision;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;

import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.api.model.storage.StorageClass;
import io.fabric8.kubernetes.api.model.DeletionPropagation;
import io.tbmq.operator.api.TbmqCluster;
import io.tbmq.operator.desired.KafkaModel;
import io.tbmq.operator.desired.Names;
import io.tbmq.operator.desired.RedisModel;

/**
 * A changed {@code spec.redis.storage} on running Redis pods. A StatefulSet's volume templates
 * cannot change, so applying a new size or class would fail on every reconcile and block everything
 * behind it. A larger size, where the StorageClass allows expansion: each volume is expanded and the
 * StatefulSet re-created around its running pods (deleted with its pods orphaned). A smaller size,
 * a class that does not expand, or another class: the volumes stay as they are and a condition
 * names the field, while everything else in the spec is applied.
 */
public final class RedisStorage {
    public static final String NOT_EXPANDED = "RedisStorageNotExpanded";
    public static final String CLASS_KEPT = "RedisStorageClassKept";
    static final String DEFAULT_CLASS = "storageclass.kubernetes.io/is-default-class";

    /** The volumes to write, and why they differ from the spec's (none when they do not). */
    record Decision(RedisModel.Volumes volumes, List<ComponentStatus.Notice> notices) {
    }

    /** How long a re-created StatefulSet waits for the old one to be gone (the garbage collector orphans its pods first). */
    static final long GONE_WAIT_SECONDS = 30;

    private final Applier applier;
    private final EventRecorder events;
    /** A StorageClass by name, or the default one for null; null when there is none. */
    private final java.util.function.Function<String, StorageClass> classes;
    /** A PersistentVolumeClaim of the namespace by name, or null; null: read from the API server. */
    private final java.util.function.Function<String, PersistentVolumeClaim> claims;

    RedisStorage(Applier applier, EventRecorder events) {
        this.applier = applier;
        this.events = events;
        this.classes = this::storageClass;
        this.claims = null;
    }

    /** For tests without an API server. */
    RedisStorage(java.util.function.Function<String, StorageClass> classes,
            java.util.function.Function<String, PersistentVolumeClaim> claims) {
        this.applier = null;
        this.events = null;
        this.classes = classes;
        this.claims = claims;
    }

    private PersistentVolumeClaim claim(Names names, int ordinal) {
        String name = "data-" + names.redisPod(ordinal);
        return claims != null ? claims.apply(name)
                : applier.client().persistentVolumeClaims().inNamespace(names.namespace()).withName(name).get();
    }

    /**
     * @param orphans with no StatefulSet, how many Redis pods run without one: one deleted around its pods to
     *     expand their volumes, and not yet written again (the operator stopped in between)
     * @param replicas how many pods the StatefulSet is to be written with
     */
    Decision decide(TbmqCluster owner, Names names, StatefulSet existing, int orphans, int replicas) {
        RedisModel.Volumes asked = RedisModel.volumes(owner);
        String current = volumeSize(existing);
        String className;
        if (current == null) {
            // A new cluster (whose volumes are still to be made, even where an earlier one of its name left some),
            // or the pods of a StatefulSet deleted to expand their volumes: then their volumes say what it had.
            PersistentVolumeClaim first = orphans > 0 ? claim(names, 0) : null;
            Quantity size = first == null || first.getMetadata().getDeletionTimestamp() != null || first.getSpec().getResources() == null
                    || first.getSpec().getResources().getRequests() == null ? null
                            : first.getSpec().getResources().getRequests().get("storage");
            if (size == null) {
                return new Decision(asked, List.of());
            }
            current = size.toString();
            className = KafkaModel.blankToNull(first.getSpec().getStorageClassName());
        } else {
            className = KafkaModel.blankToNull(existing.getSpec().getVolumeClaimTemplates().get(0).getSpec().getStorageClassName());
        }
        List<ComponentStatus.Notice> notices = new ArrayList<>();
        if (!sameClass(asked.storageClass(), className)) {
            notices.add(new ComponentStatus.Notice(CLASS_KEPT, "StorageClassChangeRefused", "spec.redis.storage.storageClass "
                    + describe(asked.storageClass()) + " is not the volumes' " + describe(className)
                    + "; a StatefulSet's volumes cannot change their StorageClass, so they keep theirs; everything else in the spec"
                    + " is applied"));
        }
        try {
            String size = size(owner, names, existing, replicas, asked.size(), current, className, notices);
            return new Decision(new RedisModel.Volumes(size, className), notices);
        } catch (Applier.PodsRefused e) {
            // The class kept is still worth saying beside the refusal.
            throw e.with(notices);
        }
    }

    /** Whether two volume template classes are the same, no class at all meaning the default one. */
    private boolean sameClass(String a, String b) {
        if (Objects.equals(a, b)) {
            return true;
        }
        StorageClass byDefault = a == null || b == null ? classes.apply(null) : null;
        return byDefault != null && byDefault.getMetadata().getName().equals(a == null ? b : a);
    }

    private static String describe(String storageClass) {
        return storageClass == null ? "(the cluster's default)" : "'" + storageClass + "'";
    }

    /** The size to write: {@code wanted} once the volumes are expanded to it, otherwise {@code current}. */
    private String size(TbmqCluster owner, Names names, StatefulSet existing, int written, String wanted, String current,
            String className, List<ComponentStatus.Notice> notices) {
        if (compare(wanted, current) == 0) {
            return wanted;
        }
        if (existing == null && compare(wanted, current) >= 0) {
            // Expanded (or being expanded) before their StatefulSet was deleted around them: written with that size.
            return compare(wanted, current) == 0 ? wanted : current;
        }
        if (compare(wanted, current) < 0) {
            notices.add(new ComponentStatus.Notice(NOT_EXPANDED, "ShrinkRefused", "spec.redis.storage.size "
                    + wanted + " is smaller than the volumes' " + current + "; volumes cannot shrink, they stay " + current));
            return current;
        }
        StorageClass sc = classes.apply(className);
        if (sc == null || !Boolean.TRUE.equals(sc.getAllowVolumeExpansion())) {
            notices.add(new ComponentStatus.Notice(NOT_EXPANDED, "ExpansionNotAllowed", "spec.redis.storage.size "
                    + wanted + ": StorageClass " + (sc == null ? "(none found)" : sc.getMetadata().getName())
                    + " does not allow volume expansion, so the volumes stay " + current
                    + "; everything else in the spec is applied"));
            return current;
        }
        int replicas = existing.getSpec().getReplicas() == null ? 0 : existing.getSpec().getReplicas();
        // The StatefulSet is deleted below and written again after, and its pods replaced one at a time if the
        // rest of the spec changed too: pods the API server would refuse must be found before any of that.
        applier.checkPods(RedisModel.statefulSet(owner, names, Math.max(replicas, written), new RedisModel.Volumes(current, className)));
        for (int i = 0; i < replicas; i++) {
            PersistentVolumeClaim pvc = claim(names, i);
            if (pvc != null) {
                applier.client().persistentVolumeClaims().inNamespace(names.namespace()).withName(pvc.getMetadata().getName())
                        .edit(p -> {
                            p.getSpec().getResources().getRequests().put("storage", new Quantity(wanted));
                            return p;
                        });
            }
        }
        // Re-created by the apply that follows, around the running pods. Until the garbage collector has orphaned
        // them the old one is still there, and writing the new size to it would be refused.
        var statefulSet = applier.client().apps().statefulSets().inNamespace(names.namespace()).withName(names.redis());
        statefulSet.withPropagationPolicy(DeletionPropagation.ORPHAN).delete();
        statefulSet.waitUntilCondition(java.util.Objects::isNull, GONE_WAIT_SECONDS, java.util.concurrent.TimeUnit.SECONDS);
        events.normal(owner, "RedisStorageExpanded", "Redis volumes " + current + " -> " + wanted + " (StorageClass "
                + sc.getMetadata().getName() + " expands them in place; the pods keep running)");
        return wanted;
    }

    private StorageClass storageClass(String name) {
        var classes = applier.client().storage().v1().storageClasses();
        if (name != null && !name.isBlank()) {
            return classes.withName(name).get();
        }
        return classes.list().getItems().stream().filter(c -> c.getMetadata().getAnnotations() != null
                && "true".equals(c.getMetadata().getAnnotations().get(DEFAULT_CLASS))).findFirst().orElse(null);
    }

    /** The volumes {@code sts} makes, as written. */
    static RedisModel.Volumes running(StatefulSet sts) {
        return new RedisModel.Volumes(volumeSize(sts), sts.getSpec().getVolumeClaimTemplates() == null
                || sts.getSpec().getVolumeClaimTemplates().isEmpty() ? null
                        : KafkaModel.blankToNull(sts.getSpec().getVolumeClaimTemplates().get(0).getSpec().getStorageClassName()));
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
