package io.tbmq.broker.testing;

import io.tbmq.broker.record.OutboundMessage;
import io.tbmq.broker.session.DeliverySink;

/**
 * A connection as session tests need it: always writable, a task runs at once on the caller's
 * thread, every PUBLISH is accepted. Tests override what they record or drive.
 */
public class TestSink implements DeliverySink {
    private final int window;

    public TestSink() {
        this(100);
    }

    public TestSink(int window) {
        this.window = window;
    }

    @Override
    public void execute(Runnable task) {
        task.run();
    }

    @Override
    public void scheduleDrain() {
    }

    @Override
    public boolean isWritable() {
        return true;
    }

    @Override
    public int sendWindow() {
        return window;
    }

    @Override
    public boolean writePublish(OutboundMessage message, int packetId, boolean dup) {
        return true;
    }

    @Override
    public void writePubrel(int packetId) {
    }

    @Override
    public void flush() {
    }

    @Override
    public void takenOver(boolean successorCleanStart) {
    }

    @Override
    public void disconnectedByAdmin() {
    }
}
