package io.tbmq.broker.testing;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.util.ResourceLeakDetector;
import io.netty.util.ResourceLeakDetectorFactory;

/**
 * Registered for every test class (META-INF/services): installs a recording leak detector at
 * PARANOID level before Netty allocates anything, and fails a test class during which a buffer
 * was garbage-collected without being released.
 */
public final class NettyLeakGuard implements AfterAllCallback {
    private static final List<String> LEAKS = new CopyOnWriteArrayList<>();

    static {
        ResourceLeakDetector.setLevel(ResourceLeakDetector.Level.PARANOID);
        ResourceLeakDetectorFactory.setResourceLeakDetectorFactory(new ResourceLeakDetectorFactory() {
            @Override
            public <T> ResourceLeakDetector<T> newResourceLeakDetector(Class<T> resource, int samplingInterval, long maxActive) {
                return new ResourceLeakDetector<>(resource, samplingInterval) {
                    @Override
                    protected void reportTracedLeak(String resourceType, String records) {
                        LEAKS.add(resourceType + records);
                        super.reportTracedLeak(resourceType, records);
                    }

                    @Override
                    protected void reportUntracedLeak(String resourceType) {
                        LEAKS.add(resourceType);
                        super.reportUntracedLeak(resourceType);
                    }
                };
            }
        });
    }

    /** Installs the recording detector (class initialisation does it); for fuzzers outside JUnit. */
    public static void install() {
    }

    /** Leaks reported since the last call, emptied. */
    public static List<String> drainLeaks() {
        List<String> copy = List.copyOf(LEAKS);
        LEAKS.removeAll(copy);
        return copy;
    }

    @Override
    public void afterAll(ExtensionContext context) throws InterruptedException {
        // Leaks are reported when a collected buffer's reference is polled, which happens on allocation.
        for (int i = 0; i < 3; i++) {
            System.gc();
            Thread.sleep(50);
            for (int j = 0; j < 100; j++) {
                ByteBuf buf = PooledByteBufAllocator.DEFAULT.buffer(16);
                buf.release();
            }
        }
        if (!LEAKS.isEmpty()) {
            String first = LEAKS.get(0);
            LEAKS.clear();
            throw new AssertionError("Netty buffer leak in " + context.getDisplayName() + ":\n" + first);
        }
    }
}
