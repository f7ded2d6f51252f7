package io.tbmq.broker.app;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;

import org.eclipse.microprofile.health.HealthCheck;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.Liveness;

/**
 * {@code /q/health/live}: the process is up (still starting, or serving). Kafka or Redis being
 * away does not make the node dead (restarting it would not help), only not ready.
 */
@Liveness
@ApplicationScoped
public class BrokerLiveness implements HealthCheck {

    @Inject
    BrokerApplication broker;

    @Override
    public HealthCheckResponse call() {
        return HealthCheckResponse.named("broker-process").status(broker.live()).withData("status", broker.status()).build();
    }
}
