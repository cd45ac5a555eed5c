package dev.gort.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * The 4-ary heap with lazy stop/reset against a model, inside a GOMAXPROCS=1 runtime: the test
 * goroutine never yields, so its M never runs the heap; the test itself calls check with a virtual
 * "now" far in the future of every real timer.
 */
class TimerHeapTest {
    /** Far enough that the M's own check (real nanotime) never finds anything due. */
    private static final long BASE = Scheduler.nanotime() + 3_600_000_000_000L;

    private static void inRuntime(Runnable body) {
        AtomicReference<Throwable> err = new AtomicReference<>();
        Scheduler s = new Scheduler(TestSupport.config(1));
        s.run(() -> {
            try {
                body.run();
            } catch (Throwable t) {
                err.set(t);
            }
        });
        if (err.get() != null) {
            throw new AssertionError(err.get());
        }
    }

    @Test
    void firesInWhenOrderAcrossStopsAndResets() {
        inRuntime(() -> {
            Scheduler s = Scheduler.current();
            TimerHeap heap = M.current().p.timers;
            Random rnd = new Random(42);
            final int n = 2000;
            List<Long> fired = new ArrayList<>();
            Timer[] ts = new Timer[n];
            long[] model = new long[n]; // expected when, 0 = not armed
            for (int i = 0; i < n; i++) {
                final int id = i;
                ts[i] = new Timer(s, (arg, seq, delay) -> fired.add(((long) id << 32) | 1), null);
            }
            long now = BASE;
            for (int round = 0; round < 20; round++) {
                // random operations
                for (int k = 0; k < 500; k++) {
                    int i = rnd.nextInt(n);
                    int op = rnd.nextInt(3);
                    if (op < 2) {
                        long when = now + 1 + rnd.nextInt(1_000_000);
                        boolean pending = ts[i].reset(when, 0);
                        assertEquals(model[i] != 0, pending, "reset's result");
                        model[i] = when;
                    } else {
                        boolean pending = ts[i].stop();
                        assertEquals(model[i] != 0, pending, "stop's result");
                        model[i] = 0;
                    }
                }
                heap.verify();
                // advance virtual time and run what is due
                now += 400_000;
                fired.clear();
                heap.check(now, true);
                heap.verify();
                List<Long> expect = new ArrayList<>();
                for (int i = 0; i < n; i++) {
                    if (model[i] != 0 && model[i] <= now) {
                        expect.add(((long) i << 32) | 1);
                        model[i] = 0;
                    }
                }
                assertEquals(expect.size(), fired.size(), "number fired in round " + round);
                assertEquals(new java.util.HashSet<>(expect), new java.util.HashSet<>(fired));
                long next = Long.MAX_VALUE;
                int live = 0;
                for (int i = 0; i < n; i++) {
                    if (model[i] != 0) {
                        next = Math.min(next, model[i]);
                        live++;
                    }
                }
                long wake = heap.wakeTime();
                if (live == 0) {
                    assertTrue(wake == 0 || wake > now, "no live timers: wakeTime " + wake);
                } else {
                    assertTrue(wake != 0 && wake <= next, "wakeTime " + wake + " must not be after " + next);
                }
                // zombies swept on the local P once they exceed a quarter of the heap
                assertTrue(
                        heap.zombies.get() <= heap.len() / 4 + 1,
                        "zombies " + heap.zombies.get() + " len " + heap.len());
            }
            for (int i = 0; i < n; i++) {
                ts[i].stop();
            }
        });
    }

    @Test
    void firesInNondecreasingWhenOrder() {
        inRuntime(() -> {
            Scheduler s = Scheduler.current();
            TimerHeap heap = M.current().p.timers;
            Random rnd = new Random(7);
            List<Long> fired = new ArrayList<>();
            for (int i = 0; i < 1000; i++) {
                long when = BASE + 1 + rnd.nextInt(10_000);
                Timer t = new Timer(s, (arg, seq, delay) -> fired.add((Long) arg), when);
                t.reset(when, 0);
            }
            heap.check(BASE + 20_000, true);
            assertEquals(1000, fired.size());
            for (int i = 1; i < fired.size(); i++) {
                assertTrue(fired.get(i - 1) <= fired.get(i), "fired out of order at " + i);
            }
            assertEquals(0, heap.wakeTime());
            assertEquals(0, heap.len());
        });
    }

    @Test
    void periodicTimerSkipsMissedTicksAndStaysHeaped() {
        inRuntime(() -> {
            Scheduler s = Scheduler.current();
            TimerHeap heap = M.current().p.timers;
            List<Long> delays = new ArrayList<>();
            Timer t = new Timer(s, (arg, seq, delay) -> delays.add(delay), null);
            t.reset(BASE + 100, 100);
            heap.check(BASE + 350, true); // due at 100; next = 100 + 100*(1 + 250/100) = 400
            assertEquals(List.of(250L), delays);
            assertEquals(BASE + 400, heap.wakeTime());
            heap.check(BASE + 400, true);
            assertEquals(List.of(250L, 0L), delays);
            assertTrue(t.stop(), "a ticker is pending until stopped");
            assertFalse(t.stop());
            heap.check(BASE + 10_000, true);
            assertEquals(2, delays.size());
            assertEquals(0, heap.len());
        });
    }

    @Test
    void stopBeforeRunAndResetAfterFire() {
        inRuntime(() -> {
            Scheduler s = Scheduler.current();
            TimerHeap heap = M.current().p.timers;
            int[] runs = new int[1];
            Timer t = new Timer(s, (arg, seq, delay) -> runs[0]++, null);
            assertFalse(t.reset(BASE + 10, 0), "reset of a new timer: not pending");
            assertTrue(t.stop());
            assertEquals(1, heap.zombies.get(), "stop only marks");
            heap.check(BASE + 100, true);
            assertEquals(0, runs[0]);
            assertEquals(0, heap.len(), "the zombie was dropped");
            assertFalse(t.reset(BASE + 200, 0));
            heap.check(BASE + 300, true);
            assertEquals(1, runs[0]);
            assertFalse(t.stop(), "stop after fire: false");
            assertFalse(t.reset(BASE + 400, 0), "reset after fire: false");
            assertTrue(t.reset(BASE + 350, 0), "reset while pending: true (moved earlier)");
            assertEquals(BASE + 350, heap.wakeTime(), "an earlier reset lowers wakeTime at once");
            heap.check(BASE + 360, true);
            assertEquals(2, runs[0]);
        });
    }
}
