package io.tbmq.broker.auth;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;

import org.junit.jupiter.api.Test;

import io.tbmq.broker.topic.Topics;

class AclTest {
    private static CredentialsFile.Permissions grants(List<String> pub, List<String> sub, List<String> denySub) {
        return new CredentialsFile.Permissions(null, pub, sub, null, denySub);
    }

    @Test
    void templatesAreFilledWithClientIdAndUserName() {
        Acl acl = Acl.forClient(grants(List.of("d/%u/%c/out"), List.of("d/%u/%c/in"), null), "c1", "u1");
        assertThat(acl.canPublish("d/u1/c1/out")).isTrue();
        assertThat(acl.canPublish("d/u1/c2/out")).isFalse();
        assertThat(acl.canSubscribe(Topics.parseFilter("d/u1/c1/in", 32))).isTrue();
    }

    @Test
    void aClientIdWithWildcardsOrSlashesCannotWidenItsRights() {
        for (String hostile : new String[] {"#", "+", "a/b", ""}) {
            Acl acl = Acl.forClient(grants(List.of("d/%c/out"), List.of("d/%c/in"), List.of("d/%c/secret")), hostile, "u");
            assertThat(acl.canPublish("d/x/out")).as(hostile).isFalse();
            assertThat(acl.canSubscribe(Topics.parseFilter("d/+/in", 32))).as(hostile).isFalse();
            assertThat(acl.canReceive("anything")).as("a deny template that cannot be filled denies all").isFalse();
        }
    }

    @Test
    void denyWinsOverAllow() {
        Acl acl = Acl.forClient(grants(List.of("#"), List.of("#"), List.of("private/#")), "c", "u");
        assertThat(acl.canSubscribe(Topics.parseFilter("private/x", 32))).isFalse();
        assertThat(acl.canSubscribe(Topics.parseFilter("#", 32))).as("allowed, but filtered at delivery").isTrue();
        assertThat(acl.canReceive("private/x")).isFalse();
        assertThat(acl.canReceive("public/x")).isTrue();
        assertThat(acl.restrictsDelivery()).isTrue();
    }

    @Test
    void sharedSubscriptionsAreJudgedOnTheirFilter() {
        Acl acl = Acl.forClient(grants(List.of(), List.of("jobs/#"), null), "c", "u");
        assertThat(acl.canSubscribe(Topics.parseFilter("$share/g/jobs/a", 32))).isTrue();
        assertThat(acl.canSubscribe(Topics.parseFilter("$share/g/other", 32))).isFalse();
    }
}
