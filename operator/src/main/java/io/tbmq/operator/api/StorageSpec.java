package io.tbmq.operator.api;

import io.fabric8.generator.annotation.ValidationRule;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;

/** Persistent volumes of a managed component. */
@ValidationRule(value = "!has(oldSelf.size) || !has(self.size) || quantity(self.size).compareTo(quantity(oldSelf.size)) >= 0",
        message = "storage.size can only grow: a volume cannot shrink (Kubernetes and Strimzi refuse it)", fieldPath = ".size",
        reason = "FieldValueForbidden")
@ValidationRule(value = "(has(self.storageClass) ? self.storageClass : '') == (has(oldSelf.storageClass) ? oldSelf.storageClass : '')",
        message = "storage.storageClass cannot change: existing volumes keep their class", fieldPath = ".storageClass",
        reason = "FieldValueForbidden")
public class StorageSpec {
    @JsonPropertyDescription("Size of each volume, e.g. 20Gi.")
    private String size;

    @JsonPropertyDescription("StorageClass; empty: the cluster's default.")
    private String storageClass;

    @JsonPropertyDescription("Delete the volumes when the TbmqCluster is deleted (default false: they are kept).")
    private boolean deleteClaim;

    public StorageSpec() {
    }

    public StorageSpec(String size) {
        this.size = size;
    }

    public StorageSpec(String size, String storageClass, boolean deleteClaim) {
        this.size = size;
        this.storageClass = storageClass;
        this.deleteClaim = deleteClaim;
    }

    /**
     * This storage, with {@code defaultSize} when it gives no size: a block that only sets deleteClaim or
     * the class keeps the size the component gets without a block.
     */
    public StorageSpec withDefaultSize(String defaultSize) {
        return size != null ? this : new StorageSpec(defaultSize, storageClass, deleteClaim);
    }

    public String getSize() {
        return size;
    }

    public void setSize(String size) {
        this.size = size;
    }

    public String getStorageClass() {
        return storageClass;
    }

    public void setStorageClass(String storageClass) {
        this.storageClass = storageClass;
    }

    public boolean isDeleteClaim() {
        return deleteClaim;
    }

    public void setDeleteClaim(boolean deleteClaim) {
        this.deleteClaim = deleteClaim;
    }
}
