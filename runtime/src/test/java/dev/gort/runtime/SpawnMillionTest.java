package dev.gort.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * 1,000,000 goroutines spawned and finished in one run, counted down on an AtomicInteger; the last
 * one wakes main through a goroutine semaphore. The spawner calls Gosched every 4096 spawns, so the
 * Gs in flight stay bounded (each Gosched sends main to the global queue tail, behind the spill
 * batches), which keeps memory sane; it is the finishing, not the throttling, that is asserted.
 */
class SpawnMillionTest {
    static final int N = 1_000_000;

    @ParameterizedTest(name = "GOMAXPROCS={0}")
    @ValueSource(ints = {1, 2})
    void millionGoroutinesSpawnAndFinish(int procs) {
        AtomicInteger left = new AtomicInteger(N);
        AtomicLong sum = new AtomicLong();
        AtomicInteger numAfter = new AtomicInteger(-1);
        Scheduler s = new Scheduler(TestSupport.config(procs));
        long t0 = System.nanoTime();
        s.run(() -> {
            Scheduler rt = Scheduler.current();
            GoSema done = new GoSema(0);
            for (int i = 0; i < N; i++) {
                int k = i;
                rt.newproc(() -> {
                    sum.addAndGet(k);
                    if (left.decrementAndGet() == 0) {
                        done.release();
                    }
                });
                if ((i & 4095) == 4095) {
                    Scheduler.gosched();
                }
            }
            done.acquire();
            // The last G released main just before it exited: let it finish (it is gone once
            // NumGoroutine is back to 1).
            while (rt.numGoroutine() > 1) {
                Scheduler.gosched();
            }
            numAfter.set(rt.numGoroutine());
        });
        long ms = (System.nanoTime() - t0) / 1_000_000;
        assertEquals(0, left.get());
        assertEquals((long) N * (N - 1) / 2, sum.get(), "every goroutine ran exactly once");
        assertEquals(1, numAfter.get());
        assertEquals(N + 1, s.goroutinesCreated());
        System.out.printf("1M goroutines, GOMAXPROCS=%d: %d ms (%d ns per goroutine)%n", procs, ms, ms * 1_000_000 / N);
    }
}
