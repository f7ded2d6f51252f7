package io.tbmq.broker.config;

import java.time.Duration;

import io.smallrye.config.WithDefault;

/** Graceful shutdown: stop accepting, let clients acknowledge, tell them, flush, close. */
public interface ShutdownConfig {

    /**
     * Time to flush in-flight produces and write DISCONNECTs before connections are closed; and,
     * once they are, to write the clients' last acknowledgements to Redis.
     */
    @WithDefault("10s")
    Duration grace();

    /**
     * Before the DISCONNECTs, how long to wait for clients to acknowledge the QoS 1 and 2 messages
     * of persistent sessions already sent to them (no new ones are sent), and for those
     * acknowledgements to reach Redis: a message acknowledged in time is not sent again, with DUP,
     * when the client reconnects. 0 disconnects at once.
     */
    @WithDefault("5s")
    Duration acknowledgementWait();

    /**
     * Where MQTT 5 clients should reconnect while this node drains (a host name or the cluster's
     * Service): sent as Server Reference with DISCONNECT 0x9C instead of 0x8B when set.
     */
    java.util.Optional<String> serverReference();
}
