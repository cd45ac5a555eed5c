package dev.gort.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The scheduler simulator's headless checks, on the real runtime: one goroutine fans out 48
 * goroutines of 1 ms of CPU work each (a busy loop on nanoTime, no sleep), for several GOMAXPROCS,
 * with work stealing on and off. The assertions are structural, never speed:
 * <ul>
 *   <li>every goroutine runs to completion exactly once;
 *   <li>no goroutine is ever in two places (a per-G "running" flag), no P runs two goroutines at
 *       once (a per-P lane), a goroutine that does not yield stays on its M and P, and never more
 *       than GOMAXPROCS goroutines run at the same time;
 *   <li>CPU time is conserved: each run lasts at least its 1 ms of work, the sum is at least the
 *       48 ms requested, and at most GOMAXPROCS times the wall time of the whole fan-out;
 *   <li>stealing off: P0 (where they were spawned) runs them all; stealing on with GOMAXPROCS=2:
 *       both Ps run some.
 * </ul>
 */
class FanOutTest {
    static final int GS = 48;
    static final long WORK_NS = 1_000_000;

    static Stream<Arguments> defaultMatrix() {
        return matrix(new int[] {1, 2, 4, 8});
    }

    static Stream<Arguments> fullMatrix() {
        return matrix(new int[] {1, 2, 3, 4, 5, 6, 7, 8});
    }

    static Stream<Arguments> matrix(int[] procs) {
        List<Arguments> out = new ArrayList<>();
        for (int p : procs) {
            out.add(Arguments.of(p, true));
            out.add(Arguments.of(p, false));
        }
        return out.stream();
    }

    @ParameterizedTest(name = "GOMAXPROCS={0} stealing={1}")
    @MethodSource("defaultMatrix")
    void fanOut(int procs, boolean stealing) {
        runFanOut(procs, stealing);
    }

    @ParameterizedTest(name = "GOMAXPROCS={0} stealing={1}")
    @MethodSource("fullMatrix")
    @Tag("stress")
    void fanOutAllProcs(int procs, boolean stealing) {
        runFanOut(procs, stealing);
    }

    static void runFanOut(int procs, boolean stealing) {
        AtomicInteger[] runs = new AtomicInteger[GS];
        AtomicBoolean[] running = new AtomicBoolean[GS];
        long[] start = new long[GS];
        long[] end = new long[GS];
        int[] pid = new int[GS];
        long[] mid = new long[GS];
        for (int i = 0; i < GS; i++) {
            runs[i] = new AtomicInteger();
            running[i] = new AtomicBoolean();
        }
        AtomicInteger[] lanes = new AtomicInteger[procs];
        for (int i = 0; i < procs; i++) {
            lanes[i] = new AtomicInteger(-1);
        }
        AtomicInteger concurrent = new AtomicInteger();
        AtomicInteger maxConcurrent = new AtomicInteger();
        AtomicReference<String> violation = new AtomicReference<>();
        AtomicLong fanStart = new AtomicLong();
        AtomicLong fanEnd = new AtomicLong();
        AtomicInteger spawnP = new AtomicInteger(-1);
        // stealing on, GOMAXPROCS=2: the first goroutine to run holds the spawning P (no yield)
        // until the other P has run one, so "both Ps run some" is a condition, not a race between
        // the thief's carrier and 48 ms of work on the spawning P (a loaded machine may not run the
        // thief's thread for that long).
        boolean awaitThief = stealing && procs == 2;
        AtomicBoolean holderChosen = new AtomicBoolean();
        AtomicBoolean thiefRan = new AtomicBoolean();

        Scheduler s = new Scheduler(TestSupport.config(procs).withStealing(stealing));
        s.run(() -> {
            Scheduler rt = Scheduler.current();
            GoSema done = new GoSema(0);
            fanStart.set(System.nanoTime());
            // The spawn loop is unpreemptible (m.locks, as in Go's runtime locks): newproc polls,
            // and a main preempted by sysmon on a loaded machine (a 10 ms slice overrun) went to
            // the global queue, was run by another P and spawned the rest there ("without stealing
            // the spawning P runs every goroutine" failed with Ps [0, 1]).
            M spawner = M.current();
            spawnP.set(spawner.p().id);
            spawner.locks++;
            try {
                for (int i = 0; i < GS; i++) {
                    int k = i;
                    rt.newproc(() -> {
                        M m = M.current();
                        P p = m.p();
                        if (!running[k].compareAndSet(false, true)) {
                            violation.compareAndSet(null, "G" + k + " is already running elsewhere");
                        }
                        if (!lanes[p.id].compareAndSet(-1, k)) {
                            violation.compareAndSet(null, "P" + p.id + " runs G" + lanes[p.id].get() + " and G" + k);
                        }
                        maxConcurrent.accumulateAndGet(concurrent.incrementAndGet(), Math::max);
                        if (awaitThief) {
                            if (p.id != spawnP.get()) {
                                thiefRan.set(true);
                            } else if (holderChosen.compareAndSet(false, true)) {
                                long until = System.nanoTime() + 10_000_000_000L; // wait-for-condition
                                while (!thiefRan.get() && System.nanoTime() < until) {
                                    Thread.onSpinWait(); // no yield point: the P stays busy
                                }
                            }
                        }
                        long t0 = System.nanoTime();
                        long t;
                        do {
                            Thread.onSpinWait();
                            t = System.nanoTime();
                        } while (t - t0 < WORK_NS);
                        start[k] = t0;
                        end[k] = t;
                        pid[k] = p.id;
                        mid[k] = m.id;
                        if (M.current() != m || m.p() != p) {
                            violation.compareAndSet(null, "G" + k + " moved from " + m + "/" + p + " without yielding");
                        }
                        concurrent.decrementAndGet();
                        lanes[p.id].set(-1);
                        running[k].set(false);
                        runs[k].incrementAndGet();
                        done.release();
                    });
                }
            } finally {
                spawner.locks--;
            }
            for (int i = 0; i < GS; i++) {
                done.acquire();
            }
            fanEnd.set(System.nanoTime());
        });

        String where = " (GOMAXPROCS=" + procs + " stealing=" + stealing + ")";
        assertNull(violation.get(), violation.get() + where);
        long total = 0;
        Set<Integer> ps = new TreeSet<>();
        Set<Long> ms = new TreeSet<>();
        for (int i = 0; i < GS; i++) {
            assertEquals(1, runs[i].get(), "G" + i + " runs exactly once" + where);
            long span = end[i] - start[i];
            assertTrue(span >= WORK_NS, "G" + i + " ran " + span + " ns" + where);
            total += span;
            ps.add(pid[i]);
            ms.add(mid[i]);
        }
        long wall = fanEnd.get() - fanStart.get();
        assertTrue(total >= GS * WORK_NS, "CPU time " + total + " < requested" + where);
        assertTrue(total <= (long) procs * wall, "CPU time " + total + " ns exceeds GOMAXPROCS x wall " + wall + where);
        assertTrue(maxConcurrent.get() <= procs, maxConcurrent.get() + " goroutines ran at once" + where);
        if (!stealing) {
            assertEquals(Set.of(spawnP.get()), ps, "without stealing the spawning P runs every goroutine" + where);
        } else if (procs == 2) {
            assertEquals(Set.of(0, 1), ps, "with stealing both Ps run goroutines" + where);
        }
        System.out.printf(
                "fan-out GOMAXPROCS=%d stealing=%s: wall %.1f ms, work %.1f ms, Ps %s, Ms %s, max parallel %d%n",
                procs, stealing, wall / 1e6, total / 1e6, ps, ms, maxConcurrent.get());
    }
}
