package io.tbmq.broker.codec;

import java.util.List;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.ByteToMessageDecoder;
import io.netty.handler.codec.mqtt.MqttMessageType;
import io.netty.handler.codec.mqtt.MqttVersion;
import io.netty.util.AttributeKey;

/**
 * First stage of the inbound pipeline: cuts the byte stream into whole MQTT packets and refuses
 * any packet that breaks the wire rules before Netty's {@code MqttDecoder} sees it.
 *
 * <p>The Remaining Length is checked against the broker's Maximum Packet Size as soon as the
 * fixed header is readable, so an oversized packet is refused without buffering its body. After
 * the first refusal the stage emits one {@link InvalidPacket} and discards all further input:
 * the connection is about to be closed, and a decoder must never resynchronise on hostile bytes.
 */
public final class MqttFrameValidator extends ByteToMessageDecoder {
    /** The attribute Netty's MQTT codec keeps the protocol version in; shared so both agree. */
    public static final AttributeKey<MqttVersion> VERSION = AttributeKey.valueOf("NETTY_CODEC_MQTT_VERSION");

    private final int maxPacketSize;
    private MqttVersion version;
    private boolean failed;

    public MqttFrameValidator(int maxPacketSize) {
        this.maxPacketSize = maxPacketSize;
    }

    @Override
    protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
        if (failed) {
            in.skipBytes(in.readableBytes());
            return;
        }
        int start = in.readerIndex();
        int readable = in.readableBytes();
        if (readable < 2) {
            return;
        }
        int byte1 = in.getUnsignedByte(start);
        boolean first = version == null;
        int typeValue = byte1 >> 4;
        MqttMessageType type = typeValue == 0 ? null : MqttMessageType.valueOf(typeValue);
        try {
            if (type == null) {
                throw ProtocolViolation.malformed(version == MqttVersion.MQTT_5 ? "MQTT-2.1.3-1" : "MQTT-2.2.1-1",
                        "packet type 0 is reserved");
            }
            if (version == null && type != MqttMessageType.CONNECT) {
                throw ProtocolViolation.protocolError("MQTT-3.1.0-1", "first packet is " + type + ", not CONNECT");
            }
            if (version != null && type == MqttMessageType.CONNECT) {
                throw ProtocolViolation.protocolError("MQTT-3.1.0-2", "second CONNECT on one connection");
            }
            if (type == MqttMessageType.AUTH && version != null && version != MqttVersion.MQTT_5) {
                throw ProtocolViolation.malformed("MQTT-2.2.1-1", "AUTH does not exist before MQTT 5");
            }
            if (version != null) {
                PacketValidator.checkFlags(type, byte1 & 0x0F, version);
            } else if ((byte1 & 0x0F) != 0) {
                throw ProtocolViolation.malformed("MQTT-2.2.2-2", "CONNECT flags must be 0000");
            }

            int remaining = 0;
            int shift = 0;
            int lengthBytes = 0;
            int digit;
            do {
                if (lengthBytes == 4) {
                    throw ProtocolViolation.malformed("§1.5.5", "Remaining Length longer than four bytes");
                }
                if (1 + lengthBytes >= readable) {
                    return;
                }
                digit = in.getUnsignedByte(start + 1 + lengthBytes);
                remaining |= (digit & 0x7F) << shift;
                shift += 7;
                lengthBytes++;
            } while ((digit & 0x80) != 0);
            if (lengthBytes > 1 && digit == 0) {
                throw ProtocolViolation.malformed("MQTT-1.5.5-1", "Remaining Length not minimally encoded");
            }
            int headerLength = 1 + lengthBytes;
            long total = (long) headerLength + remaining;
            if (total > maxPacketSize) {
                throw new ProtocolViolation(ProtocolViolation.PACKET_TOO_LARGE, "MQTT-3.2.2-15",
                        "packet of " + total + " bytes exceeds the Maximum Packet Size " + maxPacketSize);
            }
            if (readable < total) {
                return;
            }
            int bodyStart = start + headerLength;
            if (type == MqttMessageType.CONNECT) {
                MqttVersion requested = PacketValidator.connectVersion(in, bodyStart, remaining);
                // Known from here on even if the rest is refused: the answer must be in this version.
                version = requested;
                ctx.channel().attr(VERSION).set(requested);
            }
            PacketValidator.validate(type, byte1 & 0x0F, in, bodyStart, remaining, version);
            out.add(in.readRetainedSlice((int) total));
        } catch (ProtocolViolation violation) {
            failed = true;
            in.skipBytes(in.readableBytes());
            out.add(new InvalidPacket(violation, type, version, first));
        }
    }

    /** The negotiated protocol version, or null before CONNECT. */
    public MqttVersion version() {
        return version;
    }
}
