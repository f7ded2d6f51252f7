package io.tbmq.broker.protocol;

import java.security.cert.Certificate;
import java.security.cert.X509Certificate;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

import javax.net.ssl.SSLPeerUnverifiedException;

import org.jboss.logging.Logger;

import io.netty.handler.codec.mqtt.MqttConnectMessage;
import io.netty.handler.codec.mqtt.MqttConnectPayload;
import io.netty.handler.codec.mqtt.MqttConnectVariableHeader;
import io.netty.handler.codec.mqtt.MqttProperties;
import io.netty.handler.codec.mqtt.MqttProperties.MqttPropertyType;
import io.netty.handler.codec.mqtt.MqttVersion;
import io.netty.handler.ssl.SslHandler;
import io.netty.handler.timeout.IdleStateHandler;
import io.tbmq.broker.auth.Authenticator;
import io.tbmq.broker.config.MqttConfig;
import io.tbmq.broker.record.MessageProperties;
import io.tbmq.broker.record.Will;
import io.tbmq.broker.session.Session;
import io.tbmq.broker.session.SessionRegistry;
import io.tbmq.broker.topic.Topics;
import io.tbmq.broker.util.LogText;
import io.tbmq.broker.util.RateLimitedLog;

/**
 * CONNECT (§3.1): validates what the frame validator cannot judge alone, authenticates off the
 * event loop, opens or resumes the session (taking over an existing connection), answers CONNACK
 * with the negotiated limits, then re-sends the session's unacknowledged messages.
 */
final class ConnectHandler {
    private static final Logger LOG = Logger.getLogger(ConnectHandler.class);
    private static final RateLimitedLog NOT_ANSWERED = new RateLimitedLog(LOG, 1);
    static final String KEEP_ALIVE_HANDLER = "keepAlive";

    /** v3.1.1 CONNACK return codes, and their v5 counterparts. */
    private static final int V3_IDENTIFIER_REJECTED = 0x02;
    private static final int V3_BAD_CREDENTIALS = 0x04;
    private static final int V3_NOT_AUTHORIZED = 0x05;
    private static final int V3_SERVER_UNAVAILABLE = 0x03;

    /** Completes with true when the client is connected and held packets may be processed. */
    CompletionStage<Boolean> handle(Connection c, MqttConnectMessage message) {
        MqttConfig cfg = c.broker().mqtt();
        MqttConnectVariableHeader header = message.variableHeader();
        MqttConnectPayload payload = message.payload();
        MqttVersion version = MqttVersion.fromProtocolNameAndLevel(header.name(), (byte) header.version());
        c.version(version);
        boolean v5 = version == MqttVersion.MQTT_5;
        MqttProperties props = header.properties();
        // First: a refusal's CONNACK keeps to the client's Maximum Packet Size too.
        c.negotiated(!v5 || Props.integer(props, MqttPropertyType.REQUEST_PROBLEM_INFORMATION, 1) == 1,
                v5 ? Props.integer(props, MqttPropertyType.RECEIVE_MAXIMUM, 65535) : 65535,
                v5 ? Props.unsigned(props, MqttPropertyType.MAXIMUM_PACKET_SIZE, Long.MAX_VALUE) : Long.MAX_VALUE,
                v5 ? Props.integer(props, MqttPropertyType.TOPIC_ALIAS_MAXIMUM, 0) : 0);

        if (v5 && Props.string(props, MqttPropertyType.AUTHENTICATION_METHOD) != null) {
            // No enhanced authentication method is built in, so every method is unknown [MQTT-4.12.0-1].
            return refuse(c, 0x8C, 0, "authentication method not supported");
        }
        boolean cleanStart = header.isCleanSession();
        String clientId = payload.clientIdentifier();
        boolean assigned = false;
        if (clientId == null || clientId.isEmpty()) {
            if (!v5 && !cleanStart) {
                return refuse(c, 0x85, V3_IDENTIFIER_REJECTED, "empty client id needs clean session [MQTT-3.1.3-8]");
            }
            clientId = "auto-" + Long.toString(ThreadLocalRandom.current().nextLong() >>> 1, 36);
            assigned = v5;
        }
        if (clientId.length() > cfg.maxClientIdLength()) {
            return refuse(c, 0x85, V3_IDENTIFIER_REJECTED, "client id longer than " + cfg.maxClientIdLength());
        }

        long requestedExpiry = v5 ? Props.unsigned(props, MqttPropertyType.SESSION_EXPIRY_INTERVAL, 0)
                : (cleanStart ? 0 : cfg.maxSessionExpiryInterval());
        long grantedExpiry = Math.min(requestedExpiry, cfg.maxSessionExpiryInterval());

        Will will = null;
        if (header.isWillFlag()) {
            String invalid = Topics.invalidTopicName(payload.willTopic(), cfg.maxTopicLevels());
            if (invalid != null) {
                return refuse(c, 0x90, -1, "Will Topic: " + invalid);
            }
            will = will(clientId, header, payload, v5);
            if (will == null) {
                return refuse(c, 0x82, -1, "Will Response Topic contains wildcards");
            }
        }

        int keepAlive = header.keepAliveTimeSeconds();
        int serverKeepAlive = -1;
        if (v5 && keepAlive > cfg.maxKeepAlive()) {
            serverKeepAlive = cfg.maxKeepAlive();
            keepAlive = serverKeepAlive;
        }
        boolean responseInformation = v5 && Props.integer(props, MqttPropertyType.REQUEST_RESPONSE_INFORMATION, 0) == 1;

        c.state = Connection.State.AUTHENTICATING;
        c.pauseForAuthentication();
        c.connectWait(Connection.ConnectWait.AUTHENTICATION, clientId);
        String id = clientId;
        boolean idAssigned = assigned;
        Will finalWill = will;
        int finalKeepAlive = keepAlive;
        int finalServerKeepAlive = serverKeepAlive;
        CompletableFuture<Boolean> connected = new CompletableFuture<>();
        // Credentials replaced while this check runs: the recheck of connected clients misses this one, so it checks itself.
        c.credentialsGeneration(c.broker().authenticator().generation());
        c.broker().authenticator().authenticate(id, payload.userName(), payload.passwordInBytes(), peerCertificate(c))
                .whenComplete((outcome, error) -> c.channel().eventLoop().execute(() -> {
                    if (c.state != Connection.State.AUTHENTICATING) {
                        connected.complete(false); // refused meanwhile by the connect timeout
                        return;
                    }
                    if (error != null) {
                        LOG.warnf(error, "authentication of %s failed", id);
                        refuse(c, 0x88, V3_SERVER_UNAVAILABLE, "authentication unavailable");
                        connected.complete(false);
                        return;
                    }
                    afterAuthentication(c, outcome, id, idAssigned, cleanStart, requestedExpiry, grantedExpiry, finalWill,
                            finalKeepAlive, finalServerKeepAlive, responseInformation)
                            .whenComplete((ok, e) -> connected.complete(e == null && ok));
                }));
        return connected;
    }

    private CompletableFuture<Boolean> afterAuthentication(Connection c, Authenticator.Outcome outcome, String clientId,
            boolean assigned, boolean cleanStart, long requestedExpiry, long grantedExpiry, Will will, int keepAlive,
            int serverKeepAlive, boolean responseInformation) {
        if (!c.channel().isActive() || c.state != Connection.State.AUTHENTICATING) {
            return CompletableFuture.completedFuture(false);
        }
        switch (outcome.result()) {
            case BAD_CREDENTIALS -> {
                return refuse(c, 0x86, V3_BAD_CREDENTIALS, "bad user name or password").toCompletableFuture();
            }
            case NOT_AUTHORIZED -> {
                return refuse(c, 0x87, V3_NOT_AUTHORIZED, "not authorized").toCompletableFuture();
            }
            case OK -> {
            }
        }
        if (will != null && !outcome.identity().acl().canPublish(will.topic())) {
            return refuse(c, 0x87, V3_NOT_AUTHORIZED, "not authorized to publish the Will to " + will.topic()).toCompletableFuture();
        }
        BrokerServices broker = c.broker();
        c.clientId(clientId);
        c.identity(outcome.identity());
        c.will(will);
        SessionRegistry.Opened opened = broker.sessions().open(clientId, cleanStart, grantedExpiry, c);
        broker.wills().cancel(clientId);
        Session session = opened.session();
        c.session(session);
        session.deliveryAcl(outcome.identity().acl());
        // Recorded with the session so another node can publish it if this one dies.
        session.will(will == null ? null : io.tbmq.broker.record.WillCodec.encode(will));
        session.persistence(broker.stores().kindFor(outcome.identity().type(), grantedExpiry));
        MqttProperties props = c.isV5() ? connAckProperties(broker.mqtt(), clientId, assigned, requestedExpiry, grantedExpiry,
                serverKeepAlive, responseInformation) : MqttProperties.NO_PROPERTIES;
        // A clean start waits until the replaced session's stored messages are gone; an APPLICATION
        // session needs its topic before anything can be routed to it.
        c.connectWait(Connection.ConnectWait.PREVIOUS_SESSION, clientId);
        CompletableFuture<Void> ready = opened.previousEnded().thenCompose(v -> {
            c.connectWait(Connection.ConnectWait.SESSION_STORE, clientId);
            return broker.stores().prepare(session);
        });
        if (ready.isDone() && !ready.isCompletedExceptionally()) {
            return CompletableFuture.completedFuture(finish(c, session, opened.present(), props, keepAlive));
        }
        CompletableFuture<Boolean> connected = new CompletableFuture<>();
        ready.whenComplete((v, error) -> c.channel().eventLoop().execute(() -> {
            if (c.state != Connection.State.AUTHENTICATING) {
                // Refused meanwhile by the connect timeout: its socket lingers open for a moment after the CONNACK.
                connected.complete(false);
            } else if (error != null) {
                LOG.warnf("session stores not ready for %s: %s", LogText.of(clientId), error.getMessage());
                refuse(c, 0x88, V3_SERVER_UNAVAILABLE, "session store unavailable");
                connected.complete(false);
            } else {
                connected.complete(c.channel().isActive() && finish(c, session, opened.present(), props, keepAlive));
            }
        }));
        return connected;
    }

    private boolean finish(Connection c, Session session, boolean present, MqttProperties props, int keepAlive) {
        BrokerServices broker = c.broker();
        LOG.debugf("connected: %s, session present %s, %s", c, present, session.persistence());
        c.connected();
        c.write(Packets.connAck(0, present, props));
        if (keepAlive > 0) {
            // One and a half times the keep alive without a packet ends the connection [MQTT-3.1.2-24].
            c.channel().pipeline().addBefore(PacketDispatcher.NAME, KEEP_ALIVE_HANDLER,
                    new IdleStateHandler(keepAlive * 1500L, 0, 0, TimeUnit.MILLISECONDS));
        }
        broker.sessions().journal().saved(session, 0);
        // Resumes from the session's store: a DEVICE session's messages are loaded from Redis first.
        broker.stores().attach(session, c);
        c.flush();
        c.resumeAfterAuthentication();
        if (broker.authenticator().generation() != c.credentialsGeneration()) {
            c.recheckCredentials();
        }
        return true;
    }

    private static MqttProperties connAckProperties(MqttConfig cfg, String clientId, boolean assigned, long requestedExpiry,
            long grantedExpiry, int serverKeepAlive, boolean responseInformation) {
        MqttProperties p = new MqttProperties();
        if (grantedExpiry != requestedExpiry) {
            p.add(new MqttProperties.IntegerProperty(MqttPropertyType.SESSION_EXPIRY_INTERVAL.value(), (int) grantedExpiry));
        }
        if (cfg.receiveMaximum() < 65535) {
            p.add(new MqttProperties.IntegerProperty(MqttPropertyType.RECEIVE_MAXIMUM.value(), cfg.receiveMaximum()));
        }
        p.add(new MqttProperties.IntegerProperty(MqttPropertyType.MAXIMUM_PACKET_SIZE.value(), cfg.maxPacketSize()));
        if (assigned) {
            p.add(new MqttProperties.StringProperty(MqttPropertyType.ASSIGNED_CLIENT_IDENTIFIER.value(), clientId));
        }
        if (cfg.topicAliasMaximum() > 0) {
            p.add(new MqttProperties.IntegerProperty(MqttPropertyType.TOPIC_ALIAS_MAXIMUM.value(), cfg.topicAliasMaximum()));
        }
        if (serverKeepAlive >= 0) {
            p.add(new MqttProperties.IntegerProperty(MqttPropertyType.SERVER_KEEP_ALIVE.value(), serverKeepAlive));
        }
        if (responseInformation && !cfg.responseInformation().isEmpty()) {
            p.add(new MqttProperties.StringProperty(MqttPropertyType.RESPONSE_INFORMATION.value(),
                    cfg.responseInformation().replace("%c", clientId)));
        }
        return p;
    }

    private static Will will(String clientId, MqttConnectVariableHeader header, MqttConnectPayload payload, boolean v5) {
        MqttProperties wp = payload.willProperties();
        MessageProperties properties = MessageProperties.NONE;
        long delay = 0;
        long expiry = -1;
        if (v5) {
            String responseTopic = Props.string(wp, MqttPropertyType.RESPONSE_TOPIC);
            if (responseTopic != null && (responseTopic.indexOf('+') >= 0 || responseTopic.indexOf('#') >= 0)) {
                return null;
            }
            properties = new MessageProperties(Props.integer(wp, MqttPropertyType.PAYLOAD_FORMAT_INDICATOR, -1),
                    Props.string(wp, MqttPropertyType.CONTENT_TYPE), responseTopic,
                    Props.binary(wp, MqttPropertyType.CORRELATION_DATA), Props.userProperties(wp));
            delay = Props.unsigned(wp, MqttPropertyType.WILL_DELAY_INTERVAL, 0);
            expiry = Props.unsigned(wp, MqttPropertyType.PUBLICATION_EXPIRY_INTERVAL, -1);
        }
        return new Will(clientId, payload.willTopic(), header.willQos(), header.isWillRetain(), payload.willMessageInBytes(),
                properties, expiry, delay);
    }

    /** The client certificate the TLS handshake verified, if any. */
    private static X509Certificate peerCertificate(Connection c) {
        SslHandler ssl = c.channel().pipeline().get(SslHandler.class);
        if (ssl == null) {
            return null;
        }
        try {
            Certificate[] chain = ssl.engine().getSession().getPeerCertificates();
            return chain.length > 0 && chain[0] instanceof X509Certificate x509 ? x509 : null;
        } catch (SSLPeerUnverifiedException e) {
            return null;
        }
    }

    /**
     * The connect timeout passed while a CONNECT that arrived was still waiting for its CONNACK (run
     * 59 of docs/reliability.md: a few clients silent for 10 s after a broker restarted, with nothing
     * in its log). The client is told the server is unavailable, rather than left with a closed socket.
     */
    static void notAnsweredInTime(Connection c, String listener, java.time.Duration timeout) {
        // Read once: a store's thread may move it on meanwhile, and the log and the metric must agree.
        Connection.ConnectWait wait = c.connectWait();
        c.broker().metrics().connectTimedOut(listener, wait.tag);
        NOT_ANSWERED.info("CONNECT of %s from %s not answered within %s, still waiting for %s: refused as server unavailable",
                LogText.of(c.connectingClientId()), c.channel().remoteAddress(), timeout, wait.description);
        refuse(c, 0x88, V3_SERVER_UNAVAILABLE, "not ready within the connect timeout (waiting for " + wait.description + ")");
    }

    /**
     * Answers CONNACK with an error and closes [MQTT-3.2.2-6]: the v5 reason code, or the v3
     * return code ({@code v3Code} -1 means v3 has none for this, so the connection just closes).
     * Once only: a check that completes after the connect timeout refused the client finds it closing.
     * A refused client never connected, so its Will is not published when the socket closes.
     */
    private static CompletionStage<Boolean> refuse(Connection c, int v5Code, int v3Code, String reason) {
        if (c.state == Connection.State.CLOSING) {
            return CompletableFuture.completedFuture(false);
        }
        c.will(null);
        c.broker().metrics().connectRefused(c.isV5() ? v5Code : v3Code);
        LOG.debugf("CONNECT refused (%s): %s", c, reason);
        if (c.isV5()) {
            // Acknowledge flags and reason code before the properties.
            c.sendAndClose(Packets.connAck(v5Code, false, c.problemInformation(reason, 2)));
        } else if (v3Code > 0) {
            c.sendAndClose(Packets.connAck(v3Code, false, MqttProperties.NO_PROPERTIES));
        } else {
            c.close();
        }
        return CompletableFuture.completedFuture(false);
    }
}
