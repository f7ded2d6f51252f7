package io.tbmq.broker.codec;

/**
 * A packet the broker refuses: the MQTT 5 reason code to answer with (0x81 malformed, 0x82
 * protocol error, 0x95 too large, ...) and the normative statement it breaks. Thrown often by
 * hostile input, so it carries no stack trace.
 */
public final class ProtocolViolation extends RuntimeException {
    public static final int MALFORMED = 0x81;
    public static final int PROTOCOL_ERROR = 0x82;
    public static final int PACKET_TOO_LARGE = 0x95;
    public static final int TOPIC_ALIAS_INVALID = 0x94;
    public static final int TOPIC_NAME_INVALID = 0x90;
    public static final int RECEIVE_MAXIMUM_EXCEEDED = 0x93;
    public static final int PAYLOAD_FORMAT_INVALID = 0x99;
    /** Sentinel: the CONNECT names a protocol version this broker does not speak. */
    public static final int UNSUPPORTED_PROTOCOL_VERSION = 0x84;

    private final int reasonCode;
    private final String specRef;

    public ProtocolViolation(int reasonCode, String specRef, String message) {
        super(message, null, false, false);
        this.reasonCode = reasonCode;
        this.specRef = specRef;
    }

    public static ProtocolViolation malformed(String specRef, String message) {
        return new ProtocolViolation(MALFORMED, specRef, message);
    }

    public static ProtocolViolation protocolError(String specRef, String message) {
        return new ProtocolViolation(PROTOCOL_ERROR, specRef, message);
    }

    public int reasonCode() {
        return reasonCode;
    }

    public String specRef() {
        return specRef;
    }

    @Override
    public String toString() {
        return String.format("0x%02X %s: %s", reasonCode, specRef, getMessage());
    }
}
