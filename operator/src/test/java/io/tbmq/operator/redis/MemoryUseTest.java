package io.tbmq.operator.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class MemoryUseTest {

    @Test
    void readsWhatRedisCountsAgainstItsMaxmemory() {
        MemoryUse use = MemoryUse.parse(String.join("\r\n", "# Memory", "used_memory:9437184", "used_memory_human:9.00M",
                "maxmemory:10485760", "maxmemory_policy:noeviction", "mem_not_counted_for_evict:1048576", ""));
        assertThat(use).isEqualTo(new MemoryUse(8388608, 10485760));
        assertThat(use.ratio()).isEqualTo(0.8);
        assertThat(use.describe()).isEqualTo("80% of its maxmemory of 10 MiB");
        assertThat(MemoryUse.parse("used_memory:100\nmaxmemory:0\n").ratio()).as("no maxmemory").isNaN();
        assertThatThrownBy(() -> MemoryUse.parse("maxmemory:0\r\n")).hasMessageContaining("used_memory");
    }
}
