package io.tbmq.broker.config;

import java.time.Duration;

import io.smallrye.config.WithDefault;

/** Graceful shutdown: stop accepting, tell clients, flush, close. */
public interface ShutdownConfig {

    /** Time to flush in-flight produces and write DISCONNECTs before connections are closed. */
    @WithDefault("10s")
    Duration grace();
}
