package dev.gort.runtime.metrics;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gort.runtime.Config;
import dev.gort.runtime.GoSema;
import dev.gort.runtime.Poll;
import dev.gort.runtime.Scheduler;
import dev.gort.runtime.Syscalls;
import dev.gort.runtime.Unpreemptible;
import dev.gort.runtime.trace.Workloads;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.DoublePredicate;
import jdk.internal.vm.Continuation;
import org.junit.jupiter.api.Test;

/**
 * One test per runtime metric: each drives the event the metric counts and reads it by its name
 * (Go's runtime/metrics name where Go has one). Counts are exact where the schedule is
 * deterministic (GOMAXPROCS=1, or a P kept busy so another must steal); where only the runtime's
 * own threads can make the event happen (sysmon's preemption, an M spinning), the test waits for
 * it with a bounded deadline.
 */
class MetricsEventsTest {
    private static double v(String name) {
        return new Metrics(Scheduler.current()).value(name);
    }

    /** Waits (bounded) until the metric satisfies p, driving the scheduler meanwhile; returns its value. */
    private static double await(String name, DoublePredicate p) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        for (; ; ) {
            double x = v(name);
            if (p.test(x)) {
                return x;
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError(name + " stayed at " + x);
            }
            Scheduler.gosched();
        }
    }

    @Test
    void everyMetricHasATestHere() {
        Set<String> tested = new HashSet<>(Set.of(
                "/sched/gomaxprocs:threads",
                "/sched/goroutines:goroutines",
                "/sched/goroutines-created:goroutines",
                "/sched/goroutines/runnable:goroutines",
                "/sched/goroutines/running:goroutines",
                "/sched/goroutines/waiting:goroutines",
                "/sched/goroutines/not-in-go:goroutines",
                "/sched/threads/total:threads",
                "/sched/latencies:seconds",
                "/gort/sched/global-runq:goroutines",
                "/gort/sched/local-runq:goroutines",
                "/gort/sched/idle-procs:threads",
                "/gort/sched/spinning:threads",
                "/gort/sched/steal-ops:events",
                "/gort/sched/steals:events",
                "/gort/sched/preempt-requests:events",
                "/gort/sched/preemptions:events",
                "/gort/sched/preempt-refused:events",
                "/gort/sched/handoffs:events",
                "/gort/sched/thread-starts:events",
                "/gort/sched/pinned-yields:events",
                // driven in api: GoroutineLeakProfileTest, NetTest
                "/gort/sched/goroutines/leaked:goroutines",
                "/gort/sched/goroutines/waiting-network:goroutines"));
        for (Metrics.Description d : Metrics.all()) {
            assertTrue(tested.remove(d.name()), "no test drives " + d.name());
        }
        assertEquals(Set.of(), tested, "tested but gone");
    }

    /** GOMAXPROCS=1: five goroutines made and not yet run are runnable; main is the one running. */
    @Test
    void runnableRunningCreatedAndLiveGoroutines() {
        AtomicReference<double[]> got = new AtomicReference<>();
        new Scheduler(Workloads.config(1, true))
                .run(() -> Unpreemptible.run(() -> {
                    // unpreemptible: a preemption honoured at a newproc would let the five run first
                    double created0 = v("/sched/goroutines-created:goroutines");
                    for (int i = 0; i < 5; i++) {
                        Scheduler.current().newproc(() -> {});
                    }
                    got.set(new double[] {
                        v("/sched/goroutines/runnable:goroutines"),
                        v("/sched/goroutines/running:goroutines"),
                        v("/sched/goroutines-created:goroutines") - created0,
                        v("/sched/goroutines:goroutines"),
                        v("/sched/gomaxprocs:threads")
                    });
                }));
        assertEquals(5, got.get()[0], "runnable");
        assertEquals(1, got.get()[1], "running");
        assertEquals(5, got.get()[2], "created");
        assertEquals(6, got.get()[3], "live");
        assertEquals(1, got.get()[4], "gomaxprocs");
    }

    /** runtime.GOMAXPROCS(n) shows at once. */
    @Test
    void gomaxprocsFollowsASet() {
        AtomicReference<double[]> got = new AtomicReference<>();
        new Scheduler(Workloads.config(3, true)).run(() -> {
            double before = v("/sched/gomaxprocs:threads");
            Scheduler.current().gomaxprocs(2);
            got.set(new double[] {before, v("/sched/gomaxprocs:threads")});
        });
        assertEquals(3, got.get()[0]);
        assertEquals(2, got.get()[1]);
    }

    /**
     * A ring of 2 slots and GOMAXPROCS=1: the third goroutine made overflows the ring into the
     * global queue (runqputslow moves half the ring and the new one). Go: proc.go runqputslow.
     */
    @Test
    void localAndGlobalRunQueueLengths() {
        AtomicReference<double[]> got = new AtomicReference<>();
        Config cfg = Workloads.config(1, true).withRunqSize(2);
        new Scheduler(cfg)
                .run(() -> Unpreemptible.run(() -> {
                    // unpreemptible: a preemption honoured at a newproc would move main and run the others
                    double g0 = v("/gort/sched/global-runq:goroutines");
                    // runnext takes the first; each later one kicks the previous runnext to the ring
                    for (int i = 0; i < 3; i++) {
                        Scheduler.current().newproc(() -> {});
                    }
                    double local = v("/gort/sched/local-runq:goroutines");
                    double global = v("/gort/sched/global-runq:goroutines");
                    Scheduler.current().newproc(() -> {}); // ring full: runqputslow
                    got.set(new double[] {
                        g0,
                        local,
                        global,
                        v("/gort/sched/local-runq:goroutines"),
                        v("/gort/sched/global-runq:goroutines")
                    });
                }));
        double[] r = got.get();
        assertEquals(0, r[0]);
        assertEquals(2, r[1], "ring after 3 (one in runnext)");
        assertEquals(0, r[2]);
        assertEquals(1, r[3], "ring after the overflow (half of it went, with the kicked one)");
        assertEquals(2, r[4], "global after the overflow");
    }

    /** GOMAXPROCS=4 and only main: the three other Ps go idle. */
    @Test
    void idleProcs() {
        AtomicReference<Double> got = new AtomicReference<>();
        new Scheduler(Workloads.config(4, true))
                .run(() -> got.set(await("/gort/sched/idle-procs:threads", x -> x == 3)));
        assertEquals(3, got.get());
    }

    /**
     * Main never yields its P (it spins until the others are done, refusing preemption as if it
     * held a monitor), so every one of the 50
     * goroutines it made can only run after another P stole it: /gort/sched/steals:events (Gs
     * moved) is exactly 50, and at least one steal operation happened.
     */
    @Test
    void stealsCountEveryStolenGoroutine() {
        AtomicReference<double[]> got = new AtomicReference<>();
        new Scheduler(Workloads.config(2, true)).run(() -> {
            double ops0 = v("/gort/sched/steal-ops:events");
            double gs0 = v("/gort/sched/steals:events");
            AtomicInteger done = new AtomicInteger();
            // a monitor counted as held: sysmon's preemption requests are refused (newproc polls)
            Poll.monitorEnter();
            try {
                for (int i = 0; i < 50; i++) {
                    Scheduler.current().newproc(done::incrementAndGet);
                }
                while (done.get() < 50) {
                    Thread.onSpinWait(); // no poll: this P runs nothing else
                }
                got.set(new double[] {v("/gort/sched/steal-ops:events") - ops0, v("/gort/sched/steals:events") - gs0});
            } finally {
                Poll.monitorExit();
            }
        });
        double[] r = got.get();
        assertTrue(r[0] >= 1 && r[0] <= 50, "steal ops " + r[0]);
        assertEquals(50, r[1], "goroutines stolen");
    }

    /** Goroutines made one after the other wake an M each time (wakep): one is seen spinning. */
    @Test
    void spinningThreads() {
        AtomicReference<Double> got = new AtomicReference<>();
        new Scheduler(Workloads.config(4, true)).run(() -> {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            double x = 0;
            while (x == 0 && System.nanoTime() < deadline) {
                Scheduler.current().newproc(() -> {});
                x = v("/gort/sched/spinning:threads");
            }
            got.set(x);
        });
        assertTrue(got.get() >= 1, "never saw a spinning M");
    }

    /**
     * GOMAXPROCS=1: main loops on poll points until a goroutine that can only run on its P sets a
     * flag, which needs sysmon to ask main to stop (a request) and main to yield at a poll (a
     * preemption). Then, with a monitor counted as held, a request is refused (the goroutine may
     * run meanwhile only if main, refusing for a whole slice, was preempted in place).
     */
    @Test
    void preemptRequestsPreemptionsAndRefusals() {
        AtomicReference<double[]> got = new AtomicReference<>();
        Scheduler s = new Scheduler(Workloads.config(1, true));
        s.run(() -> {
            double req0 = v("/gort/sched/preempt-requests:events");
            double pre0 = v("/gort/sched/preemptions:events");
            double ref0 = v("/gort/sched/preempt-refused:events");
            AtomicBoolean ran = new AtomicBoolean();
            Scheduler.current().newproc(() -> ran.set(true));
            while (!ran.get()) {
                Poll.poll();
            }
            double req = v("/gort/sched/preempt-requests:events") - req0;
            double pre = v("/gort/sched/preemptions:events") - pre0;
            // Now refuse one: a monitor counted as held while sysmon asks.
            Poll.monitorEnter();
            try {
                AtomicBoolean ran2 = new AtomicBoolean();
                Scheduler.current().newproc(() -> ran2.set(true));
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
                while (v("/gort/sched/preempt-refused:events") == ref0 && System.nanoTime() < deadline) {
                    Poll.poll();
                }
                // Only a preemption in place (a slice 20 ms old under load) lets ran2 run here.
                assertTrue(
                        !ran2.get() || s.preempt.snapshot().honouredInPlace() > 0,
                        "preempted while holding a monitor: " + s.preempt.snapshot());
            } finally {
                Poll.monitorExit();
            }
            got.set(new double[] {req, pre, v("/gort/sched/preempt-refused:events") - ref0});
        });
        double[] r = got.get();
        assertTrue(r[0] >= 1, "requests " + r[0]);
        assertTrue(r[1] >= 1, "preemptions " + r[1]);
        assertTrue(r[2] >= 1, "refusals " + r[2]);
    }

    /** entersyscallblock hands the P off at once; the G counts as not in Go until it exits. */
    @Test
    void handoffsAndNotInGo() {
        AtomicReference<double[]> got = new AtomicReference<>();
        new Scheduler(Workloads.config(2, true)).run(() -> {
            double h0 = v("/gort/sched/handoffs:events");
            double nig0 = v("/sched/goroutines/not-in-go:goroutines");
            Syscalls.entersyscallblock();
            // metrics read from inside the syscall (no P needed)
            Metrics m = new Metrics(Scheduler.current());
            double nig = m.value("/sched/goroutines/not-in-go:goroutines");
            double h = m.value("/gort/sched/handoffs:events") - h0;
            Syscalls.exitsyscall();
            got.set(new double[] {nig0, nig, h, v("/sched/goroutines/not-in-go:goroutines")});
        });
        double[] r = got.get();
        assertEquals(0, r[0]);
        assertEquals(1, r[1], "in the syscall");
        assertEquals(1, r[2], "handoffs");
        assertEquals(0, r[3], "after");
    }

    /** A yield in a pinned continuation (a critical section) is refused and counted. */
    @Test
    void pinnedYieldsAndThreadStarts() {
        AtomicReference<double[]> got = new AtomicReference<>();
        new Scheduler(Workloads.config(1, true)).run(() -> {
            double p0 = v("/gort/sched/pinned-yields:events");
            Continuation.pin();
            try {
                Scheduler.gosched(); // cannot yield: a hint only
            } finally {
                Continuation.unpin();
            }
            got.set(new double[] {v("/gort/sched/pinned-yields:events") - p0, v("/gort/sched/thread-starts:events")});
        });
        assertEquals(1, got.get()[0], "pinned yields");
        assertTrue(got.get()[1] >= 1, "thread starts " + got.get()[1]);
    }

    /**
     * 4,000 goroutines that each become runnable once (main waits once, for the last): Go samples
     * one runnable-to-running wait in 8 per goroutine from a random phase, so about 500 of them
     * are timed (3 sigma: 437..563); a sampler whose phase starts at 0 for every goroutine times
     * none of them. Go: proc.go newproc1 (trackingSeq = cheaprand()), casgstatus.
     */
    @Test
    void latenciesSampleGoroutinesThatRunOnce() {
        AtomicReference<Double> got = new AtomicReference<>();
        new Scheduler(Workloads.config(1, true)).run(() -> {
            double lat0 = v("/sched/latencies:seconds");
            GoSema last = new GoSema("last", 0);
            AtomicInteger left = new AtomicInteger(4000);
            for (int i = 0; i < 4000; i++) {
                Scheduler.current().newproc(() -> {
                    if (left.decrementAndGet() == 0) {
                        last.release();
                    }
                });
            }
            last.acquire();
            got.set(v("/sched/latencies:seconds") - lat0);
        });
        assertTrue(got.get() >= 250 && got.get() <= 760, "latency samples " + got.get());
    }

    /** Threads: the carriers (M0 included) and sysmon, as Go's allm. */
    @Test
    void threadsTotal() {
        AtomicReference<double[]> got = new AtomicReference<>();
        new Scheduler(Workloads.config(2, true))
                .run(() -> got.set(new double[] {
                    v("/sched/threads/total:threads"), Scheduler.current().mcountPublic()
                }));
        assertEquals(got.get()[1], got.get()[0]);
        assertTrue(got.get()[0] >= 2, "M0 and sysmon at least: " + got.get()[0]);
    }

    /** The MXBean's latency attributes are numbers before any sample (0, not NaN). */
    @Test
    void mxbeanLatenciesAreNumbersBeforeAnySample() {
        Scheduler s = new Scheduler(Workloads.config(1, true));
        SchedulerMXBeanImpl b = new SchedulerMXBeanImpl(s);
        assertEquals(0.0, b.getSchedLatencyP50Seconds());
        assertEquals(0.0, b.getSchedLatencyP99Seconds());
        for (var e : b.getMetrics().entrySet()) {
            assertFalse(e.getValue().isNaN(), e.getKey());
        }
    }
}
