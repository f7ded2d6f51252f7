package io.tbmq.operator.manifests;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.JsonNode;

import io.fabric8.kubernetes.client.utils.Serialization;
import io.tbmq.operator.api.TbmqCluster;
import io.tbmq.operator.api.TbmqUser;

/**
 * What users apply is in the repository, generated from the code, and cannot drift: crds/,
 * config/install/ and bundle/ must equal what this build generates (run `make manifests` to
 * regenerate them), and the bundle must pass the structural checks OLM makes.
 */
class ManifestsIT {
    static final Path REPO = Path.of("..").toAbsolutePath().normalize();
    static Map<String, String> generated;

    @BeforeAll
    static void assemble() throws Exception {
        generated = Manifests.assemble(Path.of("target"), REPO);
        if (Boolean.getBoolean("tbmq.update-manifests")) {
            Manifests.write(generated, REPO);
        }
    }

    @Test
    void theCommittedManifestsAreTheGeneratedOnes() throws Exception {
        List<String> drifted = new ArrayList<>();
        for (var e : generated.entrySet()) {
            Path committed = REPO.resolve(e.getKey());
            if (!Files.exists(committed) || !Files.readString(committed).equals(e.getValue())) {
                drifted.add(e.getKey());
            }
        }
        try (Stream<Path> files = Files.walk(REPO.resolve("bundle"))) {
            files.filter(Files::isRegularFile).map(f -> REPO.relativize(f).toString().replace('\\', '/'))
                    .filter(rel -> !generated.containsKey(rel)).forEach(rel -> drifted.add(rel + " (not generated any more)"));
        }
        assertThat(drifted).as("these differ from what the code generates; run `make manifests` and commit").isEmpty();
    }

    @Test
    void theBundleHasExactlyOneCsvOwningEveryCrdItShips() throws Exception {
        List<String> csvs = generated.keySet().stream().filter(k -> k.endsWith(".clusterserviceversion.yaml")).toList();
        assertThat(csvs).hasSize(1);
        JsonNode csv = Manifests.YAML.readTree(generated.get(csvs.get(0)));
        assertThat(csv.path("kind").asText()).isEqualTo("ClusterServiceVersion");

        List<String> shippedCrds = new ArrayList<>();
        for (var e : generated.entrySet()) {
            if (e.getKey().startsWith("bundle/manifests/") && e.getKey().endsWith(".crd.yml")) {
                shippedCrds.add(Manifests.YAML.readTree(e.getValue()).at("/metadata/name").asText());
            }
        }
        List<String> owned = new ArrayList<>();
        csv.at("/spec/customresourcedefinitions/owned").forEach(o -> owned.add(o.path("name").asText()));
        assertThat(shippedCrds).containsExactlyInAnyOrderElementsOf(owned).contains("tbmqclusters.tbmq.io", "tbmqusers.tbmq.io");
        List<String> required = new ArrayList<>();
        csv.at("/spec/customresourcedefinitions/required").forEach(o -> required.add(o.path("name").asText() + "/"
                + o.path("version").asText()));
        assertThat(required).containsExactlyInAnyOrder("kafkas.kafka.strimzi.io/v1", "kafkanodepools.kafka.strimzi.io/v1",
                "kafkatopics.kafka.strimzi.io/v1");
    }

    @Test
    void theCsvCarriesWhatOperatorHubShows() throws Exception {
        JsonNode csv = csv();
        JsonNode a = csv.at("/metadata/annotations");
        for (String key : List.of("alm-examples", "capabilities", "categories", "containerImage", "createdAt", "repository")) {
            assertThat(a.path(key).asText()).as("metadata.annotations." + key).isNotBlank();
        }
        JsonNode spec = csv.get("spec");
        for (String key : List.of("displayName", "description", "icon", "keywords", "maintainers", "provider", "links",
                "maturity", "installModes", "minKubeVersion", "version")) {
            assertThat(spec.has(key)).as("spec." + key).isTrue();
        }
        assertThat(spec.path("description").asText().length()).as("an OperatorHub description, not a line").isGreaterThan(400);
        for (JsonNode owned : csv.at("/spec/customresourcedefinitions/owned")) {
            assertThat(owned.path("displayName").asText()).as(owned.path("name").asText()).startsWith("TBMQ ");
            assertThat(owned.path("specDescriptors").size()).as(owned.path("name").asText()).isGreaterThan(3);
            assertThat(owned.path("statusDescriptors").size()).as(owned.path("name").asText()).isGreaterThan(2);
        }
        assertThat(a.path("containerImage").asText())
                .isEqualTo(csv.at("/spec/install/spec/deployments/0/spec/template/spec/containers/0/image").asText());
    }

    @Test
    void almExamplesAreTheSamplesAndParseAsTbmqClustersAndTbmqUsers() throws Exception {
        JsonNode examples = Manifests.JSON.readTree(csv().at("/metadata/annotations/alm-examples").asText());
        assertThat(examples.size()).isEqualTo(Manifests.samples(REPO).size()).isGreaterThanOrEqualTo(6);
        List<String> kinds = new ArrayList<>();
        for (JsonNode example : examples) {
            kinds.add(example.path("kind").asText());
            if ("TbmqUser".equals(example.path("kind").asText())) {
                TbmqUser u = Serialization.unmarshal(example.toString(), TbmqUser.class);
                assertThat(io.tbmq.operator.users.UserValidator.validate(u.getSpec())).isEmpty();
                continue;
            }
            TbmqCluster c = Serialization.unmarshal(example.toString(), TbmqCluster.class);
            assertThat(c.getSpec().getTargetThroughput()).isPositive();
        }
        assertThat(kinds).contains("TbmqCluster", "TbmqUser");
    }

    @Test
    void annotationsMatchTheDockerfileLabels() {
        Map<String, String> annotations = new LinkedHashMap<>();
        for (String line : generated.get("bundle/metadata/annotations.yaml").split("\n")) {
            if (line.startsWith("  ")) {
                String[] kv = line.trim().split(": ", 2);
                annotations.put(kv[0], kv[1]);
            }
        }
        Map<String, String> labels = new LinkedHashMap<>();
        for (String line : generated.get("bundle/bundle.Dockerfile").split("\n")) {
            if (line.startsWith("LABEL ")) {
                String[] kv = line.substring(6).split("=", 2);
                labels.put(kv[0], kv[1]);
            }
        }
        assertThat(labels).isEqualTo(annotations);
        assertThat(annotations).containsEntry("operators.operatorframework.io.bundle.mediatype.v1", "registry+v1")
                .containsEntry("operators.operatorframework.io.bundle.manifests.v1", "manifests/");
    }

    @Test
    void theBundleAndInstallGrantTheSameRulesTheAnnotationsDeclare() throws Exception {
        List<JsonNode> csvRules = new ArrayList<>();
        csv().at("/spec/install/spec/clusterPermissions").forEach(p -> p.get("rules").forEach(csvRules::add));
        List<JsonNode> clusterRoleRules = new ArrayList<>();
        for (String doc : generated.get("config/install/operator.yaml").split("(?m)^---\\s*$")) {
            JsonNode o = Manifests.YAML.readTree(doc);
            if (o != null && "ClusterRole".equals(o.path("kind").asText())) {
                o.get("rules").forEach(clusterRoleRules::add);
            }
        }
        assertThat(clusterRoleRules).isNotEmpty().containsExactlyInAnyOrderElementsOf(csvRules);
    }

    @Test
    void oneOperatorPodRunsAtATimeAlsoWhileItIsUpgraded() throws Exception {
        // No leader election: two pods reconciling at once would both roll brokers and change passwords.
        List<JsonNode> deployments = new ArrayList<>();
        csv().at("/spec/install/spec/deployments").forEach(d -> deployments.add(d.get("spec")));
        for (String doc : generated.get("config/install/operator.yaml").split("(?m)^---\\s*$")) {
            JsonNode o = Manifests.YAML.readTree(doc);
            if (o != null && "Deployment".equals(o.path("kind").asText())) {
                deployments.add(o.get("spec"));
            }
        }
        assertThat(deployments).as("the bundle's and the install's").hasSize(2).allSatisfy(spec -> {
            assertThat(spec.path("replicas").asInt(1)).isEqualTo(1);
            assertThat(spec.at("/strategy/type").asText()).as("strategy.type").isEqualTo("Recreate");
        });
    }

    @Test
    void whatUsersReadNamesTheTbmqPaperAndNeverAnInternalWord() throws Exception {
        // The CRD, CSV, install manifests and samples, and every doc: users know "the TBMQ paper" and its
        // performance tests, not the planning word "seeds".
        List<String> offending = new ArrayList<>();
        generated.forEach((file, text) -> scan(file, text, offending));
        for (String dir : List.of("config", "docs")) {
            try (Stream<Path> files = Files.walk(REPO.resolve(dir))) {
                for (Path f : files.filter(Files::isRegularFile).filter(f -> f.toString().matches(".*\\.(ya?ml|md|json)$")).toList()) {
                    scan(REPO.relativize(f).toString(), Files.readString(f), offending);
                }
            }
        }
        scan("README.md", Files.readString(REPO.resolve("README.md")), offending);
        assertThat(offending).isEmpty();
        assertThat(csv().at("/spec/minKubeVersion").asText()).as("what Strimzi 1.2.0 requires").isEqualTo("1.30.0");
    }

    private static void scan(String file, String text, List<String> offending) {
        String[] lines = text.split("\n");
        for (int i = 0; i < lines.length; i++) {
            if (lines[i].matches("(?i).*\\bthe seeds\\b.*|(?i).*\\bseeds'.*")) {
                offending.add(file + ":" + (i + 1) + ": " + lines[i].trim());
            }
        }
    }

    private static JsonNode csv() throws Exception {
        return Manifests.YAML.readTree(generated.entrySet().stream().filter(e -> e.getKey().endsWith(".clusterserviceversion.yaml"))
                .findFirst().orElseThrow().getValue());
    }
}
