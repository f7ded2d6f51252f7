package io.tbmq.standin;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.strimzi.api.kafka.model.common.ConditionBuilder;
import io.strimzi.api.kafka.model.kafka.Kafka;
import io.strimzi.api.kafka.model.kafka.KafkaStatusBuilder;
import io.strimzi.api.kafka.model.kafka.UsedNodePoolStatusBuilder;
import io.strimzi.api.kafka.model.kafka.cruisecontrol.KafkaAutoRebalanceState;
import io.strimzi.api.kafka.model.kafka.listener.ListenerAddressBuilder;
import io.strimzi.api.kafka.model.kafka.listener.ListenerStatusBuilder;
import io.strimzi.api.kafka.model.nodepool.KafkaNodePool;
import io.strimzi.api.kafka.model.nodepool.KafkaNodePoolStatusBuilder;
import io.strimzi.api.kafka.model.topic.KafkaTopic;
import io.strimzi.api.kafka.model.topic.KafkaTopicStatusBuilder;

/**
 * A TEST DOUBLE for Strimzi's cluster and topic operators, whose images cannot be had here. It
 * plays the part of them the TBMQ operator relies on, the way Strimzi 1.2.0 does it:
 * <ul>
 * <li>it watches only the namespaces it is given (Strimzi's STRIMZI_NAMESPACE): a Kafka elsewhere
 * gets no status at all;</li>
 * <li>a Kafka becomes Ready for its generation, with its plain listener's bootstrap address, the
 * node pools it uses and an idle auto-rebalance, once its {@link Backend} says the brokers run;</li>
 * <li>a KafkaNodePool gets the status Strimzi writes (node ids, replicas, roles, observed generation);</li>
 * <li>a KafkaTopic gets the topic operator's finalizer and becomes Ready for its generation once
 * the backend has the topic; a deleted one loses the finalizer only while its Kafka exists and is
 * Ready (the topic operator runs in the Kafka's entity operator), so a KafkaTopic deleted after
 * its Kafka keeps its finalizer forever, as with Strimzi.</li>
 * </ul>
 * Everything the operator writes is still validated by Strimzi's own CRD schemas (StrimziCrds).
 */
public final class StrimziStandIn implements AutoCloseable {
    public static final String TOPIC_FINALIZER = "strimzi.io/topic-operator";

    /** What stands behind the Kafka resources: nothing (the control-plane tier), or real Kafka pods. */
    public interface Backend {
        Backend NONE = new Backend() {
        };

        /** Makes the Kafka real; true once its brokers answer. */
        default boolean provision(Kafka kafka, List<KafkaNodePool> pools) {
            return true;
        }

        /** Creates or raises the topic; true once it has what the KafkaTopic asks. */
        default boolean topic(Kafka kafka, KafkaTopic topic) {
            return true;
        }

        default void deleteTopic(Kafka kafka, KafkaTopic topic) {
        }
    }

    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "strimzi-stand-in");
        t.setDaemon(true);
        return t;
    });
    private final KubernetesClient client;
    private final Set<String> namespaces;
    private final Backend backend;

    public StrimziStandIn(KubernetesClient client, String namespace) {
        this(client, Set.of(namespace), Backend.NONE);
    }

    /** Watches {@code namespaces} (every namespace when empty), with {@code backend} behind the resources. */
    public StrimziStandIn(KubernetesClient client, Set<String> namespaces, Backend backend) {
        this.client = client;
        this.namespaces = namespaces;
        this.backend = backend;
        timer.scheduleWithFixedDelay(this::round, 200, 300, TimeUnit.MILLISECONDS);
    }

    private void round() {
        Set<String> watched = namespaces;
        if (watched.isEmpty()) {
            watched = new java.util.TreeSet<>();
            try {
                for (Kafka k : client.resources(Kafka.class).inAnyNamespace().list().getItems()) {
                    watched.add(k.getMetadata().getNamespace());
                }
                for (KafkaTopic t : client.resources(KafkaTopic.class).inAnyNamespace().list().getItems()) {
                    watched.add(t.getMetadata().getNamespace());
                }
            } catch (RuntimeException e) {
                return; // the CRDs are not installed yet: next round
            }
        }
        for (String ns : watched) {
            try {
                reconcile(ns);
            } catch (KubernetesClientException e) {
                // a conflict with the operator's own write, or a CRD not there yet: next round
            } catch (RuntimeException e) {
                System.err.println("strimzi stand-in: " + e);
            }
        }
    }

    private void reconcile(String ns) {
        List<KafkaNodePool> allPools = client.resources(KafkaNodePool.class).inNamespace(ns).list().getItems();
        for (Kafka kafka : client.resources(Kafka.class).inNamespace(ns).list().getItems()) {
            if (kafka.getMetadata().getDeletionTimestamp() != null) {
                continue;
            }
            String name = kafka.getMetadata().getName();
            List<KafkaNodePool> pools = new ArrayList<>();
            for (KafkaNodePool pool : allPools) {
                if (name.equals(pool.getMetadata().getLabels().get("strimzi.io/cluster"))) {
                    pools.add(pool);
                }
            }
            boolean running = backend.provision(kafka, pools);
            int nextId = 0;
            for (KafkaNodePool pool : pools) {
                List<Integer> ids = new ArrayList<>();
                for (int i = 0; i < pool.getSpec().getReplicas(); i++) {
                    ids.add(nextId++);
                }
                long generation = pool.getMetadata().getGeneration();
                if (pool.getStatus() == null || pool.getStatus().getObservedGeneration() < generation) {
                    pool.setStatus(new KafkaNodePoolStatusBuilder().withObservedGeneration(generation).withNodeIds(ids)
                            .withReplicas(pool.getSpec().getReplicas()).withRoles(pool.getSpec().getRoles()).withClusterId("stand-in")
                            .build());
                    client.resource(pool).updateStatus();
                }
            }
            long generation = kafka.getMetadata().getGeneration();
            if (running && (kafka.getStatus() == null || kafka.getStatus().getObservedGeneration() < generation)) {
                kafka.setStatus(new KafkaStatusBuilder().withObservedGeneration(generation)
                        .withConditions(new ConditionBuilder().withType("Ready").withStatus("True").build())
                        .withListeners(new ListenerStatusBuilder().withName("plain").withAddresses(new ListenerAddressBuilder()
                                .withHost(name + "-kafka-bootstrap." + ns + ".svc").withPort(9092).build()).build())
                        .withKafkaNodePools(pools.stream().map(p -> new UsedNodePoolStatusBuilder()
                                .withName(p.getMetadata().getName()).build()).toList())
                        .withClusterId("stand-in")
                        .withNewAutoRebalance().withState(KafkaAutoRebalanceState.Idle).endAutoRebalance()
                        .build());
                client.resource(kafka).updateStatus();
            }
        }
        for (KafkaTopic topic : client.resources(KafkaTopic.class).inNamespace(ns).list().getItems()) {
            topic(ns, topic);
        }
    }

    private void topic(String ns, KafkaTopic topic) {
        String cluster = topic.getMetadata().getLabels() == null ? null : topic.getMetadata().getLabels().get("strimzi.io/cluster");
        Kafka kafka = cluster == null ? null : client.resources(Kafka.class).inNamespace(ns).withName(cluster).get();
        boolean topicOperatorRuns = kafka != null && kafka.getMetadata().getDeletionTimestamp() == null && kafka.getStatus() != null
                && kafka.getStatus().getConditions().stream().anyMatch(c -> "Ready".equals(c.getType()) && "True".equals(c.getStatus()));
        if (!topicOperatorRuns) {
            return; // nobody there to act: a deleted topic keeps its finalizer
        }
        if (topic.getMetadata().getDeletionTimestamp() != null) {
            backend.deleteTopic(kafka, topic);
            if (topic.getMetadata().getFinalizers().contains(TOPIC_FINALIZER)) {
                client.resource(topic).edit(t -> {
                    t.getMetadata().getFinalizers().remove(TOPIC_FINALIZER);
                    return t;
                });
            }
            return;
        }
        if (!topic.getMetadata().getFinalizers().contains(TOPIC_FINALIZER)) {
            topic = client.resource(topic).edit(t -> {
                t.getMetadata().getFinalizers().add(TOPIC_FINALIZER);
                return t;
            });
        }
        long generation = topic.getMetadata().getGeneration();
        if ((topic.getStatus() == null || topic.getStatus().getObservedGeneration() < generation) && backend.topic(kafka, topic)) {
            topic.setStatus(new KafkaTopicStatusBuilder().withObservedGeneration(generation).withTopicName(topic.getSpec().getTopicName())
                    .withConditions(new ConditionBuilder().withType("Ready").withStatus("True").build()).build());
            client.resource(topic).updateStatus();
        }
    }

    @Override
    public void close() {
        timer.shutdownNow();
    }
}
