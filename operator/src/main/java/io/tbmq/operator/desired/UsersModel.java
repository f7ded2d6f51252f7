package io.tbmq.operator.desired;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;

import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.tbmq.operator.api.TbmqCluster;
import io.tbmq.operator.api.TbmqUser;
import io.tbmq.operator.api.TbmqUserSpec;

/**
 * The brokers' users file (tbmq.security.users-file) built from a cluster's TbmqUsers, in the
 * credentials file's format: password users under {@code users}, TLS users under
 * {@code certificates}. Written as JSON, which the broker's YAML reader takes as it is, sorted by
 * name so the same users always give the same bytes (an unchanged file is no reload).
 */
public final class UsersModel {
    public static final String FILE = "users.yaml";
    static final String COMPONENT = "users";
    private static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT)
            .enable(SerializationFeature.ORDER_MAP_ENTRIES_BY_KEYS);

    private UsersModel() {
    }

    /** One user as the brokers see it: a password user's entry carries its PBKDF2 hash. */
    public record Entry(String principal, boolean tls, Map<String, Object> fields) {
    }

    /** The entry of a TbmqUser; {@code passwordHash} is null for a TLS user. */
    public static Entry entry(TbmqUser user, String passwordHash) {
        TbmqUserSpec spec = user.getSpec();
        boolean tls = spec.getAuthentication() != null && spec.getAuthentication().getType() == TbmqUserSpec.AuthenticationType.TLS;
        Map<String, Object> fields = new LinkedHashMap<>();
        if (tls) {
            fields.put("commonName", user.principal());
        } else {
            fields.put("username", user.principal());
            fields.put("password", passwordHash);
        }
        fields.put("clientType", spec.getClientType() == null ? "DEVICE" : spec.getClientType().name());
        TbmqUserSpec.Acl acl = spec.getAcl() == null ? new TbmqUserSpec.Acl() : spec.getAcl();
        fields.put("publish", nullToEmpty(acl.getPublish()));
        fields.put("subscribe", nullToEmpty(acl.getSubscribe()));
        fields.put("denyPublish", nullToEmpty(acl.getDenyPublish()));
        fields.put("denySubscribe", nullToEmpty(acl.getDenySubscribe()));
        return new Entry(user.principal(), tls, fields);
    }

    public static String file(List<Entry> entries) {
        Map<String, Object> root = new LinkedHashMap<>();
        root.put("users", entries.stream().filter(e -> !e.tls()).sorted(Comparator.comparing(Entry::principal)).map(Entry::fields)
                .toList());
        root.put("certificates", entries.stream().filter(Entry::tls).sorted(Comparator.comparing(Entry::principal))
                .map(Entry::fields).toList());
        try {
            return JSON.writeValueAsString(root) + "\n";
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The entries of a users file this operator wrote (none for an absent or unreadable one). */
    @SuppressWarnings("unchecked")
    public static List<Entry> entries(Secret written) {
        List<Entry> out = new ArrayList<>();
        String content = written == null || written.getData() == null ? null : written.getData().get(FILE);
        if (content == null) {
            return out;
        }
        try {
            Map<String, Object> root = JSON.readValue(Base64.getDecoder().decode(content), Map.class);
            for (Object u : (List<Object>) root.getOrDefault("users", List.of())) {
                Map<String, Object> fields = (Map<String, Object>) u;
                out.add(new Entry((String) fields.get("username"), false, fields));
            }
            for (Object c : (List<Object>) root.getOrDefault("certificates", List.of())) {
                Map<String, Object> fields = (Map<String, Object>) c;
                out.add(new Entry((String) fields.get("commonName"), true, fields));
            }
        } catch (java.io.IOException | ClassCastException | IllegalArgumentException e) {
            // Not ours or damaged: rebuilt from the TbmqUsers alone.
        }
        return out;
    }

    public static Secret secret(TbmqCluster owner, Names names, List<Entry> entries) {
        return new SecretBuilder()
                .withMetadata(Owners.meta(owner, names.brokerUsers(), COMPONENT).build())
                .withType("Opaque")
                .withData(Map.of(FILE, Base64.getEncoder().encodeToString(file(entries).getBytes(StandardCharsets.UTF_8))))
                .build();
    }

    /** Component label of a TbmqUser's password Secret; its instance label names the user's cluster. */
    public static final String USER_COMPONENT = "mqtt-user";

    /** A password user's Secret, owned by the TbmqUser (deleted with it), keys username and password. */
    public static Secret passwordSecret(TbmqUser user, String password) {
        return new SecretBuilder()
                .withNewMetadata().withName(user.getMetadata().getName()).withNamespace(user.getMetadata().getNamespace())
                    .withLabels(Labels.of(user.getSpec().getCluster(), USER_COMPONENT))
                    .withOwnerReferences(new io.fabric8.kubernetes.api.model.OwnerReferenceBuilder()
                            .withApiVersion(io.fabric8.kubernetes.api.model.HasMetadata.getApiVersion(TbmqUser.class))
                            .withKind(io.fabric8.kubernetes.api.model.HasMetadata.getKind(TbmqUser.class))
                            .withName(user.getMetadata().getName()).withUid(user.getMetadata().getUid())
                            .withController(true).withBlockOwnerDeletion(true).build())
                .endMetadata()
                .withType("Opaque")
                .withData(Map.of("username", base64(user.principal()), "password", base64(password)))
                .build();
    }

    private static String base64(String text) {
        return Base64.getEncoder().encodeToString(text.getBytes(StandardCharsets.UTF_8));
    }

    private static List<String> nullToEmpty(List<String> list) {
        return list == null ? List.of() : list;
    }
}
