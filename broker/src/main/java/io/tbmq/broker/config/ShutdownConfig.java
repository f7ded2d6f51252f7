package io.tbmq.broker.config;

import java.time.Duration;

import io.smallrye.config.WithDefault;

/** Graceful shutdown: stop accepting, tell clients, flush, close. */
public interface ShutdownConfig {

    /** Time to flush in-flight produces and write DISCONNECTs before connections are closed. */
    @WithDefault("10s")
    Duration grace();

    /**
     * Where MQTT 5 clients should reconnect while this node drains (a host name or the cluster's
     * Service): sent as Server Reference with DISCONNECT 0x9C instead of 0x8B when set.
     */
    java.util.Optional<String> serverReference();
}
