package io.tbmq.broker.app;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;

import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.common.config.TopicConfig;
import org.jboss.logging.Logger;

import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.runtime.Quarkus;
import io.quarkus.runtime.ShutdownEvent;
import io.quarkus.runtime.StartupEvent;
import io.tbmq.broker.cluster.ClusterDirectory;
import io.tbmq.broker.cluster.DownlinkHandler;
import io.tbmq.broker.cluster.DuplicateNodeId;
import io.tbmq.broker.cluster.ForeignCluster;
import io.tbmq.broker.cluster.NodeLiveness;
import io.tbmq.broker.cluster.OrphanAdoption;
import io.tbmq.broker.cluster.SessionFeed;
import io.tbmq.broker.config.BrokerConfig;
import io.tbmq.broker.kafka.ApplicationSessions;
import io.tbmq.broker.kafka.ApplicationTopics;
import io.tbmq.broker.kafka.CompactedTail;
import io.tbmq.broker.kafka.KafkaBackbone;
import io.tbmq.broker.kafka.KafkaClients;
import io.tbmq.broker.kafka.KafkaDestinations;
import io.tbmq.broker.kafka.KafkaListenerCheck;
import io.tbmq.broker.kafka.KafkaMessageLog;
import io.tbmq.broker.kafka.KafkaSender;
import io.tbmq.broker.kafka.KafkaTopics;
import io.tbmq.broker.kafka.LogConsumer;
import io.tbmq.broker.kafka.RetainedLog;
import io.tbmq.broker.kafka.SessionStateLog;
import io.tbmq.broker.live.LiveSettings;
import io.tbmq.broker.metrics.BrokerMetrics;
import io.tbmq.broker.persistence.DeviceWrites;
import io.tbmq.broker.persistence.PersistedHandler;
import io.tbmq.broker.persistence.ApplicationSessionStore;
import io.tbmq.broker.persistence.DeviceSessionStore;
import io.tbmq.broker.persistence.SessionStores;
import io.tbmq.broker.persistence.redis.DeviceMessageStore;
import io.tbmq.broker.persistence.redis.RedisConnector;
import io.tbmq.broker.persistence.redis.RedisKeys;
import io.tbmq.broker.persistence.redis.RedisMemory;
import io.tbmq.broker.record.NodeHeartbeat;
import io.tbmq.broker.record.WillCodec;
import io.tbmq.broker.retain.RetainedFeed;
import io.tbmq.broker.routing.RoutingHandler;
import io.tbmq.broker.subscription.SubscriptionTrie;
import io.tbmq.broker.transport.MqttServer;

/**
 * The running broker node. Start: topics provisioned, the cluster's state read back (sessions of
 * every node from tbmq.client.session, retained messages, node heartbeats), consumers started, and
 * only then the MQTT listeners bound (a client must find its session). Stop, in the order that loses nothing: stop accepting, let Kafka acknowledge
 * what is in flight (those PUBACKs still go out), DISCONNECT 0x8B to clients, commit, close.
 */
@ApplicationScoped
public class BrokerApplication {
    private static final Logger LOG = Logger.getLogger(BrokerApplication.class);

    @Inject
    BrokerConfig config;

    @Inject
    MeterRegistry registry;

    private BrokerCore core;
    private KafkaSender sender;
    private KafkaMessageLog messageLog;
    private KafkaBackbone kafka;
    private RedisConnector redis;
    private DeviceMessageStore deviceMessages;
    private ApplicationSessions applications;
    private MqttServer server;
    private volatile boolean started;
    private volatile boolean draining;
    private volatile String startupStep = "starting";
    /** Whether this node sent a heartbeat (its first one, before it read its sessions): it says that it leaves, then. */
    private boolean claimed;
    /** Set once this node has read its sessions: its heartbeats stop saying it is starting, and it may act as caretaker. */
    private volatile boolean sessionsRead;
    /**
     * How long a node may go on starting after it claimed its id. Meanwhile it holds its sessions (the
     * caretaker leaves them to it), so a start stuck on anything stops here and says it left.
     */
    private static final Duration START_LIMIT = Duration.ofMinutes(5);
    private DuplicateNodeId duplicate;
    private final List<CompactedTail> tails = new java.util.concurrent.CopyOnWriteArrayList<>();
    private volatile java.util.concurrent.ScheduledFuture<?> heartbeat;
    /** Orders heartbeats before the record saying this node left: none may follow it. */
    private final Object heartbeatSends = new Object();
    /** This process, in its heartbeats: another process with this node's id is told apart by it. */
    private final String incarnation = java.util.UUID.randomUUID().toString().replace("-", "").substring(0, 16);
    private boolean left;
    private KafkaTopics topics;
    private java.util.concurrent.ScheduledExecutorService liveSettings;
    private java.util.concurrent.ScheduledExecutorService janitor;
    private java.util.concurrent.ScheduledExecutorService reloads;
    private io.tbmq.broker.admin.AdminApi admin;

    void onStart(@Observes StartupEvent event) {
        if (config.persistence().deviceMessagesLimit() > 0xFFFF) {
            throw new IllegalArgumentException("tbmq.persistence.device-messages-limit can't be greater than 65535 (got "
                    + config.persistence().deviceMessagesLimit() + ")");
        }
        if (config.persistence().acknowledgementRetry().compareTo(Duration.ofSeconds(1)) < 0) {
            // Before any connection is made: the store checks it too, later.
            throw new IllegalArgumentException("tbmq.persistence.acknowledgement-retry must be at least 1s, got "
                    + config.persistence().acknowledgementRetry());
        }
        String node = config.nodeId();
        if (!node.matches("[A-Za-z0-9._-]{1,200}")) {
            throw new IllegalArgumentException("tbmq.node-id must be letters, digits, '.', '_' or '-' (it names Kafka topics), got '"
                    + node + "'");
        }
        KafkaTopics topics = new KafkaTopics(config.kafka().topicPrefix().orElse(""));
        this.topics = topics;
        KafkaClients clients = new KafkaClients(config.kafka(), node);
        BrokerMetrics metrics = new BrokerMetrics(registry);
        java.util.Properties kafkaCommon = clients.common("listener-check");
        new KafkaListenerCheck(Duration.ofSeconds(3)).verify(kafkaCommon.getProperty(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG),
                kafkaCommon.getProperty(CommonClientConfigs.SECURITY_PROTOCOL_CONFIG, "PLAINTEXT"));
        sender = new KafkaSender(clients);
        kafka = new KafkaBackbone(config.kafka(), clients);
        String cluster = config.cluster().name().orElse(null);
        if (cluster != null && !cluster.matches("[A-Za-z0-9._/-]{1,300}")) {
            throw new IllegalArgumentException("tbmq.cluster.name (TBMQ_CLUSTER_NAME) must be letters, digits, '.', '_', '/' or '-'"
                    + " (it goes into the heartbeats' text), not '" + cluster + "'");
        }
        NodeLiveness liveness = new NodeLiveness(node, incarnation, config.cluster().nodeTimeout(), config.cluster().heartbeatInterval(),
                cluster);
        String pod = config.cluster().podUid().orElse(null);
        if (pod != null && !pod.matches("[0-9a-fA-F-]{1,64}")) {
            // It goes into the heartbeats' text, which other brokers read field by field.
            throw new IllegalArgumentException("tbmq.cluster.pod-uid (TBMQ_CLUSTER_POD_UID) must be a Kubernetes pod UID"
                    + " (hex digits and hyphens), not '" + pod + "'");
        }
        DuplicateNodeId duplicate = new DuplicateNodeId(node, liveness, pod);
        ForeignCluster foreign = new ForeignCluster(cluster, topics.clusterNodes(), liveness);
        this.duplicate = duplicate;
        messageLog = new KafkaMessageLog(sender, topics, metrics, kafka.admin(), config.kafka().partitionMoveWait(),
                liveness::movesUnderWay, this::announceMove);
        ApplicationTopics appTopics = new ApplicationTopics(config.kafka().topicPrefix().orElse(""), kafka.admin(),
                config.kafka().replicationFactor(), config.persistence().applicationTopicRetention());
        applications = new ApplicationSessions(clients, appTopics, config.mqtt().maxQueuedMessages(),
                config.persistence().applicationFetchMaxWait());
        redis = new RedisConnector(config.redis(), metrics::redisScript);
        new RedisMemory(redis, config.redis().memoryCheckInterval(), byMaster -> metrics.redisMemory(
                byMaster.entrySet().stream().collect(java.util.stream.Collectors.toMap(Map.Entry::getKey, e -> e.getValue().used())),
                byMaster.entrySet().stream().collect(java.util.stream.Collectors.toMap(Map.Entry::getKey, e -> e.getValue().max())),
                byMaster.entrySet().stream().collect(java.util.stream.Collectors.toMap(Map.Entry::getKey, e -> e.getValue().evicts()))))
                .start();
        DeviceMessageStore devices = new DeviceMessageStore(redis, new RedisKeys(config.redis().slotGroups()),
                config.persistence().deviceMessagesLimit(), config.redis().callsPerMaster(), config.persistence().acknowledgementRetry());
        deviceMessages = devices;
        io.micrometer.core.instrument.FunctionCounter.builder("tbmq.redis.acknowledgements.given.up", devices,
                DeviceMessageStore::acknowledgementsGivenUp).description("acknowledged DEVICE messages whose removal from Redis"
                        + " was given up (tbmq.persistence.acknowledgement-retry): they come again, with DUP").register(registry);
        DeviceSessionStore deviceSessions = new DeviceSessionStore(devices, config.persistence().reconnectRecheck());
        SessionStores stores = new SessionStores(deviceSessions, new ApplicationSessionStore(applications, deviceSessions),
                () -> config.persistence().refusePublishesWhileStoreDown() && !redis.reachable());
        SubscriptionTrie trie = new SubscriptionTrie();
        ClusterDirectory directory = new ClusterDirectory(trie);
        KafkaDestinations destinations = new KafkaDestinations(sender, topics, appTopics);
        core = new BrokerCore(config.mqtt(), config.security(), metrics, stores, route -> messageLog, trie,
                new ClusterLinks(destinations, new SessionStateLog(sender, topics, node), new RetainedLog(sender, topics), directory));
        SessionFeed.LostConnections lost = state -> core.wills().connectionLost(WillCodec.decode(state.will()),
                state.expiryIntervalSeconds());
        DeviceWrites deviceWrites = new DeviceWrites(devices, core.sessions(), metrics,
                config.persistence().deviceMessageTtl().toSeconds(), directory, destinations);
        PersistedHandler persisted = new PersistedHandler(deviceWrites);
        RoutingHandler routing = new RoutingHandler(core.router(), deviceWrites::batch);
        DownlinkHandler downlinks = new DownlinkHandler(core.sessions(), directory, destinations, metrics);
        OrphanAdoption orphans = new OrphanAdoption(node, liveness, directory, core.sessions(), lost);
        io.micrometer.core.instrument.Gauge.builder("tbmq.build.info", () -> 1).description("the version this broker was built as")
                .tag("version", version()).register(registry);
        metrics.gauge("tbmq.cluster.remote.sessions", "sessions other nodes hold", directory::size);
        metrics.gauge("tbmq.cluster.nodes.alive", "broker nodes with a recent heartbeat", () -> liveness.aliveNodes().size());
        io.micrometer.core.instrument.FunctionCounter.builder("tbmq.cluster.node.id.duplicate.heartbeats", liveness,
                NodeLiveness::otherProcessHeartbeats).description("heartbeats with this node's id read from another broker process")
                .register(registry);
        io.micrometer.core.instrument.FunctionCounter.builder("tbmq.cluster.foreign.heartbeats", liveness,
                NodeLiveness::foreignHeartbeats).description("heartbeats read from nodes of another cluster (tbmq.cluster.name)"
                        + " on this cluster's Kafka topics").register(registry);
        metrics.gauge("tbmq.cluster.heartbeat.current", "1 while this node's own heartbeats come back to it through Kafka in time",
                () -> liveness.viewIsCurrent() ? 1 : 0);
        // What readiness reads, as series an alert can follow (a pod that is not ready is only seen by Kubernetes).
        metrics.gauge("tbmq.kafka.reachable", "1 while Kafka answered this node within the last 6 s and its topics are in place",
                () -> kafka.ready() ? 1 : 0);
        metrics.gauge("tbmq.redis.reachable", "1 while Redis (on a Cluster: any master) answered within the last 6 s",
                () -> redis.reachable() ? 1 : 0);
        for (String consumed : List.of(topics.msgAll(), topics.msgPersisted(), topics.downlinkBasic(node), topics.downlinkPersisted(node))) {
            metrics.gauge("tbmq.kafka.consumer.lag", "records this node's consumers are behind the topic's end", "topic", consumed,
                    () -> kafka.lag(consumed));
            metrics.gauge("tbmq.kafka.consumer.stalled.seconds", "seconds the oldest record this node's consumers of the topic"
                    + " handed on has waited to be finished, through reads again, or a partition has gone unread for want of its"
                    + " hand-over (0 while nothing waits)", "topic", consumed, () -> kafka.stalledSeconds(consumed));
        }
        admin = new io.tbmq.broker.admin.AdminApi(new io.tbmq.broker.admin.AdminToken(config.admin().token(), config.admin().tokenFile()),
                new io.tbmq.broker.admin.ClusterSessions(node, core.sessions(), directory, (holder, clientId, command) -> sender.send(
                        topics.downlinkBasic(holder), clientId.getBytes(StandardCharsets.UTF_8), command)),
                core.retained());
        server = new MqttServer(config.listeners(), core.services());
        Map<String, String> compacted = Map.of(TopicConfig.CLEANUP_POLICY_CONFIG, TopicConfig.CLEANUP_POLICY_COMPACT);
        int downlinkPartitions = config.cluster().downlinkPartitions();
        java.util.Set<String> warmed = new java.util.HashSet<>();

        Thread startup = new Thread(() -> {
            try {
                startupStep = "provisioning Kafka topics";
                // The heartbeats' first, then this node's own topics, which another process with this id uses already;
                // none if another cluster uses these topics, whose janitor would never delete them.
                kafka.provisionFirst(List.of(new KafkaBackbone.TopicSpec(topics.clusterNodes(), 1, compacted)));
                sender.warm(topics.clusterNodes());
                startupStep = "reading nodes";
                CompactedTail nodes = new CompactedTail(clients, "nodes", topics.clusterNodes(), liveness).start();
                tails.add(nodes);
                nodes.awaitCaughtUp(Duration.ofMinutes(5));
                // Before this node changes a shared topic, takes its sessions back (its clients' Wills go out) or joins a group.
                startupStep = "checking that no other cluster uses these Kafka topics";
                foreign.checkBeforeJoining();
                startupStep = "provisioning Kafka topics";
                kafka.provisionFirst(List.of(
                        new KafkaBackbone.TopicSpec(topics.downlinkBasic(node), downlinkPartitions, Map.of()),
                        new KafkaBackbone.TopicSpec(topics.downlinkPersisted(node), downlinkPartitions, Map.of())));
                startupStep = "checking that no other broker runs with node id " + node;
                if (!duplicate.checkBeforeJoining(config.cluster().heartbeatInterval(), () -> draining)
                        || !duplicate.checkAfterOwnHeartbeat(this::claimNodeId, config.cluster().heartbeatInterval(),
                                Duration.ofMinutes(5), () -> draining)) {
                    return; // stopping
                }
                // From here on heartbeats say the node is starting: however long it takes, the others count it alive
                // (the caretaker leaves its sessions to it, and another process with its id hears it) but not as caretaker.
                long claimedAt = System.nanoTime();
                java.util.concurrent.atomic.AtomicBoolean gaveUp = new java.util.concurrent.atomic.AtomicBoolean();
                Runnable beat = () -> {
                    sendHeartbeat();
                    duplicate.report();
                    foreign.report();
                    if (!sessionsRead) {
                        if (System.nanoTime() - claimedAt > START_LIMIT.toNanos() && gaveUp.compareAndSet(false, true)) {
                            String why = String.format("node %s is still %s %d minutes after it claimed its id: stopping, so that"
                                    + " another node takes its sessions over", node, startupStep, START_LIMIT.toMinutes());
                            LOG.error(why);
                            TerminationMessage.record(why);
                            Quarkus.asyncExit(1);
                        }
                        return;
                    }
                    try {
                        // A first send to a topic waits for its metadata: fetch it here, not on a Redis or Kafka I/O thread.
                        for (String other : liveness.aliveNodes()) {
                            if (warmed.add(other)) {
                                sender.warm(topics.downlinkBasic(other), topics.downlinkPersisted(other));
                            }
                        }
                        orphans.adoptOrphans();
                    } catch (RuntimeException e) {
                        LOG.warnf(e, "adopting the sessions of dead nodes failed; retrying at the next heartbeat");
                    }
                };
                synchronized (heartbeatSends) {
                    if (left) {
                        return; // stopping
                    }
                    long every = config.cluster().heartbeatInterval().toMillis();
                    heartbeat = core.timers().scheduleAtFixedRate(beat, every, every, TimeUnit.MILLISECONDS);
                }
                startupStep = "provisioning Kafka topics";
                kafka.provision(List.of(
                        new KafkaBackbone.TopicSpec(topics.msgAll(), config.kafka().msgAllPartitions(), Map.of()),
                        new KafkaBackbone.TopicSpec(topics.msgPersisted(), config.persistence().persistedPartitions(), Map.of()),
                        new KafkaBackbone.TopicSpec(topics.clientSessions(), 1, compacted),
                        new KafkaBackbone.TopicSpec(topics.retained(), 1, compacted)));
                sender.warm(topics.msgAll(), topics.msgPersisted(), topics.clientSessions(), topics.retained());
                startupStep = "reading the partitions of tbmq.msg.all";
                messageLog.start();
                startupStep = "reading sessions and retained messages";
                tails.add(new CompactedTail(clients, "retained", topics.retained(), new RetainedFeed(core.retained())).start());
                tails.add(new CompactedTail(clients, "sessions", topics.clientSessions(),
                        new SessionFeed(node, core.sessions(), directory, lost)).start());
                for (CompactedTail tail : tails) {
                    tail.awaitCaughtUp(Duration.ofMinutes(5));
                }
                if (draining) {
                    return; // stopping, perhaps after the start took too long: the caretaker takes the sessions over
                }
                sessionsRead = true;
                try {
                    core.timers().execute(beat); // tells the others now, not at the next interval
                } catch (java.util.concurrent.RejectedExecutionException e) {
                    return; // stopping
                }
                startupStep = "starting consumers";
                Duration batchTimeout = clients.batchTimeout();
                kafka.consume("msg-all", clients, topics.msgAllGroup(), topics.msgAll(), config.kafka().msgAllConsumers(),
                        routing, batchTimeout, config.kafka().msgAllReadAhead());
                // Written by brokers of earlier versions only: drained during a rolling upgrade.
                kafka.drain("persisted", clients, topics.msgPersistedGroup(), topics.msgPersisted(),
                        config.persistence().persistedConsumers(), persisted, batchTimeout);
                // Only other nodes write to this node's downlink topics: while it is alone, their consumers rest.
                LogConsumer.Rest alone = new LogConsumer.Rest(() -> liveness.viewIsCurrent() && liveness.aliveNodes().size() == 1,
                        Duration.ofSeconds(1));
                kafka.consume("downlink-basic", clients, topics.downlinkGroup(node) + "-basic", topics.downlinkBasic(node),
                        config.cluster().downlinkConsumers(), downlinks, batchTimeout, alone);
                kafka.consume("downlink-persisted", clients, topics.downlinkGroup(node) + "-persisted",
                        topics.downlinkPersisted(node), config.cluster().downlinkConsumers(), downlinks, batchTimeout, alone);
                janitor = daemon("tbmq-janitor");
                long sweep = Math.max(1, Math.min(30, config.cluster().downlinkRetention().toSeconds() / 2));
                janitor.scheduleWithFixedDelay(new io.tbmq.broker.kafka.DownlinkJanitor(kafka.admin(), topics, liveness,
                        config.cluster().downlinkRetention()), sweep, sweep, TimeUnit.SECONDS);
                // A node started while the others move topics to new partitions of tbmq.msg.all joins them first.
                startupStep = "listening for a move of tbmq.msg.all's topics under way";
                messageLog.joinMoveUnderWay(liveness.aliveNodes().size() > 1);
                startupStep = "binding listeners";
                if (draining) {
                    return; // stopping
                }
                server.start();
                config.liveSettingsFile().ifPresent(file -> watchLiveSettings(file, topics, appTopics));
                watchCredentialsAndCertificates();
                started = true;
                LOG.infof("node %s (TBMQ %s) started as process %s; Kafka %s, Redis %s %s; %d other nodes alive", node, version(), incarnation,
                        config.kafka().bootstrapServers(),
                        config.redis().mode(), config.redis().nodes(), liveness.aliveNodes().size() - 1);
            } catch (RuntimeException e) {
                if (draining) {
                    // Stopping closed what the start used: that is not why the node stops.
                    LOG.debugf(e, "node %s stopped while %s", node, startupStep);
                    return;
                }
                LOG.errorf(e, "node %s failed to start while %s", node, startupStep);
                TerminationMessage.record("node " + node + " failed to start while " + startupStep + ": " + TerminationMessage.describe(e));
                Quarkus.asyncExit(1);
            } catch (InterruptedException e) {
                if (draining) {
                    Thread.currentThread().interrupt();
                    return;
                }
                LOG.errorf("node %s interrupted while %s", node, startupStep);
                TerminationMessage.record("node " + node + " interrupted while " + startupStep);
                Thread.currentThread().interrupt();
                Quarkus.asyncExit(1);
            }
        }, "tbmq-startup");
        startup.setDaemon(true);
        startup.start();
    }

    /**
     * The settings a running broker applies from tbmq.live-settings-file, as docs/configuration.md lists them
     * (a test holds the two equal; the operator puts exactly these in the file and rolls the brokers for any other).
     */
    public static final List<String> LIVE_SETTINGS = List.of("tbmq.redis.lettuce-batch-size", "tbmq.kafka.msg-all-partitions",
            "tbmq.persistence.persisted-partitions", "tbmq.kafka.replication-factor", "tbmq.listeners.<l>.max-connections",
            "tbmq.listeners.<l>.max-connection-rate", "tbmq.security.password-cache-size", "quarkus.log.level",
            "quarkus.log.category.\"<category>\".level");

    /** Settings the operator changes with the load (batch size, partitions, replication), limits and log levels apply without a restart. */
    private void watchLiveSettings(String file, KafkaTopics topics, ApplicationTopics appTopics) {
        LiveSettings live = new LiveSettings(java.nio.file.Path.of(file))
                .onMatching(java.util.regex.Pattern.compile("tbmq\\.listeners\\.(tcp|tls|ws|wss)\\.max-connections"),
                        (key, v) -> server.maxConnections(key.split("\\.")[2], Integer.parseInt(v)))
                .onMatching(java.util.regex.Pattern.compile("tbmq\\.listeners\\.(tcp|tls|ws|wss)\\.max-connection-rate"),
                        (key, v) -> server.maxConnectionRate(key.split("\\.")[2], Integer.parseInt(v)))
                .on("tbmq.security.password-cache-size", v -> core.services().authenticator().passwordCacheSize(Integer.parseInt(v)))
                .onMatching(io.tbmq.broker.live.LogLevels.KEY, io.tbmq.broker.live.LogLevels::apply)
                .on("tbmq.redis.lettuce-batch-size", v -> redis.batchSize(Integer.parseInt(v)))
                .on("tbmq.kafka.msg-all-partitions", v -> kafka.raisePartitions(topics.msgAll(), Integer.parseInt(v)))
                .on("tbmq.persistence.persisted-partitions", v -> kafka.raisePartitions(topics.msgPersisted(), Integer.parseInt(v)))
                .on("tbmq.kafka.replication-factor", v -> {
                    short rf = Short.parseShort(v);
                    kafka.replicationFactor(rf);
                    appTopics.replicationFactor(rf);
                })
                .baseline();
        long every = config.liveSettingsInterval().toMillis();
        liveSettings = daemon("tbmq-live-settings");
        liveSettings.scheduleWithFixedDelay(live::refresh, every, every, TimeUnit.MILLISECONDS);
    }

    /** Credentials and TLS files apply without a restart (Secrets edited, certificates renewed). */
    private void watchCredentialsAndCertificates() {
        long every = config.security().reloadInterval().toMillis();
        reloads = daemon("tbmq-reloads");
        core.credentialsReloader(server::recheckCredentials)
                .ifPresent(reloader -> reloads.scheduleWithFixedDelay(reloader, every, every, TimeUnit.MILLISECONDS));
        reloads.scheduleWithFixedDelay(() -> server.reloadTls(applied -> core.metrics().reloaded("tls", applied)), every, every,
                TimeUnit.MILLISECONDS);
    }

    private static java.util.concurrent.ScheduledExecutorService daemon(String name) {
        return java.util.concurrent.Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, name);
            t.setDaemon(true);
            return t;
        });
    }

    void onStop(@Observes ShutdownEvent event) {
        draining = true;
        Duration grace = config.shutdown().grace();
        LOG.infof("node %s draining (grace %s)", config.nodeId(), grace);
        if (server != null && started) {
            server.stopAccepting();
        }
        if (messageLog != null) {
            messageLog.release();
        }
        if (sender != null) {
            sender.flush();
        }
        if (server != null && started) {
            awaitAcknowledged();
            server.disconnectAll(config.shutdown().serverReference().orElse(null));
            server.awaitClosed(grace);
            server.stop();
        }
        if (deviceMessages != null) {
            // Acknowledgements read since: before this node says it left, as the node adopting its sessions might clear one.
            int notRemoved = deviceMessages.finish(grace);
            if (notRemoved > 0) {
                LOG.warnf("%d acknowledged messages not removed from Redis within %d ms: they come again, with DUP, when their clients reconnect",
                        notRemoved, grace.toMillis());
            }
        }
        boolean announced;
        synchronized (heartbeatSends) {
            if (heartbeat != null) {
                heartbeat.cancel(false);
            }
            left = true;
            announced = claimed;
            if (announced && duplicate != null && duplicate.heard()) {
                // That record would be read as the other process leaving: the other nodes would adopt its sessions.
                LOG.warnf("not telling the other nodes that %s left: another process with its id runs", config.nodeId());
            } else if (announced) {
                // Left: the other nodes adopt this node's sessions now rather than after the node timeout.
                sender.send(topics.clusterNodes(), config.nodeId().getBytes(StandardCharsets.UTF_8), null);
            }
        }
        if (announced) {
            sender.flush();
        }
        if (liveSettings != null) {
            liveSettings.shutdownNow();
        }
        if (reloads != null) {
            reloads.shutdownNow();
        }
        if (janitor != null) {
            janitor.shutdownNow();
        }
        tails.forEach(CompactedTail::close);
        if (kafka != null) {
            kafka.close();
        }
        if (applications != null) {
            applications.close();
        }
        if (core != null) {
            core.close();
        }
        if (sender != null) {
            sender.close();
        }
        if (redis != null) {
            redis.close();
        }
        LOG.infof("node %s stopped", config.nodeId());
    }

    /**
     * Clients acknowledge what they have before they are told to disconnect (nothing new is sent
     * meanwhile), and their acknowledgements reach Redis before they can reconnect to another node
     * and load their sessions there. Both within {@code tbmq.shutdown.acknowledgement-wait}.
     */
    private void awaitAcknowledged() {
        server.holdDeliveries();
        Duration wait = config.shutdown().acknowledgementWait();
        long deadline = System.nanoTime() + wait.toNanos();
        int inFlight = server.inFlight();
        if (inFlight > 0 && !wait.isZero()) {
            LOG.infof("waiting up to %d ms for clients to acknowledge %d messages in flight", wait.toMillis(), inFlight);
            int unacknowledged = server.awaitAcknowledged(wait);
            if (unacknowledged > 0) {
                LOG.infof("%d messages still unacknowledged after %d ms: they are sent again, with DUP, when their clients reconnect",
                        unacknowledged, wait.toMillis());
            }
        }
        if (deviceMessages != null) {
            // What is not written by then is tried again once the connections are closed.
            deviceMessages.finish(Duration.ofNanos(Math.max(0, deadline - System.nanoTime())));
        }
        if (sender != null) {
            // PUBACKs for what the clients published meanwhile go out before the DISCONNECTs.
            sender.flush();
        }
    }

    /** A heartbeat before the regular ones, unless the node is stopping: from now on it says that it leaves. */
    private void claimNodeId() {
        synchronized (heartbeatSends) {
            if (!left) {
                claimed = true;
                sendHeartbeat();
            }
        }
    }

    /** This node is alive, still starting or not, and moving topics to new partitions of tbmq.msg.all or not. */
    private void sendHeartbeat() {
        synchronized (heartbeatSends) {
            if (!left) {
                NodeHeartbeat beat = messageLog.heartbeat(System.currentTimeMillis()).from(incarnation)
                        .inPod(config.cluster().podUid().orElse(null)).ofCluster(config.cluster().name().orElse(null));
                sender.send(topics.clusterNodes(), config.nodeId().getBytes(StandardCharsets.UTF_8),
                        (sessionsRead ? beat : beat.whileStarting()).encode());
            }
        }
    }

    /** A move began or ended: a node starting now hears of it at once rather than at the next heartbeat. */
    private void announceMove() {
        if (heartbeat == null) {
            return; // not heartbeating yet: the first heartbeat says it
        }
        try {
            core.timers().execute(this::sendHeartbeat);
        } catch (java.util.concurrent.RejectedExecutionException e) {
            // stopping
        }
    }

    /** The version the image was tagged with (TBMQ_VERSION, set by scripts/images.sh), else the build's. */
    static String version() {
        String tagged = System.getenv("TBMQ_VERSION");
        return tagged != null && !tagged.isBlank() ? tagged
                : org.eclipse.microprofile.config.ConfigProvider.getConfig().getOptionalValue("quarkus.application.version", String.class)
                        .orElse("unknown");
    }

    /** Ready for traffic: started, listeners bound, Kafka and Redis reachable, not draining. */
    public boolean ready() {
        return started && !draining && server.isListening() && kafka.ready() && redis.reachable();
    }

    /**
     * Alive unless draining with the listeners closed, or a Kafka consumer stopped on an error: its
     * partitions would go unread while the node looks healthy, and a restart gives them a consumer.
     */
    public boolean live() {
        return (!draining || server == null || server.isListening()) && (kafka == null || kafka.failedConsumer() == null);
    }

    public String status() {
        if (draining) {
            return "draining";
        }
        String failed = kafka == null ? null : kafka.failedConsumer();
        if (failed != null) {
            return "kafka consumer stopped: " + failed;
        }
        if (!started) {
            return startupStep + "; kafka " + (kafka == null ? "not started" : kafka.status());
        }
        return "mqtt " + (server.isListening() ? "listening" : "not listening") + ", kafka " + kafka.status() + ", redis "
                + redis.status();
    }

    public MqttServer server() {
        return server;
    }

    /** The admin API once the node has started (it answers for sessions only once it has read the directory), else null. */
    public io.tbmq.broker.admin.AdminApi admin() {
        return started ? admin : null;
    }
}
