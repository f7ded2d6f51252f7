package io.tbmq.broker.kafka;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.jboss.logging.Logger;

import io.tbmq.broker.cluster.NodeLiveness;

/**
 * Deletes the downlink topics (and consumer groups) of nodes gone for good, as after a scale-down:
 * only the caretaker acts, only on nodes gone longer than the retention, and only while its own
 * view of the cluster is current. A node that returns creates its topics again at start.
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
                if (node != null && !node.isEmpty() && liveness.goneForNanos(node) >= retentionNanos) {
                    gone.add(node);
                }
            }
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
}
