package io.tbmq.operator.api;

import java.util.LinkedHashMap;
import java.util.Map;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;

import io.fabric8.kubernetes.api.model.ResourceRequirements;

/** The broker pods. */
public class BrokerSpec {
    @JsonPropertyDescription("Broker container image; unset, the operator's own default: the tbmq-broker image built "
            + "with it (same registry and version).")
    private String image;

    @JsonPropertyDescription("When the kubelet pulls the broker image: Always, IfNotPresent (the default) or Never.")
    @io.fabric8.generator.annotation.Pattern("^(Always|IfNotPresent|Never)$")
    private String imagePullPolicy = "IfNotPresent";

    @JsonPropertyDescription("CPU and memory of each broker. A CPU request changes how many brokers the target needs "
            + "(12,500 msg/s per vCPU, Table 4's 200k per 16-vCPU broker); unset, the operator sizes it.")
    private ResourceRequirements resources;

    private ListenersSpec listeners = new ListenersSpec();

    @JsonPropertyDescription("Secret of type kubernetes.io/tls (tls.crt, tls.key, optional ca.crt) for the TLS and WSS listeners.")
    private String tlsSecret;

    @JsonPropertyDescription("Secret whose key credentials.yaml holds the broker's users, client types and ACLs "
            + "(docs/security.md). Without it and without allowAnonymous nobody can connect.")
    private String credentialsSecret;

    @JsonPropertyDescription("Secret whose key token is the bearer token of the brokers' admin API (sessions, disconnects, "
            + "retained topics on the HTTP port; docs/operations.md). Without it the admin API is off. A rotated token applies "
            + "without a restart.")
    private String adminSecret;

    @JsonPropertyDescription("Let clients connect without credentials. Off by default.")
    private boolean allowAnonymous;

    private PersistenceSpec persistence = new PersistenceSpec();

    @JsonPropertyDescription("Any other broker setting (docs/configuration.md), e.g. tbmq.mqtt.max-keep-alive: \"60\".")
    private Map<String, String> config = new LinkedHashMap<>();

    public String getImage() {
        return image;
    }

    public void setImage(String image) {
        this.image = image;
    }

    public String getImagePullPolicy() {
        return imagePullPolicy;
    }

    public void setImagePullPolicy(String imagePullPolicy) {
        this.imagePullPolicy = imagePullPolicy;
    }

    public ResourceRequirements getResources() {
        return resources;
    }

    public void setResources(ResourceRequirements resources) {
        this.resources = resources;
    }

    public ListenersSpec getListeners() {
        return listeners;
    }

    public void setListeners(ListenersSpec listeners) {
        this.listeners = listeners;
    }

    public String getTlsSecret() {
        return tlsSecret;
    }

    public void setTlsSecret(String tlsSecret) {
        this.tlsSecret = tlsSecret;
    }

    public String getAdminSecret() {
        return adminSecret;
    }

    public void setAdminSecret(String adminSecret) {
        this.adminSecret = adminSecret;
    }

    public String getCredentialsSecret() {
        return credentialsSecret;
    }

    public void setCredentialsSecret(String credentialsSecret) {
        this.credentialsSecret = credentialsSecret;
    }

    public boolean isAllowAnonymous() {
        return allowAnonymous;
    }

    public void setAllowAnonymous(boolean allowAnonymous) {
        this.allowAnonymous = allowAnonymous;
    }

    public PersistenceSpec getPersistence() {
        return persistence;
    }

    public void setPersistence(PersistenceSpec persistence) {
        this.persistence = persistence;
    }

    public Map<String, String> getConfig() {
        return config;
    }

    public void setConfig(Map<String, String> config) {
        this.config = config;
    }
}
