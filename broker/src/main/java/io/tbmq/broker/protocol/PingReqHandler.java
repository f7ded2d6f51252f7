package io.tbmq.broker.protocol;

/** PINGREQ (§3.12): answered with PINGRESP [MQTT-3.12.4-1]; its arrival already reset the keep-alive timer. */
final class PingReqHandler {

    void handle(Connection c) {
        c.writeAndFlush(Packets.PINGRESP);
    }
}
