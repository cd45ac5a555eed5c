package dev.gort.runtime.trace;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gort.runtime.G;
import dev.gort.runtime.GoSema;
import dev.gort.runtime.M;
import dev.gort.runtime.Scheduler;
import dev.gort.runtime.Syscalls;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * The trace stays valid across {@code runtime.GOMAXPROCS(n)}: procresize moving the caller from a
 * retired P to P0 (Go traces it as GoSched + ProcStop of the old P, then ProcStart + GoStart on P0),
 * retired Ps' queues going to the global queue, and stopTheWorld taking Ps from goroutines in
 * syscalls (Go: ProcSteal).
 */
class TraceGomaxprocsTest {
    /** How long main may wait for the scheduler to put it on a P that the next shrink retires. */
    private static final long PLACE_DEADLINE_NS = 20_000_000_000L;

    /**
     * GOMAXPROCS 4 with busy goroutines (some in syscalls): main waits until it runs on P2 or P3,
     * shrinks to 1 or 2 (retiring its own P), grows back to 4, and repeats; then a shrink that keeps
     * its P and a grow. The replay finds every G where the events put it, and every G finishes.
     */
    @Test
    void resizesWithGoroutinesRunningValidate() {
        int[] shrinkTo = {2, 1, 2, 1};
        AtomicReference<String> failure = new AtomicReference<>();
        List<String> moves = new ArrayList<>();
        Scheduler s = new Scheduler(Workloads.config(4, true));
        s.trace.start(new Tracer.Options().workload("gomaxprocs"));
        s.run(() -> {
            Scheduler rt = Scheduler.current();
            int workers = 6;
            GoSema done = new GoSema("done", 0);
            AtomicBoolean stop = new AtomicBoolean();
            for (int i = 0; i < workers; i++) {
                boolean syscalls = i % 3 == 0;
                rt.newproc(() -> {
                    while (!stop.get()) {
                        if (syscalls) {
                            G g = Syscalls.entersyscall();
                            Workloads.spin(30_000);
                            Syscalls.exitsyscall(g);
                        } else {
                            Workloads.spin(20_000);
                        }
                        Scheduler.gosched();
                    }
                    done.release();
                });
            }
            try {
                for (int n : shrinkTo) {
                    // wait-for-condition: Gosched puts main in the global queue; any P may take it
                    long deadline = System.nanoTime() + PLACE_DEADLINE_NS;
                    while (M.current().p().id < 2) {
                        if (System.nanoTime() - deadline > 0) {
                            throw new AssertionError("main never ran on P2 or P3");
                        }
                        Scheduler.gosched();
                    }
                    int from = M.current().p().id;
                    rt.gomaxprocs(n);
                    moves.add("P" + from + " -> P" + M.current().p().id + " at GOMAXPROCS=" + n);
                    rt.gomaxprocs(4);
                }
                // a shrink that keeps the caller's P (it runs on P0 or P1), then a grow
                while (M.current().p().id >= 2) {
                    Scheduler.gosched();
                }
                rt.gomaxprocs(2);
                rt.gomaxprocs(3);
            } catch (Throwable t) {
                failure.set(t.toString());
            } finally {
                stop.set(true);
                for (int i = 0; i < workers; i++) {
                    done.acquire();
                }
            }
        });
        Trace t = s.trace.stop();
        assertEquals(null, failure.get());
        assertEquals(shrinkTo.length, moves.size());
        for (String mv : moves) {
            assertTrue(mv.contains("-> P0"), "the caller of a shrink that retires its P moves to P0: " + moves);
        }
        TraceValidator.Result res = TraceValidator.validate(t, true, java.util.Map.of());
        assertTrue(res.ok(), () -> "GOMAXPROCS changes " + moves + ": " + res);
        assertEquals(res.goroutines.size(), res.count(TraceValidator.DEAD), () -> res.goroutines.toString());
        assertEquals(2 * shrinkTo.length + 2, t.count(Ev.GOMAXPROCS) - 1); // + the initial status
    }
}
