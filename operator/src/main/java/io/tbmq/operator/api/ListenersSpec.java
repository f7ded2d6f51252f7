package io.tbmq.operator.api;

import com.fasterxml.jackson.annotation.JsonMerge;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;

/** The broker's client listeners and the Service that exposes them. */
public class ListenersSpec {

    public enum ServiceType {
        ClusterIP, NodePort, LoadBalancer
    }

    @JsonPropertyDescription("Type of the client Service: ClusterIP (default), NodePort or LoadBalancer.")
    private ServiceType serviceType = ServiceType.ClusterIP;

    // Merged: a listener given in part ({mqtt: {port: 1884}}) keeps the defaults of the fields left out,
    // where a new ListenerSpec would turn it off on port 0.
    @JsonMerge
    private ListenerSpec mqtt = new ListenerSpec(true, 1883);
    @JsonMerge
    @JsonPropertyDescription("MQTT over TLS; needs broker.tlsSecret.")
    private ListenerSpec mqtts = new ListenerSpec(false, 8883);
    @JsonMerge
    private ListenerSpec ws = new ListenerSpec(false, 8083);
    @JsonMerge
    @JsonPropertyDescription("MQTT over secure WebSocket; needs broker.tlsSecret.")
    private ListenerSpec wss = new ListenerSpec(false, 8084);

    public ServiceType getServiceType() {
        return serviceType;
    }

    public void setServiceType(ServiceType serviceType) {
        this.serviceType = serviceType;
    }

    public ListenerSpec getMqtt() {
        return mqtt;
    }

    public void setMqtt(ListenerSpec mqtt) {
        this.mqtt = mqtt;
    }

    public ListenerSpec getMqtts() {
        return mqtts;
    }

    public void setMqtts(ListenerSpec mqtts) {
        this.mqtts = mqtts;
    }

    public ListenerSpec getWs() {
        return ws;
    }

    public void setWs(ListenerSpec ws) {
        this.ws = ws;
    }

    public ListenerSpec getWss() {
        return wss;
    }

    public void setWss(ListenerSpec wss) {
        this.wss = wss;
    }
}
