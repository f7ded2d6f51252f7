package io.tbmq.broker.kafka;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.errors.GroupIdNotFoundException;
import org.jboss.logging.Logger;

import io.tbmq.broker.cluster.NodeLiveness;

/**
 * Deletes the downlink topics (and consumer groups) of nodes gone for good, as after a scale-down:
 * only the caretaker acts, only on nodes whose heartbeat or leaving it has read and that are gone
 * longer than the retention (a node never heard of is one still starting: it creates its topics
 * before its first heartbeat), only while its own view of the cluster is current, and only when
 * the node's downlink consumer groups have no members: a
 * node whose heartbeats stalled (a long pause, a slow producer) but whose consumers still hold
 * their partitions is alive, and deleting its topics would lose what is routed to it. A node that
 * returns creates its topics again at start.
 */
public final class DownlinkJanitor implements Runnable {
    private static final Logger LOG = Logger.getLogger(DownlinkJanitor.class);

    private final Admin admin;
    private final KafkaTopics topics;
    private final NodeLiveness liveness;
    private final long retentionNanos;

    public DownlinkJanitor(Admin admin, KafkaTopics topics, NodeLiveness liveness, Duration retention) {
        this.admin = admin;
        this.topics = topics;
        this.liveness = liveness;
        this.retentionNanos = retention.toNanos();
    }

    @Override
    public void run() {
        if (!liveness.caughtUpOnce() || !liveness.viewIsCurrent() || !liveness.isCaretaker()) {
            return;
        }
        try {
            Set<String> names = admin.listTopics().names().get(10, TimeUnit.SECONDS);
            String basic = topics.downlinkBasic("");
            String persisted = topics.downlinkPersisted("");
            Set<String> gone = new TreeSet<>();
            for (String name : names) {
                String node = name.startsWith(basic) ? name.substring(basic.length())
                        : name.startsWith(persisted) ? name.substring(persisted.length()) : null;
                // A node never heard of is starting (it creates its topics before its first heartbeat), not gone.
                if (node != null && !node.isEmpty() && liveness.known(node) && liveness.goneForNanos(node) >= retentionNanos) {
                    gone.add(node);
                }
            }
            gone.removeIf(this::stillConsuming);
            if (gone.isEmpty()) {
                return;
            }
            List<String> doomed = new ArrayList<>();
            List<String> groups = new ArrayList<>();
            for (String node : gone) {
                doomed.add(topics.downlinkBasic(node));
                doomed.add(topics.downlinkPersisted(node));
                groups.add(topics.downlinkGroup(node) + "-basic");
                groups.add(topics.downlinkGroup(node) + "-persisted");
            }
            doomed.retainAll(names);
            admin.deleteTopics(doomed).all().get(30, TimeUnit.SECONDS);
            try {
                admin.deleteConsumerGroups(groups).all().get(10, TimeUnit.SECONDS);
            } catch (Exception e) {
                // never created, or already gone
            }
            LOG.infof("deleted the downlink topics of nodes gone for more than %d s: %s", TimeUnit.NANOSECONDS.toSeconds(retentionNanos),
                    gone);
        } catch (Exception e) {
            LOG.debugf("downlink clean-up skipped: %s", e.toString());
        }
    }

    /** True when a downlink consumer group of {@code node} still has members (or cannot be described). */
    private boolean stillConsuming(String node) {
        List<String> groups = List.of(topics.downlinkGroup(node) + "-basic", topics.downlinkGroup(node) + "-persisted");
        Map<String, KafkaFuture<ConsumerGroupDescription>> described = admin.describeConsumerGroups(groups).describedGroups();
        for (Map.Entry<String, KafkaFuture<ConsumerGroupDescription>> group : described.entrySet()) {
            try {
                if (!group.getValue().get(10, TimeUnit.SECONDS).members().isEmpty()) {
                    LOG.warnf("node %s sent no heartbeat for %d s but its downlink consumers are still members of %s; keeping its topics",
                            node, TimeUnit.NANOSECONDS.toSeconds(liveness.goneForNanos(node)), group.getKey());
                    return true;
                }
            } catch (Exception e) {
                if (!(e.getCause() instanceof GroupIdNotFoundException)) {
                    LOG.debugf("could not describe %s (%s); keeping the topics of %s for now", group.getKey(), e.toString(), node);
                    return true;
                }
            }
        }
        return false;
    }
}
