package io.tbmq.e2e;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;

import io.fabric8.crdv2.generator.CRDGenerator;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.openshift.api.model.monitoring.v1.PodMonitor;

/**
 * The Prometheus Operator's PodMonitor CRD (monitoring.coreos.com/v1) for the e2e control plane,
 * generated from fabric8's model of that API (io.fabric8:openshift-model-monitoring), so the API
 * server validates the PodMonitor the operator writes against a full schema. Only the CRD: no
 * Prometheus Operator runs here, and none is needed to test what the operator writes.
 */
final class PodMonitorCrd {
    static final String NAME = "podmonitors.monitoring.coreos.com";

    private PodMonitorCrd() {
    }

    static void install(KubernetesClient client) throws IOException {
        Path dir = Path.of("target", "podmonitor-crd");
        Files.createDirectories(dir);
        new CRDGenerator().customResourceClasses(PodMonitor.class).inOutputDir(dir.toFile()).forCRDVersions("v1").generate();
        try (InputStream in = Files.newInputStream(dir.resolve(NAME + "-v1.yml"))) {
            client.load(in).serverSideApply();
        }
        // A CRD just written is not served at once: Established first, then its REST path answers; until
        // then a request for a PodMonitor gets 404 like one for an API that does not exist.
        Instant deadline = Instant.now().plusSeconds(60);
        while (true) {
            try {
                client.resources(PodMonitor.class).inNamespace("default").list();
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

    static void uninstall(KubernetesClient client) {
        client.apiextensions().v1().customResourceDefinitions().withName(NAME).delete();
    }
}
