package io.tbmq.broker.protocol;

/**
 * Set once, when the node drains: no connection sends a new QoS 1 or 2 message to a session that
 * outlives it, so that the clients can acknowledge what they have before they are told to go.
 * Node-wide, so that a connection that becomes active after the hold is held too.
 */
public final class DeliveryHold {
    private volatile boolean held;

    public void hold() {
        held = true;
    }

    public boolean held() {
        return held;
    }
}
