package dev.gort.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * A carrier's scheduling loop returns to {@code mstart} after each batch of rounds and is entered
 * again ({@link M#SCHEDULE_ROUNDS}: a JVM frame that never returns keeps running code the JIT has
 * discarded), and scheduling carries on across the boundary as if there were none.
 */
class ScheduleBatchTest {
    @Test
    void theLoopReturnsAfterEachBatchOfRoundsAndSchedulingCarriesOnAcrossIt() {
        int batch = M.SCHEDULE_ROUNDS_WARM;
        int yields = 3 * batch + 100; // at GOMAXPROCS=1 each Gosched of a lone goroutine is one round
        Scheduler s = new Scheduler(TestSupport.config(1));
        AtomicReference<M> first = new AtomicReference<>();
        AtomicReference<M> last = new AtomicReference<>();
        int[] batches = new int[2];
        AtomicInteger done = new AtomicInteger();
        s.run(() -> {
            M m = Scheduler.getg().m();
            first.set(m);
            batches[0] = m.scheduleBatches; // read on m's own carrier, which writes it
            for (int i = 0; i < yields; i++) {
                Scheduler.gosched();
                done.incrementAndGet();
            }
            M n = Scheduler.getg().m();
            last.set(n);
            batches[1] = n.scheduleBatches;
        });
        assertEquals(yields, done.get());
        assertSame(first.get(), last.get(), "GOMAXPROCS=1 with no syscall: main stays on its M");
        assertTrue(batches[0] < M.SCHEDULE_WARM_BATCHES, "the M is still in its short batches: " + batches[0]);
        int finished = batches[1] - batches[0];
        // yields rounds from somewhere inside a batch: 3 or 4 batch boundaries crossed
        assertTrue(
                finished == yields / batch || finished == yields / batch + 1,
                "batches finished during " + yields + " rounds of " + batch + ": " + finished);
    }
}
