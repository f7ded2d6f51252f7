package io.tbmq.operator.api;

/**
 * When a managed Redis node writes its append-only file to disk (Redis' {@code appendfsync}):
 * what a crash of the machine, rather than of the Redis process, can take of what it acknowledged.
 */
public enum Fsync {
    /** Once a second: a machine crash loses about the last second. */
    EVERYSEC,
    /** Before every reply: a machine crash loses nothing, at the cost of a disk write per command. */
    ALWAYS;

    /** The word Redis' configuration uses. */
    public String redisValue() {
        return name().toLowerCase(java.util.Locale.ROOT);
    }
}
