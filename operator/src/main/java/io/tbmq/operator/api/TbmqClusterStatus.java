package io.tbmq.operator.api;

import java.util.ArrayList;
import java.util.List;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;

import io.fabric8.crd.generator.annotation.PrinterColumn;
import io.fabric8.kubernetes.api.model.Condition;

/** What is true: the plan the operator computed, what is ready, and conditions. */
public class TbmqClusterStatus {
    private Long observedGeneration;

    @JsonPropertyDescription("Ready, Progressing, Degraded, and one per component: KafkaReady, RedisReady, BrokersReady.")
    private List<Condition> conditions = new ArrayList<>();

    @JsonPropertyDescription("The computed plan: every number with the rule that gave it.")
    private PlanStatus plan;

    @PrinterColumn(name = "Brokers")
    @JsonPropertyDescription("Ready/desired broker pods.")
    private String brokers;

    @PrinterColumn(name = "Redis")
    @JsonPropertyDescription("Ready/desired Redis masters (\"external\" when not managed).")
    private String redis;

    @PrinterColumn(name = "Kafka")
    @JsonPropertyDescription("Ready/desired Kafka brokers (\"external\" when not managed).")
    private String kafka;

    private int readyBrokers;
    private int desiredBrokers;

    @JsonPropertyDescription("Where clients connect, per listener (host:port of the client Service).")
    private List<Endpoint> endpoints = new ArrayList<>();

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

    public PlanStatus getPlan() {
        return plan;
    }

    public void setPlan(PlanStatus plan) {
        this.plan = plan;
    }

    public String getBrokers() {
        return brokers;
    }

    public void setBrokers(String brokers) {
        this.brokers = brokers;
    }

    public String getRedis() {
        return redis;
    }

    public void setRedis(String redis) {
        this.redis = redis;
    }

    public String getKafka() {
        return kafka;
    }

    public void setKafka(String kafka) {
        this.kafka = kafka;
    }

    public int getReadyBrokers() {
        return readyBrokers;
    }

    public void setReadyBrokers(int readyBrokers) {
        this.readyBrokers = readyBrokers;
    }

    public int getDesiredBrokers() {
        return desiredBrokers;
    }

    public void setDesiredBrokers(int desiredBrokers) {
        this.desiredBrokers = desiredBrokers;
    }

    public List<Endpoint> getEndpoints() {
        return endpoints;
    }

    public void setEndpoints(List<Endpoint> endpoints) {
        this.endpoints = endpoints;
    }

    /** A listener's address for clients. */
    public static class Endpoint {
        private String listener;
        private String address;

        public Endpoint() {
        }

        public Endpoint(String listener, String address) {
            this.listener = listener;
            this.address = address;
        }

        public String getListener() {
            return listener;
        }

        public void setListener(String listener) {
            this.listener = listener;
        }

        public String getAddress() {
            return address;
        }

        public void setAddress(String address) {
            this.address = address;
        }
    }
}
