package io.tbmq.localstack;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Chooses free TCP ports on loopback. Ports are drawn at random from a range below the kernel's
 * ephemeral range so that parallel runs (and outgoing client sockets) rarely collide, and every
 * port handed out by this JVM is remembered so one run never gets the same port twice.
 */
public final class Ports {
    private static final int LOW = 20_000;
    private static final int HIGH = 29_999;
    /** Redis Cluster's bus listens on the client port + 10000. */
    public static final int REDIS_BUS_OFFSET = 10_000;
    private static final Set<Integer> handedOut = new HashSet<>();

    private Ports() {
    }

    public static synchronized int free() {
        return pick(false);
    }

    /** A port whose port + 10000 is free too, as a Redis Cluster node needs. */
    public static synchronized int freeWithBus() {
        return pick(true);
    }

    /** {@code count} consecutive free ports, for processes users address by a predictable number. */
    public static synchronized int freeRange(int count) {
        for (int attempt = 0; attempt < 500; attempt++) {
            int first = ThreadLocalRandom.current().nextInt(LOW, HIGH - count);
            boolean all = true;
            for (int p = first; p < first + count && all; p++) {
                all = !handedOut.contains(p) && bindable(p);
            }
            if (all) {
                for (int p = first; p < first + count; p++) {
                    handedOut.add(p);
                }
                return first;
            }
        }
        throw new IllegalStateException("no " + count + " consecutive free ports in " + LOW + "-" + HIGH);
    }

    private static int pick(boolean withBus) {
        for (int attempt = 0; attempt < 500; attempt++) {
            int port = ThreadLocalRandom.current().nextInt(LOW, HIGH);
            if (handedOut.contains(port) || !bindable(port)) {
                continue;
            }
            if (withBus && !bindable(port + REDIS_BUS_OFFSET)) {
                continue;
            }
            handedOut.add(port);
            return port;
        }
        throw new IllegalStateException("no free port found in " + LOW + "-" + HIGH);
    }

    public static boolean bindable(int port) {
        try (ServerSocket socket = new ServerSocket()) {
            socket.setReuseAddress(true); // as servers bind: TIME_WAIT leftovers must not count as busy
            socket.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
            return true;
        } catch (IOException e) {
            return false;
        }
    }
}
