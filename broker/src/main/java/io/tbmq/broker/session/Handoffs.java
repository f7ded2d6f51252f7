package io.tbmq.broker.session;

import java.util.ArrayList;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;

import org.jboss.logging.Logger;

import io.netty.util.concurrent.EventExecutor;
import io.netty.util.internal.ThreadExecutorMap;

/**
 * Hands the tasks of a batch of messages to the MQTT event loops as one task per event loop, not
 * one per session. A thread that gives many sessions a message each (a routing consumer's poll, a
 * Redis reply, a downlink poll) would otherwise post a task per session, and an event loop woken
 * for the first may go back to sleep and be woken again for the next: a context switch each time.
 *
 * <p>Inside {@link #batch}, {@link #execute} holds the tasks until the batch ends. On a Netty event
 * loop (the Redis client's), inside a batch or not, they are held until the loop has finished what
 * it is processing now, such as every reply of one read. Anywhere else they go at once. Held tasks go early past
 * {@link #MAX_HELD}, so the first sessions of a large batch do not wait for the last.
 */
public final class Handoffs {
    private static final Logger LOG = Logger.getLogger(Handoffs.class);
    private static final ThreadLocal<Handoffs> CURRENT = ThreadLocal.withInitial(Handoffs::new);
    static final int MAX_HELD = 256;

    /** The tasks held for one executor; handed to it as one task. */
    private static final class Group implements Runnable {
        final Executor executor;
        final ArrayList<Runnable> tasks = new ArrayList<>();

        Group(Executor executor) {
            this.executor = executor;
        }

        @Override
        public void run() {
            for (Runnable task : tasks) {
                try {
                    task.run();
                } catch (RuntimeException | Error e) {
                    // One failing task must not keep the others of its batch from running.
                    LOG.warnf(e, "a handed-off task failed");
                }
            }
        }
    }

    private final ArrayList<Group> groups = new ArrayList<>(2);
    private final Runnable releaseAfterLoopTurn = this::releaseAfterLoopTurn;
    private int held;
    private int depth;
    private boolean releaseScheduled;

    private Handoffs() {
    }

    /** Runs {@code work}; the tasks it hands to executors through {@link #execute} go when it returns. */
    public static void batch(Runnable work) {
        batch(() -> {
            work.run();
            return null;
        });
    }

    /** {@link #batch(Runnable)} for work with a result. */
    public static <T> T batch(java.util.function.Supplier<T> work) {
        Handoffs h = CURRENT.get();
        h.depth++;
        T result;
        try {
            result = work.get();
        } catch (RuntimeException | Error e) {
            try {
                h.endBatch();
            } catch (RuntimeException releaseFailed) {
                // The work's own failure is the one the caller hears of.
                e.addSuppressed(releaseFailed);
            }
            throw e;
        }
        h.endBatch();
        return result;
    }

    /** Runs {@code task} on {@code executor}: now, or when the current batch ends. */
    public static void execute(Executor executor, Runnable task) {
        Handoffs h = CURRENT.get();
        if (h.depth == 0 && !h.releaseScheduled) {
            EventExecutor loop = ThreadExecutorMap.currentExecutor();
            if (loop == null || loop == executor || !h.scheduleRelease(loop)) {
                executor.execute(task);
                return;
            }
        }
        h.hold(executor, task);
    }

    /** Tasks held on this thread (for tests). */
    static int held() {
        return CURRENT.get().held;
    }

    private boolean scheduleRelease(EventExecutor loop) {
        try {
            loop.execute(releaseAfterLoopTurn);
        } catch (RejectedExecutionException e) {
            return false;
        }
        releaseScheduled = true;
        return true;
    }

    private void hold(Executor executor, Runnable task) {
        Group group = null;
        for (int i = 0; i < groups.size(); i++) {
            if (groups.get(i).executor == executor) {
                group = groups.get(i);
                break;
            }
        }
        if (group == null) {
            group = new Group(executor);
            groups.add(group);
        }
        group.tasks.add(task);
        if (++held >= MAX_HELD) {
            release();
        }
    }

    private void endBatch() {
        if (--depth > 0 || releaseScheduled || groups.isEmpty()) {
            return;
        }
        // On an event loop, a batch (one Redis reply) waits for the others the loop is processing (the rest of the read).
        EventExecutor loop = ThreadExecutorMap.currentExecutor();
        if (loop == null || !scheduleRelease(loop)) {
            release();
        }
    }

    private void releaseAfterLoopTurn() {
        releaseScheduled = false;
        if (depth == 0) {
            release();
        }
    }

    private void release() {
        if (groups.isEmpty()) {
            return;
        }
        Group[] ready = groups.toArray(Group[]::new);
        groups.clear();
        held = 0;
        RuntimeException failure = null;
        for (Group group : ready) {
            try {
                group.executor.execute(group);
            } catch (RuntimeException e) {
                // Every other executor still gets its tasks; the caller hears of the first failure.
                if (failure == null) {
                    failure = e;
                }
            }
        }
        if (failure != null) {
            throw failure;
        }
    }
}
