package io.tbmq.broker.protocol;

import io.netty.handler.codec.mqtt.MqttMessage;
import io.netty.handler.codec.mqtt.MqttProperties.MqttPropertyType;
import io.netty.handler.codec.mqtt.MqttReasonCodeAndPropertiesVariableHeader;
import io.tbmq.broker.session.Session;

/**
 * DISCONNECT from the client (§3.14): a normal one (0x00, and every v3 DISCONNECT) discards the Will
 * [MQTT-3.14.4-3]; any other reason code keeps it, since the Will is deleted only on 0x00 [MQTT-3.1.2-8]
 * (0x04 asks for it, an error code such as 0x80 means the client did not end normally); a v5 client may change its Session Expiry Interval here, except from zero to non-zero,
 * which is a protocol error (§3.14.2.2.2). The server then closes the connection.
 */
final class DisconnectHandler {
    static final int NORMAL = 0x00;

    void handle(Connection c, MqttMessage message) {
        int reasonCode = 0;
        if (c.isV5() && message.variableHeader() instanceof MqttReasonCodeAndPropertiesVariableHeader header) {
            reasonCode = header.reasonCode() & 0xFF;
            long expiry = Props.unsigned(header.properties(), MqttPropertyType.SESSION_EXPIRY_INTERVAL, -1);
            Session session = c.session();
            if (expiry >= 0) {
                if (session.expiryIntervalSeconds() == 0 && expiry > 0) {
                    c.disconnect(0x82, "Session Expiry Interval cannot change from 0 at DISCONNECT");
                    return;
                }
                session.expiryIntervalSeconds(Math.min(expiry, c.broker().mqtt().maxSessionExpiryInterval()));
            }
        }
        if (reasonCode == NORMAL) {
            c.disarmWill();
        }
        c.close();
    }
}
