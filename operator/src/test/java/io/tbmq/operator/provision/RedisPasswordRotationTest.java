package io.tbmq.operator.provision;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Optional;

import org.junit.jupiter.api.Test;

import io.tbmq.operator.desired.Names;
import io.tbmq.operator.provision.RedisPasswordRotation.Passwords;
import io.tbmq.operator.provision.RedisPasswordRotation.Step;
import io.tbmq.operator.redis.RedisClusterAdmin;

class RedisPasswordRotationTest {
    private static final List<String> NONE_LEFT = List.of();

    @Test
    void aNewPasswordInTheUsersSecretIsFirstAcceptedBesideTheOldOne() {
        assertThat(RedisPasswordRotation.next(new Passwords("new", "old", null, 1), NONE_LEFT, NONE_LEFT))
                .isEqualTo(new Step.Accept("new"));
    }

    @Test
    void theOldPasswordIsRefusedOnlyOnceNoBrokerRunsWithItAndEveryRedisPodIsCurrent() {
        Passwords changing = new Passwords("new", "new", "old", 2);
        assertThat(RedisPasswordRotation.next(changing, List.of("p-broker-1"), NONE_LEFT))
                .isEqualTo(new Step.AwaitBrokers("p-broker-1"));
        // A pod of an older template may probe with the old password: it is replaced first (brokers are on the new one by then).
        assertThat(RedisPasswordRotation.next(changing, NONE_LEFT, List.of("p-redis-2")))
                .isEqualTo(new Step.AwaitRedisPods("p-redis-2"));
        assertThat(RedisPasswordRotation.next(changing, List.of("p-broker-1"), List.of("p-redis-2")))
                .as("brokers first: a replaced pod would ask for the new password only").isInstanceOf(Step.AwaitBrokers.class);
        assertThat(RedisPasswordRotation.next(changing, NONE_LEFT, NONE_LEFT)).isEqualTo(new Step.Refuse());
    }

    @Test
    void aSecondChangeWaitsUntilTheFirstIsDone() {
        // Accepting a third password now would leave the first one accepted for good: the copy keeps only one previous.
        assertThat(RedisPasswordRotation.next(new Passwords("newer", "new", "old", 2), List.of("p-broker-0"), NONE_LEFT))
                .isInstanceOf(Step.AwaitBrokers.class);
        assertThat(RedisPasswordRotation.next(new Passwords("newer", "new", "old", 2), NONE_LEFT, NONE_LEFT)).isEqualTo(new Step.Refuse());
        assertThat(RedisPasswordRotation.next(new Passwords("newer", "new", null, 2), NONE_LEFT, NONE_LEFT))
                .isEqualTo(new Step.Accept("newer"));
    }

    @Test
    void nothingChangesWhileThePasswordIsTheOneInForce() {
        Passwords steady = new Passwords("same", "same", null, 3);
        assertThat(RedisPasswordRotation.next(steady, NONE_LEFT, List.of("p-redis-0"))).isEqualTo(new Step.None());
        assertThat(steady.changing()).isFalse();
    }

    @Test
    void podsOfAnOperatorWithoutRedisPasswordsAreAskedForOneOnlyOnceEveryBrokerHasIt() {
        Passwords upgraded = new Passwords("generated", "generated", RedisPasswordRotation.NONE, 1);
        assertThat(upgraded.changing()).isTrue();
        assertThat(RedisPasswordRotation.next(upgraded, List.of("p-broker-0"), List.of("p-redis-0"))).isInstanceOf(Step.AwaitBrokers.class);
        assertThat(RedisPasswordRotation.next(upgraded, NONE_LEFT, List.of("p-redis-0"))).isInstanceOf(Step.AwaitRedisPods.class);
        assertThat(RedisPasswordRotation.next(upgraded, NONE_LEFT, NONE_LEFT)).isEqualTo(new Step.Refuse());
    }

    @Test
    void theOperatorTriesThePasswordInForceFirstAndNoneLast() {
        assertThat(new Passwords("newer", "new", "old", 2).candidates()).containsExactly("new", "old", "newer", null);
    }

    @Test
    void aCopyLostMidChangeIsMadeAgainWithTheChangeToFinishAndALostCopyNodesRefuseIsNotMadeAtAll() {
        Names names = new Names("p", "iot");
        // The nodes take the named password alone: nothing was under way, and the brokers do not roll.
        assertThat(RedisPasswordRotation.recoveredMidChange(Optional.of(RedisClusterAdmin.Acceptance.ONLY), names, "chosen")).isFalse();
        // They take another too: brokers not restarted yet may hold it; they roll, then every other is refused.
        assertThat(RedisPasswordRotation.recoveredMidChange(Optional.of(RedisClusterAdmin.Acceptance.AMONG_OTHERS), names, "chosen"))
                .isTrue();
        // No pod runs to ask (none can start without the copy): so too, rather than waiting for pods that cannot start.
        assertThat(RedisPasswordRotation.recoveredMidChange(Optional.empty(), names, "chosen")).isTrue();
        Passwords recovered = new Passwords("asked", "asked", "asked", 4);
        assertThat(recovered.changing()).isTrue();
        assertThat(RedisPasswordRotation.next(recovered, List.of("p-broker-0"), NONE_LEFT)).isInstanceOf(Step.AwaitBrokers.class);
        assertThat(RedisPasswordRotation.next(recovered, NONE_LEFT, NONE_LEFT)).isEqualTo(new Step.Refuse());
        assertThatThrownBy(() -> RedisPasswordRotation.recoveredMidChange(Optional.of(RedisClusterAdmin.Acceptance.REFUSED), names,
                "chosen"))
                .hasMessageContaining("refuse the password in Secret chosen").hasMessageContaining("p-redis-password");
    }
}
