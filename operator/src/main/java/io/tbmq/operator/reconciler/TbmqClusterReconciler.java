package io.tbmq.operator.reconciler;

import java.time.Instant;
import java.util.List;
import java.util.stream.Collectors;

import org.jboss.logging.Logger;

import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.ControllerConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.Reconciler;
import io.javaoperatorsdk.operator.api.reconciler.UpdateControl;
import io.tbmq.operator.api.TbmqCluster;
import io.tbmq.operator.api.TbmqClusterStatus;
import io.tbmq.operator.sizing.Plan;
import io.tbmq.operator.sizing.SizingModel;
import io.tbmq.operator.validation.FieldError;
import io.tbmq.operator.validation.SpecValidator;

/**
 * Reconciles a TbmqCluster: validates the spec (an invalid one sets Degraded naming the field and
 * changes nothing), computes the plan and reports it. Provisioning of Kafka, Redis and brokers
 * plugs in after the plan (the operator issue's dependents).
 */
@ControllerConfiguration(name = "tbmqcluster")
public class TbmqClusterReconciler implements Reconciler<TbmqCluster> {
    private static final Logger LOG = Logger.getLogger(TbmqClusterReconciler.class);

    @Override
    public UpdateControl<TbmqCluster> reconcile(TbmqCluster resource, Context<TbmqCluster> context) {
        TbmqClusterStatus status = resource.getStatus() == null ? new TbmqClusterStatus() : resource.getStatus();
        resource.setStatus(status);
        long generation = resource.getMetadata().getGeneration() == null ? 0 : resource.getMetadata().getGeneration();
        Instant now = Instant.now();
        List<FieldError> errors = SpecValidator.validate(resource.getSpec());
        if (!errors.isEmpty()) {
            String message = errors.stream().map(FieldError::toString).collect(Collectors.joining("; "));
            LOG.warnf("TbmqCluster %s/%s is invalid: %s", resource.getMetadata().getNamespace(), resource.getMetadata().getName(),
                    message);
            // Nothing already running is touched: the last good plan stays in the status.
            Conditions.set(status.getConditions(), Conditions.DEGRADED, true, "InvalidSpec", message, generation, now);
            Conditions.set(status.getConditions(), Conditions.PROGRESSING, false, "InvalidSpec",
                    "waiting for a valid spec", generation, now);
            status.setObservedGeneration(generation);
            return UpdateControl.patchStatus(resource);
        }
        Plan plan = SizingModel.plan(resource.getSpec());
        status.setPlan(PlanStatuses.of(plan));
        status.setDesiredBrokers(plan.brokers().value());
        Conditions.set(status.getConditions(), Conditions.DEGRADED, false, "SpecValid", "spec is valid", generation, now);
        status.setObservedGeneration(generation);
        return UpdateControl.patchStatus(resource);
    }
}
