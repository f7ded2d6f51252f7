package io.tbmq.operator.validation;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.util.ArrayList;
import java.util.List;

import io.tbmq.operator.api.Mode;
import io.tbmq.operator.api.TbmqClusterSpec;

/**
 * External Kafka and Redis must answer at the addresses the spec gives, or the brokers will not
 * start. Checked from the operator's pod with a TCP connect: if none of the listed addresses
 * answers, the field is named in a Degraded condition (what already runs is left alone).
 */
public final class Reachability {
    static final int CONNECT_TIMEOUT_MILLIS = 2000;

    private Reachability() {
    }

    public static List<FieldError> check(TbmqClusterSpec spec) {
        List<FieldError> errors = new ArrayList<>();
        if (spec.getKafka().getMode() == Mode.EXTERNAL) {
            anyAnswers(errors, "spec.kafka.bootstrapServers", List.of(spec.getKafka().getBootstrapServers().split(",")));
        }
        if (spec.getRedis().getMode() == Mode.EXTERNAL) {
            anyAnswers(errors, "spec.redis.nodes", spec.getRedis().getNodes());
        }
        return errors;
    }

    private static void anyAnswers(List<FieldError> errors, String field, List<String> addresses) {
        for (String address : addresses) {
            if (answers(address.trim())) {
                return;
            }
        }
        errors.add(new FieldError(field, "none of " + addresses + " accepts connections from the operator"));
    }

    static boolean answers(String hostPort) {
        int colon = hostPort.lastIndexOf(':');
        if (colon <= 0) {
            return false;
        }
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress(hostPort.substring(0, colon), Integer.parseInt(hostPort.substring(colon + 1))),
                    CONNECT_TIMEOUT_MILLIS);
            return true;
        } catch (IOException | NumberFormatException e) {
            return false;
        }
    }
}
