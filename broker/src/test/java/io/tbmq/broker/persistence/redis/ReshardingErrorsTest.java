package io.tbmq.broker.persistence.redis;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisConnectionException;
import io.lettuce.core.RedisException;
import io.lettuce.core.cluster.UnknownPartitionException;

/** Which Redis answers a script is run again for: those of a slot moving between masters, nothing else. */
class ReshardingErrorsTest {

    @Test
    void theAnswersOfAMovingSlotAreRetried() {
        assertThat(RedisConnector.isResharding(new RedisCommandExecutionException("TRYAGAIN Multiple keys request during rehashing of slot")))
                .isTrue();
        assertThat(RedisConnector.isResharding(new RedisCommandExecutionException(
                "ERR Script attempted to access a non local key in a cluster node script: 4d8b, on @user_script:65."))).isTrue();
        assertThat(RedisConnector.isResharding(new UnknownPartitionException(
                "Connection to dev-redis-3:6379 not allowed. This partition is not known in the cluster view."))).isTrue();
    }

    @Test
    void outagesAndScriptFaultsAreNot() {
        // An outage is the caller's to retry at its own pace; a script error would fail every time.
        assertThat(RedisConnector.isResharding(new RedisCommandExecutionException("CLUSTERDOWN The cluster is down"))).isFalse();
        assertThat(RedisConnector.isResharding(new RedisConnectionException("Unable to connect to dev-redis-1:6379"))).isFalse();
        assertThat(RedisConnector.isResharding(new RedisException("Currently not connected. Commands are rejected."))).isFalse();
        assertThat(RedisConnector.isResharding(new RedisCommandExecutionException("ERR user_script:12: attempt to compare nil"))).isFalse();
        assertThat(RedisConnector.isResharding(new RedisCommandExecutionException("OOM command not allowed"))).isFalse();
    }
}
