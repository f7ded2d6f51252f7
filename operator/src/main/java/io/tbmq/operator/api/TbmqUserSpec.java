package io.tbmq.operator.api;

import java.util.ArrayList;
import java.util.List;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;

import io.fabric8.generator.annotation.Default;
import io.fabric8.generator.annotation.Required;

/** Who the user is to the brokers and what it may do. */
public class TbmqUserSpec {

    /** How the user proves who it is. */
    public enum AuthenticationType {
        PASSWORD, TLS
    }

    /** The kind of session the broker keeps for the user's clients (the TBMQ paper's DEVICE and APPLICATION clients). */
    public enum ClientType {
        DEVICE, APPLICATION
    }

    @Required
    @JsonPropertyDescription("The TbmqCluster in this namespace whose brokers accept this user.")
    private String cluster;

    @Default("{}")
    @JsonPropertyDescription("How the user authenticates. Default: a password the operator generates.")
    private Authentication authentication = new Authentication();

    @Default("DEVICE")
    @JsonPropertyDescription("DEVICE (persistent sessions in Redis) or APPLICATION (persistent sessions in their own Kafka topic). "
            + "Default DEVICE.")
    private ClientType clientType = ClientType.DEVICE;

    @JsonPropertyDescription("Topic patterns the user may publish and subscribe to. Empty lists allow nothing.")
    private Acl acl = new Acl();

    public String getCluster() {
        return cluster;
    }

    public void setCluster(String cluster) {
        this.cluster = cluster;
    }

    public Authentication getAuthentication() {
        return authentication;
    }

    public void setAuthentication(Authentication authentication) {
        this.authentication = authentication;
    }

    public ClientType getClientType() {
        return clientType;
    }

    public void setClientType(ClientType clientType) {
        this.clientType = clientType;
    }

    public Acl getAcl() {
        return acl;
    }

    public void setAcl(Acl acl) {
        this.acl = acl;
    }

    public static class Authentication {
        @Default("PASSWORD")
        @JsonPropertyDescription("PASSWORD: the user name is the TbmqUser's name and the operator generates a password into the "
                + "Secret named in status.secret (keys username, password; change the password there to rotate it). TLS: clients "
                + "present a certificate from a CA the broker's TLS listener trusts.")
        private AuthenticationType type = AuthenticationType.PASSWORD;

        @JsonPropertyDescription("TLS only: the certificate subject's common name this user stands for. Default: the TbmqUser's "
                + "name.")
        private String commonName;

        public AuthenticationType getType() {
            return type;
        }

        public void setType(AuthenticationType type) {
            this.type = type;
        }

        public String getCommonName() {
            return commonName;
        }

        public void setCommonName(String commonName) {
            this.commonName = commonName;
        }
    }

    /** The same rules as the broker's credentials file: deny wins over allow; %c is the client id, %u the user name. */
    public static class Acl {
        @JsonPropertyDescription("Topic patterns the user may publish to; %c stands for the client id, %u for the user name.")
        private List<String> publish = new ArrayList<>();

        @JsonPropertyDescription("Topic filters the user may subscribe to; %c and %u as in publish.")
        private List<String> subscribe = new ArrayList<>();

        @JsonPropertyDescription("Topic patterns refused for publishing even where publish allows them.")
        private List<String> denyPublish = new ArrayList<>();

        @JsonPropertyDescription("Topic filters refused for subscribing even where subscribe allows them.")
        private List<String> denySubscribe = new ArrayList<>();

        public List<String> getPublish() {
            return publish;
        }

        public void setPublish(List<String> publish) {
            this.publish = publish;
        }

        public List<String> getSubscribe() {
            return subscribe;
        }

        public void setSubscribe(List<String> subscribe) {
            this.subscribe = subscribe;
        }

        public List<String> getDenyPublish() {
            return denyPublish;
        }

        public void setDenyPublish(List<String> denyPublish) {
            this.denyPublish = denyPublish;
        }

        public List<String> getDenySubscribe() {
            return denySubscribe;
        }

        public void setDenySubscribe(List<String> denySubscribe) {
            this.denySubscribe = denySubscribe;
        }
    }
}
