package io.tbmq.broker.protocol;

import java.util.List;

import io.netty.handler.codec.mqtt.MqttConnAckMessage;
import io.netty.handler.codec.mqtt.MqttConnAckVariableHeader;
import io.netty.handler.codec.mqtt.MqttConnectReturnCode;
import io.netty.handler.codec.mqtt.MqttFixedHeader;
import io.netty.handler.codec.mqtt.MqttMessage;
import io.netty.handler.codec.mqtt.MqttMessageIdAndPropertiesVariableHeader;
import io.netty.handler.codec.mqtt.MqttMessageIdVariableHeader;
import io.netty.handler.codec.mqtt.MqttMessageType;
import io.netty.handler.codec.mqtt.MqttProperties;
import io.netty.handler.codec.mqtt.MqttPubReplyMessageVariableHeader;
import io.netty.handler.codec.mqtt.MqttQoS;
import io.netty.handler.codec.mqtt.MqttReasonCodeAndPropertiesVariableHeader;
import io.netty.handler.codec.mqtt.MqttSubAckMessage;
import io.netty.handler.codec.mqtt.MqttSubAckPayload;
import io.netty.handler.codec.mqtt.MqttUnsubAckMessage;
import io.netty.handler.codec.mqtt.MqttUnsubAckPayload;

/** Builders for the packets the server sends, other than PUBLISH. */
final class Packets {
    static final MqttMessage PINGRESP = new MqttMessage(new MqttFixedHeader(MqttMessageType.PINGRESP, false,
            MqttQoS.AT_MOST_ONCE, false, 0));

    private Packets() {
    }

    static MqttConnAckMessage connAck(int returnCode, boolean sessionPresent, MqttProperties properties) {
        return new MqttConnAckMessage(new MqttFixedHeader(MqttMessageType.CONNACK, false, MqttQoS.AT_MOST_ONCE, false, 0),
                new MqttConnAckVariableHeader(MqttConnectReturnCode.valueOf((byte) returnCode), sessionPresent, properties));
    }

    static MqttMessage disconnect(int reasonCode, MqttProperties properties) {
        return new MqttMessage(new MqttFixedHeader(MqttMessageType.DISCONNECT, false, MqttQoS.AT_MOST_ONCE, false, 0),
                new MqttReasonCodeAndPropertiesVariableHeader((byte) reasonCode, properties));
    }

    /** PUBACK, PUBREC, PUBREL or PUBCOMP; the encoder leaves out reason code 0 and empty properties. */
    static MqttMessage ack(MqttMessageType type, int packetId, int reasonCode, MqttProperties properties) {
        MqttQoS qos = type == MqttMessageType.PUBREL ? MqttQoS.AT_LEAST_ONCE : MqttQoS.AT_MOST_ONCE;
        return new MqttMessage(new MqttFixedHeader(type, false, qos, false, 0),
                new MqttPubReplyMessageVariableHeader(packetId, (byte) reasonCode, properties));
    }

    static MqttSubAckMessage subAck(int packetId, List<Integer> reasonCodes, MqttProperties properties) {
        return new MqttSubAckMessage(new MqttFixedHeader(MqttMessageType.SUBACK, false, MqttQoS.AT_MOST_ONCE, false, 0),
                new MqttMessageIdAndPropertiesVariableHeader(packetId, properties), new MqttSubAckPayload(reasonCodes));
    }

    static MqttUnsubAckMessage unsubAck(int packetId, List<Short> reasonCodes, MqttProperties properties, boolean v5) {
        MqttFixedHeader header = new MqttFixedHeader(MqttMessageType.UNSUBACK, false, MqttQoS.AT_MOST_ONCE, false, 0);
        if (!v5) {
            return new MqttUnsubAckMessage(header, MqttMessageIdVariableHeader.from(packetId));
        }
        return new MqttUnsubAckMessage(header, new MqttMessageIdAndPropertiesVariableHeader(packetId, properties),
                new MqttUnsubAckPayload(reasonCodes));
    }

    static MqttProperties reasonString(String reason) {
        if (reason == null) {
            return MqttProperties.NO_PROPERTIES;
        }
        MqttProperties p = new MqttProperties();
        p.add(new MqttProperties.StringProperty(MqttProperties.MqttPropertyType.REASON_STRING.value(), reason));
        return p;
    }
}
