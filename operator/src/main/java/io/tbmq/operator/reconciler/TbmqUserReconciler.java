package io.tbmq.operator.reconciler;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;

import org.jboss.logging.Logger;

import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.ControllerConfiguration;
import io.javaoperatorsdk.operator.processing.retry.GradualRetry;
import io.javaoperatorsdk.operator.api.reconciler.Reconciler;
import io.javaoperatorsdk.operator.api.reconciler.UpdateControl;
import io.quarkiverse.operatorsdk.annotations.RBACRule;
import io.tbmq.operator.api.TbmqCluster;
import io.tbmq.operator.api.TbmqUser;
import io.tbmq.operator.api.TbmqUserSpec;
import io.tbmq.operator.api.TbmqUserStatus;
import io.tbmq.operator.desired.Labels;
import io.tbmq.operator.desired.UsersModel;
import io.tbmq.operator.users.PasswordHash;
import io.tbmq.operator.users.UserConflicts;
import io.tbmq.operator.users.UserValidator;
import io.tbmq.operator.validation.FieldError;

/**
 * Reconciles a TbmqUser: checks it as the broker would, generates a password user's Secret once,
 * and says in the status whether the user's cluster takes it. The users file itself is written by
 * the TbmqCluster's reconcile, which every change of a TbmqUser wakes: one writer per file.
 */
// A reconcile that throws (the API server refused a write, or could not be reached) is tried again for as
// long as it fails, backing off from 2 s to once a minute: JOSDK's default gives up after five tries, and
// then only the next event, or its 10-hour resync, would reconcile again.
@GradualRetry(maxAttempts = -1, initialInterval = 2000, intervalMultiplier = 1.5, maxInterval = 60_000)
@ControllerConfiguration(name = "tbmquser")
@RBACRule(apiGroups = "", resources = "secrets", verbs = { "get", "list", "watch", "create", "patch", "update", "delete" })
public class TbmqUserReconciler implements Reconciler<TbmqUser> {
    private static final Logger LOG = Logger.getLogger(TbmqUserReconciler.class);
    /** A user waiting for its cluster looks again now and then; everything else is woken by events. */
    static final Duration WHILE_WAITING = Duration.ofSeconds(30);

    @Override
    public UpdateControl<TbmqUser> reconcile(TbmqUser user, Context<TbmqUser> context) {
        return reconcile(user, context.getClient());
    }

    public UpdateControl<TbmqUser> reconcile(TbmqUser user, KubernetesClient client) {
        TbmqUserStatus status = user.getStatus() == null ? new TbmqUserStatus() : user.getStatus();
        user.setStatus(status);
        long generation = user.getMetadata().getGeneration() == null ? 0 : user.getMetadata().getGeneration();
        String ns = user.getMetadata().getNamespace();
        Instant now = Instant.now();
        status.setObservedGeneration(generation);

        List<FieldError> errors = UserValidator.validate(user.getSpec());
        if (!errors.isEmpty()) {
            String message = errors.stream().map(FieldError::toString).collect(Collectors.joining("; "));
            LOG.warnf("TbmqUser %s/%s is invalid: %s", ns, user.getMetadata().getName(), message);
            return notReady(user, "InvalidSpec", message + " (the brokers keep the user as it was)", generation, now);
        }
        boolean password = user.getSpec().getAuthentication() == null
                || user.getSpec().getAuthentication().getType() != TbmqUserSpec.AuthenticationType.TLS;
        status.setUsername(user.principal());
        status.setSecret(password ? user.getMetadata().getName() : null);

        Secret secret = client.secrets().inNamespace(ns).withName(user.getMetadata().getName()).get();
        boolean ours = secret != null && secret.getMetadata().getOwnerReferences() != null && secret.getMetadata().getOwnerReferences()
                .stream().anyMatch(o -> user.getMetadata().getUid() != null && user.getMetadata().getUid().equals(o.getUid()));
        if (password) {
            if (secret != null && !ours) {
                return notReady(user, "SecretConflict", "Secret '" + user.getMetadata().getName()
                        + "' exists and was not made for this TbmqUser; delete it or rename the TbmqUser", generation, now);
            }
            if (secret == null) {
                client.resource(UsersModel.passwordSecret(user, PasswordHash.generate())).create();
            } else if (!user.getSpec().getCluster().equals(instance(secret))) {
                // The cluster changed: the Secret's label tells the new cluster's reconcile it is one of its users.
                client.secrets().inNamespace(ns).withName(secret.getMetadata().getName()).edit(s -> {
                    s.getMetadata().getLabels().put(Labels.INSTANCE, user.getSpec().getCluster());
                    return s;
                });
            }
        } else if (ours) {
            client.resource(secret).delete(); // switched to TLS: the password must stop working
        }

        TbmqCluster cluster = client.resources(TbmqCluster.class).inNamespace(ns).withName(user.getSpec().getCluster()).get();
        if (cluster == null) {
            return notReady(user, "ClusterNotFound", "no TbmqCluster '" + user.getSpec().getCluster() + "' in namespace " + ns,
                    generation, now).rescheduleAfter(WHILE_WAITING);
        }
        var conflict = new UserConflicts(usersOf(client, ns, user.getSpec().getCluster()), credentialsFileNames(client, cluster))
                .taken(user);
        if (conflict.isPresent()) {
            return notReady(user, "NameTaken", conflict.get() + "; the brokers are not given this user", generation, now);
        }
        Conditions.set(status.getConditions(), Conditions.READY, true, "Accepted", "given to the brokers of TbmqCluster "
                + cluster.getMetadata().getName() + " (Secret " + cluster.getMetadata().getName()
                + "-users); they apply it without a restart, once the kubelet has updated the mounted Secret",
                generation, now);
        return UpdateControl.patchStatus(user);
    }

    private static UpdateControl<TbmqUser> notReady(TbmqUser user, String reason, String message, long generation, Instant now) {
        Conditions.set(user.getStatus().getConditions(), Conditions.READY, false, reason, message, generation, now);
        return UpdateControl.patchStatus(user);
    }

    private static String instance(Secret secret) {
        return secret.getMetadata().getLabels() == null ? null : secret.getMetadata().getLabels().get(Labels.INSTANCE);
    }

    static List<TbmqUser> usersOf(KubernetesClient client, String namespace, String cluster) {
        return client.resources(TbmqUser.class).inNamespace(namespace).list().getItems().stream()
                .filter(u -> u.getSpec() != null && cluster.equals(u.getSpec().getCluster())).toList();
    }

    /** The names in the cluster's own credentials file, which a TbmqUser must not take. */
    static Set<String> credentialsFileNames(KubernetesClient client, TbmqCluster cluster) {
        String name = cluster.getSpec() == null || cluster.getSpec().getBroker() == null ? null
                : cluster.getSpec().getBroker().getCredentialsSecret();
        if (name == null || name.isBlank()) {
            return Set.of();
        }
        Secret secret = client.secrets().inNamespace(cluster.getMetadata().getNamespace()).withName(name).get();
        String data = secret == null || secret.getData() == null ? null : secret.getData().get("credentials.yaml");
        return UserConflicts.names(data == null ? null
                : new String(java.util.Base64.getDecoder().decode(data), java.nio.charset.StandardCharsets.UTF_8));
    }
}
