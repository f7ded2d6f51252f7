package io.tbmq.operator.desired;

/**
 * Names of everything a TbmqCluster owns, derived from its name so every reconcile (and a
 * restarted operator) finds the same objects.
 */
public record Names(String cluster, String namespace) {

    public String kafka() {
        return cluster + "-kafka";
    }

    /** The single pool of nodes with both roles that earlier versions created (kept, never scaled). */
    public String kafkaCombinedPool() {
        return kafka() + "-pool";
    }

    /** The fixed pool of KRaft controllers. */
    public String kafkaControllerPool() {
        return kafka() + "-controllers";
    }

    /** The pool of brokers, sized by the plan. */
    public String kafkaBrokerPool() {
        return kafka() + "-brokers";
    }

    public String kafkaRebalanceTemplate() {
        return kafka() + "-rebalance";
    }

    /** The longest Kubernetes name Strimzi derives from ours: the pods of the controller pool. */
    public String longestKafkaPodName() {
        return kafkaControllerPool() + "-" + 9999;
    }

    /** Strimzi's bootstrap Service for the plain listener on 9092. */
    public String kafkaBootstrap() {
        return kafka() + "-kafka-bootstrap." + namespace + ".svc:9092";
    }

    public String kafkaTopic(String suffix) {
        return cluster + "-" + suffix;
    }

    public String redis() {
        return cluster + "-redis";
    }

    public String redisPod(int ordinal) {
        return redis() + "-" + ordinal;
    }

    /**
     * The operator's copy of the Redis password the pods and brokers run with: the user's Secret is
     * what is asked for, this one what is in force, so a change can be rolled out without a moment
     * in which the brokers and Redis disagree.
     */
    public String redisPassword() {
        return redis() + "-password";
    }

    /** The ClusterIP Service in front of every ready Redis pod: the brokers' first Redis address. */
    public String redisClient() {
        return redis() + "-client";
    }

    /** The stable DNS name of a Redis pod behind the headless Service. */
    public String redisHost(int ordinal) {
        return redisPod(ordinal) + "." + redis() + "." + namespace + ".svc";
    }

    public String brokers() {
        return cluster + "-broker";
    }

    public String brokerHeadless() {
        return brokers() + "-nodes";
    }

    public String brokerLiveConfig() {
        return brokers() + "-live";
    }

    /** The users file written from the cluster's TbmqUsers (Secret, key users.yaml). */
    public String brokerUsers() {
        return cluster + "-users";
    }

    public String brokerConfig() {
        return brokers() + "-config";
    }

    /** The client Service's address inside the cluster. */
    public String brokerService() {
        return brokers() + "." + namespace + ".svc";
    }
}
