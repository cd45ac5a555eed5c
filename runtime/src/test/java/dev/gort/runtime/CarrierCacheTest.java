package dev.gort.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Regression test: goroutine code compiled by C2 must not reuse a carrier thread read before a
 * yield. Hot loops calling Gosched get OSR-compiled with gosched inlined; if M.current() were
 * inlined too, C2 would hoist Thread.currentThread() out of the loop, and after the first
 * migration to another carrier gosched would tag the goroutine running on the old carrier instead
 * of itself ("execute: continuation yielded without a reason"). Needs GOMAXPROCS &gt; 1 (migration).
 */
class CarrierCacheTest {
    @ParameterizedTest
    @ValueSource(ints = {2, 4})
    void goschedInHotLoopsOnManyCarriers(int procs) {
        final int gs = 23;
        AtomicLong iterations = new AtomicLong();
        Scheduler s = new Scheduler(TestSupport.config(procs));
        s.run(() -> {
            GoSema done = new GoSema(0);
            for (int g = 0; g < gs; g++) {
                Scheduler.current().newproc(() -> {
                    long n = 0;
                    for (int i = 0; i < 200_000; i++) {
                        if (i % 10 == 0) {
                            Scheduler.gosched();
                        }
                        n++;
                    }
                    iterations.addAndGet(n);
                    done.release();
                });
            }
            for (int g = 0; g < gs; g++) {
                done.acquire();
            }
        });
        assertEquals(gs * 200_000L, iterations.get());
    }
}
