package io.tbmq.operator.validation;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.ResourceRequirements;
import io.tbmq.operator.api.BrokerSpec;
import io.tbmq.operator.api.KafkaSpec;
import io.tbmq.operator.api.ListenerSpec;
import io.tbmq.operator.api.ListenersSpec;
import io.tbmq.operator.api.Mode;
import io.tbmq.operator.api.Overrides;
import io.tbmq.operator.api.PersistenceSpec;
import io.tbmq.operator.api.RedisSpec;
import io.tbmq.operator.api.StorageSpec;
import io.tbmq.operator.api.TbmqClusterSpec;
import io.tbmq.operator.desired.BrokerModel;

/**
 * Checks a spec before anything is changed. The CRD's OpenAPI and CEL rules catch most of this at
 * admission; this repeats them (for API servers without CEL, and for resources stored before a rule
 * existed) and adds what a schema cannot express. Each error names the field.
 */
public final class SpecValidator {
    /**
     * Beyond any node's cores; the broker's request also sizes its memory and broker count in whole
     * millicores, which would overflow long before Kubernetes' own limit.
     */
    static final int MAX_CPU_CORES = 1024;
    private static final Pattern HOST_PORT = Pattern.compile("^[A-Za-z0-9._\\-\\[\\]:]+:[0-9]{1,5}$");
    private static final Pattern DURATION = Pattern.compile(PersistenceSpec.DURATION);
    /** A container's imagePullPolicy, as Kubernetes spells it. */
    static final List<String> PULL_POLICIES = List.of("Always", "IfNotPresent", "Never");

    private SpecValidator() {
    }

    /** Kubernetes names and label values are at most 63 characters. */
    static final int NAME_LIMIT = 63;
    /** What StatefulSets add to our names: "-broker-" + a 10-character revision hash (the pods' controller-revision-hash label). */
    static final int STATEFULSET_SUFFIX = "-broker-".length() + 10;
    /** What Strimzi adds to our name for the controller pool's pods: "-kafka-controllers-" + a node id. */
    static final int STRIMZI_POD_SUFFIX = "-kafka-controllers-".length() + 4;

    /** The TbmqCluster's name, with every name derived from it. */
    public static List<FieldError> validateName(String name, TbmqClusterSpec spec) {
        List<FieldError> errors = new ArrayList<>();
        boolean managedKafka = spec != null && spec.getKafka() != null && spec.getKafka().getMode() != Mode.EXTERNAL;
        int limit = NAME_LIMIT - (managedKafka ? STRIMZI_POD_SUFFIX : STATEFULSET_SUFFIX);
        if (name != null && name.length() > limit) {
            errors.add(new FieldError("metadata.name", "'" + name + "' has " + name.length() + " characters; at most " + limit
                    + " fit, since " + (managedKafka ? "Strimzi names the Kafka controller pods <name>-kafka-controllers-<id>"
                            : "the brokers' pods carry the label <name>-broker-<revision>") + " and Kubernetes names are at most "
                    + NAME_LIMIT + " characters"));
        }
        return errors;
    }

    public static List<FieldError> validate(TbmqClusterSpec spec) {
        List<FieldError> errors = new ArrayList<>();
        if (spec == null) {
            errors.add(new FieldError("spec", "is required"));
            return errors;
        }
        if (spec.getTargetThroughput() <= 0) {
            errors.add(new FieldError("spec.targetThroughput", "must be above 0 (messages per second, in + out)"));
        }
        broker(spec.getBroker(), errors);
        kafka(spec.getKafka(), errors);
        redis(spec.getRedis(), errors);
        overrides(spec, errors);
        PlanLimits.check(spec, errors);
        return errors;
    }

    private static void broker(BrokerSpec broker, List<FieldError> errors) {
        if (broker == null) {
            return;
        }
        if (broker.getImage() != null && broker.getImage().isBlank()) {
            errors.add(new FieldError("spec.broker.image", "must not be empty (leave it out for the operator's default)"));
        }
        if (broker.getImagePullPolicy() != null && !PULL_POLICIES.contains(broker.getImagePullPolicy())) {
            errors.add(new FieldError("spec.broker.imagePullPolicy", "must be one of " + String.join(", ", PULL_POLICIES) + ", was '"
                    + broker.getImagePullPolicy() + "'"));
        }
        if (broker.getCredentialsSecret() == null && !broker.isAllowAnonymous()) {
            errors.add(new FieldError("spec.broker.credentialsSecret",
                    "is required unless spec.broker.allowAnonymous is true (no client could connect)"));
        }
        PersistenceSpec p = broker.getPersistence();
        if (p != null) {
            if (p.getDeviceMessagesLimit() < 1 || p.getDeviceMessagesLimit() > 65535) {
                errors.add(new FieldError("spec.broker.persistence.deviceMessagesLimit",
                        "must be between 1 and 65535 (MQTT packet ids), was " + p.getDeviceMessagesLimit()));
            }
            if (p.getDeviceMessageTtl() != null && !DURATION.matcher(p.getDeviceMessageTtl()).matches()) {
                errors.add(new FieldError("spec.broker.persistence.deviceMessageTtl",
                        "must be a number with a unit (ms, s, m, h, d), was '" + p.getDeviceMessageTtl() + "'"));
            }
        }
        resources("spec.broker.resources", broker.getResources(), errors);
        listeners(broker, errors);
        BrokerConfigCheck.check(broker.getConfig(), errors);
    }

    private static void listeners(BrokerSpec broker, List<FieldError> errors) {
        ListenersSpec l = broker.getListeners();
        if (l == null) {
            return;
        }
        Map<String, ListenerSpec> all = new java.util.LinkedHashMap<>();
        all.put("mqtt", l.getMqtt());
        all.put("mqtts", l.getMqtts());
        all.put("ws", l.getWs());
        all.put("wss", l.getWss());
        Map<Integer, String> ports = new HashMap<>();
        boolean any = false;
        for (Map.Entry<String, ListenerSpec> e : all.entrySet()) {
            ListenerSpec listener = e.getValue();
            if (listener == null || !listener.isEnabled()) {
                continue;
            }
            any = true;
            String field = "spec.broker.listeners." + e.getKey();
            if (listener.getPort() < 1 || listener.getPort() > 65535) {
                errors.add(new FieldError(field + ".port", "must be between 1 and 65535, was " + listener.getPort()));
            } else if (listener.getPort() == BrokerModel.HTTP_PORT) {
                // The broker would fail to bind it at start, and the rollout would stop on a crash-looping pod.
                errors.add(new FieldError(field + ".port", "port " + BrokerModel.HTTP_PORT
                        + " is the broker's HTTP port (health checks and metrics)"));
            } else if (ports.containsKey(listener.getPort())) {
                errors.add(new FieldError(field + ".port", "port " + listener.getPort() + " is also used by "
                        + ports.get(listener.getPort())));
            } else {
                ports.put(listener.getPort(), e.getKey());
            }
            if ((e.getKey().equals("mqtts") || e.getKey().equals("wss")) && isBlank(broker.getTlsSecret())) {
                errors.add(new FieldError("spec.broker.tlsSecret", "is required when listener " + e.getKey() + " is enabled"));
            }
        }
        if (!any) {
            errors.add(new FieldError("spec.broker.listeners", "at least one listener must be enabled"));
        }
    }

    private static void kafka(KafkaSpec kafka, List<FieldError> errors) {
        if (kafka == null) {
            return;
        }
        if (kafka.getMode() == Mode.EXTERNAL) {
            if (isBlank(kafka.getBootstrapServers())) {
                errors.add(new FieldError("spec.kafka.bootstrapServers", "is required when spec.kafka.mode is EXTERNAL"));
            } else {
                for (String server : kafka.getBootstrapServers().split(",")) {
                    if (!HOST_PORT.matcher(server.trim()).matches()) {
                        errors.add(new FieldError("spec.kafka.bootstrapServers", "'" + server.trim() + "' is not host:port"));
                    }
                }
            }
        } else {
            storage("spec.kafka.storage", kafka.getStorage(), errors);
            resources("spec.kafka.resources", kafka.getResources(), errors);
        }
    }

    private static void redis(RedisSpec redis, List<FieldError> errors) {
        if (redis == null) {
            return;
        }
        if (redis.getMode() == Mode.EXTERNAL) {
            if (redis.getNodes() == null || redis.getNodes().isEmpty()) {
                errors.add(new FieldError("spec.redis.nodes", "is required when spec.redis.mode is EXTERNAL"));
            } else {
                for (int i = 0; i < redis.getNodes().size(); i++) {
                    String node = redis.getNodes().get(i);
                    if (node == null || !HOST_PORT.matcher(node.trim()).matches()) {
                        errors.add(new FieldError("spec.redis.nodes[" + i + "]", "'" + node + "' is not host:port"));
                    }
                }
            }
        } else {
            if (redis.getImage() != null && redis.getImage().isBlank()) {
                errors.add(new FieldError("spec.redis.image", "must not be empty (leave it out for the operator's default)"));
            }
            storage("spec.redis.storage", redis.getStorage(), errors);
            resources("spec.redis.resources", redis.getResources(), errors);
        }
    }

    private static void overrides(TbmqClusterSpec spec, List<FieldError> errors) {
        Overrides o = spec.getOverrides();
        if (o == null) {
            return;
        }
        atLeast("spec.overrides.brokers", o.getBrokers(), 1, errors);
        atLeast("spec.overrides.redisMasters", o.getRedisMasters(), 3, errors);
        atLeast("spec.overrides.kafkaBrokers", o.getKafkaBrokers(), 1, errors);
        atLeast("spec.overrides.partitions", o.getPartitions(), 1, errors);
        atLeast("spec.overrides.lettuceBatchSize", o.getLettuceBatchSize(), 1, errors);
        atLeast("spec.overrides.replicationFactor", o.getReplicationFactor(), 1, errors);
        if (o.getLettuceBatchSize() != null && o.getLettuceBatchSize() > 10000) {
            errors.add(new FieldError("spec.overrides.lettuceBatchSize", "must be at most 10000"));
        }
    }

    private static void atLeast(String field, Integer value, int min, List<FieldError> errors) {
        if (value != null && value < min) {
            errors.add(new FieldError(field, "must be at least " + min + ", was " + value));
        }
    }

    private static void storage(String field, StorageSpec storage, List<FieldError> errors) {
        if (storage == null || storage.getSize() == null) {
            return;
        }
        if (!positiveQuantity(storage.getSize())) {
            errors.add(new FieldError(field + ".size", "'" + storage.getSize() + "' is not a size such as 20Gi"));
        }
    }

    private static void resources(String field, ResourceRequirements resources, List<FieldError> errors) {
        if (resources == null) {
            return;
        }
        int before = errors.size();
        for (String kind : List.of("requests", "limits")) {
            Map<String, Quantity> values = kind.equals("requests") ? resources.getRequests() : resources.getLimits();
            if (values == null) {
                continue;
            }
            values.forEach((name, q) -> {
                if (q == null || !positiveQuantity(q.toString())) {
                    errors.add(new FieldError(field + "." + kind + "." + name, "'" + q + "' is not a positive quantity"));
                } else if (name.equals("cpu") && Quantity.getAmountInBytes(q).compareTo(BigDecimal.valueOf(MAX_CPU_CORES)) > 0) {
                    errors.add(new FieldError(field + "." + kind + "." + name, "'" + q + "' is more than the " + MAX_CPU_CORES
                            + " cores one pod may ask for"));
                }
            });
        }
        if (errors.size() == before && resources.getRequests() != null && resources.getLimits() != null) {
            // Kubernetes refuses such a pod template, after Kafka and Redis would already have been changed.
            resources.getRequests().forEach((name, request) -> {
                Quantity limit = resources.getLimits().get(name);
                if (limit != null && Quantity.getAmountInBytes(request).compareTo(Quantity.getAmountInBytes(limit)) > 0) {
                    errors.add(new FieldError(field + ".requests." + name, "'" + request + "' is more than its limit '" + limit + "'"));
                }
            });
        }
    }

    private static boolean positiveQuantity(String text) {
        try {
            return Quantity.getAmountInBytes(new Quantity(text)).signum() > 0;
        } catch (RuntimeException e) {
            return false;
        }
    }

    private static boolean isBlank(String s) {
        return s == null || s.isBlank();
    }
}
