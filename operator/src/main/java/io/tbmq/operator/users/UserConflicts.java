package io.tbmq.operator.users;

import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

import io.tbmq.operator.api.TbmqUser;
import io.tbmq.operator.api.TbmqUserSpec;

/**
 * Which TbmqUsers cannot be given to the brokers because their name is taken: by the cluster's own
 * credentials file, or by an older TbmqUser of the same cluster. The broker refuses a users file
 * with a name twice as a whole, so one such user would stop every later change from applying.
 */
public final class UserConflicts {
    private final Map<String, String> taken = new HashMap<>();

    /**
     * @param users every TbmqUser of one cluster
     * @param fileNames {@link #names} of the cluster's credentials file (spec.broker.credentialsSecret)
     */
    public UserConflicts(List<TbmqUser> users, Set<String> fileNames) {
        Map<String, TbmqUser> first = new HashMap<>();
        users.stream().sorted(Comparator.comparing((TbmqUser u) -> String.valueOf(u.getMetadata().getCreationTimestamp()))
                .thenComparing(u -> u.getMetadata().getName())).forEach(u -> {
                    String key = key(u);
                    if (fileNames.contains(key)) {
                        taken.put(u.getMetadata().getName(), "'" + u.principal()
                                + "' is already in the cluster's credentials file (spec.broker.credentialsSecret)");
                    } else if (first.putIfAbsent(key, u) != null) {
                        taken.put(u.getMetadata().getName(), "'" + u.principal() + "' is already TbmqUser "
                                + first.get(key).getMetadata().getName() + "'s");
                    }
                });
    }

    /** Why this user is left out, if it is. */
    public Optional<String> taken(TbmqUser user) {
        return Optional.ofNullable(taken.get(user.getMetadata().getName()));
    }

    private static String key(TbmqUser u) {
        boolean tls = u.getSpec().getAuthentication() != null
                && u.getSpec().getAuthentication().getType() == TbmqUserSpec.AuthenticationType.TLS;
        return (tls ? "cn:" : "user:") + u.principal();
    }

    /** User names ("user:NAME") and common names ("cn:NAME") of a credentials file's YAML (none when it cannot be read). */
    @SuppressWarnings("unchecked")
    public static Set<String> names(String credentialsYaml) {
        if (credentialsYaml == null) {
            return Set.of();
        }
        try {
            Map<String, Object> root = io.fabric8.kubernetes.client.utils.Serialization.unmarshal(credentialsYaml, Map.class);
            java.util.Set<String> names = new java.util.HashSet<>();
            for (String list : List.of("users", "certificates")) {
                Object entries = root == null ? null : root.get(list);
                if (entries instanceof List<?> l) {
                    for (Object e : l) {
                        if (e instanceof Map<?, ?> m) {
                            Object name = m.get("users".equals(list) ? "username" : "commonName");
                            if (name != null) {
                                names.add(("users".equals(list) ? "user:" : "cn:") + name);
                            }
                        }
                    }
                }
            }
            return names;
        } catch (RuntimeException e) {
            return Set.of();
        }
    }
}
