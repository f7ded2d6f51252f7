package io.tbmq.operator.provision;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

import org.jboss.logging.Logger;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.tbmq.operator.api.TbmqCluster;
import io.tbmq.operator.desired.BrokerModel;
import io.tbmq.operator.desired.Labels;
import io.tbmq.operator.desired.Names;
import io.tbmq.operator.desired.RedisModel;
import io.tbmq.operator.redis.RedisClusterAdmin;
import io.tbmq.operator.redis.RedisNode;
import io.tbmq.operator.users.PasswordHash;

/**
 * A change of the managed Redis's password, carried out with no moment in which Redis refuses a
 * broker. The user's Secret says what the password should be; the operator's copy
 * ({@link Names#redisPassword()}) what the pods and brokers run with. A change goes in steps: every
 * node accepts the new password beside the old one (Redis 6's ACL), then the copy names the new one
 * and its generation goes up, which rolls the brokers onto it; once no broker pod of an older
 * generation is left and every Redis pod runs the current template, every node accepts the new one
 * only.
 */
final class RedisPasswordRotation {
    private static final Logger LOG = Logger.getLogger(RedisPasswordRotation.class);
    /** As the previous password: none, as pods made before the managed Redis always had a password ran. */
    static final String NONE = "";

    /**
     * What the spec asks for; what the pods and brokers were given, with its generation (the brokers'
     * pod template carries it); and the one still accepted for brokers not restarted yet.
     */
    record Passwords(String desired, String applied, String previous, long generation) {
        /** The passwords a node may take, the likeliest first; last, none (a node started without one). */
        List<String> candidates() {
            List<String> all = new ArrayList<>();
            all.add(applied);
            all.add(previous);
            all.add(desired);
            all.add(null);
            return all;
        }

        boolean changing() {
            return previous != null || !Objects.equals(desired, applied);
        }
    }

    /** The step a pass takes, from what it reads; pure, so every case is a unit test. */
    sealed interface Step {
        /** Nothing under way. */
        record None() implements Step {
        }

        /** Every node accepts {@code password} too; then the copy names it, the old one as previous. */
        record Accept(String password) implements Step {
        }

        /** Brokers of an older generation are still running: both stay accepted, and no Redis pod is replaced. */
        record AwaitBrokers(String waitingFor) implements Step {
        }

        /** Redis pods of an older template (whose readiness probe may use the old password) are replaced first. */
        record AwaitRedisPods(String waitingFor) implements Step {
        }

        /** Every node accepts the password in force only; then the copy forgets the previous one. */
        record Refuse() implements Step {
        }
    }

    /** What a pass did: the notice to show while a change is under way, and whether Redis pods must not be replaced. */
    record Progress(ComponentStatus.Notice notice, boolean holdPodReplacement, boolean finished) {
        static final Progress NOTHING = new Progress(null, false, false);
    }

    static Step next(Passwords passwords, List<String> brokersOfOlderGeneration, List<String> outdatedRedisPods) {
        if (passwords.previous() != null) {
            if (!brokersOfOlderGeneration.isEmpty()) {
                return new Step.AwaitBrokers(String.join(", ", brokersOfOlderGeneration));
            }
            if (!outdatedRedisPods.isEmpty()) {
                return new Step.AwaitRedisPods(String.join(", ", outdatedRedisPods));
            }
            return new Step.Refuse();
        }
        if (!Objects.equals(passwords.desired(), passwords.applied())) {
            return new Step.Accept(passwords.desired());
        }
        return new Step.None();
    }

    /** How the running Redis pods take a password: refused by one, the only one on all, or else one of several; empty: no pod runs. */
    @FunctionalInterface
    interface PasswordCheck {
        Optional<RedisClusterAdmin.Acceptance> acceptance(String password);
    }

    private final Applier applier;
    private final EventRecorder events;

    RedisPasswordRotation(Applier applier, EventRecorder events) {
        this.applier = applier;
        this.events = events;
    }

    /**
     * Reads both Secrets, and makes the copy when there is none. The managed Redis always has a
     * password: with no Secret named, the one in force stays, or one is generated for a new cluster.
     * Without a copy, what the running pods have is read from their template: an operator version
     * before the copy gave them the named Secret's password, or none. A lost copy is made again from
     * the named Secret once {@code check} finds the pods take its password; when they take others
     * too, a change was under way, and it is finished.
     */
    Passwords read(TbmqCluster owner, Names names, PasswordCheck check) {
        String userSecret = owner.getSpec().getRedis().getPasswordSecret();
        boolean named = userSecret != null && !userSecret.isBlank();
        String asked = named ? value(secret(names.namespace(), userSecret), RedisModel.PASSWORD_KEY) : null;
        if (named && (asked == null || asked.isEmpty())) {
            throw new IllegalStateException("spec.redis.passwordSecret: Secret " + userSecret + " has no non-empty key '"
                    + RedisModel.PASSWORD_KEY + "'");
        }
        Secret copy = secret(names.namespace(), names.redisPassword());
        if (copy != null) {
            String applied = value(copy, RedisModel.PASSWORD_KEY);
            Passwords passwords = new Passwords(named ? asked : applied, applied, value(copy, RedisModel.PREVIOUS_PASSWORD_KEY),
                    generation(copy));
            if (!ownedBy(copy, owner)) {
                // A TbmqCluster made again under the same name before the old one's objects were collected.
                write(owner, names, applied, passwords.previous(), passwords.generation());
            }
            return passwords;
        }
        Optional<StatefulSet> running = applier.watched().statefulSet(names.namespace(), names.redis());
        String password;
        String previous = null;
        boolean recoveredMidChange = false;
        if (running.isEmpty()) {
            password = named ? asked : PasswordHash.generate();
        } else {
            String referenced = passwordSecretOf(running.get());
            if (referenced == null) {
                // Pods started without a password: every node keeps accepting clients without one until the brokers have it.
                password = named ? asked : PasswordHash.generate();
                previous = NONE;
            } else if (referenced.equals(names.redisPassword())) {
                if (!named) {
                    throw new IllegalStateException("Secret " + names.redisPassword() + ", the Redis password in force, is missing;"
                            + " the Redis pods still have it (kubectl exec " + names.redisPod(0) + " -- printenv REDIS_PASSWORD):"
                            + " put it into a Secret and name that in spec.redis.passwordSecret");
                }
                password = asked;
                Optional<RedisClusterAdmin.Acceptance> acceptance = check.acceptance(asked);
                if (acceptance.isEmpty()) {
                    events.warning(owner, "RedisPasswordUnchecked", "no Redis pod runs (none can start without Secret "
                            + names.redisPassword() + "): the password in Secret " + userSecret + " is taken unchecked");
                }
                recoveredMidChange = recoveredMidChange(acceptance, names, userSecret);
                previous = recoveredMidChange ? asked : null;
            } else {
                String inForce = value(secret(names.namespace(), referenced), RedisModel.PASSWORD_KEY);
                password = inForce != null ? inForce : asked;
                if (password == null) {
                    throw new IllegalStateException("the Redis pods read their password from Secret " + referenced
                            + ", which is gone; name a Secret holding it in spec.redis.passwordSecret");
                }
            }
        }
        // Recovered from a named Secret: the brokers keep the generation they run with, so they do not
        // roll, unless a change was under way.
        long generation = running.isEmpty() ? 1 : brokersGeneration(names) + (recoveredMidChange ? 1 : 0);
        applier.client().resource(RedisModel.passwordSecret(owner, names, password, previous, generation)).create();
        if (recoveredMidChange) {
            events.normal(owner, "RedisPasswordRecovered", "Secret " + names.redisPassword() + " was missing while the Redis nodes"
                    + " took another password beside the one in Secret " + userSecret + ": the brokers restart with that one, then"
                    + " every other is refused");
        }
        if (!named) {
            events.normal(owner, "RedisPasswordGenerated", "the managed Redis " + (running.isEmpty() ? "asks" : "will ask")
                    + " for a password the operator generated into Secret " + names.redisPassword()
                    + "; name a Secret in spec.redis.passwordSecret to choose it");
        }
        return new Passwords(named ? asked : password, password, previous, generation);
    }

    /**
     * Whether the copy, lost, is made again from the named Secret's password with a change to finish:
     * when the nodes take other passwords too, or no pod runs to ask, brokers not restarted yet may hold
     * another, so they roll onto this one and then every other is refused. Throws when a node refuses it.
     */
    static boolean recoveredMidChange(Optional<RedisClusterAdmin.Acceptance> acceptance, Names names, String userSecret) {
        if (acceptance.isEmpty()) {
            // No pod runs to ask: the brokers restart with it, as after a change, so none keeps another.
            return true;
        }
        return switch (acceptance.get()) {
            case REFUSED -> throw new IllegalStateException("Secret " + names.redisPassword() + ", the Redis password in force,"
                    + " is missing, and the Redis pods refuse the password in Secret " + userSecret + " (spec.redis.passwordSecret):"
                    + " name a Secret holding the one they run with (kubectl exec " + names.redisPod(0) + " -- printenv REDIS_PASSWORD)");
            case AMONG_OTHERS -> true;
            case ONLY -> false;
        };
    }

    /** The generation the brokers' pod template names, or 1. */
    private long brokersGeneration(Names names) {
        return applier.watched().statefulSet(names.namespace(), names.brokers())
                .map(sts -> sts.getSpec().getTemplate().getMetadata().getAnnotations())
                .map(a -> a.get(BrokerModel.REDIS_PASSWORD_VERSION))
                .map(v -> {
                    try {
                        return Long.parseLong(v);
                    } catch (NumberFormatException e) {
                        return 1L;
                    }
                }).orElse(1L);
    }

    private static boolean ownedBy(Secret copy, TbmqCluster owner) {
        return copy.getMetadata().getOwnerReferences() != null && copy.getMetadata().getOwnerReferences().stream()
                .anyMatch(r -> Objects.equals(r.getUid(), owner.getMetadata().getUid()));
    }

    /**
     * Takes the next step of a change under way on {@code nodes} (every Redis pod, all answering).
     * {@code outdatedRedisPods}: pods not made from the StatefulSet's current revision; {@code podsRefused}: the API server
     * refuses the pods of the spec, so none of them is replaced yet (all are passed as outdated).
     */
    Progress advance(TbmqCluster owner, Names names, RedisClusterAdmin admin, List<RedisNode> nodes, Passwords passwords,
            List<String> outdatedRedisPods, boolean podsRefused) {
        List<String> olderBrokers = passwords.previous() == null ? List.of() : brokersOfOlderGeneration(owner, names, passwords);
        Step step = next(passwords, olderBrokers, outdatedRedisPods);
        switch (step) {
            case Step.Accept accept -> {
                nodes.forEach(n -> admin.acceptPasswords(n, accept.password()));
                // Written only once every node accepts it: the brokers restart with it as soon as the copy names it.
                write(owner, names, accept.password(), passwords.applied(), passwords.generation() + 1);
                events.normal(owner, "RedisPasswordChanging", "every Redis node accepts the new password beside the old one;"
                        + " rolling the brokers onto it");
                return new Progress(notice("BrokersRestarting", "every Redis node accepts both passwords; the brokers restart"
                        + " with the new one"), true, false);
            }
            case Step.AwaitBrokers await -> {
                String old = NONE.equals(passwords.previous()) ? "clients without a password"
                        : passwords.previous().equals(passwords.applied()) ? "the passwords it took before (a lost copy made again)"
                        : "the old password";
                return new Progress(notice("BrokersRestarting", "every Redis node accepts " + old + " as well as the new one"
                        + " until these brokers have restarted with the new one: " + await.waitingFor() + newer(passwords)), true, false);
            }
            case Step.AwaitRedisPods await -> {
                return new Progress(notice("RedisPodsReplacing", podsRefused
                        ? "every broker runs with the new password; the old one is refused once the Redis pods are made from the"
                                + " spec, whose pods the API server refuses (RedisReady): " + await.waitingFor() + newer(passwords)
                        : "every broker runs with the new password; Redis pods made from an older template are replaced before the"
                                + " old password is refused: " + await.waitingFor() + newer(passwords)), false, false);
            }
            case Step.Refuse refuse -> {
                nodes.forEach(n -> admin.requirePassword(n, passwords.applied()));
                write(owner, names, passwords.applied(), null, passwords.generation());
                events.normal(owner, "RedisPasswordChanged", "every broker runs with the new Redis password; "
                        + (NONE.equals(passwords.previous()) ? "Redis no longer accepts clients without it" : "the old one no longer works"));
                return new Progress(null, false, true);
            }
            case Step.None none -> {
                closeOthers(owner, names, admin, nodes, passwords);
                return Progress.NOTHING;
            }
        }
    }

    /**
     * With no change under way, makes every node take the password in force only: another one, or
     * none, was left by a change whose last step did not complete, or opened by an operator pod that
     * ran beside this one. Not while a broker of an older generation runs (it may hold the other), nor
     * when the copy changed since this pass read it (another operator pod began a change). A node that
     * fails is left for the next pass: nothing here is a step of a change.
     */
    private void closeOthers(TbmqCluster owner, Names names, RedisClusterAdmin admin, List<RedisNode> nodes, Passwords passwords) {
        if (!brokersOfOlderGeneration(owner, names, passwords).isEmpty()) {
            return;
        }
        Secret copy = secret(names.namespace(), names.redisPassword());
        if (copy == null || !Objects.equals(value(copy, RedisModel.PASSWORD_KEY), passwords.applied())
                || value(copy, RedisModel.PREVIOUS_PASSWORD_KEY) != null) {
            return;
        }
        List<String> closed = new ArrayList<>();
        for (RedisNode node : nodes) {
            try {
                if (admin.closeAllBut(node, passwords.applied())) {
                    closed.add("redis-" + node.ordinal());
                }
            } catch (RuntimeException e) {
                LOG.warnf("%s/%s: redis-%d: reading which passwords it takes failed: %s", names.namespace(), names.cluster(),
                        node.ordinal(), e.getMessage());
            }
        }
        if (!closed.isEmpty()) {
            events.normal(owner, "RedisPasswordClosed", String.join(", ", closed) + " took another password, or none, beside"
                    + " the one in force; now that one only");
        }
    }

    /**
     * While a change is under way (until the old password is refused), makes {@code node} accept the
     * old password, or any when the old state was none, as well as the new one: a pod that started
     * since knows the new one only. Idempotent; done on every pass before anything else reaches the node.
     */
    void keepAccepting(RedisClusterAdmin admin, RedisNode node, Passwords passwords) {
        if (passwords.previous() == null) {
            return;
        }
        if (NONE.equals(passwords.previous())) {
            admin.acceptAnyPassword(node);
        } else {
            admin.acceptPasswords(node, passwords.applied(), passwords.previous());
        }
    }

    static ComponentStatus.Notice waiting() {
        return notice("Waiting", "a change of the Redis password is under way; its next step waits until every Redis pod is"
                + " ready and the cluster is whole");
    }

    static ComponentStatus.Notice failed(String why) {
        return notice("StepFailed", "a step of the Redis password change failed and is tried again: " + why);
    }

    private static String newer(Passwords passwords) {
        return Objects.equals(passwords.desired(), passwords.applied()) ? ""
                : "; the Secret's newer password follows once this change is done";
    }

    /** Broker pods, terminating ones included, made from a template of an older generation of the copy. */
    private List<String> brokersOfOlderGeneration(TbmqCluster owner, Names names, Passwords passwords) {
        String current = Long.toString(passwords.generation());
        List<String> older = new ArrayList<>();
        for (Pod pod : applier.watched().pods(names.namespace(), Labels.selector(owner.getMetadata().getName(), BrokerModel.COMPONENT))) {
            String started = pod.getMetadata().getAnnotations() == null ? null
                    : pod.getMetadata().getAnnotations().get(BrokerModel.REDIS_PASSWORD_VERSION);
            if (!current.equals(started)) {
                older.add(pod.getMetadata().getName());
            }
        }
        return older;
    }

    /** The generation of the copy's password: what the brokers' pod template carries (a write that keeps the password keeps it). */
    static long generation(Secret copy) {
        String value = copy.getMetadata().getAnnotations() == null ? null
                : copy.getMetadata().getAnnotations().get(RedisModel.PASSWORD_GENERATION);
        try {
            return value == null ? 1 : Long.parseLong(value);
        } catch (NumberFormatException e) {
            return 1;
        }
    }

    /** The Secret the Redis container's REDIS_PASSWORD comes from, or null when it starts without a password. */
    private static String passwordSecretOf(StatefulSet sts) {
        for (Container c : sts.getSpec().getTemplate().getSpec().getContainers()) {
            for (EnvVar e : c.getEnv() == null ? List.<EnvVar> of() : c.getEnv()) {
                if ("REDIS_PASSWORD".equals(e.getName()) && e.getValueFrom() != null && e.getValueFrom().getSecretKeyRef() != null) {
                    return e.getValueFrom().getSecretKeyRef().getName();
                }
            }
        }
        return null;
    }

    /** Replaces the copy (a PUT, so a key left out is gone). */
    private void write(TbmqCluster owner, Names names, String password, String previous, long generation) {
        Secret current = secret(names.namespace(), names.redisPassword());
        Secret next = RedisModel.passwordSecret(owner, names, password, previous, generation);
        next.getMetadata().setResourceVersion(current.getMetadata().getResourceVersion());
        applier.client().resource(next).update();
    }

    private Secret secret(String namespace, String name) {
        return applier.client().secrets().inNamespace(namespace).withName(name).get();
    }

    private static String value(Secret secret, String key) {
        if (secret == null || secret.getData() == null || secret.getData().get(key) == null) {
            return null;
        }
        return new String(Base64.getDecoder().decode(secret.getData().get(key)), StandardCharsets.UTF_8);
    }

    private static ComponentStatus.Notice notice(String reason, String message) {
        return new ComponentStatus.Notice(RedisProvisioner.PASSWORD_CHANGING, reason, message);
    }
}
