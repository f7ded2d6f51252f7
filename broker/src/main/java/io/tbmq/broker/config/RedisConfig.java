package io.tbmq.broker.config;

import io.smallrye.config.WithDefault;

/** Redis for DEVICE persistent sessions (used from the persistence work on). */
public interface RedisConfig {

    /** standalone or cluster. */
    @WithDefault("standalone")
    String mode();

    /** host:port[,host:port...] */
    @WithDefault("localhost:6379")
    String nodes();
}
