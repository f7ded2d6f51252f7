package io.tbmq.broker.session;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import io.netty.channel.DefaultEventLoop;

class HandoffsTest {

    /** An executor that counts the tasks it was handed and runs them at once. */
    static final class CountingExecutor implements Executor {
        int handed;

        @Override
        public void execute(Runnable task) {
            handed++;
            task.run();
        }
    }

    @Test
    void outsideABatchEachTaskGoesAtOnce() {
        CountingExecutor loop = new CountingExecutor();
        List<Integer> ran = new ArrayList<>();
        Handoffs.execute(loop, () -> ran.add(1));
        Handoffs.execute(loop, () -> ran.add(2));
        assertEquals(List.of(1, 2), ran);
        assertEquals(2, loop.handed);
    }

    @Test
    void aBatchHandsEachExecutorOneTaskWhenItEnds() {
        CountingExecutor a = new CountingExecutor();
        CountingExecutor b = new CountingExecutor();
        List<String> ran = new ArrayList<>();
        Handoffs.batch(() -> {
            for (int i = 0; i < 3; i++) {
                int n = i;
                Handoffs.execute(a, () -> ran.add("a" + n));
                Handoffs.execute(b, () -> ran.add("b" + n));
            }
            assertTrue(ran.isEmpty(), "nothing runs before the batch ends");
            assertEquals(0, a.handed + b.handed);
        });
        assertEquals(1, a.handed);
        assertEquals(1, b.handed);
        assertEquals(List.of("a0", "a1", "a2", "b0", "b1", "b2"), ran, "each executor's tasks in the order they were handed");
        assertEquals(0, Handoffs.held());
    }

    @Test
    void aNestedBatchEndsWithTheOutermost() {
        CountingExecutor loop = new CountingExecutor();
        String result = Handoffs.batch(() -> {
            Handoffs.batch(() -> Handoffs.execute(loop, () -> { }));
            assertEquals(0, loop.handed, "the inner batch's end does not release the outer batch's tasks");
            Handoffs.execute(loop, () -> { });
            return "done";
        });
        assertEquals("done", result);
        assertEquals(1, loop.handed);
    }

    @Test
    void aLargeBatchGoesInPartsSoTheFirstSessionsDoNotWaitForTheLast() {
        CountingExecutor loop = new CountingExecutor();
        int[] ran = new int[1];
        Handoffs.batch(() -> {
            for (int i = 0; i < Handoffs.MAX_HELD; i++) {
                Handoffs.execute(loop, () -> ran[0]++);
            }
            assertEquals(1, loop.handed, "released when the bound was reached");
            assertEquals(Handoffs.MAX_HELD, ran[0]);
            Handoffs.execute(loop, () -> ran[0]++);
        });
        assertEquals(2, loop.handed);
        assertEquals(Handoffs.MAX_HELD + 1, ran[0]);
    }

    @Test
    void aFailingTaskDoesNotKeepTheOthersOfItsBatchFromRunning() {
        CountingExecutor loop = new CountingExecutor();
        List<Integer> ran = new ArrayList<>();
        Handoffs.batch(() -> {
            Handoffs.execute(loop, () -> ran.add(1));
            Handoffs.execute(loop, () -> {
                throw new IllegalStateException("boom");
            });
            Handoffs.execute(loop, () -> ran.add(3));
        });
        assertEquals(List.of(1, 3), ran);
    }

    @Test
    void workThatThrowsStillReleasesWhatItHanded() {
        CountingExecutor loop = new CountingExecutor();
        int[] ran = new int[1];
        assertThrows(IllegalStateException.class, () -> Handoffs.batch(() -> {
            Handoffs.execute(loop, () -> ran[0]++);
            throw new IllegalStateException("routing failed");
        }));
        assertEquals(1, ran[0]);
        assertEquals(0, Handoffs.held());
    }

    @Test
    void aRefusingExecutorDoesNotKeepTheOthersFromTheirTasks() {
        Executor shutDown = task -> {
            throw new RejectedExecutionException("event loop shut down");
        };
        CountingExecutor loop = new CountingExecutor();
        int[] ran = new int[1];
        assertThrows(RejectedExecutionException.class, () -> Handoffs.batch(() -> {
            Handoffs.execute(shutDown, () -> { });
            Handoffs.execute(loop, () -> ran[0]++);
        }));
        assertEquals(1, ran[0]);
        assertEquals(0, Handoffs.held());
    }

    @Test
    void theWorksOwnFailureIsTheOneTheCallerHearsOf() {
        Executor shutDown = task -> {
            throw new RejectedExecutionException("event loop shut down");
        };
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> Handoffs.batch(() -> {
            Handoffs.execute(shutDown, () -> { });
            throw new IllegalStateException("routing failed");
        }));
        assertEquals(1, e.getSuppressed().length);
        assertTrue(e.getSuppressed()[0] instanceof RejectedExecutionException);
    }

    @Test
    void onAnEventLoopTasksWaitForTheEndOfTheLoopsCurrentWork() throws Exception {
        DefaultEventLoop redisLoop = new DefaultEventLoop();
        try {
            CountingExecutor mqttLoop = new CountingExecutor();
            int[] handedDuringReply = new int[1];
            // One "read" of the Redis client's loop completes several replies, each handing a session a message.
            redisLoop.submit(() -> {
                for (int reply = 0; reply < 5; reply++) {
                    Handoffs.execute(mqttLoop, () -> { });
                }
                handedDuringReply[0] = mqttLoop.handed;
            }).get(10, TimeUnit.SECONDS);
            CompletableFuture<Integer> after = new CompletableFuture<>();
            redisLoop.execute(() -> after.complete(mqttLoop.handed));
            assertEquals(0, handedDuringReply[0]);
            assertEquals(1, after.get(10, TimeUnit.SECONDS), "one task for the five replies");
        } finally {
            redisLoop.shutdownGracefully(0, 1, TimeUnit.SECONDS);
        }
    }

    @Test
    void onAnEventLoopBatchesWaitForTheEndOfTheLoopsCurrentWork() throws Exception {
        DefaultEventLoop redisLoop = new DefaultEventLoop();
        try {
            CountingExecutor mqttLoop = new CountingExecutor();
            int[] handedDuringRead = new int[1];
            redisLoop.submit(() -> {
                // Each reply of the read is a batch of its own.
                for (int reply = 0; reply < 3; reply++) {
                    Handoffs.batch(() -> {
                        Handoffs.execute(mqttLoop, () -> { });
                        Handoffs.execute(mqttLoop, () -> { });
                    });
                }
                handedDuringRead[0] = mqttLoop.handed;
            }).get(10, TimeUnit.SECONDS);
            CompletableFuture<Integer> after = new CompletableFuture<>();
            redisLoop.execute(() -> after.complete(mqttLoop.handed));
            assertEquals(0, handedDuringRead[0]);
            assertEquals(1, after.get(10, TimeUnit.SECONDS), "one task for the three replies");
        } finally {
            redisLoop.shutdownGracefully(0, 1, TimeUnit.SECONDS);
        }
    }

    @Test
    void onAnEventLoopATaskForThatSameLoopIsNotHeld() throws Exception {
        DefaultEventLoop loop = new DefaultEventLoop();
        try {
            CompletableFuture<Boolean> ranInOrder = new CompletableFuture<>();
            List<Integer> order = new ArrayList<>();
            loop.submit(() -> {
                Handoffs.execute(loop, () -> order.add(1));
                loop.execute(() -> order.add(2));
                loop.execute(() -> ranInOrder.complete(order.equals(List.of(1, 2))));
            }).get(10, TimeUnit.SECONDS);
            assertTrue(ranInOrder.get(10, TimeUnit.SECONDS), "queued like any task of the loop: " + order);
        } finally {
            loop.shutdownGracefully(0, 1, TimeUnit.SECONDS);
        }
    }
}
