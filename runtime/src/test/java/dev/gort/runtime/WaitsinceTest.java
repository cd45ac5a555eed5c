package dev.gort.runtime;

import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A parked G's waitsince is stamped from sysmon's coarse clock (no System.nanoTime() per park); it
 * must still be a plausible "blocked since" for dumps: set, not in the future, not far in the past.
 */
class WaitsinceTest {
    @ParameterizedTest
    @ValueSource(ints = {1, 2})
    void parkedGoroutineHasARecentWaitsince(int procs) {
        long[] stamps = new long[3];
        Scheduler s = new Scheduler(TestSupport.config(procs));
        s.run(() -> {
            GoSema sema = new GoSema(0);
            GoSema parked = new GoSema(0);
            G g = Scheduler.current().newproc(() -> {
                parked.release();
                sema.acquire();
            });
            parked.acquire();
            // park_m stamps waitsince after its CAS to _Gwaiting: at GOMAXPROCS=2 main may run on
            // the other P (stolen from the goroutine's runnext) between the two, so wait for both;
            // bounded, so that a runtime that never stamps still fails below
            long deadline = System.nanoTime() + 10_000_000_000L;
            while ((g.readgstatus() != G._Gwaiting || g.waitsince == 0) && System.nanoTime() < deadline) {
                Scheduler.gosched();
            }
            stamps[0] = g.waitsince;
            stamps[1] = System.nanoTime();
            sema.release();
        });
        long waitsince = stamps[0];
        long now = stamps[1];
        assertTrue(waitsince != 0, "waitsince not set");
        assertTrue(waitsince <= now, "waitsince in the future");
        assertTrue(now - waitsince < 5_000_000_000L, "waitsince " + (now - waitsince) + " ns old");
    }
}
