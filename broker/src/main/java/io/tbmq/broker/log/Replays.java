package io.tbmq.broker.log;

/** Which records a predecessor that did not hand over cleanly may have processed already. */
public interface Replays {
    Replays NONE = (partition, offset) -> false;

    boolean possible(int partition, long offset);
}
