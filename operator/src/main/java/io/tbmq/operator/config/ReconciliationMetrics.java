package io.tbmq.operator.config;

import io.javaoperatorsdk.operator.api.monitoring.Metrics;
import io.javaoperatorsdk.operator.monitoring.micrometer.MicrometerMetrics;
import io.micrometer.core.instrument.MeterRegistry;
import jakarta.annotation.Priority;
import jakarta.enterprise.inject.Alternative;
import jakarta.enterprise.inject.Produces;
import jakarta.inject.Singleton;

/**
 * java-operator-sdk's reconciliation metrics on /q/metrics (operator_sdk_reconciliations_*).
 *
 * <p>The extension's own wiring hands the operator its Metrics before Micrometer has bound it in some
 * builds, and the operator then keeps a no-op for its whole life (quarkus-operator-sdk issue 1385). Built
 * here from the registry bean itself, the metrics do not depend on that start-up order.
 */
@Singleton
public class ReconciliationMetrics {

    @Produces
    @Singleton
    @Alternative
    @Priority(1)
    Metrics metrics(MeterRegistry registry) {
        return MicrometerMetrics.newPerResourceCollectingMicrometerMetricsBuilder(registry).build();
    }
}
