package io.tbmq.broker.protocol;

import java.util.ArrayDeque;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.socket.DuplexChannel;
import io.netty.handler.codec.mqtt.MqttFixedHeader;
import io.netty.handler.codec.mqtt.MqttMessage;
import io.netty.handler.codec.mqtt.MqttMessageType;
import io.netty.handler.codec.mqtt.MqttProperties;
import io.netty.handler.codec.mqtt.MqttPublishMessage;
import io.netty.handler.codec.mqtt.MqttPublishVariableHeader;
import io.netty.handler.codec.mqtt.MqttQoS;
import io.netty.handler.codec.mqtt.MqttVersion;
import io.netty.util.AttributeKey;
import io.netty.util.ReferenceCountUtil;
import io.tbmq.broker.auth.Acl;
import io.tbmq.broker.auth.ClientIdentity;
import io.tbmq.broker.auth.Recheck;
import io.tbmq.broker.record.OutboundMessage;
import io.tbmq.broker.record.Persistence;
import io.tbmq.broker.record.PublishMessage;
import io.tbmq.broker.record.Will;
import io.tbmq.broker.session.DeliverySink;
import io.tbmq.broker.session.Handoffs;
import io.tbmq.broker.session.Session;
import io.tbmq.broker.util.Clock;
import io.tbmq.broker.util.LogText;

/**
 * One network connection and the protocol state that lives exactly as long as it: version,
 * identity, keep alive, negotiated limits, inbound topic aliases, the Will, inbound QoS flow
 * control. It is the {@link DeliverySink} of its session while attached. Every method except
 * {@link #scheduleDrain()} and {@link #takenOver(boolean)} runs on the channel's event loop.
 */
public final class Connection implements DeliverySink {
    private static final org.jboss.logging.Logger LOG = org.jboss.logging.Logger.getLogger(Connection.class);
    public static final AttributeKey<Connection> KEY = AttributeKey.valueOf("tbmq.connection");

    enum State { AWAITING_CONNECT, AUTHENTICATING, CONNECTED, CLOSING }

    /** The steps between a CONNECT and its CONNACK, as a log line and a metric tag name them. */
    enum ConnectWait {
        AUTHENTICATION("authentication", "authentication"),
        PREVIOUS_SESSION("the replaced session to end", "previous-session"),
        SESSION_STORE("the session store", "session-store");

        final String description;
        final String tag;

        ConnectWait(String description, String tag) {
            this.description = description;
            this.tag = tag;
        }
    }

    /** Why reading from the socket is paused; reading resumes when no reason is left. */
    private static final int PAUSED_AUTH = 1;
    private static final int PAUSED_QUOTA = 2;
    private static final long CLOSE_LINGER_MS = 2_000;
    /** A Topic Alias property on the wire: its identifier and a two-byte value. */
    private static final int TOPIC_ALIAS_BYTES = 3;

    private final Channel channel;
    private final BrokerServices broker;
    private final String listener;
    private final InboundAcks acks = new InboundAcks(this);
    private final AtomicBoolean drainScheduled = new AtomicBoolean();
    private final Runnable drainTask = this::drainNow;
    private final ArrayDeque<MqttMessage> heldWhileConnecting = new ArrayDeque<>();

    State state = State.AWAITING_CONNECT;
    /** When the CONNACK went out: a message received before waited for this client, and is no live delivery. */
    private long connectedAtMicros = Long.MAX_VALUE;
    /** What the CONNECT that arrived waits for before its CONNACK, and whose it is; named if the connect timeout ends the wait. */
    private volatile ConnectWait connectWait = ConnectWait.AUTHENTICATION;
    private volatile String connectingClientId;
    private MqttVersion version = MqttVersion.MQTT_3_1_1;
    private String clientId;
    private volatile Session session;
    private ClientIdentity identity;
    /** The credentials generation the client was authenticated against. */
    private long credentialsGeneration;
    private boolean problemInformation = true;
    private int clientReceiveMaximum = 65535;
    private long clientMaxPacketSize = Long.MAX_VALUE;
    private String[] topicAliases;
    private OutboundTopicAliases outboundAliases;
    private Will will;
    private boolean willDisarmed;
    private boolean takenOver;
    private boolean successorCleanStart;
    private int inboundInflight;
    /** Publishers mostly repeat their topic: the last one the ACL allowed is not checked again. */
    private String lastAllowedTopic;
    private int pausedReasons;

    public Connection(Channel channel, BrokerServices broker, String listener) {
        this.channel = channel;
        this.broker = broker;
        this.listener = listener;
    }

    public static Connection of(Channel channel) {
        return channel.attr(KEY).get();
    }

    // ---- accessors used by the handlers ------------------------------------------------------

    Channel channel() {
        return channel;
    }

    BrokerServices broker() {
        return broker;
    }

    String listener() {
        return listener;
    }

    public MqttVersion version() {
        return version;
    }

    boolean isV5() {
        return version == MqttVersion.MQTT_5;
    }

    void version(MqttVersion v) {
        this.version = v;
    }

    public String clientId() {
        return clientId;
    }

    void clientId(String id) {
        this.clientId = id;
    }

    Session session() {
        return session;
    }

    void session(Session s) {
        this.session = s;
    }

    ClientIdentity identity() {
        return identity;
    }

    void identity(ClientIdentity id) {
        this.identity = id;
    }

    ConnectWait connectWait() {
        return connectWait;
    }

    String connectingClientId() {
        return connectingClientId;
    }

    /** May be called from the thread that completed the step before (a store's, the authenticator's). */
    void connectWait(ConnectWait wait, String clientId) {
        this.connectWait = wait;
        this.connectingClientId = clientId;
    }

    long credentialsGeneration() {
        return credentialsGeneration;
    }

    /** The CONNACK is going out: from now on, the client receives messages as they come. */
    void connected() {
        state = State.CONNECTED;
        connectedAtMicros = Clock.nowMicros();
    }

    void credentialsGeneration(long generation) {
        this.credentialsGeneration = generation;
    }

    void negotiated(boolean problemInformation, int receiveMaximum, long maxPacketSize, int topicAliasMaximum) {
        this.problemInformation = problemInformation;
        this.clientReceiveMaximum = receiveMaximum;
        this.clientMaxPacketSize = maxPacketSize;
        this.outboundAliases = topicAliasMaximum > 0 ? new OutboundTopicAliases(topicAliasMaximum) : null;
    }

    void will(Will w) {
        this.will = w;
    }

    /** A normal DISCONNECT: the Will is not published [MQTT-3.1.2-10]. */
    void disarmWill() {
        this.willDisarmed = true;
    }

    InboundAcks acks() {
        return acks;
    }

    boolean mayPublish(String topic) {
        if (topic.equals(lastAllowedTopic)) {
            return true;
        }
        if (topic.startsWith("$SYS") || !identity.acl().canPublish(topic)) {
            return false;
        }
        lastAllowedTopic = topic;
        return true;
    }

    // ---- topic aliases (inbound) ------------------------------------------------------------

    String alias(int alias) {
        return topicAliases == null || alias > topicAliases.length ? null : topicAliases[alias - 1];
    }

    void alias(int alias, String topic) {
        if (topicAliases == null) {
            topicAliases = new String[broker.mqtt().topicAliasMaximum()];
        }
        topicAliases[alias - 1] = topic;
    }

    // ---- inbound flow control ---------------------------------------------------------------

    int inboundInflight() {
        return inboundInflight;
    }

    /**
     * A QoS 1/2 PUBLISH arrived. Reading pauses while the message log has as many of this
     * connection's messages outstanding as the Receive Maximum: backpressure that depends only on
     * Kafka, never on the client (a QoS 2 quota freed by PUBREL would deadlock a paused reader).
     */
    void inboundReceived() {
        inboundInflight++;
        if (acks.pending() >= broker.mqtt().receiveMaximum()) {
            pause(PAUSED_QUOTA);
        }
    }

    /** The message log answered for some of this connection's messages. */
    void logAcknowledged() {
        if (acks.pending() < broker.mqtt().receiveMaximum()) {
            resume(PAUSED_QUOTA);
        }
    }

    /** An ack left: QoS 1 and refused QoS 2 free their quota now, accepted QoS 2 at PUBCOMP. */
    void inboundAcked(int qos, int reasonCode, int packetId) {
        if (qos == 1 || reasonCode >= 0x80) {
            inboundReleased();
            if (qos == 2 && session != null) {
                session.forgetQos2(packetId);
            }
        }
    }

    void inboundReleased() {
        if (inboundInflight > 0) {
            inboundInflight--;
        }
    }

    void pause(int reason) {
        pausedReasons |= reason;
        channel.config().setAutoRead(false);
    }

    void resume(int reason) {
        pausedReasons &= ~reason;
        if (pausedReasons == 0 && state != State.CLOSING) {
            channel.config().setAutoRead(true);
        }
    }

    void pauseForAuthentication() {
        pause(PAUSED_AUTH);
    }

    void resumeAfterAuthentication() {
        resume(PAUSED_AUTH);
    }

    /** Packets that arrived behind CONNECT while it was being authenticated; replayed after CONNACK. */
    void hold(MqttMessage message) {
        heldWhileConnecting.add(ReferenceCountUtil.retain(message));
    }

    MqttMessage nextHeld() {
        return heldWhileConnecting.poll();
    }

    // ---- writing ---------------------------------------------------------------------------

    void write(MqttMessage message) {
        channel.write(message, channel.voidPromise());
    }

    void writeAndFlush(MqttMessage message) {
        channel.writeAndFlush(message, channel.voidPromise());
    }

    /**
     * A Reason String only when the client did not opt out [MQTT-3.1.2-29] and the packet, {@code bodyBytes}
     * before its properties, still fits the client's Maximum Packet Size with it [MQTT-3.4.2-2].
     */
    MqttProperties problemInformation(String reason, int bodyBytes) {
        return isV5() && problemInformation ? reasonWithin(reason, bodyBytes, 0) : MqttProperties.NO_PROPERTIES;
    }

    /** {@code otherProperties}: bytes of the packet's properties besides the Reason String. */
    private MqttProperties reasonWithin(String reason, int bodyBytes, int otherProperties) {
        if (reason == null) {
            return MqttProperties.NO_PROPERTIES;
        }
        long properties = 3 + OutboundProperties.utf8Length(reason) + otherProperties;
        long remaining = bodyBytes + OutboundProperties.varIntSize(properties) + properties;
        return 1 + OutboundProperties.varIntSize(remaining) + remaining <= clientMaxPacketSize ? Packets.reasonString(reason)
                : MqttProperties.NO_PROPERTIES;
    }

    /** Sends DISCONNECT with a reason code (v5 only) and closes; v3 has no server DISCONNECT. */
    void disconnect(int reasonCode, String reason) {
        if (state == State.CLOSING) {
            return;
        }
        boolean sendPacket = isV5() && state == State.CONNECTED;
        state = State.CLOSING;
        if (sendPacket) {
            // After the reason code; left out if the client's Maximum Packet Size has no room for it [MQTT-3.14.2-3].
            MqttProperties props = reasonWithin(reason, 1, 0);
            channel.writeAndFlush(Packets.disconnect(reasonCode, props)).addListener(f -> closeAfterSend());
        } else {
            channel.close();
        }
    }

    /**
     * Closing a socket that still has unread input makes the kernel send RST, and an RST can
     * destroy the DISCONNECT or CONNACK just written before the client reads it. So: half-close,
     * let the client read and hang up, and close for good after a short linger.
     */
    private void closeAfterSend() {
        if (channel instanceof DuplexChannel duplex && !duplex.isOutputShutdown()) {
            duplex.shutdownOutput();
            channel.config().setAutoRead(true);
            channel.eventLoop().schedule(() -> {
                channel.close();
            }, CLOSE_LINGER_MS, TimeUnit.MILLISECONDS);
        } else {
            channel.close();
        }
    }

    /**
     * The credentials changed: checks this client again (on its event loop). A client whose entry
     * is gone or changed, or that holds a subscription it may no longer make, gets DISCONNECT 0x87
     * Not authorized (v5; v3 is closed); the others go on with their permissions as they are now,
     * from their next packet.
     */
    public void recheckCredentials() {
        if (state != State.CONNECTED || identity == null) {
            return;
        }
        String refused = switch (broker.authenticator().recheck(identity, clientId)) {
            case Recheck.Revoke revoke -> revoke.reason();
            case Recheck.Keep keep -> {
                String denied = deniedSubscription(keep.identity().acl());
                if (denied == null) {
                    identity = keep.identity();
                    lastAllowedTopic = null;
                    if (session != null) {
                        session.deliveryAcl(keep.identity().acl());
                    }
                }
                yield denied;
            }
        };
        if (refused != null) {
            LOG.infof("client %s disconnected after a credentials change: %s", LogText.of(clientId), refused);
            disconnect(0x87, "not authorized: " + refused);
        }
    }

    private String deniedSubscription(Acl acl) {
        Session s = session;
        if (s == null) {
            return null;
        }
        for (Session.SubscriptionEntry entry : s.subscriptions().values()) {
            if (!acl.canSubscribe(entry.filter())) {
                return "no longer allowed to subscribe to " + entry.filter().key();
            }
        }
        return null;
    }

    /** Graceful shutdown: DISCONNECT 0x8B (v5) so the client reconnects elsewhere; the Will is published as for any loss. */
    public void serverShutdown(String serverReference) {
        if (state == State.CONNECTED && serverReference != null && isV5()) {
            state = State.CLOSING;
            // After the reason code, beside the Server Reference (its identifier, length and bytes).
            MqttProperties props = reasonWithin("server shutting down; reconnect to " + serverReference, 1,
                    3 + OutboundProperties.utf8Length(serverReference));
            if (props == MqttProperties.NO_PROPERTIES) {
                props = new MqttProperties();
            }
            props.add(new MqttProperties.StringProperty(MqttProperties.MqttPropertyType.SERVER_REFERENCE.value(), serverReference));
            channel.writeAndFlush(Packets.disconnect(0x9C, props)).addListener(f -> closeAfterSend());
        } else if (state == State.CONNECTED) {
            disconnect(0x8B, "server shutting down");
        } else {
            close();
        }
    }

    /** Closes at once, nothing sent (v3 protocol errors, refused connections). */
    void close() {
        state = State.CLOSING;
        channel.close();
    }

    /** Writes a packet, then closes (CONNACK with an error code). */
    void sendAndClose(MqttMessage message) {
        state = State.CLOSING;
        channel.writeAndFlush(message).addListener(f -> closeAfterSend());
    }

    // ---- DeliverySink ----------------------------------------------------------------------

    @Override
    public void scheduleDrain() {
        if (drainScheduled.compareAndSet(false, true)) {
            Handoffs.execute(channel.eventLoop(), drainTask);
        }
    }

    private void drainNow() {
        drainScheduled.set(false);
        Session s = session;
        if (s != null && state == State.CONNECTED) {
            s.drain(this);
        }
    }

    @Override
    public void execute(Runnable task) {
        channel.eventLoop().execute(task);
    }

    @Override
    public boolean isWritable() {
        return channel.isWritable();
    }

    @Override
    public int sendWindow() {
        return broker.deliveryHold().held() && outlivesConnection(session) ? 0
                : Math.min(clientReceiveMaximum, broker.mqtt().maxInflightToClient());
    }

    /**
     * QoS 1 and 2 messages sent to the client and not yet acknowledged, of a session whose messages
     * outlive the connection (held in memory only, they are not sent again anyway). Safe from any
     * thread: a state read a moment late only shortens or lengthens the drain's wait by a poll.
     */
    public int inFlight() {
        Session s = session;
        return state != State.CONNECTED || !outlivesConnection(s) ? 0 : s.inflightCount();
    }

    private static boolean outlivesConnection(Session s) {
        return s != null && s.persistence() != Persistence.MEMORY;
    }

    @Override
    public boolean writePublish(OutboundMessage out, int packetId, boolean dup) {
        PublishMessage m = out.message();
        MqttProperties props = isV5() ? OutboundProperties.of(m, out.subscriptionIds(), System.currentTimeMillis())
                : MqttProperties.NO_PROPERTIES;
        boolean alias = outboundAliases != null;
        if (clientMaxPacketSize != Long.MAX_VALUE) {
            // The Topic Alias counts too (3 bytes, the topic name left out once known) [MQTT-3.1.2-24];
            // the alias is optional, so a message that fits only without one goes without one.
            String aliased = alias && outboundAliases.knows(m.topic()) ? "" : m.topic();
            if (!alias || OutboundProperties.publishSize(aliased, m, out.qos(), props, TOPIC_ALIAS_BYTES) > clientMaxPacketSize) {
                alias = false;
                if (OutboundProperties.publishSize(m.topic(), m, out.qos(), props) > clientMaxPacketSize) {
                    // Too large for this client: dropped as if delivered [MQTT-3.1.2-25].
                    broker.metrics().dropped("too-large-for-client");
                    return false;
                }
            }
        }
        String topic = m.topic();
        if (alias) {
            if (props == MqttProperties.NO_PROPERTIES) {
                props = new MqttProperties();
            }
            topic = outboundAliases.apply(topic, props);
        }
        MqttPublishMessage publish = new MqttPublishMessage(
                new MqttFixedHeader(MqttMessageType.PUBLISH, dup, MqttQoS.valueOf(out.qos()), out.retain(), 0),
                new MqttPublishVariableHeader(topic, packetId, props), Unpooled.wrappedBuffer(m.payload()));
        channel.write(publish, channel.voidPromise());
        broker.metrics().messageOut(out.qos(), m.payload().length, dup ? -1 : Clock.nowMicros() - m.createdAtMicros(),
                !out.retain() && m.createdAtMicros() >= connectedAtMicros);
        return true;
    }

    @Override
    public void writePubrel(int packetId) {
        write(Packets.ack(MqttMessageType.PUBREL, packetId, 0, MqttProperties.NO_PROPERTIES));
    }

    @Override
    public void flush() {
        channel.flush();
    }

    @Override
    public void takenOver(boolean successorCleanStart) {
        // Through Handoffs, like the drains: after those of messages handed over before it.
        Handoffs.execute(channel.eventLoop(), () -> {
            this.takenOver = true;
            this.successorCleanStart = successorCleanStart;
            disconnect(0x8E, "session taken over by another connection");
        });
    }

    @Override
    public void disconnectedByAdmin() {
        // After the drains of messages a downlink poll handed over before the command.
        Handoffs.execute(channel.eventLoop(), () -> disconnect(0x98, "disconnected by an administrator"));
    }

    // ---- end of the connection ---------------------------------------------------------------

    /** The channel closed: Will, session detach, cleanup. Called once, on the event loop. */
    void closed() {
        if (LOG.isDebugEnabled()) {
            LOG.debugf("closed: %s (session attached: %s)", this, session != null);
        }
        state = State.CLOSING;
        MqttMessage held;
        while ((held = heldWhileConnecting.poll()) != null) {
            ReferenceCountUtil.release(held);
        }
        Session s = session;
        if (s == null) {
            return;
        }
        if (will != null && !willDisarmed) {
            if (takenOver) {
                // §3.1.2.5: the old Will goes out unless the successor resumed the session within the delay.
                if (successorCleanStart || will.delaySeconds() == 0) {
                    broker.wills().publishNow(will);
                }
            } else {
                broker.wills().connectionLost(will, s.expiryIntervalSeconds());
            }
        }
        broker.stores().detach(s, this);
        broker.sessions().disconnected(s, this);
    }

    @Override
    public String toString() {
        return "connection " + (clientId == null ? "?" : LogText.of(clientId)) + " " + channel.remoteAddress();
    }
}
