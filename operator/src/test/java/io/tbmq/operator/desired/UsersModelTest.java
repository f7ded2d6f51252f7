package io.tbmq.operator.desired;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import org.junit.jupiter.api.Test;

import io.tbmq.operator.api.TbmqUser;
import io.tbmq.operator.api.TbmqUserSpec;
import io.tbmq.operator.users.PasswordHash;

/**
 * The users file the operator writes is the one the broker reads: both modules test against the
 * same file, broker/src/test/resources/io/tbmq/broker/auth/users-file-from-operator.json
 * (the broker's CredentialsFromOperatorTest loads it and logs meter-1 in).
 */
class UsersModelTest {
    static final Path CONTRACT = Path.of("..", "broker", "src", "test", "resources", "io", "tbmq", "broker", "auth",
            "users-file-from-operator.json");
    /** The hash of "meter-secret", as the broker's PasswordHasher makes it. */
    static final String HASH = "pbkdf2-sha256$100000$JJ1E9yPEaoh/DfBNZ2f+qg$Gnola3s9HZUuFp0UNc67lyYj3MvSG2XUWkChzGcz1xM";

    private static TbmqUser user(String name, TbmqUserSpec.AuthenticationType type, TbmqUserSpec.ClientType clientType) {
        TbmqUser u = new TbmqUser();
        u.getMetadata().setName(name);
        u.setSpec(new TbmqUserSpec());
        u.getSpec().setCluster("dev");
        u.getSpec().getAuthentication().setType(type);
        u.getSpec().setClientType(clientType);
        u.getSpec().getAcl().setPublish(List.of("meters/%c/#"));
        u.getSpec().getAcl().setSubscribe(List.of("commands/%c/#"));
        u.getSpec().getAcl().setDenySubscribe(List.of("commands/%c/debug"));
        return u;
    }

    @Test
    void theUsersFileIsTheOneTheBrokerIsTestedWith() throws Exception {
        TbmqUser meter = user("meter-1", TbmqUserSpec.AuthenticationType.PASSWORD, TbmqUserSpec.ClientType.DEVICE);
        TbmqUser gateway = user("gateway", TbmqUserSpec.AuthenticationType.TLS, TbmqUserSpec.ClientType.APPLICATION);
        gateway.getSpec().getAuthentication().setCommonName("gateway.plant-7");
        // Given in reverse: the file is sorted, so the same users always give the same bytes.
        String file = UsersModel.file(List.of(UsersModel.entry(gateway, null), UsersModel.entry(meter, HASH)));
        if (Boolean.getBoolean("tbmq.update-contract")) {
            Files.writeString(CONTRACT, file); // after a deliberate format change; the broker's test must pass with it
        }
        assertThat(file).isEqualTo(Files.readString(CONTRACT));
        assertThat(PasswordHash.verify("meter-secret", HASH)).as("the operator's hash check agrees with the broker's hash").isTrue();
        assertThat(PasswordHash.verify("other", HASH)).isFalse();
    }

    @Test
    void aReadBackFileGivesTheSameEntries() throws Exception {
        TbmqUser meter = user("meter-1", TbmqUserSpec.AuthenticationType.PASSWORD, TbmqUserSpec.ClientType.DEVICE);
        var cluster = new io.tbmq.operator.api.TbmqCluster();
        cluster.getMetadata().setName("dev");
        cluster.getMetadata().setNamespace("iot");
        var secret = UsersModel.secret(cluster, new Names("dev", "iot"), List.of(UsersModel.entry(meter, HASH)));
        List<UsersModel.Entry> back = UsersModel.entries(secret);
        assertThat(back).singleElement().satisfies(e -> {
            assertThat(e.principal()).isEqualTo("meter-1");
            assertThat(e.fields()).containsEntry("password", HASH);
        });
        assertThat(UsersModel.file(back)).isEqualTo(UsersModel.file(List.of(UsersModel.entry(meter, HASH))));
    }
}
