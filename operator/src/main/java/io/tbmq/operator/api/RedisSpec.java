package io.tbmq.operator.api;

import java.util.ArrayList;
import java.util.List;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;

import io.fabric8.generator.annotation.ValidationRule;
import io.fabric8.kubernetes.api.model.ResourceRequirements;

/** Redis: a Redis Cluster run by the operator (default) or an external one. */
@ValidationRule(value = "!has(self.mode) || self.mode != 'EXTERNAL' || (has(self.nodes) && size(self.nodes) > 0)",
        message = "redis.nodes is required when redis.mode is EXTERNAL")
public class RedisSpec {
    /** The volume size of every Redis node without a storage.size. */
    public static final String DEFAULT_STORAGE_SIZE = "8Gi";

    @JsonPropertyDescription("MANAGED: the operator runs a Redis Cluster. EXTERNAL: use nodes.")
    private Mode mode = Mode.MANAGED;

    @JsonPropertyDescription("host:port of external Redis nodes (mode EXTERNAL); for a cluster any of its nodes.")
    private List<String> nodes = new ArrayList<>();

    @JsonPropertyDescription("External Redis: true for a Redis Cluster, false for a standalone server.")
    private boolean cluster = true;

    @JsonPropertyDescription("Secret with the key 'password' for Redis AUTH. Managed Redis: unset when the cluster is made, the operator "
            + "generates a password, and removing it later keeps the one in force; that one is in the Secret NAME-redis-password. An edit of the password (or of this name) is "
            + "rolled out without a moment in which Redis refuses a broker: both passwords are accepted until every broker "
            + "has restarted with the new one (condition RedisPasswordChanging), then only the new one.")
    private String passwordSecret;

    @JsonPropertyDescription("Redis container image (run as user 999); unset, the operator's default (redis:7.2 unless the "
            + "operator was installed with another).")
    private String image;

    private StorageSpec storage = new StorageSpec(DEFAULT_STORAGE_SIZE);

    @JsonPropertyDescription("Managed Redis: when each node writes its append-only file to disk. A crash of a Redis process or pod "
            + "loses nothing either way; a crash of the machine loses about the last second of acknowledged messages with "
            + "EVERYSEC (default) and nothing with ALWAYS, which writes to disk before every reply (a longer latency tail on a "
            + "slow disk). An edit is applied to the running nodes, without a restart, once every Redis pod is ready.")
    private Fsync fsync = Fsync.EVERYSEC;

    @JsonPropertyDescription("CPU and memory of each Redis node; unset, Table 3's 2 vCPU / 4 GiB from 200k msg/s, less below.")
    private ResourceRequirements resources;

    public Mode getMode() {
        return mode;
    }

    public void setMode(Mode mode) {
        this.mode = mode;
    }

    public List<String> getNodes() {
        return nodes;
    }

    public void setNodes(List<String> nodes) {
        this.nodes = nodes;
    }

    public boolean isCluster() {
        return cluster;
    }

    public void setCluster(boolean cluster) {
        this.cluster = cluster;
    }

    public String getPasswordSecret() {
        return passwordSecret;
    }

    public void setPasswordSecret(String passwordSecret) {
        this.passwordSecret = passwordSecret;
    }

    public String getImage() {
        return image;
    }

    public void setImage(String image) {
        this.image = image;
    }

    public StorageSpec getStorage() {
        return storage;
    }

    public void setStorage(StorageSpec storage) {
        this.storage = storage;
    }

    public Fsync getFsync() {
        return fsync;
    }

    public void setFsync(Fsync fsync) {
        this.fsync = fsync;
    }

    public ResourceRequirements getResources() {
        return resources;
    }

    public void setResources(ResourceRequirements resources) {
        this.resources = resources;
    }
}
