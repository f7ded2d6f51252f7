package io.tbmq.broker.codec;

import io.netty.buffer.ByteBuf;
import io.netty.handler.codec.mqtt.MqttMessageType;
import io.netty.handler.codec.mqtt.MqttVersion;
import io.tbmq.broker.codec.PropertyRules.Block;
import io.tbmq.broker.codec.PropertyRules.Rule;

/**
 * Checks one complete packet sent by a client against the MQTT 3.1, 3.1.1 and 5.0 wire rules that
 * Netty's decoder does not enforce: flag bits, UTF-8 strings, property identifiers, types,
 * duplicates and values, reserved bits, empty SUBSCRIBE/UNSUBSCRIBE, trailing bytes. Semantic
 * checks that need session state (topic aliases, receive maximum, ACLs) belong to the handlers.
 */
final class PacketValidator {
    private PacketValidator() {
    }

    /** The protocol a CONNECT asks for; validation of the rest of the packet depends on it. */
    static MqttVersion connectVersion(ByteBuf buf, int from, int length) {
        FrameReader r = new FrameReader(buf, from, length, false);
        String name = r.string("protocol name");
        int level = r.u8("protocol level");
        if ("MQTT".equals(name)) {
            if (level == 4) {
                return MqttVersion.MQTT_3_1_1;
            }
            if (level == 5) {
                return MqttVersion.MQTT_5;
            }
            throw new ProtocolViolation(ProtocolViolation.UNSUPPORTED_PROTOCOL_VERSION, "MQTT-3.1.2-2",
                    "unsupported protocol level " + level);
        }
        if ("MQIsdp".equals(name)) {
            if (level == 3) {
                return MqttVersion.MQTT_3_1;
            }
            throw new ProtocolViolation(ProtocolViolation.UNSUPPORTED_PROTOCOL_VERSION, "MQTT-3.1.2-2",
                    "unsupported protocol level " + level + " for MQIsdp");
        }
        throw ProtocolViolation.malformed("MQTT-3.1.2-1", "unknown protocol name '" + name + "'");
    }

    /** Fixed-header flags (Table 2-2), checked before the body is even buffered. */
    static void checkFlags(MqttMessageType type, int flags, MqttVersion version) {
        boolean v5 = version == MqttVersion.MQTT_5;
        String ref = v5 ? "MQTT-2.1.3-1" : "MQTT-2.2.2-2";
        switch (type) {
            case PUBLISH -> {
                int qos = (flags >> 1) & 0x03;
                if (qos == 3) {
                    throw ProtocolViolation.malformed("MQTT-3.3.1-4", "PUBLISH with QoS 3");
                }
                if (qos == 0 && (flags & 0x08) != 0) {
                    throw ProtocolViolation.malformed("MQTT-3.3.1-2", "PUBLISH with QoS 0 and DUP set");
                }
            }
            case PUBREL, SUBSCRIBE, UNSUBSCRIBE -> {
                if (flags != 0x02) {
                    String specific = switch (type) {
                        case PUBREL -> "MQTT-3.6.1-1";
                        case SUBSCRIBE -> "MQTT-3.8.1-1";
                        default -> "MQTT-3.10.1-1";
                    };
                    throw ProtocolViolation.malformed(specific, type + " flags must be 0010, got " + Integer.toBinaryString(flags));
                }
            }
            default -> {
                if (flags != 0) {
                    throw ProtocolViolation.malformed(ref, type + " flags must be 0000, got " + Integer.toBinaryString(flags));
                }
            }
        }
    }

    /** Validates the body of a packet of the given type; {@code flags} are the fixed header's low nibble. */
    static void validate(MqttMessageType type, int flags, ByteBuf buf, int from, int length, MqttVersion version) {
        boolean v5 = version == MqttVersion.MQTT_5;
        FrameReader r = new FrameReader(buf, from, length, v5);
        switch (type) {
            case CONNECT -> connect(r, version);
            case PUBLISH -> publish(r, flags, v5);
            case PUBACK, PUBREC -> ack(r, v5, type == MqttMessageType.PUBACK ? Block.PUBACK : Block.PUBREC, PUB_ACK_CODES);
            case PUBREL, PUBCOMP -> ack(r, v5, type == MqttMessageType.PUBREL ? Block.PUBREL : Block.PUBCOMP, PUB_REL_CODES);
            case SUBSCRIBE -> subscribe(r, v5);
            case UNSUBSCRIBE -> unsubscribe(r, v5);
            case PINGREQ -> empty(r, "PINGREQ");
            case DISCONNECT -> disconnect(r, v5);
            case AUTH -> auth(r);
            default -> throw ProtocolViolation.protocolError(v5 ? "§2.1.2" : "§2.2.1",
                    type + " is never sent by a client");
        }
        if (r.hasRemaining()) {
            throw ProtocolViolation.malformed("§2.1.4", r.remaining() + " unexpected bytes at the end of " + type);
        }
    }

    private static void connect(FrameReader r, MqttVersion version) {
        boolean v5 = version == MqttVersion.MQTT_5;
        r.string("protocol name");
        r.u8("protocol level");
        int flags = r.u8("connect flags");
        r.u16("keep alive");
        if ((flags & 0x01) != 0 && version != MqttVersion.MQTT_3_1) {
            throw ProtocolViolation.malformed("MQTT-3.1.2-3", "CONNECT reserved flag is set");
        }
        boolean will = (flags & 0x04) != 0;
        int willQos = (flags >> 3) & 0x03;
        boolean willRetain = (flags & 0x20) != 0;
        boolean password = (flags & 0x40) != 0;
        boolean username = (flags & 0x80) != 0;
        if (willQos == 3) {
            throw ProtocolViolation.malformed(v5 ? "MQTT-3.1.2-12" : "MQTT-3.1.2-14", "Will QoS 3");
        }
        if (!will && willQos != 0) {
            throw ProtocolViolation.malformed(v5 ? "MQTT-3.1.2-11" : "MQTT-3.1.2-13", "Will QoS set without Will Flag");
        }
        if (!will && willRetain) {
            throw ProtocolViolation.malformed(v5 ? "MQTT-3.1.2-13" : "MQTT-3.1.2-15", "Will Retain set without Will Flag");
        }
        if (!v5 && password && !username) {
            throw ProtocolViolation.malformed("MQTT-3.1.2-22", "Password Flag set without User Name Flag");
        }
        if (v5) {
            Seen seen = properties(r, Block.CONNECT);
            if (seen.has(PropertyRules.RECEIVE_MAXIMUM) && seen.value(PropertyRules.RECEIVE_MAXIMUM) == 0) {
                throw ProtocolViolation.protocolError("§3.1.2.11.3", "Receive Maximum of 0");
            }
            if (seen.has(PropertyRules.MAXIMUM_PACKET_SIZE) && seen.value(PropertyRules.MAXIMUM_PACKET_SIZE) == 0) {
                throw ProtocolViolation.protocolError("§3.1.2.11.4", "Maximum Packet Size of 0");
            }
            for (int id : new int[] {PropertyRules.REQUEST_RESPONSE_INFORMATION, PropertyRules.REQUEST_PROBLEM_INFORMATION}) {
                if (seen.has(id) && seen.value(id) > 1) {
                    throw ProtocolViolation.protocolError("§3.1.2.11", PropertyRules.rule(id).name() + " other than 0 or 1");
                }
            }
            if (seen.has(PropertyRules.AUTHENTICATION_DATA) && !seen.has(PropertyRules.AUTHENTICATION_METHOD)) {
                throw ProtocolViolation.protocolError("§3.1.2.11.10", "Authentication Data without Authentication Method");
            }
        }
        r.skipString("Client Identifier");
        if (will) {
            Seen willProps = v5 ? properties(r, Block.WILL) : Seen.NONE;
            r.skipString("Will Topic");
            int payloadStart = r.position() + 2;
            int payloadLength = r.skipBinary("Will Payload");
            if (willProps.has(PropertyRules.PAYLOAD_FORMAT_INDICATOR) && willProps.value(PropertyRules.PAYLOAD_FORMAT_INDICATOR) == 1
                    && !r.isUtf8(payloadStart, payloadLength)) {
                throw new ProtocolViolation(ProtocolViolation.PAYLOAD_FORMAT_INVALID, "MQTT-3.1.3-11",
                        "Will Payload is not UTF-8 although its Payload Format Indicator says so");
            }
        }
        if (username) {
            r.skipString("User Name");
        }
        if (password) {
            r.skipBinary("Password");
        }
    }

    private static void publish(FrameReader r, int flags, boolean v5) {
        int qos = (flags >> 1) & 0x03;
        int topicStart = r.position() + 2;
        r.skipString("Topic Name");
        if (r.containsWildcard(topicStart, r.position() - topicStart)) {
            throw new ProtocolViolation(ProtocolViolation.TOPIC_NAME_INVALID, "MQTT-3.3.2-2", "Topic Name contains a wildcard");
        }
        boolean emptyTopic = r.position() == topicStart;
        if (qos > 0 && r.u16("Packet Identifier") == 0) {
            throw ProtocolViolation.malformed(v5 ? "MQTT-2.2.1-3" : "MQTT-2.3.1-1", "PUBLISH with Packet Identifier 0");
        }
        if (!v5 && emptyTopic) {
            throw ProtocolViolation.malformed("MQTT-4.7.3-1", "empty Topic Name");
        }
        if (v5) {
            Seen seen = properties(r, Block.PUBLISH);
            if (emptyTopic && !seen.has(PropertyRules.TOPIC_ALIAS)) {
                throw ProtocolViolation.protocolError("§3.3.2.1", "empty Topic Name without a Topic Alias");
            }
            if (seen.has(PropertyRules.SUBSCRIPTION_IDENTIFIER)) {
                throw ProtocolViolation.protocolError("MQTT-3.3.4-6", "a client's PUBLISH must not carry a Subscription Identifier");
            }
            if (seen.has(PropertyRules.PAYLOAD_FORMAT_INDICATOR)) {
                long indicator = seen.value(PropertyRules.PAYLOAD_FORMAT_INDICATOR);
                if (indicator > 1) {
                    throw ProtocolViolation.protocolError("§3.3.2.3.2", "Payload Format Indicator " + indicator);
                }
                if (indicator == 1 && !r.isUtf8(r.position(), r.remaining())) {
                    throw new ProtocolViolation(ProtocolViolation.PAYLOAD_FORMAT_INVALID, "MQTT-3.3.2-4",
                            "payload is not UTF-8 although its Payload Format Indicator says so");
                }
            }
        }
        r.skip(r.remaining(), "payload");
    }

    private static final int[] PUB_ACK_CODES = {0x00, 0x10, 0x80, 0x83, 0x87, 0x90, 0x91, 0x97, 0x99};
    private static final int[] PUB_REL_CODES = {0x00, 0x92};
    private static final int[] DISCONNECT_CODES = {0x00, 0x04, 0x80, 0x81, 0x82, 0x83, 0x87, 0x89, 0x8B, 0x8D,
        0x8E, 0x8F, 0x90, 0x93, 0x94, 0x95, 0x96, 0x97, 0x98, 0x99, 0x9A, 0x9B, 0x9C, 0x9D, 0x9E, 0x9F, 0xA0, 0xA1, 0xA2};
    private static final int[] AUTH_CODES = {0x00, 0x18, 0x19};

    private static void ack(FrameReader r, boolean v5, Block block, int[] codes) {
        if (r.u16("Packet Identifier") == 0) {
            throw ProtocolViolation.malformed(v5 ? "MQTT-2.2.1-3" : "MQTT-2.3.1-1", block + " with Packet Identifier 0");
        }
        if (!v5 || !r.hasRemaining()) {
            return;
        }
        reasonCode(r, block, codes);
        if (r.hasRemaining()) {
            properties(r, block);
        }
    }

    private static void reasonCode(FrameReader r, Block block, int[] allowed) {
        int code = r.u8("Reason Code");
        for (int a : allowed) {
            if (a == code) {
                return;
            }
        }
        throw ProtocolViolation.malformed("§2.4", String.format("0x%02X is not a %s Reason Code", code, block));
    }

    private static void subscribe(FrameReader r, boolean v5) {
        if (r.u16("Packet Identifier") == 0) {
            throw ProtocolViolation.malformed(v5 ? "MQTT-2.2.1-3" : "MQTT-2.3.1-1", "SUBSCRIBE with Packet Identifier 0");
        }
        if (v5) {
            Seen seen = properties(r, Block.SUBSCRIBE);
            if (seen.has(PropertyRules.SUBSCRIPTION_IDENTIFIER) && seen.value(PropertyRules.SUBSCRIPTION_IDENTIFIER) == 0) {
                throw ProtocolViolation.protocolError("§3.8.2.1.2", "Subscription Identifier of 0");
            }
        }
        if (!r.hasRemaining()) {
            throw ProtocolViolation.protocolError(v5 ? "MQTT-3.8.3-2" : "MQTT-3.8.3-3", "SUBSCRIBE without a Topic Filter");
        }
        while (r.hasRemaining()) {
            r.skipString("Topic Filter");
            int options = r.u8("Subscription Options");
            if ((options & 0x03) == 3) {
                throw ProtocolViolation.malformed(v5 ? "§3.8.3.1" : "MQTT-3.8.3-4", "subscription with QoS 3");
            }
            if (v5) {
                if ((options & 0xC0) != 0) {
                    throw ProtocolViolation.malformed("MQTT-3.8.3-5", "reserved bits of Subscription Options are set");
                }
                if (((options >> 4) & 0x03) == 3) {
                    throw ProtocolViolation.protocolError("§3.8.3.1", "Retain Handling 3");
                }
            } else if ((options & 0xFC) != 0) {
                throw ProtocolViolation.malformed("MQTT-3.8.3-4", "reserved bits of the requested QoS byte are set");
            }
        }
    }

    private static void unsubscribe(FrameReader r, boolean v5) {
        if (r.u16("Packet Identifier") == 0) {
            throw ProtocolViolation.malformed(v5 ? "MQTT-2.2.1-3" : "MQTT-2.3.1-1", "UNSUBSCRIBE with Packet Identifier 0");
        }
        if (v5) {
            properties(r, Block.UNSUBSCRIBE);
        }
        if (!r.hasRemaining()) {
            throw ProtocolViolation.protocolError("MQTT-3.10.3-2", "UNSUBSCRIBE without a Topic Filter");
        }
        while (r.hasRemaining()) {
            r.skipString("Topic Filter");
        }
    }

    private static void empty(FrameReader r, String what) {
        if (r.hasRemaining()) {
            throw ProtocolViolation.malformed("§3.12.1", what + " has a Remaining Length of " + r.remaining());
        }
    }

    private static void disconnect(FrameReader r, boolean v5) {
        if (!v5) {
            empty(r, "DISCONNECT");
            return;
        }
        if (!r.hasRemaining()) {
            return;
        }
        reasonCode(r, Block.DISCONNECT, DISCONNECT_CODES);
        if (r.hasRemaining()) {
            Seen seen = properties(r, Block.DISCONNECT);
            if (seen.has(PropertyRules.SERVER_REFERENCE)) {
                throw ProtocolViolation.protocolError("§3.14.2.2.5", "a client's DISCONNECT must not carry a Server Reference");
            }
        }
    }

    private static void auth(FrameReader r) {
        if (!r.hasRemaining()) {
            return;
        }
        reasonCode(r, Block.AUTH, AUTH_CODES);
        if (r.hasRemaining()) {
            properties(r, Block.AUTH);
        }
    }

    /** Reads a property block, checking identifier, type, placement, duplicates. */
    static Seen properties(FrameReader r, Block block) {
        int length = r.varInt("Property Length");
        if (length > r.remaining()) {
            throw ProtocolViolation.malformed("§2.2.2.1", "Property Length " + length + " exceeds the packet");
        }
        int end = r.position() + length;
        int outer = r.limit(end);
        Seen seen = new Seen();
        while (r.hasRemaining()) {
            int id = r.varInt("Property Identifier");
            Rule rule = PropertyRules.rule(id);
            if (rule == null || !rule.allowedIn(block)) {
                throw ProtocolViolation.malformed("§2.2.2.2", String.format("property 0x%02X is not valid in %s", id,
                        block == Block.WILL ? "Will Properties" : block.name()));
            }
            if (id != PropertyRules.USER_PROPERTY && seen.has(id)) {
                throw ProtocolViolation.protocolError("§2.2.2.2", rule.name() + " included more than once");
            }
            long value = switch (rule.type()) {
                case BYTE -> r.u8(rule.name());
                case TWO_BYTE -> r.u16(rule.name());
                case FOUR_BYTE -> r.u32(rule.name());
                case VARINT -> r.varInt(rule.name());
                case UTF8 -> {
                    r.skipString(rule.name());
                    yield 0;
                }
                case BINARY -> r.skipBinary(rule.name());
                case UTF8_PAIR -> {
                    r.skipString("User Property name");
                    r.skipString("User Property value");
                    yield 0;
                }
            };
            seen.put(id, value);
        }
        r.limit(outer);
        return seen;
    }

    /** Which properties a block held, and the numeric value of each. */
    static final class Seen {
        static final Seen NONE = new Seen();
        private final long[] values = new long[0x2B];
        private long present;

        void put(int id, long value) {
            present |= 1L << id;
            values[id] = value;
        }

        boolean has(int id) {
            return (present & (1L << id)) != 0;
        }

        long value(int id) {
            return values[id];
        }
    }
}
