package io.tbmq.broker.config;

import java.util.List;
import java.util.Optional;

import io.smallrye.config.WithDefault;

/** The four listeners: MQTT over TCP, TLS, WebSocket and secure WebSocket. */
public interface ListenersConfig {

    Listener tcp();

    Listener tls();

    Listener ws();

    Listener wss();

    /** Netty worker (I/O) threads shared by all listeners; 0 means one per available processor. */
    @WithDefault("0")
    int workerThreads();

    /** Use the native epoll transport on Linux when it loads (falls back to NIO otherwise). */
    @WithDefault("true")
    boolean nativeTransport();

    interface Listener {
        /** TCP and WS are on by default (application.properties); TLS and WSS need a certificate. */
        @WithDefault("false")
        boolean enabled();

        @WithDefault("0.0.0.0")
        String host();

        /** Defaults: tcp 1883, tls 8883, ws 8083, wss 8084 (set in application.properties); 0 picks a free port. */
        @WithDefault("0")
        int port();

        /** WebSocket path (ws/wss only). */
        @WithDefault("/mqtt")
        String path();

        /** Most connections this listener holds at once; further ones are closed right after accept. */
        @WithDefault("100000")
        int maxConnections();

        /**
         * New connections this listener accepts per second (bursts up to one second's worth); the
         * rest are closed right after accept. Paces a reconnect storm and blunts connection floods;
         * 0 = no limit.
         */
        @WithDefault("5000")
        int maxConnectionRate();

        /** PEM certificate chain of the server (tls/wss). */
        Optional<String> cert();

        /** PEM PKCS#8 private key of the server (tls/wss). */
        Optional<String> key();

        /** PEM bundle of CAs whose client certificates are trusted (tls/wss); enables X.509 client auth. */
        Optional<String> trustCerts();

        /** none, optional or require: whether a client certificate is asked for (with trust-certs set). */
        @WithDefault("optional")
        ClientAuth clientAuth();

        /** TLS protocol versions offered; older ones are refused. */
        @WithDefault("TLSv1.3,TLSv1.2")
        List<String> protocols();
    }

    enum ClientAuth { NONE, OPTIONAL, REQUIRE }
}
