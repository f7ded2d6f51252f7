package io.tbmq.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.tbmq.operator.api.TbmqCluster;

/**
 * docs/install.md's "Try it on one machine", run as written on a real one-node Kubernetes (real
 * pods: containerd, runc, CNI, kube-proxy, CoreDNS): make cluster-up, make deploy, the dev sample,
 * a message through the broker Service to a subscriber, a TbmqUser connecting with its generated
 * password, make cluster-down. The dev sample's pods
 * must pass the restricted Pod Security Standard and report the version their images are tagged
 * with. Kafka comes from the Strimzi stand-in, a test double (docs/install.md).
 */
class TryItOnOneMachineE2E {
    static final String NS = "default";
    static final String NAME = "dev";

    static Path repo;
    static List<String> commands;
    static KubernetesClient client;

    @BeforeAll
    static void tryItOnOneMachine() throws Exception {
        repo = Path.of(System.getProperty("tbmq.repo", "..")).toAbsolutePath().normalize();
        Instant t0 = Instant.now();
        // The documented commands as a user runs them, from a shell without KUBECONFIG.
        commands = Docs.codeBlock(repo.resolve("docs/install.md"), "## Try it on one machine");
        assertThat(commands.get(0)).isEqualTo("make cluster-up && make deploy && kubectl apply -f config/samples/tbmq-dev.yaml");
        assertThat(commands.get(commands.size() - 1)).isEqualTo("make cluster-down");
        String out = Docs.run(repo, commands.subList(0, commands.size() - 1), Duration.ofMinutes(45));
        assertThat(out).as("the message went through the broker Service to a subscriber").contains("demo/hello hello from a real pod");
        assertThat(out).as("a TbmqUser's generated password let it in").contains("meter-1 is in");
        System.out.printf("e2e: documented commands, to a message through a Ready cluster, in %d s%n",
                Duration.between(t0, Instant.now()).toSeconds());
        client = ControlPlane.userClient(Config.fromKubeconfig(Files.readString(RealCluster.kubeconfig())));
    }

    @AfterAll
    static void cleanUp() throws Exception {
        if (client != null) {
            RealCluster.saveDiagnostics(client, repo, NS, repo.resolve("e2e/target/try-it-on-one-machine"));
            client.close();
        }
        // The documented last line.
        System.out.println(Docs.run(repo, List.of("make cluster-down"), Duration.ofMinutes(5)));
        assertThat(Files.exists(repo.resolve(".cluster"))).as("cluster-down removed its state").isFalse();
    }

    @Test
    void theDevSampleRunsAsRealPodsThatPassTheRestrictedPodSecurityStandard() throws Exception {
        TbmqCluster ready = client.resources(TbmqCluster.class).inNamespace(NS).withName(NAME).get();
        assertThat(ready.getStatus().getConditions()).anySatisfy(c -> {
            assertThat(c.getType()).isEqualTo("Ready");
            assertThat(c.getStatus()).isEqualTo("True");
        });
        // Labelling the namespace restricted checks every running pod: kubectl warns about any that would be refused.
        String label = Docs.run(repo, List.of("kubectl label namespace " + NS + " --overwrite pod-security.kubernetes.io/enforce=restricted"),
                Duration.ofMinutes(1));
        assertThat(label).doesNotContain("violate");
        List<Pod> pods = client.pods().inNamespace(NS).withLabel("app.kubernetes.io/instance", NAME).list().getItems();
        assertThat(pods).extracting(p -> p.getMetadata().getName()).contains(NAME + "-broker-0", NAME + "-redis-0", NAME + "-redis-1",
                NAME + "-redis-2");
        assertThat(pods).allSatisfy(p -> assertThat(p.getStatus().getPhase()).isEqualTo("Running"));
        Pod operator = client.pods().inNamespace("tbmq-system").list().getItems().get(0);
        assertThat(operator.getSpec().getContainers().get(0).getImage()).isEqualTo("localhost/tbmq-operator:0.1.0");
        assertThat(client.pods().inNamespace(NS).withName(NAME + "-broker-0").getLog()).as("the version the image is tagged with")
                .contains("(TBMQ 0.1.0) started");
        assertThat(client.pods().inNamespace("tbmq-system").withName(operator.getMetadata().getName()).getLog())
                .contains("TBMQ operator 0.1.0; default broker image localhost/tbmq-broker:0.1.0, default Redis image localhost/redis:");
    }
}
