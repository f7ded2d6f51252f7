package io.tbmq.broker.topic;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class TopicsTest {

    @ParameterizedTest(name = "{0} matches {1}: {2}")
    @CsvSource({
        "sport/tennis/player1/#, sport/tennis/player1, true",
        "sport/tennis/player1/#, sport/tennis/player1/ranking, true",
        "sport/tennis/player1/#, sport/tennis/player1/score/wimbledon, true",
        "sport/#, sport, true",
        "#, any/thing, true",
        "sport/tennis/+, sport/tennis/player1, true",
        "sport/tennis/+, sport/tennis/player1/ranking, false",
        "sport/+, sport, false",
        "sport/+, sport/, true",
        "+/+, /finance, true",
        "/+, /finance, true",
        "+, /finance, false",
        "#, $SYS/broker, false",
        "+/monitor/Clients, $SYS/monitor/Clients, false",
        "$SYS/#, $SYS/monitor/Clients, true",
        "$SYS/monitor/+, $SYS/monitor/Clients, true",
        "a/b, a/b, true",
        "a/b, a/c, false",
    })
    void matchesAsSection472Describes(String filter, String topic, boolean expected) {
        assertThat(Topics.matches(filter, topic)).isEqualTo(expected);
    }

    @Test
    void aclPatternsMatchDollarTopicsToo() {
        assertThat(Topics.patternMatches("#", "$internal/x")).isTrue();
        assertThat(Topics.matches("#", "$internal/x")).isFalse();
    }

    @ParameterizedTest(name = "{0} covers {1}: {2}")
    @CsvSource({
        "#, a/b, true",
        "#, #, true",
        "a/#, a/#, true",
        "a/#, a/b/+, true",
        "a/#, a, true",
        "a/#, #, false",
        "a/+, a/b, true",
        "a/+, a/+, true",
        "a/+, a/#, false",
        "a/+, a/b/c, false",
        "+/b, a/b, true",
        "a/b, a/+, false",
        "a/b, a/b, true",
        "devices/dev1/in, devices/+/in, false",
    })
    void coversMeansEveryMatchedTopicIsAllowed(String pattern, String filter, boolean expected) {
        assertThat(Topics.covers(pattern, filter)).isEqualTo(expected);
    }

    @Test
    void parsesSharedSubscriptions() {
        TopicFilter f = Topics.parseFilter("$share/group/sensors/+/temp", 32);
        assertThat(f.isShared()).isTrue();
        assertThat(f.shareGroup()).isEqualTo("group");
        assertThat(f.filter()).isEqualTo("sensors/+/temp");
        assertThat(f.levels()).containsExactly("sensors", "+", "temp");
        assertThat(f.key()).isEqualTo("$share/group/sensors/+/temp");
    }

    @Test
    void rejectsInvalidFilters() {
        for (String bad : new String[] {"", "a/#/b", "a#", "a+/b", "$share/g", "$share//t", "$share/g+/t"}) {
            assertThatThrownBy(() -> Topics.parseFilter(bad, 32)).as(bad).isInstanceOf(IllegalArgumentException.class);
        }
        assertThatThrownBy(() -> Topics.parseFilter("a/b/c/d", 3)).hasMessageContaining("levels");
    }

    @Test
    void topicNameRules() {
        assertThat(Topics.invalidTopicName("a/b", 32)).isNull();
        assertThat(Topics.invalidTopicName("", 32)).contains("empty");
        assertThat(Topics.invalidTopicName("a/+", 32)).contains("wildcard");
        assertThat(Topics.invalidTopicName("a/b/c", 2)).contains("levels");
    }
}
