package io.tbmq.broker.session;

import io.tbmq.broker.record.OutboundMessage;

/**
 * Where a session's messages go while its client is connected: the connection. All calls but
 * {@link #scheduleDrain()} happen on the connection's event loop.
 */
public interface DeliverySink {

    /** Asks for {@link Session#drain(DeliverySink)} to run soon on the connection's event loop; safe from any thread. */
    void scheduleDrain();

    /** Runs {@code task} on the connection's event loop; safe from any thread. */
    void execute(Runnable task);

    /** False while the socket's outbound buffer is above its high-water mark: stop writing. */
    boolean isWritable();

    /** QoS 1 and 2 messages that may be unacknowledged at once (the client's Receive Maximum, capped). */
    int sendWindow();

    /** Writes one PUBLISH without flushing; returns false when it was too large for the client and was dropped. */
    boolean writePublish(OutboundMessage message, int packetId, boolean dup);

    void writePubrel(int packetId);

    void flush();

    /**
     * Another connection with the same client id took the session over: send DISCONNECT 0x8E
     * (v5) and close [MQTT-3.1.4-3]. {@code successorCleanStart} decides the fate of this
     * connection's Will (§3.1.2.5).
     */
    void takenOver(boolean successorCleanStart);

    /** An administrator disconnects the client: DISCONNECT 0x98 Administrative action (v5), then close. */
    void disconnectedByAdmin();
}
