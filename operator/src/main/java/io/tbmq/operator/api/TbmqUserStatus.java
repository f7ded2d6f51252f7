package io.tbmq.operator.api;

import java.util.ArrayList;
import java.util.List;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;

import io.fabric8.kubernetes.api.model.Condition;

/** What is true of the user: whether the cluster's brokers are given it, and where its password is. */
public class TbmqUserStatus {
    private Long observedGeneration;

    @JsonPropertyDescription("Ready: the user is in the cluster's users file (the brokers apply it within a minute or two, as "
            + "the kubelet updates the mounted Secret). False names the reason: InvalidSpec, ClusterNotFound, SecretConflict, "
            + "NameTaken.")
    private List<Condition> conditions = new ArrayList<>();

    @JsonPropertyDescription("The user name (PASSWORD) or common name (TLS) the brokers know the user by.")
    private String username;

    @JsonPropertyDescription("PASSWORD only: the Secret holding the keys username and password.")
    private String secret;

    public Long getObservedGeneration() {
        return observedGeneration;
    }

    public void setObservedGeneration(Long observedGeneration) {
        this.observedGeneration = observedGeneration;
    }

    public List<Condition> getConditions() {
        return conditions;
    }

    public void setConditions(List<Condition> conditions) {
        this.conditions = conditions;
    }

    public String getUsername() {
        return username;
    }

    public void setUsername(String username) {
        this.username = username;
    }

    public String getSecret() {
        return secret;
    }

    public void setSecret(String secret) {
        this.secret = secret;
    }
}
