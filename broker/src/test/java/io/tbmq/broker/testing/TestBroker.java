package io.tbmq.broker.testing;

import java.util.HashMap;
import java.util.Map;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.mqtt.MqttVersion;
import io.tbmq.broker.app.BrokerCore;
import io.tbmq.broker.app.ClusterLinks;
import io.tbmq.broker.auth.PasswordHasher;
import io.tbmq.broker.config.BrokerConfig;
import io.tbmq.broker.metrics.BrokerMetrics;
import io.tbmq.broker.persistence.SessionStores;
import io.tbmq.broker.protocol.PacketDispatcher;
import io.tbmq.broker.subscription.SubscriptionTrie;
import io.tbmq.broker.transport.MqttChannelInitializer;

/**
 * A broker for the unit-test tier: the production {@link BrokerCore} and pipeline stages on
 * Netty {@link EmbeddedChannel}s, with a {@link LoopbackMessageLog} instead of Kafka. Users:
 * {@code alice}/{@code secret} (everything), {@code bob}/{@code secret} (only {@code bob/#} and
 * {@code shared/#}, with {@code %c}-templated rules), anonymous clients only when enabled (and then
 * everything but subscribing to {@code denied/#}).
 */
public final class TestBroker implements AutoCloseable {
    public static final String PASSWORD = "secret";
    private static final String HASH = PasswordHasher.hash(PASSWORD.toCharArray(), 1000);

    private final BrokerConfig config;
    private final BrokerCore core;
    private LoopbackMessageLog log;
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();

    public TestBroker() {
        this(Map.of());
    }

    public TestBroker(Map<String, String> overrides) {
        this(overrides, SessionStores.NONE);
    }

    /** With {@code stores} as the node's session stores (a DEVICE store that stalls, for one). */
    public TestBroker(Map<String, String> overrides, SessionStores stores) {
        Map<String, String> values = new HashMap<>();
        values.put("tbmq.security.credentials", credentials());
        values.putAll(overrides);
        this.config = TestConfig.of(values);
        this.core = new BrokerCore(config.mqtt(), config.security(), new BrokerMetrics(registry), stores, router -> {
            log = new LoopbackMessageLog(router);
            return log;
        }, new SubscriptionTrie(), ClusterLinks.SINGLE_NODE);
    }

    public static TestBroker anonymous() {
        return new TestBroker(Map.of("tbmq.security.allow-anonymous", "true"));
    }

    private static String credentials() {
        return String.join("\n",
                "users:",
                "  - username: alice",
                "    password: \"" + HASH + "\"",
                "    publish: [\"#\"]",
                "    subscribe: [\"#\"]",
                "  - username: bob",
                "    password: \"" + HASH + "\"",
                "    publish: [\"bob/#\", \"shared/#\", \"devices/%c/out\"]",
                "    subscribe: [\"bob/#\", \"shared/+\", \"devices/%c/in\"]",
                "    denySubscribe: [\"bob/secret\"]",
                "anonymous:",
                "  publish: [\"#\"]",
                "  subscribe: [\"#\"]",
                "  denySubscribe: [\"denied/#\"]",
                "");
    }

    public BrokerConfig config() {
        return config;
    }

    public BrokerCore core() {
        return core;
    }

    public LoopbackMessageLog log() {
        return log;
    }

    public SimpleMeterRegistry registry() {
        return registry;
    }

    /** A raw client on a new connection, not yet connected at the MQTT level. */
    public WireClient client(MqttVersion version) {
        EmbeddedChannel channel = new EmbeddedChannel(false, false);
        MqttChannelInitializer.addMqttStages(channel.pipeline(), config.mqtt(), new PacketDispatcher(core.services(), "test"));
        try {
            channel.register();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
        return new WireClient(channel, version);
    }

    @Override
    public void close() {
        core.close();
    }
}
