package io.tbmq.operator;

import io.quarkiverse.operatorsdk.annotations.CSVMetadata;
import io.quarkiverse.operatorsdk.annotations.CSVMetadata.Annotations;
import io.quarkiverse.operatorsdk.annotations.CSVMetadata.Icon;
import io.quarkiverse.operatorsdk.annotations.CSVMetadata.InstallMode;
import io.quarkiverse.operatorsdk.annotations.CSVMetadata.Link;
import io.quarkiverse.operatorsdk.annotations.CSVMetadata.Maintainer;
import io.quarkiverse.operatorsdk.annotations.CSVMetadata.Provider;
import io.quarkiverse.operatorsdk.annotations.CSVMetadata.RequiredCRD;
import io.quarkiverse.operatorsdk.annotations.SharedCSVMetadata;

/**
 * What OperatorHub shows about the operator: the ClusterServiceVersion's metadata for the OLM
 * bundle that quarkus-operator-sdk generates (make bundle). The samples become alm-examples there.
 */
@CSVMetadata(
        bundleName = "tbmq-operator",
        csvName = "tbmq-operator.v0.1.0",
        version = "0.1.0",
        displayName = "TBMQ MQTT Broker",
        description = """
                TBMQ is an MQTT 3.1, 3.1.1 and 5.0 broker for industrial IoT fleets: every PUBLISH goes through \
                Kafka, persistent device sessions live in a Redis Cluster, and broker nodes cooperate only through \
                Kafka, so the cluster scales out node by node and a message that was acknowledged is not lost.

                The operator runs it from one number. Declare a `TbmqCluster` with the throughput you need \
                (messages per second, in and out) and it sizes and provisions everything, following the reference \
                broker's published P2P measurements (1 broker, 3 Redis masters and 3 Kafka brokers at 200k msg/s; \
                5, 11 and 5 at 1M msg/s):

                * **Kafka** through Strimzi: a KRaft node pool and the broker's topics, with partitions that only grow.
                * **A Redis Cluster** it forms and rescales itself, moving slots and their keys before a master goes.
                * **Brokers** as a StatefulSet with stable node ids, a client Service (MQTT, MQTTS, WS, WSS), a \
                PodDisruptionBudget, and settings changes rolled one broker at a time.

                Scale with one edit of `spec.targetThroughput`. The status shows the computed plan with the rule \
                behind each number, ready/desired counts and per-component conditions; an invalid edit is reported \
                as `Degraded` naming the field and changes nothing that runs. Bring your own Kafka or Redis with \
                `mode: EXTERNAL`. Anonymous MQTT access is off unless you allow it; TLS comes from a Secret. \
                With the Prometheus Operator, `spec.monitoring.enabled` adds a PodMonitor and a PrometheusRule \
                with the brokers' alerts (a broker down, Kafka refusing messages, Redis errors, a growing lag).

                Requires the Strimzi operator (kafka.strimzi.io/v1) for managed Kafka.
                """,
        icon = @Icon(fileName = "tbmq-icon.svg", mediatype = "image/svg+xml"),
        keywords = { "mqtt", "iot", "broker", "kafka", "redis", "messaging", "industrial" },
        maturity = "alpha",
        minKubeVersion = "1.30.0",
        maintainers = @Maintainer(name = "TBMQ distribution maintainers", email = "maintainers@tbmq.io"),
        provider = @Provider(name = "TBMQ distribution", url = "https://github.com/tbmq/tbmq-distribution"),
        links = {
                @Link(name = "Source", url = "https://github.com/tbmq/tbmq-distribution"),
                @Link(name = "Documentation", url = "https://github.com/tbmq/tbmq-distribution/tree/main/docs") },
        installModes = {
                @InstallMode(type = "OwnNamespace", supported = true),
                @InstallMode(type = "SingleNamespace", supported = true),
                @InstallMode(type = "MultiNamespace", supported = true),
                @InstallMode(type = "AllNamespaces", supported = true) },
        annotations = @Annotations(
                containerImage = "docker.io/tbmq/tbmq-operator:0.1.0",
                repository = "https://github.com/tbmq/tbmq-distribution",
                capabilities = "Seamless Upgrades",
                categories = "Streaming & Messaging,Integration & Delivery"),
        requiredCRDs = {
                @RequiredCRD(kind = "Kafka", name = "kafkas.kafka.strimzi.io", version = "v1"),
                @RequiredCRD(kind = "KafkaNodePool", name = "kafkanodepools.kafka.strimzi.io", version = "v1"),
                @RequiredCRD(kind = "KafkaTopic", name = "kafkatopics.kafka.strimzi.io", version = "v1") })
public class OperatorMetadata implements SharedCSVMetadata {
}
