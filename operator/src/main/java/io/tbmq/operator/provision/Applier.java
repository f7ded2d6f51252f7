package io.tbmq.operator.provision;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;

/**
 * Writes desired objects with server-side apply: the operator owns exactly the fields it sets, so
 * fields set by others (Strimzi's status, defaults filled in by the API server) are left alone.
 */
public final class Applier {
    public static final String FIELD_MANAGER = "tbmq-operator";
    private final KubernetesClient client;
    private final boolean serverSideApply;
    private final WatchedObjects watched;

    public Applier(KubernetesClient client, boolean serverSideApply) {
        this(client, serverSideApply, WatchedObjects.live(client));
    }

    public Applier(KubernetesClient client, boolean serverSideApply, WatchedObjects watched) {
        this.client = client;
        this.serverSideApply = serverSideApply;
        this.watched = watched;
    }

    public <T extends HasMetadata> T apply(T desired) {
        HasMetadata before = desired instanceof StatefulSet ? current(desired) : null;
        desired.getMetadata().setManagedFields(null);
        desired.getMetadata().setResourceVersion(null);
        T after;
        if (!serverSideApply) {
            // A merge patch, like apply, leaves fields it does not name (the status) alone.
            after = client.resource(desired).get() == null ? client.resource(desired).create()
                    : client.resource(desired).patch(PatchContext.of(PatchType.JSON_MERGE));
        } else {
            after = client.resource(desired).fieldManager(FIELD_MANAGER).forceConflicts().serverSideApply();
        }
        if (desired instanceof StatefulSet) {
            watched.written(before, after);
        }
        return after;
    }

    /** What the cluster has under {@code desired}'s name: watched kinds from the informer cache, others by GET. */
    @SuppressWarnings("unchecked")
    public <T extends HasMetadata> T current(T desired) {
        if (desired instanceof StatefulSet) {
            return (T) watched.statefulSet(desired.getMetadata().getNamespace(), desired.getMetadata().getName()).orElse(null);
        }
        return client.resource(desired).get();
    }

    public WatchedObjects watched() {
        return watched;
    }

    public KubernetesClient client() {
        return client;
    }
}
