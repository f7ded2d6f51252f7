package io.tbmq.operator.provision;

import java.time.Instant;
import java.time.temporal.ChronoUnit;

import org.jboss.logging.Logger;

import io.fabric8.kubernetes.api.model.EventBuilder;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.tbmq.operator.api.TbmqCluster;

/** Kubernetes Events on the TbmqCluster for every scale step (kubectl describe tbmq shows them). */
public final class EventRecorder {
    private static final Logger LOG = Logger.getLogger(EventRecorder.class);
    private final KubernetesClient client;

    public EventRecorder(KubernetesClient client) {
        this.client = client;
    }

    public void normal(TbmqCluster on, String reason, String message) {
        record(on, "Normal", reason, message);
    }

    public void warning(TbmqCluster on, String reason, String message) {
        record(on, "Warning", reason, message);
    }

    private void record(TbmqCluster on, String type, String reason, String message) {
        LOG.infof("%s/%s %s %s: %s", on.getMetadata().getNamespace(), on.getMetadata().getName(), type, reason, message);
        String now = Instant.now().truncatedTo(ChronoUnit.SECONDS).toString();
        try {
            client.v1().events().inNamespace(on.getMetadata().getNamespace()).resource(new EventBuilder()
                    .withNewMetadata().withGenerateName(on.getMetadata().getName() + "-").endMetadata()
                    .withNewInvolvedObject()
                        .withApiVersion(HasMetadata.getApiVersion(TbmqCluster.class))
                        .withKind(HasMetadata.getKind(TbmqCluster.class))
                        .withName(on.getMetadata().getName())
                        .withNamespace(on.getMetadata().getNamespace())
                        .withUid(on.getMetadata().getUid())
                    .endInvolvedObject()
                    .withType(type).withReason(reason).withMessage(message)
                    .withFirstTimestamp(now).withLastTimestamp(now).withCount(1)
                    .withNewSource().withComponent("tbmq-operator").endSource()
                    .build()).create();
        } catch (KubernetesClientException e) {
            // An Event is a courtesy: failing to write one must not fail the reconcile.
            LOG.debugf("could not record event %s: %s", reason, e.getMessage());
        }
    }
}
