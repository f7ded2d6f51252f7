package io.tbmq.operator.provision;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;

import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.ContainerStatus;
import io.fabric8.kubernetes.api.model.ContainerStatusBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;

class PodDiagnosisTest {

    @Test
    void aCrashLoopingBrokerIsReportedWithWhyItsLastStartFailed() {
        String why = "node tbmq-broker-0 failed to start while checking that no other broker runs with node id tbmq-broker-0:\n"
                + "\tanother broker process (5f1c, pod 0a-1b) runs with node id tbmq-broker-0, so this one does not start";
        Pod pod = pod("tbmq-broker-0", crashLooping(1, why));

        assertThat(PodDiagnosis.problem(List.of(pod))).hasValue("tbmq-broker-0: CrashLoopBackOff (back-off 40s restarting failed"
                + " container=broker); it exited with code 1: node tbmq-broker-0 failed to start while checking that no other broker"
                + " runs with node id tbmq-broker-0: another broker process (5f1c, pod 0a-1b) runs with node id tbmq-broker-0,"
                + " so this one does not start");
    }

    @Test
    void aCrashWithoutATerminationMessageStillGivesTheExitCode() {
        assertThat(PodDiagnosis.problem(List.of(pod("tbmq-redis-1", crashLooping(137, null)))))
                .hasValue("tbmq-redis-1: CrashLoopBackOff (back-off 40s restarting failed container=broker); it exited with code 137");
    }

    @Test
    void aLongMessageIsCutSoTheConditionStaysReadable() {
        String problem = PodDiagnosis.problem(List.of(pod("tbmq-broker-1", crashLooping(1, "x".repeat(5000))))).orElseThrow();

        assertThat(problem).endsWith("x...");
        assertThat(problem.substring(problem.indexOf(": x") + 2)).hasSize(PodDiagnosis.MESSAGE_LIMIT);
    }

    @Test
    void anImagePullProblemHasNoExitToReport() {
        ContainerStatus pulling = new ContainerStatusBuilder().withName("broker").withNewState().withNewWaiting()
                .withReason("ImagePullBackOff").withMessage("Back-off pulling image \"tbmq/broker:9\"").endWaiting().endState().build();

        assertThat(PodDiagnosis.problem(List.of(pod("tbmq-broker-0", pulling))))
                .hasValue("tbmq-broker-0: ImagePullBackOff (Back-off pulling image \"tbmq/broker:9\")");
    }

    @Test
    void aMissingSecretIsNotBlamedOnAnEarlierCrash() {
        ContainerStatus waiting = new ContainerStatusBuilder().withName("broker").withNewState().withNewWaiting()
                .withReason("CreateContainerConfigError").withMessage("secret \"dev-redis\" not found").endWaiting().endState()
                .withNewLastState().withNewTerminated().withExitCode(1).withMessage("an earlier failure").endTerminated()
                .endLastState().build();

        assertThat(PodDiagnosis.problem(List.of(pod("tbmq-broker-0", waiting))))
                .hasValue("tbmq-broker-0: CreateContainerConfigError (secret \"dev-redis\" not found)");
    }

    @Test
    void aRunningPodIsNoProblem() {
        ContainerStatus running = new ContainerStatusBuilder().withName("broker").withNewState().withNewRunning().endRunning()
                .endState().withNewLastState().withNewTerminated().withExitCode(1).withMessage("an earlier failure").endTerminated()
                .endLastState().build();

        assertThat(PodDiagnosis.problem(List.of(pod("tbmq-broker-0", running)))).isEmpty();
    }

    private static ContainerStatus crashLooping(int exitCode, String message) {
        return new ContainerStatusBuilder().withName("broker").withRestartCount(3).withNewState().withNewWaiting()
                .withReason("CrashLoopBackOff").withMessage("back-off 40s restarting failed container=broker").endWaiting().endState()
                .withNewLastState().withNewTerminated().withExitCode(exitCode).withReason("Error").withMessage(message).endTerminated()
                .endLastState().build();
    }

    private static Pod pod(String name, ContainerStatus status) {
        return new PodBuilder().withNewMetadata().withName(name).endMetadata().withNewStatus().withPhase("Running")
                .withContainerStatuses(status).endStatus().build();
    }
}
