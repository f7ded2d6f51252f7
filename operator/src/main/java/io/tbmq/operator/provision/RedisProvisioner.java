package io.tbmq.operator.provision;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import org.jboss.logging.Logger;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.tbmq.operator.api.Fsync;
import io.tbmq.operator.api.Mode;
import io.tbmq.operator.api.TbmqCluster;
import io.tbmq.operator.desired.Labels;
import io.tbmq.operator.desired.Names;
import io.tbmq.operator.desired.RedisModel;
import io.tbmq.operator.redis.ClusterInfo;
import io.tbmq.operator.redis.MemoryUse;
import io.tbmq.operator.redis.NodeState;
import io.tbmq.operator.redis.RedisClusterAdmin;
import io.tbmq.operator.redis.RedisEndpoints;
import io.tbmq.operator.redis.RedisNode;
import io.tbmq.operator.redis.SlotPlanner;
import io.tbmq.operator.redis.SlotStep;
import io.tbmq.operator.redis.UnstartedPods;
import io.tbmq.operator.sizing.Plan;

/**
 * The managed Redis Cluster. Growing: the StatefulSet grows first, then the new pods are met and
 * slots rebalanced onto them. Shrinking: the StatefulSet keeps its size until the masters to go
 * have handed every slot (and key) over and been forgotten; only then does it shrink. Each pass
 * observes the nodes afresh, so an operator restarted mid-way finishes the job.
 */
public final class RedisProvisioner {
    public static final String CONDITION = "RedisReady";
    public static final String UNUSED = "UnusedRedis";
    /** A condition of its own, true while a change of the Redis password rolls out (RedisPasswordRotation). */
    public static final String PASSWORD_CHANGING = "RedisPasswordChanging";
    /** A notice while a master uses over {@link #MEMORY_HIGH_RATIO} of its maxmemory. */
    public static final String MEMORY_HIGH = "RedisMemoryHigh";
    static final double MEMORY_HIGH_RATIO = 0.8;
    /** The StatefulSet controller's label naming the revision a pod was made from. */
    static final String REVISION_LABEL = "controller-revision-hash";
    /**
     * How long the pass before every pod is ready waits for a pod to connect or answer. A pod whose
     * node is down still has its IP and drops the SYN; with Lettuce's 10 s each reconcile would wait
     * that long on it until the pod is evicted, minutes later.
     */
    static final Duration GLANCE_TIMEOUT = Duration.ofSeconds(1);
    private static final Logger LOG = Logger.getLogger(RedisProvisioner.class);
    /** Slots per Move step and the time one reconcile may spend moving, so status stays current. */
    static final int SLOTS_PER_STEP = 1024;
    static final long STEP_BUDGET_MILLIS = 10_000;

    private final Applier applier;
    private final EventRecorder events;
    private final RedisEndpoints endpoints;
    private RedisModel.Volumes volumes;
    /** Why the volumes written differ from the spec's, said whether or not the rest is ready yet. */
    private List<ComponentStatus.Notice> storageNotices = List.of();
    private RedisPasswordRotation.Progress passwordProgress = RedisPasswordRotation.Progress.NOTHING;
    /** Whether this pass read every node's memory, and the masters nearly full as it did (null: none). */
    private boolean memoryRead;
    private ComponentStatus.Notice memoryNotice;
    private boolean refusedWithNoneServing;

    public RedisProvisioner(Applier applier, EventRecorder events, RedisEndpoints endpoints) {
        this.applier = applier;
        this.events = events;
        this.endpoints = endpoints;
    }

    public ComponentStatus reconcile(TbmqCluster owner, Plan plan, Names names) {
        if (owner.getSpec().getRedis().getMode() == Mode.EXTERNAL) {
            return unused(owner, names);
        }
        RedisPasswordRotation rotation = new RedisPasswordRotation(applier, events);
        // Throws when the password in force cannot be known: the reconcile then changes nothing (the
        // brokers' template names the password's generation) and its error names what to do.
        RedisPasswordRotation.Passwords passwords = rotation.read(owner, names, password -> acceptance(owner, names, password));
        passwordProgress = RedisPasswordRotation.Progress.NOTHING;
        memoryRead = false;
        memoryNotice = null;
        storageNotices = List.of();
        refusedWithNoneServing = false;
        ComponentStatus status;
        try {
            status = managed(owner, plan, names, rotation, passwords);
        } catch (Applier.PodsRefused e) {
            // Only this component waits for a fixed spec: the users and brokers after it still get theirs.
            StatefulSet running = applier.current(RedisModel.statefulSet(owner, names, plan.redisMasters().value()));
            int ready = Math.min(BrokerProvisioner.readyReplicas(running), plan.redisMasters().value());
            // The pods, not the StatefulSet's status: one just adopted, or not seen by the informer yet, has none.
            refusedWithNoneServing = applier.watched().pods(names.namespace(), Labels.selector(owner.getMetadata().getName(),
                    RedisModel.COMPONENT)).stream().noneMatch(RedisProvisioner::isReady);
            status = refused(e, ready, plan.redisMasters().value());
            if (!e.notices().isEmpty()) {
                storageNotices = e.notices();
            }
        }
        for (ComponentStatus.Notice notice : storageNotices) {
            status = status.with(notice);
        }
        // A pass that did not read every node (pods rolling, slots moving) says what the last one read.
        ComponentStatus.Notice memory = memoryRead ? memoryNotice : lastMemoryNotice(owner);
        if (memory != null) {
            status = status.with(memory);
        }
        if (passwordProgress.notice() != null) {
            return status.with(passwordProgress.notice());
        }
        return passwords.changing() && !passwordProgress.finished() ? status.with(RedisPasswordRotation.waiting()) : status;
    }

    /**
     * Whether the last pass found this spec's Redis pods refused and no Redis pod ready (a new cluster, or every pod
     * gone since): the brokers cannot be ready before a spec or a policy changes.
     */
    public boolean refusedWithNoneServing() {
        return refusedWithNoneServing;
    }

    private ComponentStatus managed(TbmqCluster owner, Plan plan, Names names, RedisPasswordRotation rotation,
            RedisPasswordRotation.Passwords passwords) {
        int masters = plan.redisMasters().value();
        StatefulSet before = applier.current(RedisModel.statefulSet(owner, names, masters));
        if (before == null && !applier.watched().pods(names.namespace(), Labels.selector(owner.getMetadata().getName(),
                RedisModel.COMPONENT)).isEmpty()) {
            // Pods but no StatefulSet: asked of the API server, not of the informer, which may not have seen it yet. Pods
            // a StatefulSet owns would not count as orphans below, and it would be written with as few as the masters.
            before = applier.client().apps().statefulSets().inNamespace(names.namespace()).withName(names.redis()).get();
        }
        int orphans = before == null ? orphanedPods(owner, names) : 0;
        int current = before == null || before.getSpec().getReplicas() == null ? orphans : before.getSpec().getReplicas();
        int replicas = Math.max(masters, current);
        StatefulSet desired;
        // Before anything else of this spec is written: refused, the pods keep their configuration too.
        try {
            RedisStorage.Decision storage = new RedisStorage(applier, events).decide(owner, names, before, orphans, replicas);
            volumes = storage.volumes();
            storageNotices = storage.notices();
            desired = RedisModel.statefulSet(owner, names, replicas, volumes);
            applier.checkPods(desired);
        } catch (Applier.PodsRefused e) {
            if (before == null && orphans > 0) {
                // Deleted around its pods to expand their volumes, and the operator stopped before writing it again: it owns
                // them again, as many as run, so that it makes none.
                applier.adopt(RedisModel.statefulSet(owner, names, orphans, volumes));
            }
            if (before == null || current != masters) {
                throw e;
            }
            if (volumes == null) {
                // Refused before the storage was decided (with a volume expansion): what runs.
                volumes = RedisStorage.running(before);
            }
            // Another template for as many masters as run: the running cluster is still looked after as its StatefulSet
            // has it (pods back on new addresses met, slots kept balanced, each pod replaced checked), and the refusal
            // reported once that is done.
            ComponentStatus running;
            try {
                running = lookAfter(owner, plan, names, rotation, passwords, before, replicas, false);
            } catch (Applier.PodsRefused alsoRunning) {
                throw e.alongside(alsoRunning);
            } catch (RuntimeException failed) {
                // The spec's refusal stays what the status says first; the next pass looks after the cluster again.
                LOG.warnf(failed, "%s/%s: looking after Redis while the pods of its spec are refused failed", names.namespace(),
                        names.cluster());
                throw e.whileLookingAfter(failed);
            }
            LOG.logf(running.ready() ? org.jboss.logging.Logger.Level.DEBUG : org.jboss.logging.Logger.Level.INFO,
                    "%s/%s: Redis looked after as it runs while the pods of its spec are refused: %s", names.namespace(),
                    names.cluster(), running.message());
            throw e;
        }
        applier.apply(RedisModel.config(owner, names));
        applier.apply(RedisModel.headless(owner, names));
        applier.apply(RedisModel.client(owner, names));
        applier.apply(RedisModel.disruptionBudget(owner, names));
        // Events go before the write they announce, so an operator stopped in between still records them.
        if (replicas > current && current > 0) {
            events.normal(owner, "ScalingRedis", "Redis pods " + current + " -> " + replicas + " (" + plan.redisMasters().rule() + ")");
        }
        StatefulSet applied = applier.apply(desired);
        return lookAfter(owner, plan, names, rotation, passwords, applied, replicas, true);
    }

    /**
     * Looks after the running cluster of {@code applied}'s pods: meets pods back on new addresses, replaces broken
     * ones, moves slots, reads memory, replaces outdated pods one at a time and scales down. {@code specApplied} false:
     * this spec's pods are refused, so none of its settings (the fsync policy) is given to the running nodes either.
     */
    private ComponentStatus lookAfter(TbmqCluster owner, Plan plan, Names names, RedisPasswordRotation rotation,
            RedisPasswordRotation.Passwords passwords, StatefulSet applied, int replicas, boolean specApplied) {
        int masters = plan.redisMasters().value();
        List<Pod> pods = readyPods(owner, names, replicas);
        if (pods.size() < replicas) {
            List<Pod> all = applier.watched().pods(names.namespace(), Labels.selector(owner.getMetadata().getName(), RedisModel.COMPONENT));
            Applier.PodsRefused refused = replaceBrokenOutdatedPods(owner, names, applied, all);
            List<NodeState> answering = meetMovedAmongAnsweringPods(owner, names, masters, replicas, passwords);
            int keep = UnstartedPods.replicasToKeep(masters, replicas, answering);
            if (keep < replicas) {
                events.normal(owner, "ScalingRedis", "Redis pods " + replicas + " -> " + keep + ": redis-" + keep
                        + (keep + 1 < replicas ? " to redis-" + (replicas - 1) : "") + " never joined, and the masters kept serve"
                        + " every slot (" + plan.redisMasters().rule() + ")");
                applier.apply(RedisModel.statefulSet(owner, names, keep, volumes));
                return progressing("ScalingDown", "removing Redis pods that never joined", Math.min(pods.size(), masters), masters);
            }
            if (refused != null) {
                // Said once the pods that answer were met and those that never joined removed.
                throw refused;
            }
            String cause = PodDiagnosis.problem(all).map(p -> ": " + p).orElse("");
            return progressing(cause.isEmpty() ? "WaitingForPods" : "PodsNotReady", "Redis pods ready: " + pods.size() + "/" + replicas
                    + cause, Math.min(pods.size(), masters), masters);
        }
        List<RedisNode> nodes = new ArrayList<>();
        for (int i = 0; i < replicas; i++) {
            nodes.add(endpoints.resolve(pods.get(i), i));
        }
        long deadline = System.currentTimeMillis() + STEP_BUDGET_MILLIS;
        try (RedisClusterAdmin admin = new RedisClusterAdmin(passwords.candidates(), RedisClusterAdmin.TIMEOUT)) {
            // Before any slot moves: a pod that started since the change began knows the new password only.
            // Every node, even past one that fails: the others then serve the brokers not restarted yet.
            RuntimeException failed = null;
            for (RedisNode node : nodes) {
                try {
                    rotation.keepAccepting(admin, node, passwords);
                } catch (RuntimeException e) {
                    if (failed == null) {
                        failed = e;
                    } else {
                        failed.addSuppressed(e);
                    }
                }
            }
            if (failed != null) {
                throw failed;
            }
            // Before the slots: a rebalance of many minutes must not hold back what a crash may take.
            Fsync fsync = RedisModel.fsync(owner);
            for (RedisNode node : specApplied ? nodes : List.<RedisNode>of()) {
                if (admin.ensureFsync(node, fsync.redisValue())) {
                    events.normal(owner, "RedisFsync", "redis-" + node.ordinal() + ": append-only file written to disk "
                            + (fsync == Fsync.ALWAYS ? "before every reply" : "once a second") + " (appendfsync "
                            + fsync.redisValue() + ")");
                }
            }
            SlotStep step;
            while (true) {
                List<NodeState> states = nodes.stream().map(admin::observe).toList();
                step = SlotPlanner.next(states, masters, SLOTS_PER_STEP);
                if (step instanceof SlotStep.Done || step instanceof SlotStep.AwaitGossip) {
                    break;
                }
                if (step instanceof SlotStep.Move move) {
                    // A master that just joined learns who serves which slot by gossip; until then it
                    // refuses the keys sent to it (CLUSTERDOWN) and the slots would stay open meanwhile.
                    ClusterInfo target = admin.info(move.target().node());
                    if (!target.mayReceive(move)) {
                        return progressing("Joining", "redis-" + move.target().ordinal() + " " + target.lack()
                                + ", so no slot moves to it", masters, masters);
                    }
                }
                if (step instanceof SlotStep.Meet meet) {
                    if (!meet(owner, admin, meet)) {
                        return progressing("Joining", meet.describe() + ": not taken yet", masters, masters);
                    }
                    if (System.currentTimeMillis() > deadline) {
                        return progressing("Joining", meet.describe(), masters, masters);
                    }
                    continue;
                }
                String done = admin.execute(step, states);
                if (!(step instanceof SlotStep.Move move) || move.remaining() == 0) {
                    events.normal(owner, reason(step), done);
                } else {
                    LOG.infof("%s/%s: %s", names.namespace(), names.cluster(), done);
                }
                if (System.currentTimeMillis() > deadline) {
                    return progressing("Rebalancing", done, masters, masters);
                }
            }
            if (step instanceof SlotStep.AwaitGossip) {
                return progressing("Joining", step.describe(), masters, masters);
            }
            for (RedisNode node : nodes.subList(0, masters)) {
                // A broker reads its topology from any master: one that has not heard of every slot's
                // owner yet would leave the broker with unowned slots until its next refresh.
                ClusterInfo info = admin.info(node);
                if (!info.knowsEveryOwner()) {
                    return progressing("Converging", "redis-" + node.ordinal() + " " + info.lack(), masters, masters);
                }
            }
            readMemory(owner, admin, nodes);
            for (RedisNode node : nodes) {
                if (admin.ensureAppendOnly(node)) {
                    events.normal(owner, "RedisAppendOnly", "redis-" + node.ordinal()
                            + ": append-only file turned on, so a restart keeps what it acknowledged");
                }
                if (admin.ensurePartialCoverage(node)) {
                    events.normal(owner, "RedisPartialCoverage", "redis-" + node.ordinal()
                            + ": serves its slots while another master is gone (cluster-require-full-coverage no)");
                }
            }
            try {
                // Refused, the pods keep a template (and a redis.conf) that may predate the probe user: the change stops
                // before Redis refuses the old password, as it does while pods wait to be replaced.
                passwordProgress = rotation.advance(owner, names, admin, nodes, passwords, specApplied ? outdatedPods(applied, pods)
                        : pods.stream().map(p -> p.getMetadata().getName()).toList(), !specApplied);
            } catch (RuntimeException e) {
                LOG.warnf("%s/%s: Redis password change: %s", names.namespace(), names.cluster(), e.getMessage());
                passwordProgress = new RedisPasswordRotation.Progress(RedisPasswordRotation.failed(String.valueOf(e.getMessage())),
                        true, false);
            }
        } catch (RuntimeException e) {
            LOG.warnf("%s/%s: Redis Cluster not reachable: %s", names.namespace(), names.cluster(), e.getMessage());
            return progressing("RedisUnreachable", "cannot reach the Redis pods: " + e.getMessage(), 0, masters);
        }
        if (!controllerCaughtUp(applied)) {
            // Until the StatefulSet controller has seen the spec just applied, its revision is the old one:
            // the pods would look current, and the status would say Ready before a changed spec rolled out.
            return progressing("Rolling", "waiting for the StatefulSet controller to take up the new Redis spec", masters, masters);
        }
        // A pod replaced while the password changes would start asking for the new one only, which
        // the brokers not restarted yet do not have.
        ComponentStatus rolling = passwordProgress.holdPodReplacement() ? null : replaceOutdatedPod(owner, names, applied, pods, masters);
        if (rolling != null) {
            return rolling;
        }
        if (replicas > masters) {
            events.normal(owner, "ScalingRedis", "Redis pods " + replicas + " -> " + masters
                    + " after their slots moved to the remaining masters");
            applier.apply(RedisModel.statefulSet(owner, names, masters, volumes));
            return progressing("ScalingDown", "removing drained Redis pods", masters, masters);
        }
        ComponentStatus ready = new ComponentStatus(CONDITION, true, "ClusterReady", masters
                + " masters, all 16384 slots served and balanced", masters + "/" + masters);
        return ready;
    }

    /**
     * The masters over {@link #MEMORY_HIGH_RATIO} of their maxmemory, as a notice: full, a master refuses
     * to store messages for the offline DEVICE clients whose keys it holds (noeviction). The brokers'
     * alert TbmqRedisMemoryHigh says the same where Prometheus runs; this says it in the status. Whole
     * percentages, so that the message, and with it the status, changes only when a master's use does
     * by a percent. Not read at all when one node does not answer.
     */
    private void readMemory(TbmqCluster owner, RedisClusterAdmin admin, List<RedisNode> nodes) {
        List<String> nearlyFull = new ArrayList<>();
        for (RedisNode node : nodes) {
            try {
                MemoryUse use = admin.memory(node);
                if (use.ratio() > MEMORY_HIGH_RATIO) {
                    nearlyFull.add("redis-" + node.ordinal() + " uses " + use.describe());
                }
            } catch (RuntimeException e) {
                LOG.debugf("%s: memory of redis-%d not read: %s", owner.getMetadata().getName(), node.ordinal(), e.getMessage());
                return;
            }
        }
        memoryRead = true;
        memoryNotice = nearlyFull.isEmpty() ? null : new ComponentStatus.Notice(MEMORY_HIGH, "NearlyFull",
                String.join(", ", nearlyFull) + ". Full, a master stores no more messages for the offline DEVICE clients whose"
                        + " keys it holds: raise the memory of spec.redis.resources or spec.overrides.redisMasters, or keep less"
                        + " per client (spec.broker.persistence.deviceMessagesLimit, deviceMessageTtl)");
    }

    /** The notice as the status holds it from an earlier pass, or null. */
    private static ComponentStatus.Notice lastMemoryNotice(TbmqCluster owner) {
        if (owner.getStatus() == null || owner.getStatus().getConditions() == null) {
            return null;
        }
        return owner.getStatus().getConditions().stream().filter(c -> MEMORY_HIGH.equals(c.getType()) && "True".equals(c.getStatus()))
                .findFirst().map(c -> new ComponentStatus.Notice(MEMORY_HIGH, c.getReason(), c.getMessage())).orElse(null);
    }

    /**
     * With no StatefulSet, how many pods the last one had (the highest ordinal left running without an owner, plus one): a
     * StatefulSet deleted around its pods to expand their volumes, and not yet written again, is written
     * with at least those, so that none of them, a master still holding slots, is scaled away. 0 for a new cluster.
     */
    private int orphanedPods(TbmqCluster owner, Names names) {
        return orphanedPods(applier.watched().pods(names.namespace(), Labels.selector(owner.getMetadata().getName(),
                RedisModel.COMPONENT)), names);
    }

    static int orphanedPods(List<Pod> redisPods, Names names) {
        int count = 0;
        for (Pod pod : redisPods) {
            // Not one going away (an earlier cluster of this name), nor one a controller still owns.
            if (pod.getMetadata().getDeletionTimestamp() != null || pod.getMetadata().getOwnerReferences() != null
                    && pod.getMetadata().getOwnerReferences().stream().anyMatch(o -> Boolean.TRUE.equals(o.getController()))) {
                continue;
            }
            String name = pod.getMetadata().getName();
            String prefix = names.redis() + "-";
            if (name.startsWith(prefix) && name.substring(prefix.length()).chars().allMatch(Character::isDigit)
                    && name.length() > prefix.length()) {
                count = Math.max(count, Integer.parseInt(name.substring(prefix.length())) + 1);
            }
        }
        return count;
    }

    /**
     * Pods run the StatefulSet's template as it was when they started (OnDelete): once the cluster is
     * whole, balanced and every master reports cluster_state:ok and knows every slot's owner, one pod made from an older revision
     * is replaced; the next only after it is back and the cluster is whole again. Its slots are
     * unserved while it restarts (seconds: masters have no replicas, as in the TBMQ paper).
     */
    private ComponentStatus replaceOutdatedPod(TbmqCluster owner, Names names, StatefulSet sts, List<Pod> pods, int masters) {
        String revision = sts == null || sts.getStatus() == null ? null : sts.getStatus().getUpdateRevision();
        if (revision == null) {
            return null;
        }
        for (int i = pods.size() - 1; i >= 0; i--) {
            Pod pod = pods.get(i);
            String podRevision = pod.getMetadata().getLabels() == null ? null : pod.getMetadata().getLabels().get(REVISION_LABEL);
            if (podRevision != null && !podRevision.equals(revision)) {
                // Its replacement must be possible: a LimitRange or PodSecurity level may have come since the template was written.
                applier.checkReplacement(sts);
                applier.client().resource(pod).delete();
                events.normal(owner, "RedisPodReplaced", pod.getMetadata().getName()
                        + " replaced with the new settings; the others wait until the cluster is whole again");
                return progressing("Rolling", "replacing " + pod.getMetadata().getName() + " with the new settings, one pod at a time",
                        masters - 1, masters);
            }
        }
        return null;
    }

    /**
     * The pods not made from the StatefulSet's current revision; until its controller has taken up
     * the spec last applied, that revision is not known, and every pod counts as outdated.
     */
    private static List<String> outdatedPods(StatefulSet sts, List<Pod> pods) {
        String revision = sts == null || sts.getStatus() == null ? null : sts.getStatus().getUpdateRevision();
        List<String> outdated = new ArrayList<>();
        for (Pod pod : pods) {
            String podRevision = pod.getMetadata().getLabels() == null ? null : pod.getMetadata().getLabels().get(REVISION_LABEL);
            // As replaceOutdatedPod sees it (a pod without the label is never replaced), but unknown until the controller caught up.
            if (revision == null || !controllerCaughtUp(sts) || podRevision != null && !revision.equals(podRevision)) {
                outdated.add(pod.getMetadata().getName());
            }
        }
        return outdated;
    }

    /**
     * A pod that is not ready and was made from an older revision (an image that cannot be pulled,
     * a setting that crashed it) serves nothing: it is replaced at once rather than one at a time,
     * or a fixed spec could never reach it.
     */
    private Applier.PodsRefused replaceBrokenOutdatedPods(TbmqCluster owner, Names names, StatefulSet sts, List<Pod> pods) {
        String revision = sts == null || sts.getStatus() == null ? null : sts.getStatus().getUpdateRevision();
        if (revision == null) {
            return null;
        }
        for (Pod pod : pods) {
            String podRevision = pod.getMetadata().getLabels() == null ? null : pod.getMetadata().getLabels().get(REVISION_LABEL);
            if (!isReady(pod) && pod.getMetadata().getDeletionTimestamp() == null && podRevision != null
                    && !podRevision.equals(revision)) {
                // Not ready is not gone: a pod that may still recover is not swapped for one the API server refuses.
                try {
                    applier.checkReplacement(sts);
                } catch (Applier.PodsRefused e) {
                    return e;
                }
                applier.client().resource(pod).delete();
                events.normal(owner, "RedisPodReplaced", pod.getMetadata().getName()
                        + " was not ready and made from an older spec: replaced with the current one");
            }
        }
        return null;
    }

    /**
     * A Redis this TbmqCluster managed before its spec switched to EXTERNAL keeps running (an edit
     * must not delete data) until the user asks for its deletion by annotation.
     */
    private ComponentStatus unused(TbmqCluster owner, Names names) {
        ComponentStatus external = ComponentStatus.external(CONDITION);
        StatefulSet left = applier.watched().statefulSet(names.namespace(), names.redis()).orElse(null);
        if (left == null || left.getMetadata().getOwnerReferences() == null || left.getMetadata().getOwnerReferences().stream()
                .noneMatch(r -> owner.getMetadata().getUid().equals(r.getUid()))) {
            return external;
        }
        if (!owner.deleteUnused("redis")) {
            return external.with(new ComponentStatus.Notice(UNUSED, "Kept", "the managed Redis Cluster " + names.redis()
                    + " keeps running (with its volumes) though spec.redis.mode is EXTERNAL; to delete it: kubectl annotate tbmq "
                    + owner.getMetadata().getName() + " " + TbmqCluster.DELETE_UNUSED + "=redis"));
        }
        var client = applier.client();
        client.apps().statefulSets().inNamespace(names.namespace()).withName(names.redis()).delete();
        client.policy().v1().podDisruptionBudget().inNamespace(names.namespace()).withName(names.redis()).delete();
        client.services().inNamespace(names.namespace()).withName(names.redis()).delete();
        client.services().inNamespace(names.namespace()).withName(names.redisClient()).delete();
        client.configMaps().inNamespace(names.namespace()).withName(names.redis()).delete();
        events.normal(owner, "UnusedRedisDeleted", "deleted the managed Redis Cluster " + names.redis() + " as "
                + TbmqCluster.DELETE_UNUSED + " asked");
        return external.with(new ComponentStatus.Notice(UNUSED, "Deleting", "deleting the managed Redis Cluster " + names.redis()));
    }

    /**
     * The API server would refuse the pods this spec makes (or a pod the operator was about to replace): none is made
     * or replaced, and a person must change the spec or the namespace's policy.
     */
    static ComponentStatus refused(Applier.PodsRefused e, int ready, int masters) {
        return new ComponentStatus(CONDITION, false, Applier.PodsRefused.REASON, e.getMessage(), ready + "/" + masters);
    }

    private static ComponentStatus progressing(String reason, String message, int ready, int masters) {
        return new ComponentStatus(CONDITION, false, reason, message, ready + "/" + masters);
    }

    private static String reason(SlotStep step) {
        return switch (step) {
            case SlotStep.Meet m -> "RedisNodesJoined";
            case SlotStep.Assign a -> "RedisSlotsAssigned";
            case SlotStep.Move m -> "RedisSlotsMoved";
            case SlotStep.Forget f -> "RedisNodeRemoved";
            default -> "Redis";
        };
    }

    /**
     * Before every pod is ready: the masters that answer and list others at the addresses they had
     * before a restart meet them where they are now, so their slots are served again while a slow pod
     * (its volume not attached yet, a long AOF load) is still coming, not only after it (run 53: 28 s).
     * Ready or not: the operator's own connection is the check, and the readiness probe comes only
     * every 5 s; a master met after the 5 s node timeout is flagged failing by the others for twice
     * that (run 61: the pods ready 5 s after they started, met at 7 s, the cluster whole at 24 s).
     * Best effort: a pod that cannot be observed (not started, still loading) is left out, and what
     * fails here the full pass does once every pod is ready. Returns the pods that answered, as they
     * were before the meet.
     */
    private List<NodeState> meetMovedAmongAnsweringPods(TbmqCluster owner, Names names, int masters, int replicas,
            RedisPasswordRotation.Passwords passwords) {
        List<NodeState> states = new ArrayList<>();
        try (RedisClusterAdmin admin = new RedisClusterAdmin(passwords.candidates(), GLANCE_TIMEOUT)) {
            for (int i = 0; i < replicas; i++) {
                Pod pod = startedPod(owner, names, i).orElse(null);
                if (pod == null) {
                    continue;
                }
                try {
                    RedisNode node = endpoints.resolve(pod, i);
                    // A pod back during a password change serves its slots to the brokers not restarted yet too.
                    new RedisPasswordRotation(applier, events).keepAccepting(admin, node, passwords);
                    states.add(admin.observe(node));
                } catch (RuntimeException e) {
                    LOG.debugf("%s: redis-%d not observed before every pod is ready: %s", owner.getMetadata().getName(), i, e.getMessage());
                }
            }
            Optional<SlotStep.Meet> meet = SlotPlanner.meetMoved(states, masters);
            if (meet.isPresent()) {
                meet(owner, admin, meet.get());
            }
        } catch (RuntimeException e) {
            LOG.debugf("%s: Redis pods not met before every pod is ready: %s", owner.getMetadata().getName(), e.getMessage());
        }
        return states;
    }

    /** Meets and records it; a meet that does not show is reported, and met again only on a later pass. */
    private boolean meet(TbmqCluster owner, RedisClusterAdmin admin, SlotStep.Meet meet) {
        if (admin.meet(meet)) {
            events.normal(owner, "RedisNodesJoined", meet.describe());
            return true;
        }
        events.warning(owner, "RedisMeetNotTaken", meet.describe() + ": redis-" + meet.via().ordinal()
                + " does not list them there yet (is the cluster bus port, 16379, reachable between pods?)");
        return false;
    }

    private static boolean controllerCaughtUp(StatefulSet sts) {
        Long observed = sts.getStatus() == null ? null : sts.getStatus().getObservedGeneration();
        return observed != null && observed >= sts.getMetadata().getGeneration();
    }

    /**
     * How the started Redis pods take {@code password}: refused if one refuses it, the only one if
     * every one takes it alone, else one of several (a started pod that does not answer counts so: it
     * may take another). Empty when no pod is started: a pod cannot start while the Secret its
     * password comes from is missing. Throws when pods are started and none answers.
     */
    private Optional<RedisClusterAdmin.Acceptance> acceptance(TbmqCluster owner, Names names, String password) {
        int replicas = applier.watched().statefulSet(names.namespace(), names.redis())
                .map(s -> s.getSpec().getReplicas() == null ? 0 : s.getSpec().getReplicas()).orElse(0);
        List<RedisClusterAdmin.Acceptance> answers = new ArrayList<>();
        int started = 0;
        try (RedisClusterAdmin admin = new RedisClusterAdmin(password, GLANCE_TIMEOUT)) {
            for (int i = 0; i < replicas; i++) {
                Pod pod = startedPod(owner, names, i).orElse(null);
                if (pod == null) {
                    continue;
                }
                started++;
                try {
                    answers.add(admin.acceptance(endpoints.resolve(pod, i)));
                } catch (RuntimeException e) {
                    LOG.debugf("%s: redis-%d not asked about the password: %s", owner.getMetadata().getName(), i, e.getMessage());
                }
            }
        }
        if (started == 0) {
            return Optional.empty();
        }
        if (answers.isEmpty()) {
            throw new IllegalStateException("Secret " + names.redisPassword() + ", the Redis password in force, is missing, and no"
                    + " started Redis pod answers to check the one in spec.redis.passwordSecret against; tried again");
        }
        if (answers.contains(RedisClusterAdmin.Acceptance.REFUSED)) {
            return Optional.of(RedisClusterAdmin.Acceptance.REFUSED);
        }
        return Optional.of(answers.size() == started && answers.stream().allMatch(a -> a == RedisClusterAdmin.Acceptance.ONLY)
                ? RedisClusterAdmin.Acceptance.ONLY : RedisClusterAdmin.Acceptance.AMONG_OTHERS);
    }

    /** Pods 0..replicas-1 that are Ready, by ordinal; stops at the first one missing. */
    private List<Pod> readyPods(TbmqCluster owner, Names names, int replicas) {
        List<Pod> ready = new ArrayList<>();
        for (int i = 0; i < replicas; i++) {
            Optional<Pod> pod = readyPod(owner, names, i);
            if (pod.isEmpty()) {
                break;
            }
            ready.add(pod.get());
        }
        return ready;
    }

    /** Redis pod {@code ordinal} if it is ready and this TbmqCluster's (a same-named leftover of another is not). */
    private Optional<Pod> readyPod(TbmqCluster owner, Names names, int ordinal) {
        return ownPod(owner, names, ordinal).filter(RedisProvisioner::isReady);
    }

    /**
     * Redis pod {@code ordinal}, ready or not, if it runs, has an IP and is not being deleted (a
     * Failed pod's IP may be another pod's by now).
     */
    private Optional<Pod> startedPod(TbmqCluster owner, Names names, int ordinal) {
        return ownPod(owner, names, ordinal).filter(p -> p.getMetadata().getDeletionTimestamp() == null && p.getStatus() != null
                && "Running".equals(p.getStatus().getPhase()) && p.getStatus().getPodIP() != null
                && !p.getStatus().getPodIP().isBlank());
    }

    private Optional<Pod> ownPod(TbmqCluster owner, Names names, int ordinal) {
        return applier.watched().pod(names.namespace(), names.redisPod(ordinal)).filter(p -> p.getMetadata().getLabels() != null
                && owner.getMetadata().getName().equals(p.getMetadata().getLabels().get(Labels.INSTANCE)));
    }

    /** Ready and not being deleted. */
    public static boolean isReady(Pod pod) {
        return pod.getStatus() != null && pod.getStatus().getConditions() != null && pod.getMetadata().getDeletionTimestamp() == null
                && pod.getStatus().getConditions().stream().anyMatch(c -> "Ready".equals(c.getType()) && "True".equals(c.getStatus()));
    }
}
