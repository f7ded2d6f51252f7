package io.tbmq.operator.manifests;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.fasterxml.jackson.dataformat.yaml.YAMLGenerator;

/**
 * Everything users apply, assembled from what the build generated (target/kubernetes, target/bundle)
 * and the samples: the CRD for crds/, the install manifests for config/install/, the OLM bundle for
 * bundle/. The build's generators give the CRD, RBAC (from the @RBACRule annotations), Deployment and
 * CSV; this adds what they cannot: the install namespace, alm-examples from config/samples/, the
 * CSV's createdAt and its spec and status descriptors (described by the CRD's own descriptions).
 */
final class Manifests {
    static final String NAMESPACE = "tbmq-system";
    /** The release date of this CSV version; a fixed value so the bundle is reproducible. */
    static final String CREATED_AT = "2026-11-21T00:00:00Z";
    static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory()
            .disable(YAMLGenerator.Feature.WRITE_DOC_START_MARKER)
            .enable(YAMLGenerator.Feature.MINIMIZE_QUOTES)
            .enable(YAMLGenerator.Feature.INDENT_ARRAYS_WITH_INDICATOR));
    static final ObjectMapper JSON = new ObjectMapper();

    /** Spec fields OperatorHub's form shows, with their UI hints. */
    static final Map<String, List<String>> SPEC_DESCRIPTORS = new LinkedHashMap<>();
    static final Map<String, List<String>> STATUS_DESCRIPTORS = new LinkedHashMap<>();
    static final Map<String, List<String>> USER_SPEC_DESCRIPTORS = new LinkedHashMap<>();
    static final Map<String, List<String>> USER_STATUS_DESCRIPTORS = new LinkedHashMap<>();

    static {
        SPEC_DESCRIPTORS.put("targetThroughput", List.of("urn:alm:descriptor:com.tectonic.ui:number"));
        SPEC_DESCRIPTORS.put("workload", List.of("urn:alm:descriptor:com.tectonic.ui:select:P2P",
                "urn:alm:descriptor:com.tectonic.ui:select:FAN_IN", "urn:alm:descriptor:com.tectonic.ui:select:FAN_OUT"));
        SPEC_DESCRIPTORS.put("broker.credentialsSecret", List.of("urn:alm:descriptor:io.kubernetes:Secret"));
        SPEC_DESCRIPTORS.put("broker.tlsSecret", List.of("urn:alm:descriptor:io.kubernetes:Secret"));
        SPEC_DESCRIPTORS.put("broker.allowAnonymous", List.of("urn:alm:descriptor:com.tectonic.ui:booleanSwitch"));
        SPEC_DESCRIPTORS.put("broker.resources", List.of("urn:alm:descriptor:com.tectonic.ui:resourceRequirements"));
        SPEC_DESCRIPTORS.put("kafka.mode", List.of("urn:alm:descriptor:com.tectonic.ui:select:MANAGED",
                "urn:alm:descriptor:com.tectonic.ui:select:EXTERNAL"));
        SPEC_DESCRIPTORS.put("kafka.bootstrapServers", List.of("urn:alm:descriptor:com.tectonic.ui:text"));
        SPEC_DESCRIPTORS.put("redis.mode", List.of("urn:alm:descriptor:com.tectonic.ui:select:MANAGED",
                "urn:alm:descriptor:com.tectonic.ui:select:EXTERNAL"));
        SPEC_DESCRIPTORS.put("redis.passwordSecret", List.of("urn:alm:descriptor:io.kubernetes:Secret"));
        SPEC_DESCRIPTORS.put("redis.fsync", List.of("urn:alm:descriptor:com.tectonic.ui:select:EVERYSEC",
                "urn:alm:descriptor:com.tectonic.ui:select:ALWAYS"));
        SPEC_DESCRIPTORS.put("monitoring.enabled", List.of("urn:alm:descriptor:com.tectonic.ui:booleanSwitch"));
        SPEC_DESCRIPTORS.put("monitoring.alerts", List.of("urn:alm:descriptor:com.tectonic.ui:booleanSwitch"));
        STATUS_DESCRIPTORS.put("conditions", List.of("urn:alm:descriptor:io.kubernetes.conditions"));
        STATUS_DESCRIPTORS.put("brokers", List.of("urn:alm:descriptor:text"));
        STATUS_DESCRIPTORS.put("redis", List.of("urn:alm:descriptor:text"));
        STATUS_DESCRIPTORS.put("kafka", List.of("urn:alm:descriptor:text"));
        STATUS_DESCRIPTORS.put("endpoints", List.of("urn:alm:descriptor:text"));
        STATUS_DESCRIPTORS.put("observedGeneration", List.of("urn:alm:descriptor:text"));
        USER_SPEC_DESCRIPTORS.put("cluster", List.of("urn:alm:descriptor:com.tectonic.ui:text"));
        USER_SPEC_DESCRIPTORS.put("authentication.type", List.of("urn:alm:descriptor:com.tectonic.ui:select:PASSWORD",
                "urn:alm:descriptor:com.tectonic.ui:select:TLS"));
        USER_SPEC_DESCRIPTORS.put("authentication.commonName", List.of("urn:alm:descriptor:com.tectonic.ui:text"));
        USER_SPEC_DESCRIPTORS.put("clientType", List.of("urn:alm:descriptor:com.tectonic.ui:select:DEVICE",
                "urn:alm:descriptor:com.tectonic.ui:select:APPLICATION"));
        USER_STATUS_DESCRIPTORS.put("conditions", List.of("urn:alm:descriptor:io.kubernetes.conditions"));
        USER_STATUS_DESCRIPTORS.put("username", List.of("urn:alm:descriptor:text"));
        USER_STATUS_DESCRIPTORS.put("secret", List.of("urn:alm:descriptor:io.kubernetes:Secret"));
    }

    private Manifests() {
    }

    /** Relative path in the repository to file content. */
    static Map<String, String> assemble(Path operatorTarget, Path repo) throws IOException {
        Map<String, String> out = new TreeMap<>();
        Path crd = operatorTarget.resolve("kubernetes/tbmqclusters.tbmq.io-v1.yml");
        Path userCrd = operatorTarget.resolve("kubernetes/tbmqusers.tbmq.io-v1.yml");
        out.put("crds/tbmqclusters.tbmq.io-v1.yml", orderPrinterColumns(Files.readString(crd)));
        out.put("crds/tbmqusers.tbmq.io-v1.yml", orderPrinterColumns(Files.readString(userCrd)));
        out.put("config/install/operator.yaml", install(operatorTarget.resolve("kubernetes/kubernetes.yml")));

        Path bundle = operatorTarget.resolve("bundle/tbmq-operator");
        try (Stream<Path> files = Files.walk(bundle)) {
            for (Path f : files.filter(Files::isRegularFile).sorted().toList()) {
                String rel = "bundle/" + bundle.relativize(f).toString().replace('\\', '/');
                String text = Files.readString(f);
                if (rel.endsWith(".crd.yml")) {
                    text = orderPrinterColumns(text);
                }
                if (rel.endsWith(".clusterserviceversion.yaml")) {
                    text = csv(text, YAML.readTree(Files.readString(crd)), YAML.readTree(Files.readString(userCrd)), samples(repo));
                }
                out.put(rel, text);
            }
        }
        return out;
    }

    /** kubectl get tbmq's columns, in the order a reader wants them (the generator sorts them by JSON path). */
    static final List<String> PRINTER_COLUMNS = List.of("Target", "Cluster", "Authentication", "Brokers", "Redis", "Kafka", "Ready",
            "Age");

    static String orderPrinterColumns(String crdYaml) throws IOException {
        ObjectNode crd = (ObjectNode) YAML.readTree(crdYaml);
        for (JsonNode version : crd.at("/spec/versions")) {
            ArrayNode columns = (ArrayNode) version.get("additionalPrinterColumns");
            List<JsonNode> sorted = new ArrayList<>();
            columns.forEach(sorted::add);
            sorted.sort(java.util.Comparator.comparingInt(c -> {
                int i = PRINTER_COLUMNS.indexOf(c.path("name").asText());
                return i < 0 ? PRINTER_COLUMNS.size() : i;
            }));
            columns.removeAll();
            sorted.forEach(columns::add);
        }
        return YAML.writeValueAsString(crd);
    }

    static List<JsonNode> samples(Path repo) throws IOException {
        List<JsonNode> samples = new ArrayList<>();
        try (Stream<Path> files = Files.list(repo.resolve("config/samples"))) {
            for (Path f : files.filter(p -> p.toString().endsWith(".yaml")).sorted().toList()) {
                samples.add(YAML.readTree(Files.readString(f)));
            }
        }
        return samples;
    }

    private static String install(Path kubernetesYml) throws IOException {
        StringBuilder out = new StringBuilder("""
                # The operator's install manifests, generated (make manifests) from operator/ and its @RBACRule
                # annotations: kubectl apply -f crds/ -f config/install/   (or make deploy)
                apiVersion: v1
                kind: Namespace
                metadata:
                  name: %s
                """.formatted(NAMESPACE));
        for (String doc : Files.readString(kubernetesYml).split("(?m)^---\\s*$")) {
            if (doc.isBlank()) {
                continue;
            }
            ObjectNode o = (ObjectNode) YAML.readTree(doc);
            String kind = o.path("kind").asText();
            if (!kind.startsWith("Cluster")) {
                ((ObjectNode) o.get("metadata")).put("namespace", NAMESPACE);
            }
            if ("Deployment".equals(kind)) {
                sortControllerVariables(o.at("/spec/template/spec/containers"));
            }
            if (o.has("subjects")) {
                for (JsonNode s : o.get("subjects")) {
                    ((ObjectNode) s).put("namespace", NAMESPACE);
                }
            }
            out.append("---\n").append(YAML.writeValueAsString(o));
        }
        return out.toString();
    }

    private static String csv(String generated, JsonNode crd, JsonNode userCrd, List<JsonNode> samples) throws IOException {
        ObjectNode csv = (ObjectNode) YAML.readTree(generated);
        ObjectNode annotations = ((ObjectNode) csv.get("metadata")).with("annotations");
        ArrayNode examples = JSON.createArrayNode();
        samples.forEach(examples::add);
        annotations.put("alm-examples", JSON.writerWithDefaultPrettyPrinter().writeValueAsString(examples));
        annotations.put("createdAt", CREATED_AT);

        sortControllerVariables(csv.at("/spec/install/spec/deployments/0/spec/template/spec/containers"));

        ObjectNode owned = owned(csv, "tbmqclusters.tbmq.io");
        JsonNode schema = crd.at("/spec/versions/0/schema/openAPIV3Schema/properties");
        owned.put("displayName", "TBMQ Cluster");
        owned.put("description", "An MQTT broker cluster with its Kafka and Redis Cluster, sized from a target throughput.");
        owned.set("specDescriptors", descriptors(SPEC_DESCRIPTORS, schema.get("spec")));
        owned.set("statusDescriptors", descriptors(STATUS_DESCRIPTORS, schema.get("status")));

        ObjectNode user = owned(csv, "tbmqusers.tbmq.io");
        JsonNode userSchema = userCrd.at("/spec/versions/0/schema/openAPIV3Schema/properties");
        user.put("displayName", "TBMQ User");
        user.put("description", "An MQTT user of a TBMQ cluster: a generated password or an X.509 common name, its client type "
                + "and its ACL, applied by the brokers without a restart.");
        user.set("specDescriptors", descriptors(USER_SPEC_DESCRIPTORS, userSchema.get("spec")));
        user.set("statusDescriptors", descriptors(USER_STATUS_DESCRIPTORS, userSchema.get("status")));
        return YAML.writeValueAsString(csv);
    }

    /**
     * The generators list the controllers' namespace variables in no fixed order: they go last, sorted, so a
     * build is reproducible (nothing refers to them).
     */
    private static void sortControllerVariables(JsonNode containers) {
        for (JsonNode container : containers) {
            ArrayNode env = (ArrayNode) container.get("env");
            if (env == null) {
                continue;
            }
            List<JsonNode> vars = new ArrayList<>();
            env.forEach(vars::add);
            List<JsonNode> controllers = vars.stream().filter(v -> v.path("name").asText().startsWith("QUARKUS_OPERATOR_SDK_CONTROLLERS_"))
                    .sorted(java.util.Comparator.comparing(v -> v.path("name").asText())).toList();
            env.removeAll();
            vars.stream().filter(v -> !controllers.contains(v)).forEach(env::add);
            controllers.forEach(env::add);
        }
    }

    private static ObjectNode owned(ObjectNode csv, String crdName) {
        for (JsonNode o : csv.at("/spec/customresourcedefinitions/owned")) {
            if (crdName.equals(o.path("name").asText())) {
                return (ObjectNode) o;
            }
        }
        throw new IllegalStateException("the CSV does not own " + crdName);
    }

    private static ArrayNode descriptors(Map<String, List<String>> wanted, JsonNode schema) {
        ArrayNode out = JSON.createArrayNode();
        wanted.forEach((path, xDescriptors) -> {
            JsonNode node = schema;
            for (String part : path.split("\\.")) {
                node = node.path("properties").path(part);
            }
            if (node.isMissingNode()) {
                throw new IllegalStateException("descriptor " + path + " is not in the CRD schema");
            }
            ObjectNode d = out.addObject();
            d.put("path", path);
            d.put("displayName", displayName(path));
            if (node.has("description")) {
                d.put("description", node.get("description").asText());
            }
            xDescriptors.forEach(d.withArray("x-descriptors")::add);
        });
        return out;
    }

    /** broker.credentialsSecret -> "Broker Credentials Secret". */
    static String displayName(String path) {
        StringBuilder s = new StringBuilder();
        for (String part : path.split("\\.")) {
            for (String word : part.split("(?=[A-Z])")) {
                if (!s.isEmpty()) {
                    s.append(' ');
                }
                s.append(Character.toUpperCase(word.charAt(0))).append(word.substring(1));
            }
        }
        return s.toString();
    }

    static void write(Map<String, String> files, Path repo) {
        files.forEach((rel, text) -> {
            try {
                Path target = repo.resolve(rel);
                Files.createDirectories(target.getParent());
                Files.writeString(target, text);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        });
    }
}
