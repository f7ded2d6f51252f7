package io.tbmq.broker.protocol;

import java.util.ArrayDeque;

import io.netty.handler.codec.mqtt.MqttMessageType;
import io.netty.handler.codec.mqtt.MqttProperties;

/**
 * Sends PUBACKs and PUBRECs in the order their PUBLISHes arrived [MQTT-4.6.0-2, MQTT-4.6.0-3],
 * although Kafka acknowledges messages of different topics (partitions) in any order: each
 * QoS 1/2 PUBLISH reserves a slot, and acks leave only from the head of the queue. Event loop only.
 */
final class InboundAcks {
    private final Connection connection;
    private final ArrayDeque<Slot> slots = new ArrayDeque<>();

    static final class Slot {
        final int packetId;
        final int qos;
        boolean done;
        int reasonCode;
        String reason;

        Slot(int packetId, int qos) {
            this.packetId = packetId;
            this.qos = qos;
        }
    }

    InboundAcks(Connection connection) {
        this.connection = connection;
    }

    Slot reserve(int packetId, int qos) {
        Slot slot = new Slot(packetId, qos);
        slots.add(slot);
        return slot;
    }

    /** Completes a slot (reason 0 = accepted) and sends every ack that is now at the head. */
    void complete(Slot slot, int reasonCode, String reason) {
        slot.done = true;
        slot.reasonCode = reasonCode;
        slot.reason = reason;
        boolean wrote = false;
        while (!slots.isEmpty() && slots.peek().done) {
            Slot head = slots.poll();
            MqttMessageType type = head.qos == 1 ? MqttMessageType.PUBACK : MqttMessageType.PUBREC;
            // Packet id and reason code before the properties.
            MqttProperties props = connection.problemInformation(head.reason, 3);
            connection.write(Packets.ack(type, head.packetId, connection.isV5() ? head.reasonCode : 0, props));
            connection.inboundAcked(head.qos, head.reasonCode, head.packetId);
            wrote = true;
        }
        if (wrote) {
            connection.flush();
            connection.logAcknowledged();
        }
    }

    int pending() {
        return slots.size();
    }
}
