package io.tbmq.operator.provision;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.tbmq.operator.api.TbmqCluster;
import io.tbmq.operator.api.TbmqUser;
import io.tbmq.operator.api.TbmqUserSpec;
import io.tbmq.operator.desired.Names;
import io.tbmq.operator.desired.UsersModel;
import io.tbmq.operator.users.PasswordHash;
import io.tbmq.operator.users.UserConflicts;

/**
 * The cluster's users file from its TbmqUsers. A user whose latest spec the TbmqUser controller
 * accepted is written as it now is; a user it has not accepted yet (just edited, or invalid) keeps
 * the entry the brokers already have, so an invalid edit takes nothing away; a user whose name is
 * taken is left out. A password is hashed once per change of password: the hash is kept on its
 * Secret beside a fingerprint of the password.
 */
public final class UsersProvisioner {
    public static final String HASH = "tbmq.io/password-hash";
    public static final String FINGERPRINT = "tbmq.io/password-fingerprint";
    private final Applier applier;

    public UsersProvisioner(Applier applier) {
        this.applier = applier;
    }

    /**
     * @param users the TbmqUsers naming this cluster
     * @param secrets their password Secrets (instance label = this cluster)
     * @param fileNames {@link UserConflicts#names} of the cluster's credentials file
     * @return how many users the file holds
     */
    public int reconcile(TbmqCluster owner, Names names, List<TbmqUser> users, List<Secret> secrets, Set<String> fileNames) {
        Secret current = applier.current(UsersModel.secret(owner, names, List.of()));
        Map<String, UsersModel.Entry> previous = new HashMap<>();
        UsersModel.entries(current).forEach(e -> previous.put((e.tls() ? "cn:" : "user:") + e.principal(), e));
        Map<String, Secret> secretByName = new HashMap<>();
        secrets.forEach(s -> secretByName.put(s.getMetadata().getName(), s));
        UserConflicts conflicts = new UserConflicts(users, fileNames);

        List<UsersModel.Entry> entries = new ArrayList<>();
        for (TbmqUser user : users.stream().sorted(Comparator.comparing(u -> u.getMetadata().getName())).toList()) {
            if (conflicts.taken(user).isPresent()) {
                continue;
            }
            boolean tls = user.getSpec().getAuthentication() != null
                    && user.getSpec().getAuthentication().getType() == TbmqUserSpec.AuthenticationType.TLS;
            Optional<UsersModel.Entry> entry = Optional.empty();
            if (accepted(user)) {
                entry = tls ? Optional.of(UsersModel.entry(user, null))
                        : hash(user, secretByName.get(user.getMetadata().getName())).map(h -> UsersModel.entry(user, h));
            }
            entry.or(() -> Optional.ofNullable(previous.get((tls ? "cn:" : "user:") + user.principal()))).ifPresent(entries::add);
        }
        applier.apply(UsersModel.secret(owner, names, entries));
        return entries.size();
    }

    /** The TbmqUser controller validated the user's latest spec. */
    static boolean accepted(TbmqUser user) {
        if (user.getStatus() == null) {
            return false;
        }
        Condition ready = user.getStatus().getConditions().stream().filter(c -> "Ready".equals(c.getType())).findFirst().orElse(null);
        return ready != null && "True".equals(ready.getStatus())
                && Objects.equals(user.getStatus().getObservedGeneration(), user.getMetadata().getGeneration());
    }

    /** The hash of the password in the user's Secret, computed again only when the password changed. */
    private Optional<String> hash(TbmqUser user, Secret secret) {
        if (secret == null || secret.getData() == null || secret.getData().get("password") == null) {
            return Optional.empty();
        }
        String password = new String(Base64.getDecoder().decode(secret.getData().get("password")), StandardCharsets.UTF_8).strip();
        if (password.isEmpty()) {
            return Optional.empty();
        }
        Map<String, String> annotations = secret.getMetadata().getAnnotations() == null ? Map.of() : secret.getMetadata().getAnnotations();
        String fingerprint = PasswordHash.fingerprint(password);
        if (fingerprint.equals(annotations.get(FINGERPRINT)) && annotations.get(HASH) != null) {
            return Optional.of(annotations.get(HASH));
        }
        String hash = PasswordHash.hash(password);
        applier.client().secrets().inNamespace(secret.getMetadata().getNamespace()).withName(secret.getMetadata().getName())
                .patch(PatchContext.of(PatchType.JSON_MERGE), "{\"metadata\":{\"annotations\":{\"" + HASH + "\":\"" + hash + "\",\""
                        + FINGERPRINT + "\":\"" + fingerprint + "\"}}}");
        return Optional.of(hash);
    }
}
