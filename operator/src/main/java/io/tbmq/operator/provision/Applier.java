package io.tbmq.operator.provision;

import io.fabric8.kubernetes.api.model.HasMetadata;
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

    public Applier(KubernetesClient client, boolean serverSideApply) {
        this.client = client;
        this.serverSideApply = serverSideApply;
    }

    public <T extends HasMetadata> T apply(T desired) {
        desired.getMetadata().setManagedFields(null);
        desired.getMetadata().setResourceVersion(null);
        if (!serverSideApply) {
            // A merge patch, like apply, leaves fields it does not name (the status) alone.
            return client.resource(desired).get() == null ? client.resource(desired).create()
                    : client.resource(desired).patch(PatchContext.of(PatchType.JSON_MERGE));
        }
        return client.resource(desired).fieldManager(FIELD_MANAGER).forceConflicts().serverSideApply();
    }

    public <T extends HasMetadata> T current(T desired) {
        return client.resource(desired).get();
    }

    public KubernetesClient client() {
        return client;
    }
}
