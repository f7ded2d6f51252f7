package io.tbmq.broker.it;

import io.tbmq.localstack.RedisCli;

/** {@link DeviceSessionsContract} on standalone Redis. */
class DevicePersistenceIT extends DeviceSessionsContract {

    @Override
    ItStack stack() {
        return ItStack.get();
    }

    @Override
    String redis(String command) {
        return RedisCli.command(ItStack.get().stack().redis().orElseThrow().port(), command);
    }
}
