package io.tbmq.broker.app;

import io.tbmq.broker.retain.RetainedReplication;
import io.tbmq.broker.routing.Destinations;
import io.tbmq.broker.session.RemoteSessions;
import io.tbmq.broker.session.SessionJournal;

/**
 * What ties a node's core to the other nodes, all through Kafka: where routed copies go, where the
 * node announces its sessions and its retained messages, and the sessions the others hold.
 */
public record ClusterLinks(Destinations destinations, SessionJournal journal, RetainedReplication replication,
        RemoteSessions remote) {

    /** A node alone, its log in process: every message is delivered here (the unit tests' broker). */
    public static final ClusterLinks SINGLE_NODE = new ClusterLinks(Destinations.NONE, SessionJournal.NONE,
            RetainedReplication.NONE, RemoteSessions.NONE);
}
