package io.tbmq.broker.app;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;

import org.eclipse.microprofile.health.HealthCheck;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.Liveness;

/**
 * {@code /q/health/live}: the MQTT listeners are bound. Kafka being away does not make the node
 * dead (restarting it would not help), only not ready.
 */
@Liveness
@ApplicationScoped
public class BrokerLiveness implements HealthCheck {

    @Inject
    BrokerApplication broker;

    @Override
    public HealthCheckResponse call() {
        boolean listening = broker.server() != null && broker.server().isListening();
        return HealthCheckResponse.named("mqtt-listeners").status(listening).build();
    }
}
