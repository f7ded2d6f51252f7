package io.tbmq.broker.record;

import java.nio.charset.StandardCharsets;

/**
 * A node's heartbeat in tbmq.cluster.nodes: when it was sent (the writer's clock: a move reported
 * in an old heartbeat is not believed), while the node moves topics to partitions tbmq.msg.all
 * gained, from how many partitions to how many (a node that starts during such a move joins it),
 * which process sent it, so that two processes given one node id can tell each other apart, and
 * whether that process is still starting: alive (its sessions are not adopted), but not yet the
 * caretaker of dead nodes' sessions, and which cluster the node belongs to, so that a second cluster
 * given the same Kafka topics is told apart.
 *
 * <p>Text: {@code <millis>}, then {@code moving <from> <to>} during a move, then {@code incarnation <id>},
 * then {@code pod <uid>} under Kubernetes, then {@code phase starting} while the node starts, then
 * {@code cluster <name>} where the cluster is named (the operator names it namespace/name). Brokers
 * of earlier versions wrote the millis and the move alone, read the move only from the second to
 * the fourth field, and skip fields they do not know, so both ways round a rolling upgrade works (an
 * earlier version takes a starting node for a running one, and one with the lowest id for the
 * caretaker).
 *
 * @param movingFrom partitions before the growth the node is moving for, or 0 when it is not moving
 * @param movingTo partitions after it, or 0
 * @param incarnation the sending process's id, chosen at its start; null from brokers of earlier versions
 * @param pod the UID of the Kubernetes pod the sending process runs in; null outside Kubernetes and from
 *     brokers of earlier versions
 * @param starting whether the sending process is still starting (it sends heartbeats from the moment it
 *     claims its node id, before it has read its sessions)
 * @param cluster the name of the cluster the sending node belongs to (tbmq.cluster.name); null where it is
 *     not named and from brokers of earlier versions
 */
public record NodeHeartbeat(long sentAtMillis, int movingFrom, int movingTo, String incarnation, String pod, boolean starting,
        String cluster) {
    private static final String MOVING = "moving";
    private static final String INCARNATION = "incarnation";
    private static final String POD = "pod";
    private static final String PHASE = "phase";
    private static final String STARTING = "starting";
    private static final String CLUSTER = "cluster";
    private static final java.util.regex.Pattern SPACES = java.util.regex.Pattern.compile(" +");

    public NodeHeartbeat(long sentAtMillis, int movingFrom, int movingTo) {
        this(sentAtMillis, movingFrom, movingTo, null, null, false, null);
    }

    public static NodeHeartbeat idle(long sentAtMillis) {
        return new NodeHeartbeat(sentAtMillis, 0, 0);
    }

    /** This heartbeat as sent by the process {@code id} (letters and digits, no spaces). */
    public NodeHeartbeat from(String id) {
        return new NodeHeartbeat(sentAtMillis, movingFrom, movingTo, id, pod, starting, cluster);
    }

    /** This heartbeat as sent from the Kubernetes pod {@code uid} (no spaces), or from no pod when null. */
    public NodeHeartbeat inPod(String uid) {
        return new NodeHeartbeat(sentAtMillis, movingFrom, movingTo, incarnation, uid, starting, cluster);
    }

    /** This heartbeat as sent by a process that is still starting. */
    public NodeHeartbeat whileStarting() {
        return new NodeHeartbeat(sentAtMillis, movingFrom, movingTo, incarnation, pod, true, cluster);
    }

    /** This heartbeat as sent by a node of the cluster {@code name} (no spaces), or of an unnamed one when null. */
    public NodeHeartbeat ofCluster(String name) {
        return new NodeHeartbeat(sentAtMillis, movingFrom, movingTo, incarnation, pod, starting, name);
    }

    public boolean moving() {
        return movingFrom > 0 && movingTo > movingFrom;
    }

    public byte[] encode() {
        StringBuilder text = new StringBuilder().append(sentAtMillis);
        if (moving()) {
            text.append(' ').append(MOVING).append(' ').append(movingFrom).append(' ').append(movingTo);
        }
        if (incarnation != null) {
            text.append(' ').append(INCARNATION).append(' ').append(incarnation);
        }
        if (pod != null) {
            text.append(' ').append(POD).append(' ').append(pod);
        }
        if (starting) {
            text.append(' ').append(PHASE).append(' ').append(STARTING);
        }
        if (cluster != null) {
            text.append(' ').append(CLUSTER).append(' ').append(cluster);
        }
        return text.toString().getBytes(StandardCharsets.UTF_8);
    }

    /** Reads what it can: a value it does not understand is a heartbeat all the same, of a node not moving. */
    public static NodeHeartbeat decode(byte[] value) {
        String[] parts = SPACES.split(new String(value, StandardCharsets.UTF_8).trim());
        long sentAt = 0;
        int from = 0;
        int to = 0;
        String incarnation = null;
        String pod = null;
        boolean starting = false;
        String cluster = null;
        try {
            sentAt = Long.parseLong(parts[0]);
        } catch (NumberFormatException e) {
            // a heartbeat written by something else: its node is alive, and not moving as far as this node knows
        }
        // Fields a later version may add go after these, each a name and its value.
        for (int i = 1; i + 1 < parts.length; i++) {
            if (parts[i].equals(MOVING) && i == 1 && parts.length >= 4) {
                try {
                    from = Integer.parseInt(parts[2]);
                    to = Integer.parseInt(parts[3]);
                } catch (NumberFormatException e) {
                    from = 0;
                    to = 0;
                }
                i = 3;
            } else if (parts[i].equals(INCARNATION)) {
                incarnation = parts[++i];
            } else if (parts[i].equals(POD)) {
                pod = parts[++i];
            } else if (parts[i].equals(PHASE)) {
                starting = parts[++i].equals(STARTING);
            } else if (parts[i].equals(CLUSTER)) {
                cluster = parts[++i];
            }
        }
        NodeHeartbeat heartbeat = new NodeHeartbeat(sentAt, from, to, incarnation, pod, starting, cluster);
        return heartbeat.moving() ? heartbeat : new NodeHeartbeat(sentAt, 0, 0, incarnation, pod, starting, cluster);
    }
}
