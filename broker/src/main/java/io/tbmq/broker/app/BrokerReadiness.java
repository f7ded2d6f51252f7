package io.tbmq.broker.app;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;

import org.eclipse.microprofile.health.HealthCheck;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.Readiness;

/** {@code /q/health/ready}: up once the listeners are bound and Kafka is reachable; down while draining. */
@Readiness
@ApplicationScoped
public class BrokerReadiness implements HealthCheck {

    @Inject
    BrokerApplication broker;

    @Override
    public HealthCheckResponse call() {
        return HealthCheckResponse.named("broker").status(broker.ready()).withData("status", broker.status()).build();
    }
}
