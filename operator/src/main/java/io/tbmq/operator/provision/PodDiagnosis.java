package io.tbmq.operator.provision;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Optional;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import io.fabric8.kubernetes.api.model.ContainerStateTerminated;
import io.fabric8.kubernetes.api.model.ContainerStatus;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodCondition;

/**
 * Why a component's pods are not ready, in the words Kubernetes and the broker use: a pod that
 * cannot be scheduled (and the resource it lacks), a container that cannot start (image, crash,
 * configuration; for a crash, the termination message the broker wrote), or what a broker's
 * readiness check says it is waiting for.
 */
public final class PodDiagnosis {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(1)).build();
    static final List<String> STUCK = List.of("ImagePullBackOff", "ErrImagePull", "ErrImageNeverPull", "CrashLoopBackOff",
            "CreateContainerConfigError", "CreateContainerError", "InvalidImageName", "RunContainerError");
    /** Waiting after an exit: what the container said as it exited is why (not so for an image or a missing Secret). */
    static final List<String> CRASHED = List.of("CrashLoopBackOff", "RunContainerError");
    /** Enough for a broker's reason and its cause; status conditions are read in one line. */
    static final int MESSAGE_LIMIT = 600;

    private PodDiagnosis() {
    }

    /** The first problem Kubernetes reports for these pods, as "pod: what". */
    public static Optional<String> problem(List<Pod> pods) {
        for (Pod pod : pods) {
            String name = pod.getMetadata().getName();
            if (pod.getStatus() == null) {
                continue;
            }
            if (pod.getStatus().getConditions() != null) {
                for (PodCondition c : pod.getStatus().getConditions()) {
                    if ("PodScheduled".equals(c.getType()) && "False".equals(c.getStatus())) {
                        return Optional.of(name + " cannot be scheduled: " + c.getMessage());
                    }
                }
            }
            if (pod.getStatus().getContainerStatuses() != null) {
                for (ContainerStatus cs : pod.getStatus().getContainerStatuses()) {
                    var waiting = cs.getState() == null ? null : cs.getState().getWaiting();
                    var terminated = cs.getLastState() == null ? null : cs.getLastState().getTerminated();
                    if (waiting != null && STUCK.contains(waiting.getReason())) {
                        return Optional.of(name + ": " + waiting.getReason()
                                + (waiting.getMessage() == null ? "" : " (" + waiting.getMessage() + ")")
                                + (CRASHED.contains(waiting.getReason()) ? lastExit(terminated) : ""));
                    }
                    if (terminated != null && "OOMKilled".equals(terminated.getReason())) {
                        return Optional.of(name + " was OOMKilled (restarts: " + cs.getRestartCount() + "): raise its memory limit");
                    }
                }
            }
        }
        return Optional.empty();
    }

    /**
     * The exit before a restart, with what the container wrote as its termination message (a broker
     * writes why its start failed); empty when the container has not exited or exited cleanly.
     */
    static String lastExit(ContainerStateTerminated terminated) {
        if (terminated == null || terminated.getExitCode() == null || terminated.getExitCode() == 0) {
            return "";
        }
        String message = terminated.getMessage() == null ? "" : terminated.getMessage().strip().replaceAll("\\s+", " ");
        if (message.length() > MESSAGE_LIMIT) {
            message = message.substring(0, MESSAGE_LIMIT - 3) + "...";
        }
        return "; it exited with code " + terminated.getExitCode() + (message.isEmpty() ? "" : ": " + message);
    }

    /**
     * What a running, not-ready broker's readiness check says (its {@code status} data), asked at its
     * pod address; empty when it cannot be asked.
     */
    public static Optional<String> brokerReadiness(Pod pod, int httpPort) {
        if (pod.getStatus() == null || pod.getStatus().getPodIP() == null || pod.getStatus().getPodIP().isBlank()) {
            return Optional.empty();
        }
        try {
            HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(URI.create("http://" + pod.getStatus().getPodIP() + ":" + httpPort
                    + "/q/health/ready")).timeout(Duration.ofSeconds(2)).GET().build(), HttpResponse.BodyHandlers.ofString());
            return readinessReason(r.body()).map(reason -> pod.getMetadata().getName() + ": " + reason);
        } catch (java.io.IOException | RuntimeException e) {
            return Optional.empty();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Optional.empty();
        }
    }

    /** The {@code data.status} of the first check that is DOWN in a MicroProfile Health reply. */
    static Optional<String> readinessReason(String body) {
        try {
            JsonNode root = JSON.readTree(body);
            for (JsonNode check : root.path("checks")) {
                if ("DOWN".equals(check.path("status").asText())) {
                    String status = check.path("data").path("status").asText("");
                    return Optional.of(status.isBlank() ? check.path("name").asText() + " is down" : status);
                }
            }
        } catch (java.io.IOException e) {
            // not a health reply
        }
        return Optional.empty();
    }
}
