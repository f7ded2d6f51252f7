package io.tbmq.broker.live;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.logging.Level;
import java.util.logging.Logger;

import org.junit.jupiter.api.Test;

/** Quarkus's own log level keys change the levels of a running broker. */
class LogLevelsTest {
    private static final Logger CATEGORY = Logger.getLogger("io.tbmq.test.livelevels");

    @Test
    void aCategoryLevelAppliesWithOrWithoutQuotes() {
        LogLevels.apply("quarkus.log.category.\"io.tbmq.test.livelevels\".level", "debug");
        assertThat(CATEGORY.isLoggable(Level.FINE)).isTrue();
        LogLevels.apply("quarkus.log.category.io.tbmq.test.livelevels.level", "WARN");
        assertThat(CATEGORY.isLoggable(Level.INFO)).isFalse();
        assertThat(CATEGORY.isLoggable(Level.WARNING)).isTrue();
    }

    @Test
    void anUnknownLevelChangesNothing() {
        LogLevels.apply("quarkus.log.category.\"io.tbmq.test.livelevels\".level", "ERROR");
        assertThatThrownBy(() -> LogLevels.apply("quarkus.log.category.\"io.tbmq.test.livelevels\".level", "LOUD"))
                .isInstanceOf(IllegalArgumentException.class);
        assertThat(CATEGORY.isLoggable(Level.WARNING)).isFalse();
        assertThat(CATEGORY.isLoggable(Level.SEVERE)).isTrue();
    }

    @Test
    void otherKeysAreNotLogLevels() {
        assertThat(LogLevels.KEY.matcher("quarkus.log.level").matches()).isTrue();
        assertThat(LogLevels.KEY.matcher("quarkus.log.console.level").matches()).isFalse();
        assertThat(LogLevels.KEY.matcher("tbmq.mqtt.max-packet-size").matches()).isFalse();
    }
}
