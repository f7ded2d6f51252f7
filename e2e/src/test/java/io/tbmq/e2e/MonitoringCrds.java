package io.tbmq.e2e;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;

import io.fabric8.crdv2.generator.CRDGenerator;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.KubernetesResourceList;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.openshift.api.model.monitoring.v1.PodMonitor;
import io.fabric8.openshift.api.model.monitoring.v1.PrometheusRule;

/**
 * The Prometheus Operator's CRDs the operator writes objects of (monitoring.coreos.com/v1 PodMonitor
 * and PrometheusRule) for the e2e control plane, generated from fabric8's model of that API
 * (io.fabric8:openshift-model-monitoring), so the API server validates what the operator writes
 * against a full schema. Only the CRDs: no Prometheus Operator runs here, and none is needed to test
 * what the operator writes.
 */
final class MonitoringCrds {
    static final Class<PodMonitor> POD_MONITOR = PodMonitor.class;
    static final Class<PrometheusRule> PROMETHEUS_RULE = PrometheusRule.class;

    private MonitoringCrds() {
    }

    static <T extends HasMetadata> void install(KubernetesClient client, Class<T> type) throws IOException {
        Path dir = Path.of("target", "monitoring-crds");
        Files.createDirectories(dir);
        new CRDGenerator().customResourceClasses(type).inOutputDir(dir.toFile()).forCRDVersions("v1").generate();
        try (InputStream in = Files.newInputStream(dir.resolve(name(type) + "-v1.yml"))) {
            client.load(in).serverSideApply();
        }
        // A CRD just written is not served at once: Established first, then its REST path answers; until
        // then a request for its objects gets 404 like one for an API that does not exist.
        Instant deadline = Instant.now().plusSeconds(60);
        while (true) {
            try {
                KubernetesResourceList<T> ignored = client.resources(type).inNamespace("default").list();
                return;
            } catch (KubernetesClientException e) {
                if (e.getCode() != 404 || Instant.now().isAfter(deadline)) {
                    throw e;
                }
            }
            try {
                Thread.sleep(200);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException(e);
            }
        }
    }

    static void uninstall(KubernetesClient client, Class<? extends HasMetadata> type) {
        client.apiextensions().v1().customResourceDefinitions().withName(name(type)).delete();
    }

    /** The CRD's name, PLURAL.GROUP. */
    static String name(Class<? extends HasMetadata> type) {
        return HasMetadata.getPlural(type) + "." + HasMetadata.getGroup(type);
    }
}
