package io.tbmq.broker.protocol;

/**
 * AUTH (§3.15). No enhanced authentication method is built in and CONNECT refuses every
 * Authentication Method, so an AUTH packet can only be a protocol error [MQTT-4.12.0-1]: the
 * connection ends with DISCONNECT 0x82, cleanly, with nothing else affected.
 */
final class AuthHandler {

    void handle(Connection c) {
        c.disconnect(0x82, "AUTH without an agreed authentication method");
    }
}
