package io.tbmq.operator.api;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;

import io.fabric8.generator.annotation.ValidationRule;
import io.fabric8.kubernetes.api.model.ResourceRequirements;

/** Kafka: a Strimzi-managed cluster (default) or an external one. */
@ValidationRule(value = "!has(self.mode) || self.mode != 'EXTERNAL' || (has(self.bootstrapServers) && self.bootstrapServers != '')",
        message = "kafka.bootstrapServers is required when kafka.mode is EXTERNAL")
public class KafkaSpec {
    /** The volume size of every Kafka broker without a storage.size. */
    public static final String DEFAULT_STORAGE_SIZE = "20Gi";

    @JsonPropertyDescription("MANAGED: the operator creates Strimzi Kafka and KafkaNodePool resources. EXTERNAL: use bootstrapServers.")
    private Mode mode = Mode.MANAGED;

    @JsonPropertyDescription("host:port[,host:port...] of an external Kafka (mode EXTERNAL).")
    private String bootstrapServers;

    @JsonPropertyDescription("Secret with the key client.properties: Kafka client properties for an external Kafka "
            + "(security.protocol, sasl.jaas.config, ssl.*), mounted into the brokers as tbmq.kafka.properties-file.")
    private String clientSecret;

    @JsonPropertyDescription("Kafka version for Strimzi (empty: the Strimzi operator's default).")
    private String version;

    private StorageSpec storage = new StorageSpec(DEFAULT_STORAGE_SIZE);

    @JsonPropertyDescription("CPU and memory of each Kafka broker; unset, Table 3's 2 vCPU / 4 GiB from 200k msg/s, less below.")
    private ResourceRequirements resources;

    public Mode getMode() {
        return mode;
    }

    public void setMode(Mode mode) {
        this.mode = mode;
    }

    public String getBootstrapServers() {
        return bootstrapServers;
    }

    public void setBootstrapServers(String bootstrapServers) {
        this.bootstrapServers = bootstrapServers;
    }

    public String getClientSecret() {
        return clientSecret;
    }

    public void setClientSecret(String clientSecret) {
        this.clientSecret = clientSecret;
    }

    public String getVersion() {
        return version;
    }

    public void setVersion(String version) {
        this.version = version;
    }

    public StorageSpec getStorage() {
        return storage;
    }

    public void setStorage(StorageSpec storage) {
        this.storage = storage;
    }

    public ResourceRequirements getResources() {
        return resources;
    }

    public void setResources(ResourceRequirements resources) {
        this.resources = resources;
    }
}
