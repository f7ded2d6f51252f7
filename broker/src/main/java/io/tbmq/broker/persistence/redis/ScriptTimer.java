package io.tbmq.broker.persistence.redis;

/** Told how long each Lua script call took and whether it failed (the broker's metrics listen). */
@FunctionalInterface
public interface ScriptTimer {
    ScriptTimer NONE = (script, nanos, failed) -> {
    };

    void completed(String script, long nanos, boolean failed);
}
