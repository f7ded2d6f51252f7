package io.tbmq.broker.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.api.Test;

import io.tbmq.localstack.BrokerNode;

/** Debian's mosquitto_pub and mosquitto_sub against the broker, as the README tells users to try it. */
class MosquittoClientsIT {
    private final ItStack it = ItStack.get();
    private final BrokerNode broker = it.broker();

    private List<String> auth() {
        return List.of("-h", "127.0.0.1", "-p", Integer.toString(broker.mqttPort()), "-u", "alice", "-P", ItStack.PASSWORD);
    }

    private Process start(List<String> cmd) throws IOException {
        return new ProcessBuilder(cmd).redirectErrorStream(true).start();
    }

    private static String finish(Process p, int seconds) throws Exception {
        if (!p.waitFor(seconds, TimeUnit.SECONDS)) {
            p.destroyForcibly();
        }
        return new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
    }

    private static int run(List<String> cmd) throws Exception {
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        assertThat(p.waitFor(20, TimeUnit.SECONDS)).isTrue();
        return p.exitValue();
    }

    private List<String> cmd(String tool, String version, String... args) {
        List<String> c = new ArrayList<>(List.of(tool, "-V", version));
        c.addAll(auth());
        c.addAll(List.of(args));
        return c;
    }

    @ParameterizedTest(name = "{0} QoS {1}")
    @CsvSource({"mqttv311,0", "mqttv311,1", "mqttv311,2", "mqttv5,0", "mqttv5,1", "mqttv5,2", "mqttv31,1"})
    void publishAndSubscribeRoundTrip(String version, int qos) throws Exception {
        String topic = "mosq/" + version + "/" + qos;
        Process sub = start(cmd("mosquitto_sub", version, "-t", topic, "-q", Integer.toString(qos), "-C", "3", "-W", "20", "-v"));
        Thread.sleep(800);
        for (int i = 0; i < 3; i++) {
            assertThat(run(cmd("mosquitto_pub", version, "-t", topic, "-q", Integer.toString(qos), "-m", "m" + i))).isZero();
        }
        assertThat(finish(sub, 25)).isEqualTo(topic + " m0\n" + topic + " m1\n" + topic + " m2");
    }

    @Test
    void retainedMessageReachesALaterSubscriber() throws Exception {
        assertThat(run(cmd("mosquitto_pub", "mqttv311", "-t", "mosq/retained", "-r", "-q", "1", "-m", "kept"))).isZero();
        Process sub = start(cmd("mosquitto_sub", "mqttv5", "-t", "mosq/retained", "-C", "1", "-W", "10", "-v"));
        assertThat(finish(sub, 15)).isEqualTo("mosq/retained kept");
        assertThat(run(cmd("mosquitto_pub", "mqttv311", "-t", "mosq/retained", "-r", "-n"))).isZero();
    }

    @Test
    void willIsPublishedWhenTheClientIsKilled() throws Exception {
        Process watcher = start(cmd("mosquitto_sub", "mqttv5", "-t", "mosq/will", "-C", "1", "-W", "20", "-v"));
        Thread.sleep(500);
        Process doomed = start(cmd("mosquitto_sub", "mqttv311", "-t", "mosq/nothing", "-i", "mosq-doomed",
                "--will-topic", "mosq/will", "--will-payload", "gone"));
        Thread.sleep(1_000);
        doomed.destroyForcibly().waitFor(5, TimeUnit.SECONDS); // SIGKILL: no DISCONNECT
        assertThat(finish(watcher, 25)).isEqualTo("mosq/will gone");
    }

    @Test
    void tlsWithTheCaCertificate() throws Exception {
        List<String> tls = List.of("--cafile", it.certs().caCert().toString(), "-h", "localhost", "-p",
                Integer.toString(broker.tlsPort()), "-u", "alice", "-P", ItStack.PASSWORD);
        List<String> subCmd = new ArrayList<>(List.of("mosquitto_sub", "-t", "mosq/tls", "-C", "1", "-W", "15"));
        subCmd.addAll(tls);
        Process sub = start(subCmd);
        Thread.sleep(1_000);
        List<String> pubCmd = new ArrayList<>(List.of("mosquitto_pub", "-t", "mosq/tls", "-m", "secure", "-q", "1"));
        pubCmd.addAll(tls);
        assertThat(run(pubCmd)).isZero();
        assertThat(finish(sub, 20)).isEqualTo("secure");
    }

    @Test
    void wrongPasswordIsRefused() throws Exception {
        List<String> c = new ArrayList<>(List.of("mosquitto_pub", "-V", "mqttv5", "-h", "127.0.0.1", "-p",
                Integer.toString(broker.mqttPort()), "-u", "alice", "-P", "wrong", "-t", "x", "-m", "y"));
        Process p = start(c);
        String out = finish(p, 10);
        assertThat(p.exitValue()).isNotZero();
        assertThat(out).containsIgnoringCase("bad user name or password");
    }
}
