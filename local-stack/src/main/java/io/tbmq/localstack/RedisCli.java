package io.tbmq.localstack;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** The few Redis administration calls the stack needs, over a raw socket or {@code redis-cli}. */
public final class RedisCli {
    private RedisCli() {
    }

    static boolean ping(int port) {
        return command(port, "PING").startsWith("+PONG");
    }

    /** Sends one inline command and returns the first reply chunk ("" on any error). */
    public static String command(int port, String inline) {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress("127.0.0.1", port), 500);
            socket.setSoTimeout(2000);
            OutputStream out = socket.getOutputStream();
            out.write((inline + "\r\n").getBytes(StandardCharsets.UTF_8));
            out.flush();
            InputStream in = socket.getInputStream();
            byte[] buf = new byte[64 * 1024];
            int n = in.read(buf);
            return n <= 0 ? "" : new String(buf, 0, n, StandardCharsets.UTF_8);
        } catch (IOException e) {
            return "";
        }
    }

    /** Runs {@code redis-cli} with the given arguments; fails with its output when it exits non-zero. */
    static String run(List<String> args) {
        List<String> cmd = new java.util.ArrayList<>();
        cmd.add(Tools.require("redis-cli", "redis-tools").toString());
        cmd.addAll(args);
        try {
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
            p.getOutputStream().close();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
                throw new IllegalStateException("redis-cli " + String.join(" ", args) + " failed:\n" + out);
            }
            return out;
        } catch (IOException e) {
            throw new IllegalStateException("could not run redis-cli: " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
