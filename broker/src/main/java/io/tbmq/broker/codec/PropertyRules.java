package io.tbmq.broker.codec;

import java.util.HashMap;
import java.util.Map;

/**
 * The MQTT 5 property table (§2.2.2.2): each identifier's data type and the packets it may
 * appear in. An identifier not valid for its packet is a malformed packet; one that appears twice
 * (User Property aside) is a protocol error.
 */
final class PropertyRules {
    enum Type { BYTE, TWO_BYTE, FOUR_BYTE, VARINT, UTF8, BINARY, UTF8_PAIR }

    /** Where a property block sits; WILL is the will properties of CONNECT's payload. */
    enum Block { CONNECT, WILL, PUBLISH, PUBACK, PUBREC, PUBREL, PUBCOMP, SUBSCRIBE, UNSUBSCRIBE, DISCONNECT, AUTH }

    record Rule(int id, String name, Type type, Block... blocks) {
        boolean allowedIn(Block block) {
            for (Block b : blocks) {
                if (b == block) {
                    return true;
                }
            }
            return false;
        }
    }

    static final int PAYLOAD_FORMAT_INDICATOR = 0x01;
    static final int MESSAGE_EXPIRY_INTERVAL = 0x02;
    static final int CONTENT_TYPE = 0x03;
    static final int RESPONSE_TOPIC = 0x08;
    static final int CORRELATION_DATA = 0x09;
    static final int SUBSCRIPTION_IDENTIFIER = 0x0B;
    static final int SESSION_EXPIRY_INTERVAL = 0x11;
    static final int AUTHENTICATION_METHOD = 0x15;
    static final int AUTHENTICATION_DATA = 0x16;
    static final int REQUEST_PROBLEM_INFORMATION = 0x17;
    static final int WILL_DELAY_INTERVAL = 0x18;
    static final int REQUEST_RESPONSE_INFORMATION = 0x19;
    static final int SERVER_REFERENCE = 0x1C;
    static final int REASON_STRING = 0x1F;
    static final int RECEIVE_MAXIMUM = 0x21;
    static final int TOPIC_ALIAS_MAXIMUM = 0x22;
    static final int TOPIC_ALIAS = 0x23;
    static final int USER_PROPERTY = 0x26;
    static final int MAXIMUM_PACKET_SIZE = 0x27;

    private static final Map<Integer, Rule> RULES = new HashMap<>();

    static {
        add(PAYLOAD_FORMAT_INDICATOR, "Payload Format Indicator", Type.BYTE, Block.PUBLISH, Block.WILL);
        add(MESSAGE_EXPIRY_INTERVAL, "Message Expiry Interval", Type.FOUR_BYTE, Block.PUBLISH, Block.WILL);
        add(CONTENT_TYPE, "Content Type", Type.UTF8, Block.PUBLISH, Block.WILL);
        add(RESPONSE_TOPIC, "Response Topic", Type.UTF8, Block.PUBLISH, Block.WILL);
        add(CORRELATION_DATA, "Correlation Data", Type.BINARY, Block.PUBLISH, Block.WILL);
        add(SUBSCRIPTION_IDENTIFIER, "Subscription Identifier", Type.VARINT, Block.PUBLISH, Block.SUBSCRIBE);
        add(SESSION_EXPIRY_INTERVAL, "Session Expiry Interval", Type.FOUR_BYTE, Block.CONNECT, Block.DISCONNECT);
        add(0x12, "Assigned Client Identifier", Type.UTF8);
        add(0x13, "Server Keep Alive", Type.TWO_BYTE);
        add(AUTHENTICATION_METHOD, "Authentication Method", Type.UTF8, Block.CONNECT, Block.AUTH);
        add(AUTHENTICATION_DATA, "Authentication Data", Type.BINARY, Block.CONNECT, Block.AUTH);
        add(REQUEST_PROBLEM_INFORMATION, "Request Problem Information", Type.BYTE, Block.CONNECT);
        add(WILL_DELAY_INTERVAL, "Will Delay Interval", Type.FOUR_BYTE, Block.WILL);
        add(REQUEST_RESPONSE_INFORMATION, "Request Response Information", Type.BYTE, Block.CONNECT);
        add(0x1A, "Response Information", Type.UTF8);
        add(SERVER_REFERENCE, "Server Reference", Type.UTF8, Block.DISCONNECT);
        add(REASON_STRING, "Reason String", Type.UTF8, Block.PUBACK, Block.PUBREC, Block.PUBREL, Block.PUBCOMP,
                Block.DISCONNECT, Block.AUTH);
        add(RECEIVE_MAXIMUM, "Receive Maximum", Type.TWO_BYTE, Block.CONNECT);
        add(TOPIC_ALIAS_MAXIMUM, "Topic Alias Maximum", Type.TWO_BYTE, Block.CONNECT);
        add(TOPIC_ALIAS, "Topic Alias", Type.TWO_BYTE, Block.PUBLISH);
        add(0x24, "Maximum QoS", Type.BYTE);
        add(0x25, "Retain Available", Type.BYTE);
        add(USER_PROPERTY, "User Property", Type.UTF8_PAIR, Block.values());
        add(MAXIMUM_PACKET_SIZE, "Maximum Packet Size", Type.FOUR_BYTE, Block.CONNECT);
        add(0x28, "Wildcard Subscription Available", Type.BYTE);
        add(0x29, "Subscription Identifier Available", Type.BYTE);
        add(0x2A, "Shared Subscription Available", Type.BYTE);
    }

    private PropertyRules() {
    }

    private static void add(int id, String name, Type type, Block... blocks) {
        RULES.put(id, new Rule(id, name, type, blocks));
    }

    static Rule rule(int id) {
        return RULES.get(id);
    }
}
