package io.tbmq.broker.kafka;

import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewPartitions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.errors.TopicExistsException;
import org.jboss.logging.Logger;

/**
 * Makes sure a topic exists with at least the configured partitions. Partitions only ever grow:
 * fewer configured than existing is left alone (shrinking would reorder keys).
 */
public final class TopicProvisioner {
    private static final Logger LOG = Logger.getLogger(TopicProvisioner.class);
    private final Admin admin;

    public TopicProvisioner(Admin admin) {
        this.admin = admin;
    }

    public void ensure(String topic, int partitions, short replicationFactor, Map<String, String> configs)
            throws InterruptedException, ExecutionException, TimeoutException {
        Set<String> existing = admin.listTopics().names().get(10, TimeUnit.SECONDS);
        if (!existing.contains(topic)) {
            try {
                admin.createTopics(List.of(new NewTopic(topic, partitions, replicationFactor).configs(configs)))
                        .all().get(30, TimeUnit.SECONDS);
                LOG.infof("created topic %s with %d partitions", topic, partitions);
                return;
            } catch (ExecutionException e) {
                if (!(e.getCause() instanceof TopicExistsException)) {
                    throw e;
                }
            }
        }
        TopicDescription description = admin.describeTopics(List.of(topic)).allTopicNames().get(10, TimeUnit.SECONDS).get(topic);
        int current = description.partitions().size();
        if (current < partitions) {
            admin.createPartitions(Map.of(topic, NewPartitions.increaseTo(partitions))).all().get(30, TimeUnit.SECONDS);
            LOG.infof("raised partitions of %s from %d to %d", topic, current, partitions);
        } else if (current > partitions) {
            LOG.infof("topic %s has %d partitions, more than the %d configured; partitions never shrink", topic, current, partitions);
        }
    }
}
