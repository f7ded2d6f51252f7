package io.tbmq.broker.it;

import io.tbmq.localstack.RedisCli;

/** {@link DeviceSessionsContract} on a 3-master Redis Cluster (MOVED replies followed). */
class DeviceClusterPersistenceIT extends DeviceSessionsContract {

    @Override
    ItStack stack() {
        return ItStack.cluster();
    }

    @Override
    String redis(String command) {
        int port = ItStack.cluster().stack().redisCluster().orElseThrow().nodes().get(0).port();
        String reply = RedisCli.command(port, command);
        if (reply.startsWith("-MOVED")) {
            // -MOVED <slot> <host>:<port>
            String target = reply.trim().split(" ")[2];
            reply = RedisCli.command(Integer.parseInt(target.substring(target.lastIndexOf(':') + 1)), command);
        }
        return reply;
    }
}
