package io.tbmq.broker.config;

import java.time.Duration;

import io.smallrye.config.WithDefault;

/** MQTT protocol limits and the capabilities the broker advertises in CONNACK. */
public interface MqttConfig {

    /** Largest packet accepted from a client, in bytes; advertised as Maximum Packet Size (v5). */
    @WithDefault("262144")
    int maxPacketSize();

    /** Longest client identifier accepted, in characters (the spec requires at least 23). */
    @WithDefault("256")
    int maxClientIdLength();

    /** Most levels a topic name or filter may have. */
    @WithDefault("32")
    int maxTopicLevels();

    /** Most subscriptions one session may hold; more are refused with SUBACK 0x97 / 0x80. */
    @WithDefault("1000")
    int maxSubscriptionsPerClient();

    /** QoS 1 and 2 PUBLISHes a client may have unacknowledged; advertised as Receive Maximum (v5). */
    @WithDefault("256")
    int receiveMaximum();

    /** QoS 1 and 2 messages in flight to one client (capped further by the client's own Receive Maximum). */
    @WithDefault("128")
    int maxInflightToClient();

    /** Messages queued for one session (offline or behind its in-flight window); the oldest QoS 0 go first. */
    @WithDefault("1000")
    int maxQueuedMessages();

    /** Whether QoS 0 messages are queued for offline persistent sessions. */
    @WithDefault("false")
    boolean queueQos0WhenOffline();

    /** Topic aliases a client may use on its PUBLISHes; advertised as Topic Alias Maximum (v5). */
    @WithDefault("64")
    int topicAliasMaximum();

    /**
     * A connection that sends no CONNECT within this time is closed; one whose CONNECT is not
     * answered by then (authentication, the replaced session, the session store) gets CONNACK Server unavailable.
     */
    @WithDefault("10s")
    Duration connectTimeout();

    /** Largest keep alive accepted, in seconds; a larger request is answered with Server Keep Alive (v5). */
    @WithDefault("65535")
    int maxKeepAlive();

    /** Longest session expiry, in seconds; also how long a v3 clean-session=false session outlives its connection. */
    @WithDefault("604800")
    long maxSessionExpiryInterval();

    /** Response Information returned to a v5 client that requests it; %c is replaced by the client id. */
    @WithDefault("response/%c")
    String responseInformation();

    /** Retained messages kept in total; a new retained topic beyond this is not stored (and counted). */
    @WithDefault("100000")
    int maxRetainedMessages();
}
