package dev.gort.runtime.trace;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gort.runtime.GoSema;
import dev.gort.runtime.Scheduler;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A carrier that writes to a tracer without its M (here: the goroutines of runtime A creating
 * goroutines in a traced runtime B) has one buffer per carrier, never one per goroutine: under
 * goroutine-scoped ThreadLocals ({@code -Dgort.threadlocals=goroutine}) a ThreadLocal on a carrier
 * is the running goroutine's, so a buffer found through one was a buffer per goroutine of A.
 */
@Timeout(60)
class TraceCarrierBuffersTest {
    private static final int GOROUTINES = 40;

    @Test
    void anotherRuntimesCarriersWriteOneBufferEach() throws Exception {
        Scheduler a = new Scheduler(Workloads.config(1, true).withName("A"));
        assertEquals("goroutine", a.config().settings().threadLocals(), "the test forks open java.lang");
        Scheduler b = new Scheduler(Workloads.config(1, true).withName("B"));
        b.trace.start(new Tracer.Options().workload("carrier buffers"));
        GoSema bDone = new GoSema("bDone", 0);
        CountDownLatch bStarted = new CountDownLatch(1);
        AtomicReference<Throwable> failure = new AtomicReference<>();
        Thread bMain = new Thread(() -> {
            try {
                b.run(() -> {
                    // A's goroutines (outside B) create B's: not a deadlock while they may
                    try (var outside = b.externalWaker()) {
                        bStarted.countDown();
                        for (int i = 0; i < GOROUTINES; i++) {
                            bDone.acquire();
                        }
                    }
                });
            } catch (Throwable t) {
                failure.set(t);
            }
        });
        bMain.start();
        bStarted.await();
        int[] aCarriers = new int[1];
        a.run(() -> {
            GoSema aDone = new GoSema("aDone", 0);
            for (int i = 0; i < GOROUTINES; i++) {
                a.newproc(() -> {
                    b.newproc(bDone::release); // from A's carrier: B's tracer has no M to use
                    aDone.release();
                });
            }
            for (int i = 0; i < GOROUTINES; i++) {
                aDone.acquire();
            }
            aCarriers[0] = a.allm().size(); // every M A started (none leaves before main returns)
        });
        bMain.join();
        assertEquals(null, failure.get());
        long fromA = b.trace.session().bufs.stream()
                .filter(buf -> buf.mid == -1 && buf.owner.startsWith("A-"))
                .count();
        assertTrue(fromA >= 1, "no buffer for A's carriers: nothing was tested");
        assertTrue(
                fromA <= aCarriers[0],
                fromA + " buffers written from A's " + aCarriers[0] + " carriers: one per goroutine, not per carrier");
        b.trace.stop();
    }
}
