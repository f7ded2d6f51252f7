package io.tbmq.standin;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewPartitions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.api.model.apps.StatefulSetBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.strimzi.api.kafka.model.kafka.Kafka;
import io.strimzi.api.kafka.model.nodepool.KafkaNodePool;
import io.strimzi.api.kafka.model.topic.KafkaTopic;

/**
 * The stand-in's Kafka: ONE single-node KRaft Kafka pod per Kafka resource (whatever its node
 * pools ask: a test double on a small machine), from the tbmq-kafka image, behind Strimzi's
 * Service name {@code <kafka>-kafka-bootstrap:9092}, owned by the Kafka resource so it goes with
 * it. The pod advertises its pod IP, which both pods and the host (where tests run) reach. Topics
 * of KafkaTopic resources are created and raised with their partitions and configs.
 */
public final class RealKafka implements StrimziStandIn.Backend {
    private static final String CLUSTER_ID = "dGJtcS1zdGFuZC1pbi0x"; // any 22-character base64 string

    private final KubernetesClient client;
    private final String image;
    private final Map<String, Admin> admins = new ConcurrentHashMap<>();

    public RealKafka(KubernetesClient client, String image) {
        this.client = client;
        this.image = image;
    }

    @Override
    public boolean provision(Kafka kafka, List<KafkaNodePool> pools) {
        String ns = kafka.getMetadata().getNamespace();
        String name = kafka.getMetadata().getName();
        client.resource(service(kafka)).serverSideApply();
        client.resource(statefulSet(kafka)).serverSideApply();
        Pod pod = client.pods().inNamespace(ns).withName(name + "-kafka-0").get();
        return pod != null && ready(pod) && admin(kafka) != null;
    }

    @Override
    public boolean topic(Kafka kafka, KafkaTopic topic) {
        Admin admin = admin(kafka);
        if (admin == null) {
            return false;
        }
        String name = topic.getSpec().getTopicName() != null ? topic.getSpec().getTopicName() : topic.getMetadata().getName();
        int partitions = topic.getSpec().getPartitions() == null ? 1 : topic.getSpec().getPartitions();
        try {
            Set<String> existing = admin.listTopics().names().get(5, TimeUnit.SECONDS);
            if (!existing.contains(name)) {
                Map<String, String> configs = new HashMap<>();
                if (topic.getSpec().getConfig() != null) {
                    topic.getSpec().getConfig().forEach((k, v) -> configs.put(k, String.valueOf(v)));
                }
                // One broker: whatever replication the KafkaTopic asks, one replica is all there is.
                admin.createTopics(List.of(new NewTopic(name, partitions, (short) 1).configs(configs))).all().get(10, TimeUnit.SECONDS);
                return true;
            }
            TopicDescription d = admin.describeTopics(List.of(name)).allTopicNames().get(5, TimeUnit.SECONDS).get(name);
            if (d.partitions().size() < partitions) {
                admin.createPartitions(Map.of(name, NewPartitions.increaseTo(partitions))).all().get(10, TimeUnit.SECONDS);
            }
            return true;
        } catch (Exception e) {
            forget(kafka);
            return false;
        }
    }

    @Override
    public void deleteTopic(Kafka kafka, KafkaTopic topic) {
        Admin admin = admin(kafka);
        if (admin != null && topic.getSpec().getTopicName() != null) {
            try {
                admin.deleteTopics(List.of(topic.getSpec().getTopicName())).all().get(10, TimeUnit.SECONDS);
            } catch (Exception e) {
                // gone already, or Kafka going: the finalizer is released either way
            }
        }
    }

    /** An admin client at the Kafka pod's current address; null while the pod is not ready. */
    private Admin admin(Kafka kafka) {
        Pod pod = client.pods().inNamespace(kafka.getMetadata().getNamespace()).withName(kafka.getMetadata().getName() + "-kafka-0")
                .get();
        if (pod == null || !ready(pod) || pod.getStatus().getPodIP() == null) {
            return null;
        }
        String bootstrap = pod.getStatus().getPodIP() + ":9092";
        String key = kafka.getMetadata().getNamespace() + "/" + kafka.getMetadata().getName() + "@" + bootstrap;
        return admins.computeIfAbsent(key, k -> {
            admins.keySet().removeIf(other -> other.startsWith(key.substring(0, key.indexOf('@') + 1)) && !other.equals(k));
            Properties p = new Properties();
            p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
            p.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, "5000");
            p.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "8000");
            return Admin.create(p);
        });
    }

    private void forget(Kafka kafka) {
        String prefix = kafka.getMetadata().getNamespace() + "/" + kafka.getMetadata().getName() + "@";
        List<String> stale = new ArrayList<>(admins.keySet().stream().filter(k -> k.startsWith(prefix)).toList());
        stale.forEach(k -> {
            Admin a = admins.remove(k);
            if (a != null) {
                a.close(java.time.Duration.ofSeconds(1));
            }
        });
    }

    private static boolean ready(Pod pod) {
        return pod.getStatus() != null && pod.getStatus().getConditions() != null && pod.getMetadata().getDeletionTimestamp() == null
                && pod.getStatus().getConditions().stream().anyMatch(c -> "Ready".equals(c.getType()) && "True".equals(c.getStatus()));
    }

    private static Map<String, String> labels(Kafka kafka) {
        return Map.of("strimzi.io/cluster", kafka.getMetadata().getName(), "strimzi.io/kind", "Kafka",
                "app.kubernetes.io/managed-by", "strimzi-stand-in");
    }

    private static io.fabric8.kubernetes.api.model.ObjectMeta meta(Kafka kafka, String name) {
        return new io.fabric8.kubernetes.api.model.ObjectMetaBuilder().withName(name).withNamespace(kafka.getMetadata().getNamespace())
                .withLabels(labels(kafka)).withOwnerReferences(new OwnerReferenceBuilder().withApiVersion(HasMetadata.getApiVersion(Kafka.class))
                        .withKind("Kafka").withName(kafka.getMetadata().getName()).withUid(kafka.getMetadata().getUid())
                        .withController(true).withBlockOwnerDeletion(false).build())
                .build();
    }

    private static Service service(Kafka kafka) {
        return new ServiceBuilder().withMetadata(meta(kafka, kafka.getMetadata().getName() + "-kafka-bootstrap"))
                .withNewSpec().withSelector(labels(kafka))
                .addNewPort().withName("tcp-clients").withPort(9092).withTargetPort(new IntOrString(9092)).endPort()
                .endSpec().build();
    }

    private StatefulSet statefulSet(Kafka kafka) {
        return new StatefulSetBuilder().withMetadata(meta(kafka, kafka.getMetadata().getName() + "-kafka"))
                .withNewSpec()
                    .withReplicas(1)
                    .withServiceName(kafka.getMetadata().getName() + "-kafka-bootstrap")
                    .withNewSelector().withMatchLabels(labels(kafka)).endSelector()
                    .withNewTemplate()
                        .withNewMetadata().withLabels(labels(kafka)).endMetadata()
                        .withNewSpec()
                            .withNewSecurityContext().withRunAsNonRoot(true).withRunAsUser(1001L).withRunAsGroup(1001L)
                                .withFsGroup(1001L).withNewSeccompProfile().withType("RuntimeDefault").endSeccompProfile()
                            .endSecurityContext()
                            .addNewContainer()
                                .withName("kafka")
                                .withImage(image)
                                .withImagePullPolicy("IfNotPresent")
                                .withNewSecurityContext().withAllowPrivilegeEscalation(false).withReadOnlyRootFilesystem(true)
                                    .withNewCapabilities().addToDrop("ALL").endCapabilities()
                                .endSecurityContext()
                                .addNewEnv().withName("POD_IP").withNewValueFrom().withNewFieldRef().withFieldPath("status.podIP")
                                    .endFieldRef().endValueFrom().endEnv()
                                .addNewEnv().withName("KAFKA_ADVERTISED").withValue("$(POD_IP):9092").endEnv()
                                .addNewEnv().withName("KAFKA_CLUSTER_ID").withValue(CLUSTER_ID).endEnv()
                                .addNewEnv().withName("KAFKA_HEAP").withValue("320m").endEnv()
                                .addNewPort().withName("tcp-clients").withContainerPort(9092).endPort()
                                .withNewReadinessProbe().withNewTcpSocket().withNewPort(9092).endTcpSocket().withPeriodSeconds(2)
                                .endReadinessProbe()
                                .withNewResources().addToRequests("cpu", new Quantity("100m"))
                                    .addToRequests("memory", new Quantity("640Mi")).addToLimits("memory", new Quantity("768Mi"))
                                .endResources()
                                .addNewVolumeMount().withName("data").withMountPath("/var/lib/kafka").endVolumeMount()
                                .addNewVolumeMount().withName("tmp").withMountPath("/tmp").endVolumeMount()
                            .endContainer()
                            .addNewVolume().withName("data").withNewEmptyDir().endEmptyDir().endVolume()
                            .addNewVolume().withName("tmp").withNewEmptyDir().endEmptyDir().endVolume()
                        .endSpec()
                    .endTemplate()
                .endSpec().build();
    }
}
