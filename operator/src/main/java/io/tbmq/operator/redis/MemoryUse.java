package io.tbmq.operator.redis;

/**
 * A Redis node's memory as it counts it against its maxmemory (INFO memory: used_memory less
 * mem_not_counted_for_evict, the replication and AOF buffers), and that maxmemory (0: none).
 */
public record MemoryUse(long used, long max) {

    /** Used of maxmemory; NaN without one. */
    public double ratio() {
        return max > 0 ? (double) used / max : Double.NaN;
    }

    public String describe() {
        return String.format(java.util.Locale.ROOT, "%d%% of its maxmemory of %d MiB", (int) (ratio() * 100), max >> 20);
    }

    /** From an INFO memory answer; throws when it has no used_memory. */
    public static MemoryUse parse(String info) {
        long used = -1;
        long notCounted = 0;
        long max = 0;
        for (String line : info.split("\r?\n")) {
            String[] field = line.split(":", 2);
            if (field.length == 2) {
                switch (field[0]) {
                    case "used_memory" -> used = Long.parseLong(field[1].strip());
                    case "mem_not_counted_for_evict" -> notCounted = Long.parseLong(field[1].strip());
                    case "maxmemory" -> max = Long.parseLong(field[1].strip());
                    default -> {
                        // not needed
                    }
                }
            }
        }
        if (used < 0) {
            throw new IllegalArgumentException("INFO memory without used_memory");
        }
        return new MemoryUse(Math.max(0, used - notCounted), max);
    }
}
