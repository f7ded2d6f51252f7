package io.tbmq.operator.reconciler;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.stream.Collectors;

import jakarta.inject.Inject;

import org.jboss.logging.Logger;

import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.javaoperatorsdk.operator.api.config.informer.InformerEventSourceConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.EventSourceContext;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.javaoperatorsdk.operator.processing.event.source.EventSource;
import io.javaoperatorsdk.operator.processing.event.source.informer.InformerEventSource;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.ControllerConfiguration;
import io.javaoperatorsdk.operator.processing.retry.GradualRetry;
import io.javaoperatorsdk.operator.api.reconciler.ErrorStatusUpdateControl;
import io.javaoperatorsdk.operator.api.reconciler.Cleaner;
import io.javaoperatorsdk.operator.api.reconciler.DeleteControl;
import io.javaoperatorsdk.operator.api.reconciler.Reconciler;
import io.javaoperatorsdk.operator.api.reconciler.UpdateControl;
import io.quarkiverse.operatorsdk.annotations.RBACRule;
import io.tbmq.operator.api.TbmqCluster;
import io.tbmq.operator.api.TbmqClusterStatus;
import io.tbmq.operator.config.OperatorConfig;
import io.tbmq.operator.desired.Labels;
import io.tbmq.operator.desired.KafkaModel;
import io.tbmq.operator.desired.Names;
import io.tbmq.operator.desired.TopicPartitions;
import io.tbmq.operator.provision.Applier;
import io.tbmq.operator.provision.BrokerProvisioner;
import io.tbmq.operator.provision.ComponentStatus;
import io.tbmq.operator.provision.EventRecorder;
import io.tbmq.operator.provision.KafkaProvisioner;
import io.tbmq.operator.provision.KafkaTeardown;
import io.tbmq.operator.provision.MonitoringProvisioner;
import io.tbmq.operator.provision.RedisProvisioner;
import io.tbmq.operator.provision.StrimziReadiness;
import io.tbmq.operator.provision.WatchedObjects;
import io.tbmq.operator.redis.RedisEndpoints;
import io.tbmq.operator.sizing.Plan;
import io.tbmq.operator.sizing.SizingModel;
import io.tbmq.operator.validation.FieldError;
import io.tbmq.operator.validation.Reachability;
import io.tbmq.operator.validation.SecretReferences;
import io.tbmq.operator.validation.SpecValidator;

/**
 * Reconciles a TbmqCluster: validates the spec (an invalid one sets Degraded naming the field and
 * changes nothing), computes the plan, then brings Kafka, Redis and the brokers to it and reports
 * what is true. While anything is still changing it looks again every couple of seconds.
 */
// A reconcile that throws (the API server refused a write, or could not be reached) is tried again for as
// long as it fails, backing off from 2 s to once a minute: JOSDK's default gives up after five tries, and
// then only the next event, or its 10-hour resync, would reconcile again.
@GradualRetry(maxAttempts = -1, initialInterval = 2000, intervalMultiplier = 1.5, maxInterval = 60_000)
@ControllerConfiguration(name = "tbmqcluster")
@RBACRule(apiGroups = "", resources = { "configmaps", "services", "pods", "secrets" }, verbs = { "get", "list", "watch" })
@RBACRule(apiGroups = "", resources = { "configmaps", "services" }, verbs = { "create", "patch", "update", "delete" })
// Redis pods are replaced one at a time by the operator (OnDelete): a changed spec rolls without taking two masters away.
@RBACRule(apiGroups = "", resources = "pods", verbs = "delete")
// Only ever as a dry run: the API server checks the pods a StatefulSet would make before it is written (Applier).
@RBACRule(apiGroups = "", resources = "pods", verbs = "create")
@RBACRule(apiGroups = "", resources = "events", verbs = { "create", "patch" })
@RBACRule(apiGroups = "", resources = "persistentvolumeclaims", verbs = { "get", "patch", "update" })
@RBACRule(apiGroups = "storage.k8s.io", resources = "storageclasses", verbs = { "get", "list" })
@RBACRule(apiGroups = "apps", resources = "statefulsets", verbs = { "get", "list", "watch", "create", "patch", "update", "delete" })
@RBACRule(apiGroups = "policy", resources = "poddisruptionbudgets", verbs = { "get", "list", "watch", "create", "patch", "update",
        "delete" })
@RBACRule(apiGroups = "monitoring.coreos.com", resources = "podmonitors", verbs = { "get", "create", "patch", "update", "delete" })
@RBACRule(apiGroups = "monitoring.coreos.com", resources = "prometheusrules", verbs = { "get", "create", "patch", "update", "delete" })
@RBACRule(apiGroups = "kafka.strimzi.io", resources = { "kafkas", "kafkanodepools", "kafkatopics", "kafkarebalances" }, verbs = {
        "get", "list", "watch", "create", "patch", "update", "delete" })
public class TbmqClusterReconciler implements Reconciler<TbmqCluster>, Cleaner<TbmqCluster> {
    private static final Logger LOG = Logger.getLogger(TbmqClusterReconciler.class);
    static final Duration WHILE_CHANGING = Duration.ofSeconds(2);
    static final Duration WHEN_READY = Duration.ofSeconds(30);
    /**
     * A Secret the spec names that is missing (or lacks its key) is looked for again this often: the
     * operator watches only the Secrets it labels, so nothing announces the user's. An invalid field
     * is not: only an edit fixes it, and the edit itself starts a reconcile.
     */
    static final Duration WHILE_SECRET_MISSING = Duration.ofSeconds(30);
    /**
     * Pods the API server refuses (Applier.PodsRefused) are asked about again this often: an edit starts a
     * reconcile by itself, but a LimitRange or PodSecurity level relaxed in the namespace announces nothing.
     */
    static final Duration WHILE_REFUSED = Duration.ofSeconds(30);
    /** Redis gossip and cluster state settle within a second or two and nothing else signals it: look sooner. */
    static final Duration WHILE_REDIS_SETTLES = Duration.ofMillis(250);
    static final Set<String> REDIS_SETTLING = Set.of("Joining", "Converging", "Rebalancing", "Rolling");
    public static final String PARTITIONS_KEPT = "PartitionsKept";
    /** True while a StatefulSet was written without the API server's check of its pods ({@link Applier#notChecked()}). */
    public static final String PODS_UNCHECKED = "PodsUnchecked";
    /** The brokers' reason while no Redis pod runs and Redis's are refused: an edit or a policy ends it, not time. */
    public static final String WAITING_FOR_REDIS = "WaitingForRedis";

    public static final String UNDER_PROVISIONED = "BrokersUnderProvisioned";
    /** spec.broker.config keys the brokers do not have: they would ignore them (reported, not refused). */
    public static final String UNKNOWN_SETTINGS = "UnknownBrokerSettings";
    /** Conditions a component reports while they hold ({@link ComponentStatus.Notice}), removed when they stop. */
    static final Set<String> NOTICES = Set.of(StrimziReadiness.REBALANCING, StrimziReadiness.STORAGE_NOT_APPLIED, KafkaProvisioner.SCALING_REFUSED,
            KafkaProvisioner.UNUSED, RedisProvisioner.UNUSED, RedisProvisioner.PASSWORD_CHANGING, RedisProvisioner.MEMORY_HIGH, UNDER_PROVISIONED,
            io.tbmq.operator.provision.RedisStorage.NOT_EXPANDED, io.tbmq.operator.provision.RedisStorage.CLASS_KEPT, UNKNOWN_SETTINGS);

    /** Brokers that cannot be ready: no Redis pod runs, and the API server refuses those of Redis's spec. */
    static ComponentStatus waitingForRedis(ComponentStatus brokers) {
        return new ComponentStatus(brokers.condition(), false, WAITING_FOR_REDIS,
                "waiting for Redis, whose pods the API server refuses (RedisReady); " + brokers.message(), brokers.summary(),
                brokers.notices());
    }

    /** spec.broker.config keys the brokers never see, as the notice {@link #UNKNOWN_SETTINGS}. */
    static ComponentStatus ignoredSettings(Map<String, String> config, boolean redisPasswordSecret, ComponentStatus status) {
        List<String> unknown = io.tbmq.operator.validation.BrokerConfigCheck.unknown(config);
        List<String> setByThePod = io.tbmq.operator.validation.BrokerConfigCheck.setByThePod(config);
        List<String> password = io.tbmq.operator.validation.BrokerConfigCheck.redisPasswordFromTheSecret(config, redisPasswordSecret);
        if (unknown.isEmpty() && setByThePod.isEmpty() && password.isEmpty()) {
            return status;
        }
        List<String> why = new java.util.ArrayList<>();
        if (!unknown.isEmpty()) {
            why.add(String.join(", ", unknown) + (unknown.size() == 1 ? " is not a setting" : " are not settings")
                    + " of this operator's broker version (docs/configuration.md lists them)");
        }
        if (!setByThePod.isEmpty()) {
            why.add(String.join(", ", setByThePod) + (setByThePod.size() == 1 ? " is" : " are")
                    + " set by each broker's pod itself (from its name, UID and TbmqCluster)");
        }
        if (!password.isEmpty()) {
            // A password in the spec is readable by whoever reads the TbmqCluster: a Secret is the place for it.
            why.add(String.join(", ", password) + (password.size() == 1 ? " is" : " are")
                    + " set by each broker's pod from the Redis password Secret (the operator's for a managed Redis,"
                    + " spec.redis.passwordSecret for an external one)");
        }
        return status.with(new ComponentStatus.Notice(UNKNOWN_SETTINGS, unknown.isEmpty() ? "SetByThePod" : "NotBrokerSettings",
                "spec.broker.config: " + String.join("; ", why) + "; the brokers ignore "
                        + (unknown.size() + setByThePod.size() + password.size() == 1 ? "it" : "them")));
    }

    /** The operator's settings the reconcile uses. */
    public record Settings(boolean serverSideApply, Duration strimziStatusTimeout, String brokerImage, String redisImage) {
        public static Settings of(OperatorConfig config) {
            return new Settings(config.serverSideApply(), config.strimziStatusTimeout(), config.brokerImage(), config.redisImage());
        }

        /** The defaults, with or without server-side apply. */
        public static Settings defaults(boolean serverSideApply) {
            return new Settings(serverSideApply, Duration.ofMinutes(3), "docker.io/tbmq/tbmq-broker:0.1.0", "redis:7.2");
        }

        public Settings withStrimziStatusTimeout(Duration timeout) {
            return new Settings(serverSideApply, timeout, brokerImage, redisImage);
        }

        public Settings withImages(String broker, String redis) {
            return new Settings(serverSideApply, strimziStatusTimeout, broker, redis);
        }
    }

    private final RedisEndpoints redisEndpoints;
    private final Settings settings;
    /** Replaceable so the fast tests need no network. */
    java.util.function.Function<io.tbmq.operator.api.TbmqClusterSpec, List<FieldError>> reachability = Reachability::check;
    /** How a Secret the spec names is read (null when there is none); replaceable so the fast tests need no API server. */
    SecretReader secrets = (client, namespace, name) -> client.secrets().inNamespace(namespace).withName(name).get();
    /** How pods are checked before a StatefulSet is written (null: the API server's dry run); replaceable for the mock server. */
    Applier.PodCheck podCheck;

    interface SecretReader {
        io.fabric8.kubernetes.api.model.Secret read(KubernetesClient client, String namespace, String name);
    }
    private static final io.fabric8.kubernetes.client.utils.KubernetesSerialization STATUS_COPIES =
            new io.fabric8.kubernetes.client.utils.KubernetesSerialization();

    @Inject
    public TbmqClusterReconciler(RedisEndpoints redisEndpoints, OperatorConfig config) {
        this(redisEndpoints, Settings.of(config));
    }

    public TbmqClusterReconciler(RedisEndpoints redisEndpoints, Settings settings) {
        this.redisEndpoints = redisEndpoints;
        this.settings = settings;
    }

    static final String STATEFUL_SETS = "statefulsets";
    static final String PODS = "pods";
    static final String USERS = "users";
    static final String USER_SECRETS = "usersecrets";

    /**
     * StatefulSets and pods of every TbmqCluster wake its reconcile as soon as they change (a pod
     * turning ready, a rollout finishing), so no step waits for the next poll. Kafka CRs are polled:
     * an informer on them would keep the operator from starting where Strimzi is not installed.
     * The informers' caches also serve every read of these objects ({@link InformerCaches}).
     */
    @Override
    public List<EventSource<?, TbmqCluster>> prepareEventSources(EventSourceContext<TbmqCluster> context) {
        String selector = Labels.MANAGED_BY + "=" + Labels.OPERATOR;
        return List.of(
                new InformerEventSource<>(InformerEventSourceConfiguration.from(StatefulSet.class, TbmqCluster.class)
                        .withName(STATEFUL_SETS).withLabelSelector(selector)
                        // Our own spec writes come back as updates too; only the controller's progress matters.
                        .withOnUpdateFilter((now, before) -> !Objects.equals(now.getStatus(), before.getStatus()))
                        .withSecondaryToPrimaryMapper(TbmqClusterReconciler::byInstanceLabel).build(), context),
                new InformerEventSource<>(InformerEventSourceConfiguration.from(Pod.class, TbmqCluster.class)
                        .withName(PODS).withLabelSelector(selector)
                        .withOnUpdateFilter((now, before) -> RedisProvisioner.isReady(now) != RedisProvisioner.isReady(before))
                        .withSecondaryToPrimaryMapper(TbmqClusterReconciler::byInstanceLabel).build(), context),
                // Every change of a TbmqUser, and of a password in its Secret, rewrites the cluster's users file.
                new InformerEventSource<>(InformerEventSourceConfiguration.from(io.tbmq.operator.api.TbmqUser.class, TbmqCluster.class)
                        .withName(USERS)
                        .withSecondaryToPrimaryMapper(u -> u.getSpec() == null || u.getSpec().getCluster() == null ? Set.of()
                                : Set.of(new ResourceID(u.getSpec().getCluster(), u.getMetadata().getNamespace()))).build(), context),
                new InformerEventSource<>(InformerEventSourceConfiguration.from(io.fabric8.kubernetes.api.model.Secret.class,
                        TbmqCluster.class).withName(USER_SECRETS)
                        .withLabelSelector(selector + "," + Labels.COMPONENT + "=" + io.tbmq.operator.desired.UsersModel.USER_COMPONENT)
                        .withSecondaryToPrimaryMapper(TbmqClusterReconciler::byInstanceLabel).build(), context));
    }


    private static Set<ResourceID> byInstanceLabel(HasMetadata object) {
        String instance = object.getMetadata().getLabels() == null ? null : object.getMetadata().getLabels().get(Labels.INSTANCE);
        return instance == null ? Set.of() : Set.of(new ResourceID(instance, object.getMetadata().getNamespace()));
    }

    @Override
    public UpdateControl<TbmqCluster> reconcile(TbmqCluster resource, Context<TbmqCluster> context) {
        return reconcile(resource, context.getClient(), new InformerCaches(context));
    }

    /** A reconcile reading everything live (tests pass a mock server's or a real API server's client). */
    public UpdateControl<TbmqCluster> reconcile(TbmqCluster resource, KubernetesClient client) {
        return reconcile(resource, client, client == null ? null : WatchedObjects.live(client));
    }

    /** The reconcile itself: writes through {@code client}, reads what the operator watches from {@code watched}. */
    UpdateControl<TbmqCluster> reconcile(TbmqCluster resource, KubernetesClient client, WatchedObjects watched) {
        // JOSDK hands updateErrorStatus the object a failed reconcile changed. Its status goes back to what it
        // was, so the error status never records a plan that was not applied, nor hides a scale step's Event.
        TbmqClusterStatus before = resource.getStatus() == null ? null : STATUS_COPIES.clone(resource.getStatus());
        try {
            return reconcileSteps(resource, client, watched);
        } catch (RuntimeException e) {
            resource.setStatus(before);
            throw e;
        }
    }

    private UpdateControl<TbmqCluster> reconcileSteps(TbmqCluster resource, KubernetesClient client, WatchedObjects watched) {
        TbmqClusterStatus status = resource.getStatus() == null ? new TbmqClusterStatus() : resource.getStatus();
        resource.setStatus(status);
        long generation = resource.getMetadata().getGeneration() == null ? 0 : resource.getMetadata().getGeneration();
        Instant now = Instant.now();
        List<FieldError> errors = new java.util.ArrayList<>(SpecValidator.validate(resource.getSpec()));
        errors.addAll(SpecValidator.validateName(resource.getMetadata().getName(), resource.getSpec()));
        boolean secretsMissing = false;
        if (errors.isEmpty()) {
            String ns = resource.getMetadata().getNamespace();
            errors.addAll(SecretReferences.check(resource.getSpec(), name -> secrets.read(client, ns, name)));
            secretsMissing = !errors.isEmpty();
        }
        if (!errors.isEmpty()) {
            String message = errors.stream().map(FieldError::toString).collect(Collectors.joining("; "));
            LOG.warnf("TbmqCluster %s/%s is invalid: %s", resource.getMetadata().getNamespace(), resource.getMetadata().getName(),
                    message);
            // Nothing already running is touched: the last good plan stays in the status.
            Conditions.set(status.getConditions(), Conditions.DEGRADED, true, "InvalidSpec", message, generation, now);
            // What runs keeps running, but not as this spec asks: a Ready left from before would let
            // `kubectl wait --for=condition=Ready` pass an edit that was never applied.
            Conditions.set(status.getConditions(), Conditions.READY, false, "InvalidSpec", message, generation, now);
            Conditions.set(status.getConditions(), Conditions.PROGRESSING, false, "InvalidSpec", secretsMissing
                    ? "waiting for the Secrets the spec names, with their keys and values (looked for every "
                            + WHILE_SECRET_MISSING.toSeconds() + " s)"
                    : "waiting for a valid spec", generation, now);
            status.setObservedGeneration(generation);
            return secretsMissing ? UpdateControl.patchStatus(resource).rescheduleAfter(WHILE_SECRET_MISSING)
                    : UpdateControl.patchStatus(resource);
        }
        // Images left out of the spec are the operator's (in this in-memory copy only: the spec is never written).
        if (resource.getSpec().getBroker().getImage() == null) {
            resource.getSpec().getBroker().setImage(settings.brokerImage());
        }
        if (resource.getSpec().getRedis().getImage() == null) {
            resource.getSpec().getRedis().setImage(settings.redisImage());
        }
        Names names = new Names(resource.getMetadata().getName(), resource.getMetadata().getNamespace());
        Applier applier = new Applier(client, settings.serverSideApply(), watched, podCheck);
        EventRecorder events = new EventRecorder(client);
        KafkaProvisioner kafka = new KafkaProvisioner(applier, events, settings.strimziStatusTimeout());
        // Read before the status changes below: a read that fails ends this reconcile, and the error
        // status is written from this same object.
        int messagesNow = kafka.currentPartitions(resource, names, KafkaModel.MSG_ALL);
        int persistedNow = kafka.currentPartitions(resource, names, KafkaModel.MSG_PERSISTED);

        Plan plan = SizingModel.plan(resource.getSpec());
        // The status is written only when a reconcile completes, so a scale step interrupted by an
        // operator restart is still announced by the next reconcile.
        int announcedBrokers = status.getDesiredBrokers();
        int lastPartitions = PlanStatuses.lastPartitions(status);
        status.setPlan(PlanStatuses.of(plan));
        status.setDesiredBrokers(plan.brokers().value());

        int planned = plan.partitions().value();
        // What the topics have (managed Kafka), or what the brokers were last given (the partitions of an
        // external Kafka's topics are raised by the brokers and never lowered either).
        int existing = Math.max(messagesNow, lastPartitions);
        int partitions = Math.max(planned, existing);
        if (existing > planned) {
            String msg = "spec asks for " + planned + " partitions (" + plan.partitions().rule() + ") but the topics have "
                    + existing + "; Kafka partitions cannot be removed, so they stay at " + existing;
            if (Conditions.find(status.getConditions(), PARTITIONS_KEPT) == null
                    || !"True".equals(Conditions.find(status.getConditions(), PARTITIONS_KEPT).getStatus())) {
                events.warning(resource, "PartitionDecreaseRefused", msg);
            }
            Conditions.set(status.getConditions(), PARTITIONS_KEPT, true, "PartitionDecreaseRefused", msg, generation, now);
        } else {
            status.getConditions().removeIf(c -> PARTITIONS_KEPT.equals(c.getType()));
        }
        status.getPlan().getPartitions().setValue(Integer.toString(partitions));

        TopicPartitions topicPartitions = TopicPartitions.of(resource, partitions, persistedNow);
        ComponentStatus kafkaStatus = kafka.reconcile(resource, plan, names, topicPartitions);
        RedisProvisioner redis = new RedisProvisioner(applier, events, redisEndpoints);
        ComponentStatus redisStatus = redis.reconcile(resource, plan, names);
        String ns = resource.getMetadata().getNamespace();
        new io.tbmq.operator.provision.UsersProvisioner(applier).reconcile(resource, names, watched.users(ns, names.cluster()),
                watched.userSecrets(ns, names.cluster()), TbmqUserReconciler.credentialsFileNames(client, resource));
        BrokerProvisioner.Result brokers = new BrokerProvisioner(applier, events).reconcile(resource, plan, names, topicPartitions);
        boolean brokersRefused = Applier.PodsRefused.REASON.equals(brokers.status().reason());
        ComponentStatus brokersNow = redis.refusedWithNoneServing() && !brokers.status().ready() && !brokersRefused
                ? waitingForRedis(brokers.status()) : brokers.status();
        long load = SizingModel.brokerLoad(resource.getSpec());
        ComponentStatus brokerStatus = plan.brokerCapacity() >= load ? brokersNow
                : brokersNow.with(new ComponentStatus.Notice(UNDER_PROVISIONED, "CpuRequestTooSmall", plan.brokers().value()
                        + " brokers of " + plan.brokerCpuMillis().value() + "m CPU carry about " + plan.brokerCapacity()
                        + " msg/s at the TBMQ paper's 12,500 msg/s per vCPU, below the " + load
                        + " msg/s asked for: raise spec.broker.resources.requests.cpu or spec.overrides.brokers"));
        brokerStatus = ignoredSettings(resource.getSpec().getBroker().getConfig(),
                io.tbmq.operator.desired.BrokerModel.redisPasswordSecret(resource, names) != null, brokerStatus);
        if (brokersRefused) {
            // Not written: the scale step is announced by the pass that writes it; meanwhile, what runs asks for.
            status.setDesiredBrokers(brokers.desired());
            // An external Kafka's topics get their partitions from the brokers, which were not given the new count (nor any,
            // on a first pass: then none is recorded, so that a lower count asked later is not refused as a decrease).
            if (resource.getSpec().getKafka().getMode() == io.tbmq.operator.api.Mode.EXTERNAL) {
                status.getPlan().setPartitions(lastPartitions > 0
                        ? new io.tbmq.operator.api.PlanStatus.PlannedValue(Integer.toString(lastPartitions), status.getPlan().getPartitions().getRule())
                        : new io.tbmq.operator.api.PlanStatus.PlannedValue(null, "none given to the brokers yet: the API server refuses their pods"));
            }
        } else if (announcedBrokers > 0 && announcedBrokers != plan.brokers().value()) {
            events.normal(resource, "ScalingBrokers", "brokers " + announcedBrokers + " -> " + plan.brokers().value() + " ("
                    + plan.brokers().rule() + ")");
        }

        Condition monitored = Conditions.find(status.getConditions(), MonitoringProvisioner.CONDITION);
        MonitoringProvisioner.Result monitoring = new MonitoringProvisioner(applier).reconcile(resource, names, monitored != null);
        if (monitoring == null) {
            status.getConditions().removeIf(c -> MonitoringProvisioner.CONDITION.equals(c.getType()));
        } else {
            Conditions.set(status.getConditions(), MonitoringProvisioner.CONDITION, monitoring.ready(), monitoring.reason(),
                    monitoring.message(), generation, now);
        }

        if (applier.notChecked().isEmpty()) {
            status.getConditions().removeIf(c -> PODS_UNCHECKED.equals(c.getType()));
        } else {
            Conditions.set(status.getConditions(), PODS_UNCHECKED, true, "DryRunFailed", "the API server did not check the pods of "
                    + applier.notChecked().entrySet().stream().map(e -> "StatefulSet " + e.getKey() + " (" + e.getValue() + ")")
                            .collect(Collectors.joining(", "))
                    + " before they were written or replaced: pods a LimitRange or PodSecurity level refuses show only as pods"
                    + " their controller cannot make; asked again every pass", generation, now);
        }
        Set<String> noticed = new java.util.HashSet<>();
        for (ComponentStatus c : List.of(kafkaStatus, redisStatus, brokerStatus)) {
            Conditions.set(status.getConditions(), c.condition(), c.ready(), c.reason(), c.message(), generation, now);
            for (ComponentStatus.Notice n : c.notices()) {
                Conditions.set(status.getConditions(), n.type(), true, n.reason(), n.message(), generation, now);
                noticed.add(n.type());
            }
        }
        status.getConditions().removeIf(c -> NOTICES.contains(c.getType()) && !noticed.contains(c.getType()));
        status.setKafka(kafkaStatus.summary());
        status.setRedis(redisStatus.summary());
        status.setBrokers(brokers.status().summary());
        status.setReadyBrokers(brokers.ready());
        status.setEndpoints(brokers.endpoints());

        List<ComponentStatus> waiting = List.of(kafkaStatus, redisStatus, brokersNow).stream().filter(c -> !c.ready()).toList();
        ComponentStatus waitingFor = waiting.isEmpty() ? null : waiting.get(0);
        boolean ready = waitingFor == null;
        // Only worth a check while something is not ready: a working cluster proves its addresses.
        List<FieldError> unreachable = ready ? List.of() : reachability.apply(resource.getSpec());
        boolean blocked = waitingFor != null && "StrimziNotInstalled".equals(waitingFor.reason());
        List<ComponentStatus> refused = waiting.stream().filter(c -> Applier.PodsRefused.REASON.equals(c.reason())).toList();
        List<ComponentStatus> stopped = waiting.stream().filter(c -> refused.contains(c) || WAITING_FOR_REDIS.equals(c.reason())).toList();
        // Nothing moves until the spec (or the namespace's policy) changes: not progressing, and looked at less often.
        boolean onlyRefused = !refused.isEmpty() && stopped.size() == waiting.size();
        if (!unreachable.isEmpty()) {
            Conditions.set(status.getConditions(), Conditions.DEGRADED, true, "Unreachable",
                    unreachable.stream().map(FieldError::toString).collect(Collectors.joining("; ")), generation, now);
        } else if (!refused.isEmpty() && !blocked) {
            Conditions.set(status.getConditions(), Conditions.DEGRADED, true, Applier.PodsRefused.REASON,
                    refused.stream().map(ComponentStatus::message).collect(Collectors.joining("; ")), generation, now);
        } else {
            Conditions.set(status.getConditions(), Conditions.DEGRADED, blocked, blocked ? waitingFor.reason() : "SpecValid",
                    blocked ? waitingFor.message() : "spec is valid", generation, now);
        }
        if (onlyRefused) {
            Conditions.set(status.getConditions(), Conditions.PROGRESSING, false, Applier.PodsRefused.REASON,
                    "waiting for a spec whose pods the API server accepts (checked again every " + WHILE_REFUSED.toSeconds() + " s)",
                    generation, now);
        } else {
            // What is moving, not what waits for an edit (Degraded says that).
            ComponentStatus moving = waiting.stream().filter(c -> !stopped.contains(c)).findFirst().orElse(null);
            Conditions.set(status.getConditions(), Conditions.PROGRESSING, !ready, ready ? "Reconciled" : moving.reason(),
                    ready ? "every component matches the spec" : moving.message(), generation, now);
        }
        Conditions.set(status.getConditions(), Conditions.READY, ready, ready ? "Ready" : "NotReady",
                ready ? "Kafka, Redis and brokers are ready" : waitingFor.condition() + ": " + waitingFor.message(), generation,
                now);
        status.setObservedGeneration(generation);
        return UpdateControl.patchStatus(resource).rescheduleAfter(ready ? WHEN_READY
                : onlyRefused ? WHILE_REFUSED : REDIS_SETTLING.contains(waitingFor.reason()) ? WHILE_REDIS_SETTLES : WHILE_CHANGING);
    }

    /**
     * Deleting a TbmqCluster: its KafkaTopics go first, while Strimzi's topic operator can still
     * remove them (KafkaTeardown); then the garbage collector removes everything else it owns.
     */
    @Override
    public DeleteControl cleanup(TbmqCluster resource, Context<TbmqCluster> context) {
        return cleanup(resource, context.getClient());
    }

    public DeleteControl cleanup(TbmqCluster resource, KubernetesClient client) {
        Names names = new Names(resource.getMetadata().getName(), resource.getMetadata().getNamespace());
        if (new KafkaTeardown(client, new EventRecorder(client)).topicsGone(resource, names, Instant.now())) {
            return DeleteControl.defaultDelete();
        }
        return DeleteControl.noFinalizerRemoval().rescheduleAfter(WHILE_CHANGING);
    }

    @Override
    public ErrorStatusUpdateControl<TbmqCluster> updateErrorStatus(TbmqCluster resource, Context<TbmqCluster> context,
            Exception e) {
        TbmqClusterStatus status = resource.getStatus() == null ? new TbmqClusterStatus() : resource.getStatus();
        resource.setStatus(status);
        long generation = resource.getMetadata().getGeneration() == null ? 0 : resource.getMetadata().getGeneration();
        // A refused request carries the API server's Status; a failed connection carries none.
        String message = e instanceof KubernetesClientException k
                ? "Kubernetes API: " + (k.getStatus() != null && k.getStatus().getMessage() != null ? k.getStatus().getMessage() : k.getMessage())
                : e.getMessage();
        Instant now = Instant.now();
        Conditions.set(status.getConditions(), Conditions.DEGRADED, true, "ReconcileError", String.valueOf(message), generation, now);
        // The spec is not applied (a Ready from before would pass `kubectl wait` on an edit that failed): tried
        // again with a backoff up to once a minute, for as long as it fails (@GradualRetry above).
        Conditions.set(status.getConditions(), Conditions.PROGRESSING, true, "ReconcileError",
                "the spec is not applied yet; trying again", generation, now);
        Conditions.set(status.getConditions(), Conditions.READY, false, "ReconcileError", String.valueOf(message), generation, now);
        return ErrorStatusUpdateControl.patchStatus(resource);
    }
}
