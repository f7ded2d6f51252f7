package io.tbmq.operator.reconciler;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.tbmq.operator.api.TbmqCluster;
import io.tbmq.operator.api.TbmqUser;
import io.tbmq.operator.api.TbmqUserSpec;
import io.tbmq.operator.desired.Samples;
import io.tbmq.operator.users.PasswordHash;

/**
 * TbmqUsers against fabric8's mock API server (CRUD mode): the password Secret, the cluster's users
 * file the brokers read, and what an invalid or conflicting user does to it.
 */
@EnableKubernetesMockClient(crud = true)
class TbmqUserReconcilerIT {
    static final String NS = "iot";

    KubernetesClient client;
    TbmqClusterReconciler clusters;
    TbmqUserReconciler users;
    TbmqCluster cluster;

    @BeforeEach
    void setUp() {
        clusters = new TbmqClusterReconciler(TbmqClusterReconcilerIT.NO_REDIS, TbmqClusterReconciler.Settings.defaults(false));
        clusters.reachability = spec -> List.of();
        users = new TbmqUserReconciler();
        client.resource(new SecretBuilder().withNewMetadata().withName("fleet-users").withNamespace(NS).endMetadata()
                .addToData("credentials.yaml", b64("users:\n  - username: plant-7\n    password: \"x\"\n")).build()).create();
        client.resource(new SecretBuilder().withNewMetadata().withName("kafka-client").withNamespace(NS).endMetadata()
                .addToData("client.properties", b64("x")).build()).create();
        client.resource(new SecretBuilder().withNewMetadata().withName("redis-auth").withNamespace(NS).endMetadata()
                .addToData("password", b64("x")).build()).create();
        TbmqCluster c = Samples.load("tbmq-external.yaml", NS);
        c.getMetadata().setUid(null);
        cluster = client.resource(c).inNamespace(NS).create();
        cluster.getMetadata().setGeneration(1L);
    }

    private TbmqUser user(String name, TbmqUserSpec.AuthenticationType type, String... publish) {
        TbmqUser u = new TbmqUser();
        u.getMetadata().setName(name);
        u.getMetadata().setNamespace(NS);
        u.setSpec(new TbmqUserSpec());
        u.getSpec().setCluster("external");
        u.getSpec().getAuthentication().setType(type);
        u.getSpec().getAcl().setPublish(List.of(publish));
        u.getSpec().getAcl().setSubscribe(List.of("commands/%c/#"));
        TbmqUser created = client.resource(u).create();
        created.getMetadata().setGeneration(1L);
        return created;
    }

    /** The TbmqUser controller's turn, then the cluster's, as their events would order them. */
    private void reconcile(TbmqUser... changed) {
        for (TbmqUser u : changed) {
            users.reconcile(u, client);
            // What patchStatus would write; the cluster's reconcile reads it back.
            client.resource(u).updateStatus();
        }
        clusters.reconcile(cluster, client);
    }

    /** A user's edit of the ACL, at the given generation (the mock server does not count generations). */
    private TbmqUser edit(TbmqUser user, long generation, List<String> publish) {
        TbmqUser edited = client.resources(TbmqUser.class).inNamespace(NS).withName(user.getMetadata().getName())
                .edit(u -> {
                    u.getSpec().getAcl().setPublish(publish);
                    return u;
                });
        edited.getMetadata().setGeneration(generation);
        return edited;
    }

    private Map<String, Object> usersFile() {
        Secret s = client.secrets().inNamespace(NS).withName("external-users").get();
        assertThat(s).as("the users file Secret").isNotNull();
        return Serialization.unmarshal(new String(Base64.getDecoder().decode(s.getData().get("users.yaml")), StandardCharsets.UTF_8),
                Map.class);
    }

    @SuppressWarnings("unchecked")
    private Map<String, Object> entry(String list, String key, String name) {
        return ((List<Map<String, Object>>) usersFile().get(list)).stream().filter(e -> name.equals(e.get(key))).findFirst().orElse(null);
    }

    private String password(String user) {
        return new String(Base64.getDecoder().decode(client.secrets().inNamespace(NS).withName(user).get().getData().get("password")),
                StandardCharsets.UTF_8);
    }

    private static String b64(String s) {
        return Base64.getEncoder().encodeToString(s.getBytes(StandardCharsets.UTF_8));
    }

    private static Condition ready(TbmqUser u) {
        return Conditions.find(u.getStatus().getConditions(), Conditions.READY);
    }

    @Test
    void aPasswordUserGetsAGeneratedPasswordAndTheBrokersItsHashWithoutARoll() {
        clusters.reconcile(cluster, client);
        StatefulSet before = client.apps().statefulSets().inNamespace(NS).withName("external-broker").get();
        assertThat(before.getSpec().getTemplate().getSpec().getVolumes()).anySatisfy(v -> assertThat(v.getSecret().getSecretName())
                .isEqualTo("external-users"));
        assertThat(usersFile().get("users")).asList().isEmpty();

        TbmqUser meter = user("meter-1", TbmqUserSpec.AuthenticationType.PASSWORD, "meters/%c/#");
        reconcile(meter);
        assertThat(ready(meter).getStatus()).as(ready(meter).getMessage()).isEqualTo("True");
        assertThat(meter.getStatus().getSecret()).isEqualTo("meter-1");
        String password = password("meter-1");
        assertThat(password).hasSize(32);
        Map<String, Object> entry = entry("users", "username", "meter-1");
        assertThat(PasswordHash.verify(password, (String) entry.get("password"))).as("the hash the brokers get").isTrue();
        assertThat(entry).containsEntry("clientType", "DEVICE").containsEntry("publish", List.of("meters/%c/#"));
        assertThat(client.apps().statefulSets().inNamespace(NS).withName("external-broker").get().getSpec().getTemplate()
                .getMetadata().getAnnotations()).as("a user added rolls nothing")
                .isEqualTo(before.getSpec().getTemplate().getMetadata().getAnnotations());

        // Reconciled again with nothing changed: the same file, byte for byte (no reload, no rehash).
        // (The mock server counts a write of the same content as a change, a real API server does not: compare content.)
        Map<String, String> file = client.secrets().inNamespace(NS).withName("external-users").get().getData();
        reconcile(meter);
        assertThat(client.secrets().inNamespace(NS).withName("external-users").get().getData()).isEqualTo(file);

        // The password rotated in its Secret: hashed again.
        Secret secret = client.secrets().inNamespace(NS).withName("meter-1").get();
        secret.getData().put("password", b64("rotated-password-of-meter-1"));
        client.resource(secret).update();
        reconcile();
        assertThat(PasswordHash.verify("rotated-password-of-meter-1",
                (String) entry("users", "username", "meter-1").get("password"))).isTrue();
    }

    @Test
    void anInvalidEditNamesTheFieldAndTheBrokersKeepTheUserAsItWas() {
        TbmqUser meter = user("meter-1", TbmqUserSpec.AuthenticationType.PASSWORD, "meters/%c/#");
        reconcile(meter);

        meter = edit(meter, 2, List.of("meters/#/bad"));
        reconcile(meter);
        assertThat(ready(meter).getStatus()).isEqualTo("False");
        assertThat(ready(meter).getReason()).isEqualTo("InvalidSpec");
        assertThat(ready(meter).getMessage()).contains("spec.acl.publish[0]", "meters/#/bad");
        assertThat(entry("users", "username", "meter-1")).as("the last good entry stays").containsEntry("publish", List.of("meters/%c/#"));

        meter = edit(meter, 3, List.of("meters/%c/+/status"));
        reconcile(meter);
        assertThat(ready(meter).getStatus()).isEqualTo("True");
        assertThat(entry("users", "username", "meter-1")).containsEntry("publish", List.of("meters/%c/+/status"));
    }

    @Test
    void aTakenNameIsRefusedAndKeptOutOfTheFileSoOtherUsersStillApply() {
        TbmqUser taken = user("plant-7", TbmqUserSpec.AuthenticationType.PASSWORD, "plants/#");
        TbmqUser first = user("meter-1", TbmqUserSpec.AuthenticationType.TLS, "meters/#");
        reconcile(taken, first);
        TbmqUser second = user("meter-2", TbmqUserSpec.AuthenticationType.TLS, "meters/#");
        second.getSpec().getAuthentication().setCommonName("meter-1");
        second.getMetadata().setResourceVersion(null);
        second = client.resource(second).update();
        second.getMetadata().setGeneration(1L);
        reconcile(second);

        assertThat(ready(taken).getReason()).isEqualTo("NameTaken");
        assertThat(ready(taken).getMessage()).contains("credentials file");
        assertThat(ready(second).getReason()).isEqualTo("NameTaken");
        assertThat(ready(second).getMessage()).contains("meter-1");
        assertThat(entry("users", "username", "plant-7")).isNull();
        assertThat(entry("certificates", "commonName", "meter-1")).containsEntry("publish", List.of("meters/#"));
        assertThat(client.secrets().inNamespace(NS).withName("meter-1").get()).as("no password for a TLS user").isNull();
    }

    @Test
    void aUserOfAMissingClusterSaysSoAndASecretNotMadeForItIsNotTaken() {
        TbmqUser lost = user("lost", TbmqUserSpec.AuthenticationType.TLS, "x/#");
        lost.getSpec().setCluster("nowhere");
        users.reconcile(lost, client);
        assertThat(ready(lost).getReason()).isEqualTo("ClusterNotFound");

        TbmqUser clash = user("fleet-users", TbmqUserSpec.AuthenticationType.PASSWORD, "x/#");
        users.reconcile(clash, client);
        assertThat(ready(clash).getReason()).isEqualTo("SecretConflict");
        assertThat(client.secrets().inNamespace(NS).withName("fleet-users").get().getData()).containsOnlyKeys("credentials.yaml");
    }
}
