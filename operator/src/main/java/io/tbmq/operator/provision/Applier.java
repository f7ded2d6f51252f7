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
    private static final org.jboss.logging.Logger LOG = org.jboss.logging.Logger.getLogger(Applier.class);
    private static final io.fabric8.kubernetes.client.utils.KubernetesSerialization CLONES =
            new io.fabric8.kubernetes.client.utils.KubernetesSerialization();
    /**
     * Per StatefulSet, the digest of the last spec whose pods the API server accepted: a reconcile every
     * few seconds writes the same spec again, and need not ask again. Two small entries per TbmqCluster.
     */
    private static final java.util.Map<String, String> CHECKED = new java.util.concurrent.ConcurrentHashMap<>();
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
        if (desired instanceof StatefulSet statefulSet) {
            checkPods(statefulSet);
        }
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

    /**
     * Has the API server check the pods {@code statefulSet} would make, with a dry run of one (nothing
     * without server-side apply: the fast tests' mock server). The API server does not validate a
     * StatefulSet's pod template, only the pods its controller then fails to create; by then the
     * controller (brokers) or the operator (Redis, one pod at a time) has already deleted a running pod
     * to replace it. Only a refusal of the pod itself stops the write ({@link #refusesThePod}); any other
     * answer leaves it to the StatefulSet controller as before.
     */
    public void checkPods(StatefulSet statefulSet) {
        if (!serverSideApply) {
            return;
        }
        String key = statefulSet.getMetadata().getNamespace() + "/" + statefulSet.getMetadata().getName();
        String written = digest(CLONES.asJson(statefulSet.getSpec()));
        if (written.equals(CHECKED.get(key))) {
            return;
        }
        var template = statefulSet.getSpec().getTemplate();
        var spec = CLONES.clone(template.getSpec());
        // The claim templates' volumes: the pod only needs its mounts to name volumes it has.
        for (var claim : statefulSet.getSpec().getVolumeClaimTemplates()) {
            spec.getVolumes().add(new io.fabric8.kubernetes.api.model.VolumeBuilder().withName(claim.getMetadata().getName())
                    .withNewEmptyDir().endEmptyDir().build());
        }
        String name = statefulSet.getMetadata().getName() + "-check";
        var pod = new io.fabric8.kubernetes.api.model.PodBuilder().withNewMetadata()
                .withName(name).withNamespace(statefulSet.getMetadata().getNamespace())
                .withLabels(template.getMetadata() == null ? null : template.getMetadata().getLabels())
                .withAnnotations(template.getMetadata() == null ? null : template.getMetadata().getAnnotations())
                .endMetadata().withSpec(spec).build();
        try {
            client.pods().inNamespace(pod.getMetadata().getNamespace()).resource(pod).dryRun().create();
            CHECKED.put(key, written);
        } catch (io.fabric8.kubernetes.client.KubernetesClientException e) {
            String message = e.getStatus() != null && e.getStatus().getMessage() != null ? e.getStatus().getMessage() : e.getMessage();
            if (refusesThePod(e.getCode(), message, name)) {
                throw new PodsRefused(statefulSet.getMetadata().getName(), message);
            }
            LOG.debugf("the pods of StatefulSet %s not checked (%d): %s", key, e.getCode(), message);
        }
    }

    /**
     * Whether the API server's answer to the dry run refuses the pod itself, as it would refuse the
     * StatefulSet's: its own validation of the pod (422, "Pod ... is invalid"), PodSecurity, or a
     * LimitRange. Not a quota (a pod replaced takes the place of the one it replaces, this one would
     * come on top), nor an admission policy or webhook, which may look at how the pod was made (a
     * StatefulSet's pods by its controller, this one by the operator, with no owner).
     */
    static boolean refusesThePod(int code, String message, String pod) {
        if (message == null) {
            return false;
        }
        if (code == 422) {
            return message.startsWith("Pod \"" + pod + "\" is invalid");
        }
        String forbidden = "pods \"" + pod + "\" is forbidden: ";
        if (code != 403 || !message.startsWith(forbidden)) {
            return false;
        }
        // Theirs, not a webhook's or a policy's that borrows their words: right after the prefix (LimitRanger lists several in brackets).
        String why = message.substring(forbidden.length());
        why = why.startsWith("[") ? why.substring(1) : why;
        return why.startsWith("violates PodSecurity") || LIMIT_RANGE.matcher(why).lookingAt();
    }

    /** The LimitRanger admission plugin's refusals. */
    private static final java.util.regex.Pattern LIMIT_RANGE = java.util.regex.Pattern.compile(
            "(minimum|maximum) \\S+ usage per (Container|Pod) is|\\S+ max limit to request ratio per (Container|Pod) is");

    private static String digest(String text) {
        try {
            return java.util.HexFormat.of().formatHex(java.security.MessageDigest.getInstance("SHA-256")
                    .digest(text.getBytes(java.nio.charset.StandardCharsets.UTF_8)));
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The API server would refuse the pods of a StatefulSet: it is left as it is. */
    public static final class PodsRefused extends RuntimeException {
        PodsRefused(String statefulSet, String why) {
            super("the API server refuses the pods of StatefulSet " + statefulSet + ", so it is left as it is: " + why);
        }
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
