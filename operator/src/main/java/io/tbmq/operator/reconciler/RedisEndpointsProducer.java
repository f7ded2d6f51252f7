package io.tbmq.operator.reconciler;

import jakarta.enterprise.inject.Produces;
import jakarta.inject.Singleton;

import io.quarkus.arc.DefaultBean;
import io.tbmq.operator.desired.RedisModel;
import io.tbmq.operator.redis.RedisEndpoints;

/** In Kubernetes the operator reaches Redis pods at their IPs; tests may replace this bean. */
@Singleton
public class RedisEndpointsProducer {

    @Produces
    @DefaultBean
    @Singleton
    RedisEndpoints podIp() {
        return RedisEndpoints.podIp(RedisModel.PORT);
    }
}
