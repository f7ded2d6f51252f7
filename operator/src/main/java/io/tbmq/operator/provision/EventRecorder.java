package io.tbmq.operator.provision;

import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.LinkedHashMap;
import java.util.Map;

import org.jboss.logging.Logger;

import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.EventBuilder;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.tbmq.operator.api.TbmqCluster;

/**
 * Kubernetes Events on the TbmqCluster for every scale step (kubectl describe tbmq shows them). The
 * same event again (same object, type, reason and message) is counted on the Event already written,
 * as Kubernetes' own recorders do, rather than written anew: a step retried every 250 ms while
 * Redis gossips shows as one line with a count.
 */
public final class EventRecorder {
    private static final Logger LOG = Logger.getLogger(EventRecorder.class);
    /** Events written recently, by what identifies them; shared by every reconcile of this operator process. */
    private static final Map<String, Written> RECENT = new LinkedHashMap<>(64, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Written> eldest) {
            return size() > 1_000;
        }
    };
    /** Kubernetes keeps Events an hour; an identical one after this long is a new occurrence. */
    private static final long AGGREGATE_SECONDS = 600;

    private record Written(String name, int count, Instant first) {
    }

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
        String ns = on.getMetadata().getNamespace();
        String key = on.getMetadata().getUid() + "|" + type + "|" + reason + "|" + message;
        Instant now = Instant.now().truncatedTo(ChronoUnit.SECONDS);
        Written before;
        synchronized (RECENT) {
            before = RECENT.get(key);
        }
        try {
            if (before != null && before.first().plusSeconds(AGGREGATE_SECONDS).isAfter(now)) {
                // A merge patch on the Event named here: the operator may patch Events but not read them
                // (withName(...).patch would read it first).
                Event named = new EventBuilder().withNewMetadata().withName(before.name()).withNamespace(ns).endMetadata().build();
                client.v1().events().inNamespace(ns).resource(named).patch(PatchContext.of(PatchType.JSON_MERGE),
                        "{\"count\":" + (before.count() + 1) + ",\"lastTimestamp\":\"" + now + "\"}");
                remember(key, new Written(before.name(), before.count() + 1, before.first()));
                return;
            }
        } catch (KubernetesClientException e) {
            // gone (expired or deleted): write it anew
        }
        LOG.infof("%s/%s %s %s: %s", ns, on.getMetadata().getName(), type, reason, message);
        try {
            Event created = client.v1().events().inNamespace(ns).resource(new EventBuilder()
                    .withNewMetadata().withGenerateName(on.getMetadata().getName() + "-").endMetadata()
                    .withNewInvolvedObject()
                        .withApiVersion(HasMetadata.getApiVersion(TbmqCluster.class))
                        .withKind(HasMetadata.getKind(TbmqCluster.class))
                        .withName(on.getMetadata().getName())
                        .withNamespace(ns)
                        .withUid(on.getMetadata().getUid())
                    .endInvolvedObject()
                    .withType(type).withReason(reason).withMessage(message)
                    .withFirstTimestamp(now.toString()).withLastTimestamp(now.toString()).withCount(1)
                    .withNewSource().withComponent("tbmq-operator").endSource()
                    .build()).create();
            remember(key, new Written(created.getMetadata().getName(), 1, now));
        } catch (KubernetesClientException e) {
            // An Event is a courtesy: failing to write one must not fail the reconcile.
            LOG.debugf("could not record event %s: %s", reason, e.getMessage());
        }
    }

    private static void remember(String key, Written written) {
        synchronized (RECENT) {
            RECENT.put(key, written);
        }
    }
}
