package io.tbmq.broker.record;

import java.nio.charset.StandardCharsets;

/**
 * A node's heartbeat in tbmq.cluster.nodes: when it was sent (the writer's clock: a move reported
 * in an old heartbeat is not believed) and, while the node moves topics to partitions tbmq.msg.all
 * gained, from how many partitions to how many. A node that starts during such a move joins it.
 *
 * <p>Text: {@code <millis>}, or {@code <millis> moving <from> <to>}. Brokers of earlier versions
 * wrote the millis alone and read nothing of the value, so both ways round a rolling upgrade works.
 *
 * @param movingFrom partitions before the growth the node is moving for, or 0 when it is not moving
 * @param movingTo partitions after it, or 0
 */
public record NodeHeartbeat(long sentAtMillis, int movingFrom, int movingTo) {
    private static final String MOVING = "moving";
    private static final java.util.regex.Pattern SPACES = java.util.regex.Pattern.compile(" +");

    public static NodeHeartbeat idle(long sentAtMillis) {
        return new NodeHeartbeat(sentAtMillis, 0, 0);
    }

    public boolean moving() {
        return movingFrom > 0 && movingTo > movingFrom;
    }

    public byte[] encode() {
        String text = moving() ? sentAtMillis + " " + MOVING + " " + movingFrom + " " + movingTo : Long.toString(sentAtMillis);
        return text.getBytes(StandardCharsets.UTF_8);
    }

    /** Reads what it can: a value it does not understand is a heartbeat all the same, of a node not moving. */
    public static NodeHeartbeat decode(byte[] value) {
        String[] parts = SPACES.split(new String(value, StandardCharsets.UTF_8).trim());
        long sentAt = 0;
        try {
            sentAt = Long.parseLong(parts[0]);
            // Fields a later version may add go after these.
            if (parts.length >= 4 && parts[1].equals(MOVING)) {
                NodeHeartbeat moving = new NodeHeartbeat(sentAt, Integer.parseInt(parts[2]), Integer.parseInt(parts[3]));
                if (moving.moving()) {
                    return moving;
                }
            }
        } catch (NumberFormatException e) {
            // a heartbeat written by something else: its node is alive, and not moving as far as this node knows
        }
        return idle(sentAt);
    }
}
