package io.tbmq.broker.cluster;

import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;

import org.jboss.logging.Logger;

/**
 * Two clusters given the same Kafka topics, as when two TbmqClusters share one external Kafka without a
 * topic prefix of their own. Their nodes would act as one cluster: route each other's messages, take
 * each other's sessions over, and store the messages of persistent devices in the Redis of whichever
 * cluster routed them, where those devices never read them. Where clusters are named
 * (tbmq.cluster.name), a heartbeat naming another cluster tells: a node that hears one before it joins
 * does not start, and a running node says so in its log (and in a metric, {@link NodeLiveness#foreignHeartbeats}).
 */
public final class ForeignCluster {
    private static final Logger LOG = Logger.getLogger(ForeignCluster.class);
    private final String cluster;
    private final String topic;
    private final NodeLiveness liveness;
    /** The node last logged, until the other cluster goes silent: one heard again is logged again. */
    private final AtomicReference<String> reported = new AtomicReference<>();

    /**
     * @param cluster this node's cluster, or null where clusters are not named (nothing is checked)
     * @param topic the heartbeats' topic, as its name reads on Kafka (with the topic prefix)
     */
    public ForeignCluster(String cluster, String topic, NodeLiveness liveness) {
        this.cluster = cluster;
        this.topic = topic;
        this.liveness = liveness;
    }

    /**
     * Before this node sends a heartbeat or touches a topic the nodes share (the heartbeats read to
     * their end): refuses to start if a node of another cluster was heard within a node timeout.
     *
     * @throws IllegalStateException naming the other cluster and its node
     */
    public void checkBeforeJoining() {
        if (cluster == null) {
            return;
        }
        Optional<NodeLiveness.Heard> heard = liveness.foreignNode(System.currentTimeMillis());
        if (heard.isPresent()) {
            throw new IllegalStateException(describe(heard.get(), "so this node does not start"));
        }
    }

    /** Logs a node of another cluster heard since the last call, once until that cluster goes silent. */
    public void report() {
        if (cluster == null) {
            return;
        }
        Optional<NodeLiveness.Heard> heard = liveness.foreignNode(System.currentTimeMillis());
        if (heard.isEmpty()) {
            reported.set(null);
        } else if (reported.getAndSet(heard.get().node()) == null) {
            LOG.error(describe(heard.get(), "beside this one"));
        }
    }

    private String describe(NodeLiveness.Heard heard, String consequence) {
        return "node " + heard.node() + " of cluster " + heard.heartbeat().cluster() + " sent a heartbeat to " + topic + " (at "
                + Instant.ofEpochMilli(heard.heartbeat().sentAtMillis()) + " by its clock): another TBMQ cluster uses the Kafka"
                + " topics of this cluster (" + cluster + "), " + consequence + ". Clusters sharing their topics route each other's"
                + " messages, take each other's sessions over and store persistent devices' messages in each other's Redis,"
                + " where those devices never read them: give each cluster its own tbmq.kafka.topic-prefix"
                + " (TBMQ_KAFKA_TOPIC_PREFIX; under the operator, in spec.broker.config) or its own Kafka";
    }
}
