package io.tbmq.e2e;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.tbmq.localstack.Ports;

/**
 * A real Kubernetes control plane on loopback (etcd, kube-apiserver, controller-manager, scheduler,
 * kwok with fake nodes), built once by e2e/control-plane/setup.sh and cached, started on free ports
 * and stopped by the PIDs its start script recorded.
 */
final class ControlPlane implements AutoCloseable {
    private final Path scripts;
    private final Path run;
    private final Map<String, String> env;

    private ControlPlane(Path scripts, Path run, Map<String, String> env) {
        this.scripts = scripts;
        this.run = run;
        this.env = env;
    }

    static ControlPlane start(Path repo, Path work, int fakeNodes) throws IOException, InterruptedException {
        Path scripts = repo.resolve("e2e/control-plane");
        Files.createDirectories(work);
        sh(scripts.resolve("setup.sh"), Map.of(), work.resolve("setup.log"), 40);
        Path run = work.resolve("k8s");
        int etcd = Ports.freeRange(3);
        Map<String, String> env = Map.of(
                "RUN", run.toString(),
                "PKI", work.resolve("pki").toString(),
                "API_PORT", Integer.toString(Ports.free()),
                "ETCD_PORT", Integer.toString(etcd),
                "KCM_PORT", Integer.toString(Ports.free()),
                "SCHEDULER_PORT", Integer.toString(Ports.free()),
                "KWOK_PORT", Integer.toString(Ports.free()),
                "KWOK_NODES", Integer.toString(fakeNodes));
        ControlPlane plane = new ControlPlane(scripts, run, env);
        try {
            sh(scripts.resolve("start.sh"), env, work.resolve("start.log"), 3);
        } catch (IOException | RuntimeException e) {
            plane.close();
            throw e;
        }
        return plane;
    }

    KubernetesClient client() throws IOException {
        String kubeconfig = Files.readString(run.resolve("admin.kubeconfig"));
        Config config = Config.fromKubeconfig(kubeconfig);
        return userClient(config);
    }

    /**
     * A client for the tests' own calls, on the user's side (kubectl's role). It uses the JDK's HTTP
     * client: fabric8 retries a request that fails with an IOException, which is how the JDK client
     * reports a pooled connection the API server had closed, while Vert.x reports HttpClosedException,
     * which fabric8 does not retry (fabric8 kubernetes-client issue 7450; OperatorE2E's first request
     * failed on one once). The operator's own clients keep Vert.x, as in its image.
     */
    static KubernetesClient userClient(Config config) {
        return new KubernetesClientBuilder().withConfig(config)
                .withHttpClientFactory(new io.fabric8.kubernetes.client.jdkhttp.JdkHttpClientFactory()).build();
    }

    /** The kubectl built with the control plane (make deploy uses it when none is on PATH). */
    static Path kubectl() {
        String root = System.getenv().getOrDefault("K8S_CP_ROOT", System.getProperty("user.home") + "/.cache/tbmq-k8s");
        return Path.of(root, "bin", "kubectl");
    }

    /** A client acting as the given ServiceAccount (the admin may impersonate): proves what its RBAC allows. */
    KubernetesClient clientAs(String namespace, String serviceAccount) throws IOException {
        return clientAs(namespace, serviceAccount, new java.util.concurrent.ConcurrentLinkedQueue<>());
    }

    /** As {@link #clientAs(String, String)}, recording "METHOD path?query" of every request into {@code requests}. */
    KubernetesClient clientAs(String namespace, String serviceAccount, java.util.Queue<String> requests) throws IOException {
        Config config = Config.fromKubeconfig(Files.readString(run.resolve("admin.kubeconfig")));
        config.setImpersonateUsername("system:serviceaccount:" + namespace + ":" + serviceAccount);
        config.setImpersonateGroups("system:serviceaccounts", "system:serviceaccounts:" + namespace, "system:authenticated");
        return new KubernetesClientBuilder().withConfig(config)
                .withHttpClientFactory(new io.fabric8.kubernetes.client.vertx.VertxHttpClientFactory())
                .withHttpClientBuilderConsumer(b -> b.addOrReplaceInterceptor("requests",
                new io.fabric8.kubernetes.client.http.Interceptor() {
                    @Override
                    public void before(io.fabric8.kubernetes.client.http.BasicBuilder builder,
                            io.fabric8.kubernetes.client.http.HttpRequest request, RequestTags tags) {
                        java.net.URI uri = request.uri();
                        requests.add(request.method() + " " + uri.getPath() + (uri.getQuery() == null ? "" : "?" + uri.getQuery()));
                    }
                })).build();
    }

    /** Runs a make target of the repository against this control plane; returns its output. */
    String make(Path repo, String target) throws IOException, InterruptedException {
        ProcessBuilder pb = new ProcessBuilder("make", "--no-print-directory", target).directory(repo.toFile())
                .redirectErrorStream(true);
        pb.environment().put("KUBECONFIG", kubeconfig().toString());
        pb.environment().put("KUBECTL", kubectl().toString());
        Process p = pb.start();
        String out = new String(p.getInputStream().readAllBytes());
        if (!p.waitFor(2, TimeUnit.MINUTES) || p.exitValue() != 0) {
            throw new IllegalStateException("make " + target + " failed:\n" + out);
        }
        return out;
    }

    Path kubeconfig() {
        return run.resolve("admin.kubeconfig");
    }

    @Override
    public void close() {
        try {
            sh(scripts.resolve("stop.sh"), env, run.resolveSibling("stop.log"), 1);
        } catch (IOException | InterruptedException e) {
            throw new IllegalStateException("could not stop the control plane: " + e.getMessage(), e);
        }
    }

    private static void sh(Path script, Map<String, String> env, Path log, int timeoutMinutes) throws IOException,
            InterruptedException {
        ProcessBuilder pb = new ProcessBuilder(List.of("bash", script.toString())).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()));
        pb.environment().putAll(env);
        Process p = pb.start();
        if (!p.waitFor(timeoutMinutes, TimeUnit.MINUTES)) {
            p.destroyForcibly();
            throw new IllegalStateException(script.getFileName() + " did not finish within " + timeoutMinutes + " min, see " + log);
        }
        if (p.exitValue() != 0) {
            throw new IllegalStateException(script.getFileName() + " failed (exit " + p.exitValue() + "): "
                    + String.join("\n", Files.readAllLines(log).stream().skip(Math.max(0, Files.readAllLines(log).size() - 20))
                            .toList()));
        }
    }
}
