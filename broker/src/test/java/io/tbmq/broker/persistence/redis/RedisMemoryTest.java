package io.tbmq.broker.persistence.redis;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.junit.jupiter.api.Test;

class RedisMemoryTest {
    /** Redis 7.0's INFO memory, shortened. */
    private static final String INFO = String.join("\r\n", "# Memory", "used_memory:1048576", "used_memory_human:1.00M",
            "used_memory_peak:2097152", "maxmemory:4194304", "maxmemory_human:4.00M", "maxmemory_policy:noeviction",
            "mem_not_counted_for_evict:65536", "mem_fragmentation_ratio:3.50", "");

    @Test
    void readsWhatRedisCountsAgainstItsMaxmemory() {
        RedisMemory.Usage usage = RedisMemory.parse(INFO);
        assertThat(usage).isEqualTo(new RedisMemory.Usage(1048576 - 65536, 4194304));
        assertThat(usage.ratio()).isEqualTo((1048576 - 65536) / 4194304.0);
        assertThat(RedisMemory.parse("used_memory:100\nmaxmemory:0\n").ratio()).as("no maxmemory").isNaN();
        assertThat(RedisMemory.parse("# Memory\r\nmaxmemory:10\r\n")).isNull();
        assertThat(RedisMemory.parse("used_memory:lots\r\n")).isNull();
    }

    @Test
    void aMasterThatWouldDropKeysOnceFullIsToldFromOneThatRefusesToStore() {
        assertThat(RedisMemory.parse(INFO).evicts()).as("noeviction").isFalse();
        assertThat(RedisMemory.parse(INFO.replace("noeviction", "allkeys-lru")).evicts()).isTrue();
        // Every stored message has a time to live: volatile-* policies drop them too.
        assertThat(RedisMemory.parse(INFO.replace("noeviction", "volatile-lru")).evicts()).isTrue();
        assertThat(RedisMemory.parse(INFO.replace("noeviction", "allkeys-lru").replace("maxmemory:4194304", "maxmemory:0")).evicts())
                .as("without a maxmemory nothing is evicted").isFalse();
        assertThat(RedisMemory.parse("used_memory:100\nmaxmemory:10\n").evicts()).as("no policy said").isFalse();

        RedisMemory memory = new RedisMemory(null, Duration.ZERO, byMaster -> { });
        memory.update(Map.of("a:1", new RedisMemory.Usage(10, 1000, "allkeys-lru"), "b:2", new RedisMemory.Usage(10, 1000)));
        assertThat(memory.evicting("a:1")).isTrue();
        assertThat(memory.evicting("b:2")).isFalse();
        memory.update(Map.of("a:1", new RedisMemory.Usage(10, 1000, "noeviction")));
        assertThat(memory.evicting("a:1")).as("set right").isFalse();
    }

    @Test
    void aMasterFillingUpIsSaidOnceUntilItHasRoomAgainAndMastersThatLeftAreForgotten() {
        List<Map<String, RedisMemory.Usage>> reports = new ArrayList<>();
        RedisMemory memory = new RedisMemory(null, Duration.ZERO, reports::add);

        memory.update(Map.of("a:1", new RedisMemory.Usage(850, 1000), "b:2", new RedisMemory.Usage(100, 0)));
        assertThat(memory.warned("a:1")).as("under 90 %").isFalse();
        memory.update(Map.of("a:1", new RedisMemory.Usage(920, 1000), "b:2", new RedisMemory.Usage(100, 0)));
        assertThat(memory.warned("a:1")).isTrue();
        memory.update(Map.of("a:1", new RedisMemory.Usage(850, 1000)));
        assertThat(memory.warned("a:1")).as("still over 80 %: not said again when it passes 90 % once more").isTrue();
        memory.update(Map.of("a:1", new RedisMemory.Usage(700, 1000)));
        assertThat(memory.warned("a:1")).isFalse();
        memory.update(Map.of("a:1", new RedisMemory.Usage(950, 1000)));
        assertThat(memory.warned("a:1")).isTrue();
        memory.update(Map.of("a:1", new RedisMemory.Usage(950, 0)));
        assertThat(memory.warned("a:1")).as("maxmemory removed").isFalse();

        assertThat(reports).hasSize(6);
        assertThat(reports.get(1)).containsOnlyKeys("a:1", "b:2");
        assertThat(reports.get(2)).as("b:2 left the cluster").containsOnlyKeys("a:1");
    }

    @Test
    void aMasterThatDoesNotAnswerKeepsItsLastReadingForAFewChecksOnly() {
        RedisMemory memory = new RedisMemory(null, Duration.ofSeconds(15), byMaster -> { });
        long second = 1_000_000_000L;
        RedisMemory.Usage a = new RedisMemory.Usage(900, 1000);
        RedisMemory.Usage b = new RedisMemory.Usage(100, 1000);
        assertThat(memory.merge(Set.of("a:1", "b:2"), Map.of("a:1", a, "b:2", b), 0)).containsOnlyKeys("a:1", "b:2");
        assertThat(memory.merge(Set.of("a:1", "b:2"), Map.of("b:2", b), 15 * second)).as("a:1 slow once").containsEntry("a:1", a);
        assertThat(memory.merge(Set.of("a:1", "b:2"), Map.of("b:2", b), 45 * second)).containsEntry("a:1", a);
        assertThat(memory.merge(Set.of("a:1", "b:2"), Map.of("b:2", b), 60 * second)).as("past three checks").containsOnlyKeys("b:2");
        assertThat(memory.merge(Set.of("a:1"), Map.of(), 61 * second)).as("b:2 left; a:1's reading is gone").isEmpty();
    }
}
