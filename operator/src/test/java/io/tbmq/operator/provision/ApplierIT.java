package io.tbmq.operator.provision;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.StatusBuilder;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.api.model.apps.StatefulSetBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;

/**
 * When the operator asks the API server about the pods of a StatefulSet it is about to write: only for a change
 * of what they are made of, or of how many there are, and once a pass (fabric8's mock API server, which answers
 * every pod dry run with a LimitRange's refusal and records what it was asked).
 */
@EnableKubernetesMockClient
class ApplierIT {
    static final String PODS = "/api/v1/namespaces/iot/pods?dryRun=All";
    static final String APPLY = "/apis/apps/v1/namespaces/iot/statefulsets/dev-redis?fieldManager=tbmq-operator&dryRun=All&force=true";
    static final String REFUSAL = "pods \"dev-redis-check\" is forbidden: memory max limit to request ratio per Container is 1500m,"
            + " but provided ratio is 2.000000";

    KubernetesMockServer server;
    KubernetesClient client;
    StatefulSet current;
    Applier applier;

    @BeforeEach
    void setUp() {
        server.expect().post().withPath(PODS).andReturn(403, new StatusBuilder().withCode(403).withReason("Forbidden")
                .withMessage(REFUSAL).build()).always();
        current = null;
        applier = new Applier(client, true, new Cached());
    }

    @Test
    void aTemplateTheStatefulSetAlreadyHasIsNotCheckedSoAPolicyAddedLaterStopsNothing() throws Exception {
        current = written(statefulSet(3, "300Mi", "8Gi"));
        applier.checkPods(statefulSet(3, "300Mi", "8Gi"));
        applier.checkPods(statefulSet(2, "300Mi", "8Gi"));
        // A volume expansion: the same pods, with larger claims, checked before the StatefulSet is deleted and after.
        applier.checkPods(statefulSet(3, "300Mi", "16Gi"));
        current = null;
        applier.checkPods(statefulSet(3, "300Mi", "16Gi"));
        assertThat(dryRuns()).isZero();
    }

    @Test
    void aChangedTemplateOrMorePodsAreCheckedAndRefused() throws Exception {
        current = written(statefulSet(3, "300Mi", "8Gi"));
        assertThatThrownBy(() -> applier.checkPods(statefulSet(3, "400Mi", "8Gi"))).isInstanceOf(Applier.PodsRefused.class)
                .hasMessageContaining("StatefulSet dev-redis").hasMessageContaining("max limit to request ratio");
        assertThatThrownBy(() -> applier.checkPods(statefulSet(4, "300Mi", "8Gi"))).as("a scale-up")
                .isInstanceOf(Applier.PodsRefused.class);
        current = null;
        assertThatThrownBy(() -> applier.checkPods(statefulSet(3, "300Mi", "8Gi"))).as("a new StatefulSet")
                .isInstanceOf(Applier.PodsRefused.class);
        assertThat(dryRuns()).isEqualTo(3);
    }

    @Test
    void aStatefulSetWrittenBeforeTheDigestIsComparedByADryRunOfTheApply() throws Exception {
        current = statefulSet(3, "300Mi", "8Gi");
        server.expect().patch().withPath(APPLY).andReturn(200, statefulSet(3, "300Mi", "8Gi")).always();
        applier.checkPods(statefulSet(3, "300Mi", "8Gi"));
        assertThat(dryRuns()).as("the same template").isZero();
        applier = new Applier(client, true, new Cached());
        current = statefulSet(3, "200Mi", "8Gi");
        assertThatThrownBy(() -> applier.checkPods(statefulSet(3, "300Mi", "8Gi"))).as("another template")
                .isInstanceOf(Applier.PodsRefused.class);
    }

    @Test
    void aStatefulSetWrittenWithoutACheckIsCheckedEveryPass() throws Exception {
        current = statefulSet(3, "300Mi", "8Gi");
        current.getMetadata().setAnnotations(Map.of(Applier.POD_TEMPLATE_DIGEST, Applier.UNCHECKED));
        // The same template as the one written: were it compared, it would pass unchecked.
        server.expect().patch().withPath(APPLY).andReturn(200, statefulSet(3, "300Mi", "8Gi")).always();
        assertThatThrownBy(() -> applier.checkPods(statefulSet(3, "300Mi", "8Gi"))).isInstanceOf(Applier.PodsRefused.class);
        assertThat(dryRuns()).isEqualTo(1);
    }

    @Test
    void aPodTheOperatorReplacesIsCheckedEvenFromATemplateWrittenBefore() throws Exception {
        current = written(statefulSet(3, "300Mi", "8Gi"));
        applier.checkPods(statefulSet(3, "300Mi", "8Gi"));
        assertThatThrownBy(() -> applier.checkReplacement(current)).isInstanceOf(Applier.PodsRefused.class);
        assertThat(dryRuns()).isEqualTo(1);
    }

    @Test
    void podsTheApiServerCannotCheckAreWrittenMarkedUncheckedAndReported() throws Exception {
        // A webhook on pods that cannot take a dry run: not a refusal of the pods, so the write goes on.
        server.expect().post().withPath("/api/v1/namespaces/edge/pods?dryRun=All").andReturn(400, new StatusBuilder().withCode(400)
                .withReason("BadRequest").withMessage("admission webhook \"pods.policy.example.com\" does not support dry run").build())
                .always();
        server.expect().patch().withPath("/apis/apps/v1/namespaces/edge/statefulsets/dev-redis?fieldManager=tbmq-operator&force=true")
                .andReturn(200, statefulSet(3, "300Mi", "8Gi")).always();
        StatefulSet desired = statefulSet(3, "300Mi", "8Gi");
        desired.getMetadata().setNamespace("edge");
        applier.apply(desired);

        assertThat(applier.notChecked()).containsOnlyKeys("dev-redis");
        assertThat(applier.notChecked().get("dev-redis")).contains("HTTP 400", "does not support dry run");
        List<String> applied = bodies("PATCH");
        // So that the next pass asks again, and reports it again for as long as it cannot be answered.
        assertThat(applied).singleElement().satisfies(body -> assertThat(body)
                .contains("\"" + Applier.POD_TEMPLATE_DIGEST + "\":\"" + Applier.UNCHECKED + "\""));
    }

    @Test
    void aReplacementTheApiServerCannotCheckMarksTheStatefulSetSoTheNextPassesAskAgain() throws Exception {
        server.expect().post().withPath("/api/v1/namespaces/edge/pods?dryRun=All").andReturn(400, new StatusBuilder().withCode(400)
                .withReason("BadRequest").withMessage("Internal error occurred: failed calling webhook \"pods.policy.example.com\"")
                .build()).always();
        server.expect().patch().withPath("/apis/apps/v1/namespaces/edge/statefulsets/dev-redis").andReturn(200,
                statefulSet(3, "300Mi", "8Gi")).always();
        current = written(statefulSet(3, "300Mi", "8Gi"));
        current.getMetadata().setNamespace("edge");
        server.expect().get().withPath("/apis/apps/v1/namespaces/edge/statefulsets/dev-redis").andReturn(200, current).always();
        applier.checkReplacement(current);

        assertThat(applier.notChecked().get("dev-redis")).contains("HTTP 400", "failed calling webhook");
        List<String> patched = bodies("PATCH");
        assertThat(patched).singleElement().isEqualTo("{\"metadata\":{\"annotations\":{\"" + Applier.POD_TEMPLATE_DIGEST + "\":\""
                + Applier.UNCHECKED + "\"}}}");
    }

    @Test
    void aQuotaTheTestPodExceedsIsNoReasonToReportUnlessTheWriteAddsPods() throws Exception {
        server.expect().post().withPath("/api/v1/namespaces/full/pods?dryRun=All").andReturn(403, new StatusBuilder().withCode(403)
                .withReason("Forbidden").withMessage("pods \"dev-redis-check\" is forbidden: exceeded quota: compute, requested: "
                        + "limits.memory=600Mi, used: limits.memory=1800Mi, limited: limits.memory=2Gi").build()).always();
        current = written(statefulSet(3, "300Mi", "8Gi"));
        current.getMetadata().setNamespace("full");
        StatefulSet changed = statefulSet(3, "400Mi", "8Gi");
        changed.getMetadata().setNamespace("full");
        applier.checkPods(changed);
        assertThat(applier.notChecked()).isEmpty();

        // More pods: the quota would refuse them too, and nobody else would say so.
        StatefulSet more = statefulSet(4, "300Mi", "8Gi");
        more.getMetadata().setNamespace("full");
        applier.checkPods(more);
        assertThat(applier.notChecked().get("dev-redis")).contains("HTTP 403", "exceeded quota");

        // The next pass: the StatefulSet asks for 4 (written unchecked), its controller made 3; still reported.
        current = statefulSet(4, "300Mi", "8Gi");
        current.getMetadata().setNamespace("full");
        current.getMetadata().setAnnotations(Map.of(Applier.POD_TEMPLATE_DIGEST, Applier.UNCHECKED));
        current.setStatus(new io.fabric8.kubernetes.api.model.apps.StatefulSetStatusBuilder().withReplicas(3).build());
        applier = new Applier(client, true, new Cached());
        applier.checkPods(more);
        assertThat(applier.notChecked().get("dev-redis")).contains("exceeded quota");
    }

    /** The bodies of the requests made so far with {@code method}. */
    private List<String> bodies(String method) throws InterruptedException {
        List<String> bodies = new ArrayList<>();
        for (var request = server.takeRequest(100, java.util.concurrent.TimeUnit.MILLISECONDS); request != null;
                request = server.takeRequest(100, java.util.concurrent.TimeUnit.MILLISECONDS)) {
            if (method.equals(request.getMethod())) {
                bodies.add(request.getUtf8Body());
            }
        }
        return bodies;
    }

    private int dryRuns() throws InterruptedException {
        int count = 0;
        for (var request = server.takeRequest(100, java.util.concurrent.TimeUnit.MILLISECONDS); request != null;
                request = server.takeRequest(100, java.util.concurrent.TimeUnit.MILLISECONDS)) {
            if ("POST".equals(request.getMethod()) && PODS.equals(request.getPath())) {
                count++;
            }
        }
        return count;
    }

    private static StatefulSet written(StatefulSet statefulSet) {
        statefulSet.getMetadata().setAnnotations(Map.of(Applier.POD_TEMPLATE_DIGEST, Applier.podTemplateDigest(statefulSet)));
        return statefulSet;
    }

    static StatefulSet statefulSet(int replicas, String memory, String storage) {
        return new StatefulSetBuilder().withNewMetadata().withName("dev-redis").withNamespace("iot").endMetadata()
                .withNewSpec().withReplicas(replicas).withNewTemplate().withNewSpec().addNewContainer().withName("redis")
                .withNewResources().addToRequests("memory", new Quantity(memory)).addToLimits("memory", new Quantity("600Mi"))
                .endResources().endContainer().endSpec().endTemplate().addNewVolumeClaimTemplate().withNewMetadata().withName("data")
                .endMetadata().withNewSpec().withNewResources().addToRequests("storage", new Quantity(storage)).endResources()
                .endSpec().endVolumeClaimTemplate().endSpec().build();
    }

    /** The informer cache: what the test says the cluster has. */
    private final class Cached implements WatchedObjects {
        @Override
        public Optional<StatefulSet> statefulSet(String namespace, String name) {
            return Optional.ofNullable(current);
        }

        @Override
        public Optional<Pod> pod(String namespace, String name) {
            return Optional.empty();
        }

        @Override
        public List<Pod> pods(String namespace, Map<String, String> labels) {
            return new ArrayList<>();
        }

        @Override
        public List<io.tbmq.operator.api.TbmqUser> users(String namespace, String cluster) {
            return List.of();
        }

        @Override
        public List<io.fabric8.kubernetes.api.model.Secret> userSecrets(String namespace, String cluster) {
            return List.of();
        }

        @Override
        public void written(HasMetadata before, HasMetadata after) {
        }
    }
}
