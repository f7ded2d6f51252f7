package io.tbmq.broker.app;

import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Function;

import org.jboss.logging.Logger;

import io.netty.util.concurrent.DefaultThreadFactory;
import io.tbmq.broker.auth.Authenticator;
import io.tbmq.broker.auth.CredentialStore;
import io.tbmq.broker.config.MqttConfig;
import io.tbmq.broker.config.SecurityConfig;
import io.tbmq.broker.metrics.BrokerMetrics;
import io.tbmq.broker.persistence.SessionStores;
import io.tbmq.broker.protocol.BrokerServices;
import io.tbmq.broker.protocol.DeliveryHold;
import io.tbmq.broker.record.PublishMessage;
import io.tbmq.broker.retain.RetainedStore;
import io.tbmq.broker.routing.MessageLog;
import io.tbmq.broker.routing.Publisher;
import io.tbmq.broker.routing.Router;
import io.tbmq.broker.session.Session;
import io.tbmq.broker.session.SessionRegistry;
import io.tbmq.broker.subscription.SubscriptionTrie;
import io.tbmq.broker.util.LogText;
import io.tbmq.broker.util.RateLimitedLog;
import io.tbmq.broker.will.WillService;

/**
 * The broker's in-process parts wired together around a {@link MessageLog}: subscriptions,
 * sessions, retained messages, Wills, authentication, routing. No sockets and no Kafka here, so
 * unit tests build the same object graph with an in-memory log.
 */
public final class BrokerCore implements AutoCloseable {
    private static final Logger LOG = Logger.getLogger(BrokerCore.class);
    /** A stalled subscriber loses messages beyond its queue: said once a second at most, counted always. */
    private static final RateLimitedLog QUEUE_FULL = new RateLimitedLog(Logger.getLogger(SessionRegistry.class), 1);

    private final BrokerMetrics metrics;
    private final ScheduledExecutorService timers;
    private final ExecutorService authExecutor;
    private final SubscriptionTrie trie;
    private final RetainedStore retained;
    private final SessionRegistry sessions;
    private volatile Router router;
    private final BrokerServices services;
    private final MessageLog log;
    private final Publisher publisher;
    private final WillService wills;
    private final Authenticator authenticator;
    /** Where the credentials came from and what they were at start; null for inline credentials. */
    private final List<Path> credentialFiles;
    private final List<byte[]> loadedCredentials;
    private final boolean inlineCredentials;

    /**
     * {@code logFactory} receives the routing entry point, so an in-process log can route what it
     * appends; {@code trie} is shared with {@code links.remote()}, which mirrors other nodes' subscriptions into it.
     */
    public BrokerCore(MqttConfig mqtt, SecurityConfig security, BrokerMetrics metrics, SessionStores stores,
            Function<Consumer<PublishMessage>, MessageLog> logFactory, SubscriptionTrie trie, ClusterLinks links) {
        this.metrics = metrics;
        this.trie = trie;
        ScheduledThreadPoolExecutor scheduler = new ScheduledThreadPoolExecutor(1, new DefaultThreadFactory("tbmq-timers", true));
        scheduler.setRemoveOnCancelPolicy(true);
        this.timers = scheduler;
        this.authExecutor = security.authThreads() > 0
                ? Executors.newFixedThreadPool(security.authThreads(), new DefaultThreadFactory("tbmq-auth", true)) : null;
        this.retained = new RetainedStore(mqtt.maxRetainedMessages());
        // An in-process log routes what it appends; the router exists by the time anything is appended.
        this.log = logFactory.apply(message -> router.route(message));
        this.publisher = new Publisher(log, retained, metrics, links.replication());
        this.wills = new WillService(publisher, timers);
        this.sessions = new SessionRegistry(trie, timers, mqtt.maxQueuedMessages(), mqtt.queueQos0WhenOffline(),
                (clientId, reason) -> {
                    metrics.dropped(reason);
                    if (reason.equals("queue-full")) {
                        QUEUE_FULL.info("message for %s dropped: its queue holds tbmq.mqtt.max-queued-messages (%d)",
                                LogText.of(clientId), mqtt.maxQueuedMessages());
                    }
                },
                new SessionRegistry.SessionListener() {
                    @Override
                    public CompletableFuture<Void> sessionEnded(Session session) {
                        return CompletableFuture.allOf(wills.sessionEnded(session), stores.ended(session));
                    }

                    @Override
                    public void sessionMoved(String clientId) {
                        wills.cancel(clientId);
                        stores.moved(clientId);
                    }
                }, stores, links.journal(), links.remote());
        this.router = new Router(trie, sessions, metrics, links.destinations(), links.remote());
        this.credentialFiles = java.util.stream.Stream.of(security.credentialsFile(), security.usersFile())
                .flatMap(java.util.Optional::stream).map(Path::of).toList();
        this.loadedCredentials = credentialFiles.stream().map(BrokerCore::read).toList();
        this.inlineCredentials = security.credentials().isPresent();
        this.authenticator = new Authenticator(credentials(security, credentialFiles, loadedCredentials), security.allowAnonymous(),
                security.passwordCacheSize(), authExecutor != null ? authExecutor : Runnable::run);
        this.services = new BrokerServices(mqtt, sessions, trie, retained, publisher, authenticator, wills, metrics, timers, stores, new DeliveryHold());
        metrics.gauge("tbmq.sessions", "sessions on this node", sessions::size);
        metrics.gauge("tbmq.subscriptions", "subscriptions in the trie", trie::size);
        metrics.gauge("tbmq.retained.messages", "retained messages", retained::size);
        // Read at scrape time only; a lock per session for a moment, never on the message path.
        metrics.gauge("tbmq.sessions.queued", "messages waiting in this node's sessions: queued for the client or in flight",
                () -> sessions.all().stream().mapToLong(s -> s.queuedCount() + s.inflightCount()).sum());
    }

    private static CredentialStore credentials(SecurityConfig security, List<Path> files, List<byte[]> contents) {
        if (security.credentialsFile().isPresent() && security.credentials().isPresent()) {
            throw new IllegalArgumentException("set tbmq.security.credentials-file or tbmq.security.credentials, not both");
        }
        List<CredentialStore.Source> sources = new java.util.ArrayList<>();
        security.credentials().ifPresent(inline -> sources.add(new CredentialStore.Source("tbmq.security.credentials", inline)));
        for (int i = 0; i < files.size(); i++) {
            sources.add(new CredentialStore.Source(files.get(i).toString(),
                    new String(contents.get(i), java.nio.charset.StandardCharsets.UTF_8)));
        }
        CredentialStore store = sources.isEmpty() ? CredentialStore.empty() : CredentialStore.parse(sources);
        if (store.userCount() == 0 && !security.allowAnonymous()) {
            LOG.warn("no users configured and anonymous access is off: only X.509 clients listed in the credentials can connect");
        }
        return store;
    }

    private static byte[] read(Path file) {
        try {
            return java.nio.file.Files.readAllBytes(file);
        } catch (java.io.IOException e) {
            throw new IllegalArgumentException("credentials: cannot read " + file + ": " + e.getMessage(), e);
        }
    }

    /**
     * Watches the credentials file, if the credentials come from one (inline credentials cannot
     * change while the process runs); {@code recheck} runs after each change applied.
     */
    public java.util.Optional<io.tbmq.broker.auth.CredentialsReloader> credentialsReloader(Runnable recheck) {
        // Inline credentials stay as they are; with them, only a users file can change.
        return credentialFiles.isEmpty() || inlineCredentials ? java.util.Optional.empty()
                : java.util.Optional.of(new io.tbmq.broker.auth.CredentialsReloader(credentialFiles, loadedCredentials, authenticator,
                        recheck, applied -> metrics.reloaded("credentials", applied)));
    }

    public SubscriptionTrie trie() {
        return trie;
    }

    public RetainedStore retained() {
        return retained;
    }

    public Publisher publisher() {
        return publisher;
    }

    public WillService wills() {
        return wills;
    }

    public ScheduledExecutorService timers() {
        return timers;
    }

    public BrokerServices services() {
        return services;
    }

    public SessionRegistry sessions() {
        return sessions;
    }

    public Router router() {
        return router;
    }

    public MessageLog log() {
        return log;
    }

    public BrokerMetrics metrics() {
        return metrics;
    }

    @Override
    public void close() {
        log.close();
        timers.shutdownNow();
        if (authExecutor != null) {
            authExecutor.shutdownNow();
        }
        try {
            timers.awaitTermination(2, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
