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
     * On every StatefulSet the operator writes: a digest of the pods it makes ({@link #podTemplateDigest}) as
     * last written. The dry run guards a change: a template the StatefulSet already has is not checked again,
     * not every few seconds, and not after a restart either, so a LimitRange or PodSecurity level added later
     * that the running pods break stops no pass that changes nothing.
     */
    public static final String POD_TEMPLATE_DIGEST = "tbmq.io/pod-template-digest";
    private final KubernetesClient client;
    private final boolean serverSideApply;
    private final WatchedObjects watched;
    /**
     * Per StatefulSet and pod template, how many pods this pass found it may make: any number after a dry run,
     * as many as there are when the template was found unchanged (an Applier lives for one reconcile pass).
     */
    private final java.util.Map<String, Integer> passed = new java.util.HashMap<>();
    /** Of those, the ones the API server could not be asked about (see {@link #notChecked()}). */
    private final java.util.Set<String> unanswered = new java.util.HashSet<>();
    /** Per StatefulSet name, why its pods could not be checked in this pass. */
    private final java.util.Map<String, String> notChecked = new java.util.TreeMap<>();
    private final PodCheck podCheck;

    /**
     * How the pods a StatefulSet would make are checked before it is written or one of its pods replaced.
     * Throws {@link PodsRefused} when the API server would refuse them; otherwise returns why they could not be
     * checked, empty when they were.
     */
    @FunctionalInterface
    public interface PodCheck {
        /** @param addsPods whether the write makes pods that replace none (a new StatefulSet, a scale-up) */
        java.util.Optional<String> check(StatefulSet statefulSet, boolean addsPods);
    }

    public Applier(KubernetesClient client, boolean serverSideApply) {
        this(client, serverSideApply, WatchedObjects.live(client));
    }

    public Applier(KubernetesClient client, boolean serverSideApply, WatchedObjects watched) {
        this(client, serverSideApply, watched, null);
    }

    /**
     * @param podCheck how pods are checked; null for the API server's dry run of one pod, which needs server-side
     *        apply (without it, the fast tests' mock server, nothing is checked)
     */
    public Applier(KubernetesClient client, boolean serverSideApply, WatchedObjects watched, PodCheck podCheck) {
        this.client = client;
        this.serverSideApply = serverSideApply;
        this.watched = watched;
        this.podCheck = podCheck != null ? podCheck : serverSideApply ? this::dryRun : null;
    }

    /**
     * The StatefulSets whose pods this pass wrote, or was about to replace, without the API server's check, and
     * why (a webhook that cannot take a dry run, a ResourceQuota that new pods would exceed, a role without
     * {@code create pods}). They are written {@link #UNCHECKED}, so every pass asks again.
     */
    public java.util.Map<String, String> notChecked() {
        return java.util.Collections.unmodifiableMap(notChecked);
    }

    public <T extends HasMetadata> T apply(T desired) {
        return write(desired, true);
    }

    /**
     * Writes a StatefulSet whatever the API server says of its pods, marked {@link #UNCHECKED} so that every
     * pass checks it again: for pods left running without one (Redis, an operator stopped mid-expansion), an
     * owner is better than none. Their update strategy is OnDelete, so writing it replaces none of them; it is
     * to be written with as many pods as run, so that it makes none either.
     */
    public StatefulSet adopt(StatefulSet statefulSet) {
        statefulSet.getMetadata().setAnnotations(new java.util.LinkedHashMap<>(statefulSet.getMetadata().getAnnotations() == null
                ? java.util.Map.of() : statefulSet.getMetadata().getAnnotations()));
        statefulSet.getMetadata().getAnnotations().put(POD_TEMPLATE_DIGEST, UNCHECKED);
        return write(statefulSet, false);
    }

    /** The digest of a StatefulSet written without a check: its template is checked before anything else is done. */
    static final String UNCHECKED = "unchecked";

    private <T extends HasMetadata> T write(T desired, boolean checked) {
        HasMetadata before = null;
        if (desired instanceof StatefulSet statefulSet) {
            before = current(desired);
            if (checked) {
                boolean answered = checkPods(statefulSet, (StatefulSet) before);
                var annotations = new java.util.LinkedHashMap<String, String>();
                if (desired.getMetadata().getAnnotations() != null) {
                    annotations.putAll(desired.getMetadata().getAnnotations());
                }
                annotations.put(POD_TEMPLATE_DIGEST, answered ? podTemplateDigest(statefulSet) : UNCHECKED);
                desired.getMetadata().setAnnotations(annotations);
            }
        }
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
     * failed answer leaves it to the StatefulSet controller as before, and is reported ({@link #notChecked()}).
     * The check guards a change: not asked
     * when the StatefulSet already makes these pods, nor twice in a pass.
     */
    public void checkPods(StatefulSet statefulSet) {
        checkPods(statefulSet, current(statefulSet));
    }

    /** Whether the pods were checked, now or when the StatefulSet was written: false when the API server could not be asked. */
    private boolean checkPods(StatefulSet statefulSet, StatefulSet current) {
        if (podCheck == null) {
            return true;
        }
        String pass = key(statefulSet) + "@" + podTemplateDigest(statefulSet);
        if (passed.getOrDefault(pass, -1) >= replicas(statefulSet)) {
            return !unanswered.contains(pass);
        }
        // More pods are made from the template as it is: a scale-up is a change the check guards too.
        if (replicas(statefulSet) <= replicas(current) && !makesOtherPods(statefulSet, current)) {
            passed.merge(pass, replicas(current), Math::max);
            return true;
        }
        boolean answered = ask(statefulSet, replicas(statefulSet) > podsMade(current));
        passed.put(pass, Integer.MAX_VALUE);
        if (!answered) {
            unanswered.add(pass);
        }
        return answered;
    }

    private boolean ask(StatefulSet statefulSet, boolean addsPods) {
        java.util.Optional<String> why = podCheck.check(statefulSet, addsPods);
        why.ifPresent(w -> notChecked.put(statefulSet.getMetadata().getName(), w));
        return why.isEmpty();
    }

    /**
     * Before the operator deletes a pod of {@code statefulSet} for its controller to make it again from the
     * current template (Redis, OnDelete): the check, even of a template written before, since a LimitRange or
     * PodSecurity level may have come since. Once per pass.
     */
    public void checkReplacement(StatefulSet statefulSet) {
        if (podCheck == null) {
            return;
        }
        String replacement = key(statefulSet) + "@" + podTemplateDigest(statefulSet) + "@replacement";
        if (!passed.containsKey(replacement)) {
            if (!ask(statefulSet, false)) {
                markUnchecked(statefulSet);
            }
            passed.put(replacement, Integer.MAX_VALUE);
        }
    }

    /** So that the next passes ask again, and report it, until the API server answers (metadata only: no pod rolls). */
    private void markUnchecked(StatefulSet statefulSet) {
        try {
            client.apps().statefulSets().inNamespace(statefulSet.getMetadata().getNamespace()).withName(statefulSet.getMetadata().getName())
                    .patch(PatchContext.of(PatchType.JSON_MERGE),
                            "{\"metadata\":{\"annotations\":{\"" + POD_TEMPLATE_DIGEST + "\":\"" + UNCHECKED + "\"}}}");
        } catch (io.fabric8.kubernetes.client.KubernetesClientException e) {
            LOG.debugf("StatefulSet %s not marked unchecked (%d): %s", key(statefulSet), e.getCode(), e.getMessage());
        }
    }

    /**
     * Whether applying {@code desired} would change the pods {@code current} makes. The digest it was written
     * with answers at once when it matches; otherwise (another template, or one written by an earlier version
     * without a digest, or serialized differently) a dry run of the apply does, by comparing the templates as
     * the API server would store them. A StatefulSet written {@link #UNCHECKED} always counts as a change.
     */
    private boolean makesOtherPods(StatefulSet desired, StatefulSet current) {
        if (current == null) {
            return true;
        }
        String written = current.getMetadata().getAnnotations() == null ? null : current.getMetadata().getAnnotations().get(POD_TEMPLATE_DIGEST);
        if (podTemplateDigest(desired).equals(written)) {
            return false;
        }
        if (UNCHECKED.equals(written) || !serverSideApply) {
            return true;
        }
        StatefulSet copy = CLONES.clone(desired);
        copy.getMetadata().setManagedFields(null);
        copy.getMetadata().setResourceVersion(null);
        try {
            StatefulSet merged = client.resource(copy).dryRun().fieldManager(FIELD_MANAGER).forceConflicts().serverSideApply();
            return !java.util.Objects.equals(merged.getSpec().getTemplate(), current.getSpec().getTemplate())
                    || !claimNames(merged).equals(claimNames(current));
        } catch (io.fabric8.kubernetes.client.KubernetesClientException e) {
            LOG.debugf("StatefulSet %s not compared (%d): %s", key(desired), e.getCode(), e.getMessage());
            return true;
        }
    }

    /** The pods its controller has made (as many as it asks for when it has not said yet): a scale-up a quota stopped has fewer. */
    private static int podsMade(StatefulSet statefulSet) {
        return statefulSet == null || statefulSet.getStatus() == null || statefulSet.getStatus().getReplicas() == null
                ? replicas(statefulSet) : Math.min(replicas(statefulSet), statefulSet.getStatus().getReplicas());
    }

    private static int replicas(StatefulSet statefulSet) {
        return statefulSet == null ? 0 : statefulSet.getSpec().getReplicas() == null ? 1 : statefulSet.getSpec().getReplicas();
    }

    private static java.util.List<String> claimNames(StatefulSet statefulSet) {
        return statefulSet.getSpec().getVolumeClaimTemplates() == null ? java.util.List.of()
                : statefulSet.getSpec().getVolumeClaimTemplates().stream().map(c -> c.getMetadata().getName()).toList();
    }

    private java.util.Optional<String> dryRun(StatefulSet statefulSet, boolean addsPods) {
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
            return java.util.Optional.empty();
        } catch (io.fabric8.kubernetes.client.KubernetesClientException e) {
            String message = e.getStatus() != null && e.getStatus().getMessage() != null ? e.getStatus().getMessage() : e.getMessage();
            if (refusesThePod(e.getCode(), message, name)) {
                throw new PodsRefused(statefulSet.getMetadata().getName(), message);
            }
            if (!addsPods && passedThePodChecks(e.getCode(), message, name)) {
                return java.util.Optional.empty();
            }
            LOG.debugf("the pods of StatefulSet %s not checked (%d): %s", key(statefulSet), e.getCode(), message);
            return java.util.Optional.of("HTTP " + e.getCode() + ": " + message);
        }
    }

    private static String key(StatefulSet statefulSet) {
        return statefulSet.getMetadata().getNamespace() + "/" + statefulSet.getMetadata().getName();
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

    /**
     * Whether the answer comes from a check the API server makes after those of the pod itself: a ResourceQuota, which
     * admission asks last, and which counts the test pod on top of those a rolling replacement swaps one for one. A
     * namespace whose quota fits its pods exactly would otherwise never have them checked. Not for pods that replace
     * none (a new StatefulSet, a scale-up): the quota would refuse those too, so it is reported.
     */
    static boolean passedThePodChecks(int code, String message, String pod) {
        return code == 403 && message != null && message.startsWith("pods \"" + pod + "\" is forbidden: exceeded quota: ");
    }

    /** The LimitRanger admission plugin's refusals. */
    private static final java.util.regex.Pattern LIMIT_RANGE = java.util.regex.Pattern.compile(
            "(minimum|maximum) \\S+ usage per (Container|Pod) is|\\S+ max limit to request ratio per (Container|Pod) is");

    /**
     * What the pods of {@code statefulSet} are made from, as far as the API server's checks of a pod go: its pod
     * template and the names of its volume claims (not their size or class, nor the number of pods).
     */
    static String podTemplateDigest(StatefulSet statefulSet) {
        return digest(CLONES.asJson(statefulSet.getSpec().getTemplate()) + "\n" + String.join(",", claimNames(statefulSet)));
    }

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
        /** The reason of the component's condition, and of Degraded: only an edit (or a change of policy) ends it. */
        public static final String REASON = "PodsRefused";

        private final String why;
        private final java.util.List<ComponentStatus.Notice> notices;

        public PodsRefused(String statefulSet, String why) {
            this("the API server refuses the pods of StatefulSet " + statefulSet + ", so none is made or replaced from this spec: " + why,
                    why, java.util.List.of());
        }

        private PodsRefused(String message, String why, java.util.List<ComponentStatus.Notice> notices) {
            super(message);
            this.why = why;
            this.notices = notices;
        }

        /** The same refusal, with what else the component found before it to report beside it. */
        public PodsRefused with(java.util.List<ComponentStatus.Notice> found) {
            return new PodsRefused(getMessage(), why, java.util.List.copyOf(found));
        }

        /**
         * This refusal of the spec's pods, and beside it {@code running}'s, of a pod the running StatefulSet would
         * replace: both are said, the spec's first, as a spec that passes replaces that template too.
         */
        public PodsRefused alongside(PodsRefused running) {
            // A policy that came later mostly refuses both templates for one reason: said once.
            return new PodsRefused(getMessage() + "; the running StatefulSet's pods are refused too" + (running.why.equals(why)
                    ? ", for the same reason, so its outdated pods are not replaced either"
                    : ", so its outdated pods are not replaced either: " + running.why), why, notices);
        }

        /** This refusal, and that looking after the running pods failed meanwhile (tried again at the next pass). */
        public PodsRefused whileLookingAfter(RuntimeException failed) {
            PodsRefused both = new PodsRefused(getMessage() + "; looking after the running pods failed and is tried again: "
                    + failed.getMessage(), why, notices);
            both.addSuppressed(failed);
            return both;
        }

        public java.util.List<ComponentStatus.Notice> notices() {
            return notices;
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
