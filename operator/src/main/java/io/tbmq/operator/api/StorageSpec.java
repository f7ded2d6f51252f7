package io.tbmq.operator.api;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;

/** Persistent volumes of a managed component. */
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
