package dev.gort.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import jdk.internal.vm.Continuation;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A goroutine that must park while it cannot leave its carrier (pinned, or holding a Java
 * monitor) blocks that carrier with the G mounted, hands its P off, and is woken on that same
 * carrier by goready (jdk25-continuations.md §5 rule 2). GOMAXPROCS=1 throughout: the goroutine
 * that wakes it can only run if the P really was handed off.
 */
@Timeout(30)
class PinnedParkTest {

    @Test
    void pinnedGoroutineParksOnItsCarrier() {
        Scheduler s = new Scheduler(TestSupport.config(1));
        AtomicReference<Thread> before = new AtomicReference<>();
        AtomicReference<Thread> after = new AtomicReference<>();
        AtomicReference<Thread> waker = new AtomicReference<>();
        s.run(() -> {
            GoSema sema = new GoSema(0);
            GoSema done = new GoSema(0);
            s.newproc(
                    () -> { // G2: runs second, on another carrier
                        waker.set(Thread.currentThread());
                        sema.release();
                        done.release();
                    });
            s.newproc(
                    () -> { // G1: runs first
                        Continuation.pin();
                        try {
                            before.set(Thread.currentThread());
                            sema.acquire(); // the yield is refused: CRITICAL_SECTION
                            after.set(Thread.currentThread());
                        } finally {
                            Continuation.unpin();
                        }
                        done.release();
                    });
            done.acquire();
            done.acquire();
        });
        assertSame(before.get(), after.get(), "a pinned G resumes on its own carrier");
        assertNotSame(before.get(), waker.get(), "G2 ran on another carrier while G1's was blocked");
        SyscallStats.Snapshot st = s.syscallStats.snapshot(s);
        assertEquals(1, st.pinnedParks());
        assertEquals(1, st.pinnedRefused());
    }

    /**
     * The waker of a G parked in place uncounts its carrier from nmidlelocked before the G becomes
     * runnable (issue 12, defect 9). The carrier re-checks for its wake-up on every unpark,
     * spurious ones included (LockSupport allows them; a plain thread sends them here nonstop), so
     * it may see it right after the waker's hand-over and, finding no idle P, count itself
     * idle-locked again in waitForP. With the waker's decrement still to come it was counted twice,
     * every M looked idle and checkdead died with {@code checkdead: runnable g} (the waker's G, in
     * status 2), as PinnedParkTest did once on a loaded machine. Failed within 2000 rounds, in a
     * few seconds, before the fix; 300 rounds here.
     */
    @Test
    void wakerUncountsTheParkedCarrierBeforeItCanRun() {
        AtomicReference<Thread> carrier = new AtomicReference<>();
        AtomicBoolean stop = new AtomicBoolean();
        Thread spurious = new Thread(() -> {
            while (!stop.get()) {
                Thread t = carrier.get();
                if (t != null) {
                    LockSupport.unpark(t);
                }
                Thread.onSpinWait();
            }
        });
        spurious.setDaemon(true);
        spurious.start();
        try {
            for (int i = 0; i < 300; i++) {
                Scheduler s = new Scheduler(TestSupport.config(1));
                s.run(() -> {
                    GoSema sema = new GoSema(0);
                    GoSema done = new GoSema(0);
                    s.newproc(
                            () -> { // G2: wakes G1 on another carrier
                                sema.release();
                                done.release();
                            });
                    s.newproc(
                            () -> { // G1: parks in place
                                Continuation.pin();
                                try {
                                    carrier.set(Thread.currentThread());
                                    sema.acquire();
                                } finally {
                                    carrier.set(null);
                                    Continuation.unpin();
                                }
                                done.release();
                            });
                    done.acquire();
                    done.acquire();
                });
            }
        } finally {
            stop.set(true);
        }
    }

    /**
     * G1 parks inside {@code synchronized (mon)} with monitorDepth set (as the agent keeps it):
     * it must not yield, so no other goroutine can ever run on its carrier and enter the monitor
     * it holds. G2 contends for the monitor on another carrier (blocking it: sysmon retakes that
     * P), G3 wakes G1, G1 leaves the monitor, and only then does G2 get in.
     */
    @Test
    void parkWhileHoldingAMonitorBlocksTheCarrier() throws Exception {
        Scheduler s = new Scheduler(TestSupport.config(1));
        Object mon = new Object();
        List<String> order = new CopyOnWriteArrayList<>();
        AtomicReference<Thread> g1Carrier = new AtomicReference<>();
        AtomicReference<Thread> g2Carrier = new AtomicReference<>();
        s.run(() -> {
            GoSema sema = new GoSema(0);
            GoSema done = new GoSema(0);
            // Go order: the last go'd G runs first (runnext), then the ring in order. Unpreemptible:
            // on a loaded machine main's slice could end between the spawns, or its carrier lose
            // its P to sysmon while it loads a class, and G2 run first (seen once at load 9).
            Unpreemptible.run(() -> {
                s.newproc(
                        () -> { // G2: runs second
                            g2Carrier.set(Thread.currentThread());
                            order.add("G2 tries the monitor");
                            synchronized (mon) {
                                order.add("G2 in the monitor");
                            }
                            done.release();
                        });
                s.newproc(
                        () -> { // G3: runs third, wakes G1
                            order.add("G3 wakes G1");
                            sema.release();
                            done.release();
                        });
                s.newproc(
                        () -> { // G1: runs first
                            G me = Scheduler.currentG();
                            synchronized (mon) {
                                me.monitorDepth++;
                                g1Carrier.set(Thread.currentThread());
                                order.add("G1 in the monitor");
                                sema.acquire();
                                assertSame(g1Carrier.get(), Thread.currentThread());
                                order.add("G1 leaves the monitor");
                                me.monitorDepth--;
                            }
                            done.release();
                        });
            });
            for (int i = 0; i < 3; i++) {
                done.acquire();
            }
        });
        assertEquals(
                List.of(
                        "G1 in the monitor",
                        "G2 tries the monitor",
                        "G3 wakes G1",
                        "G1 leaves the monitor",
                        "G2 in the monitor"),
                order);
        assertNotSame(g1Carrier.get(), g2Carrier.get());
        SyscallStats.Snapshot st = s.syscallStats.snapshot(s);
        assertEquals(1, st.pinnedParks());
        assertEquals(0, st.pinnedRefused(), "monitorDepth decided it, not a refused yield");
        assertTrue(st.blockedRetakes() >= 1, "G2's carrier blocked on the monitor and lost its P");
    }

    /** A goroutine parked in place shows its own frames in a dump (read from its carrier's stack). */
    @Test
    void dumpOfAPinnedParkShowsItsFrames() {
        Scheduler s = new Scheduler(TestSupport.config(1));
        AtomicReference<String> dump = new AtomicReference<>();
        s.run(() -> {
            GoSema sema = new GoSema(0);
            GoSema done = new GoSema(0);
            AtomicReference<G> g1 = new AtomicReference<>();
            s.newproc(
                    () -> { // G2: dumps G1 while it is parked in place, then wakes it
                        // G2 can run before main has stored G1 (main's carrier, blocked on class
                        // loading, may have lost its P to sysmon), or before G1 parked (main
                        // preempted back to the global queue, taken on a 61st tick): wait for both.
                        long deadline = System.nanoTime() + 10_000_000_000L;
                        while ((g1.get() == null || g1.get().readgstatus() != G._Gwaiting)
                                && System.nanoTime() < deadline) {
                            Scheduler.gosched(); // yield the P: main may need it
                        }
                        // GOTRACEBACK=system: GoSema is a runtime-package class, hidden by default
                        dump.set(Traceback.dump(g1.get(), System.nanoTime(), 2));
                        sema.release();
                        done.release();
                    });
            g1.set(s.newproc(() -> {
                Continuation.pin();
                try {
                    sema.acquire();
                } finally {
                    Continuation.unpin();
                }
                done.release();
            }));
            done.acquire();
            done.acquire();
        });
        String d = dump.get();
        assertTrue(d.startsWith("goroutine ") && d.contains("[semacquire"), d);
        assertTrue(d.contains("GoSema.acquire") && d.contains("PinnedParkTest"), d);
    }

    /** The park is cancelled by its unlock function: the G runs on, P kept, nothing handed off. */
    @Test
    void cancelledPinnedParkRunsOn() {
        Scheduler s = new Scheduler(TestSupport.config(1));
        s.run(() -> {
            GoSema sema = new GoSema(1); // available: unlockf cancels
            G me = Scheduler.currentG();
            P p = M.current().p;
            me.monitorDepth++;
            Scheduler.gopark((G gp, Object x) -> false, null, WaitReason.SEMACQUIRE, null);
            me.monitorDepth--;
            sema.acquire();
            assertSame(p, M.current().p);
        });
        assertEquals(0, s.syscallStats.snapshot(s).pinnedParks());
    }

    /**
     * A cancelled park in place goes from waiting straight back to running: it is no runnable wait,
     * so the scheduling-latency histogram must not time it (Go times only runnable -> running). The
     * G's one stamp field then holds the wait's start (G.waitsince), which an unconditional
     * "stamp set on the way to running" rule would have recorded 800 times.
     */
    @Test
    void cancelledPinnedParksAreNotTimedAsRunnableWaits() {
        Scheduler s = new Scheduler(TestSupport.config(1));
        long[] timed = new long[1];
        s.run(() -> {
            G me = Scheduler.currentG();
            long before =
                    java.util.Arrays.stream(s.stats.schedLatencies.counts()).sum();
            me.monitorDepth++;
            for (int i = 0; i < 800; i++) {
                Scheduler.gopark((G gp, Object x) -> false, null, WaitReason.SEMACQUIRE, null);
            }
            me.monitorDepth--;
            timed[0] = java.util.Arrays.stream(s.stats.schedLatencies.counts()).sum() - before;
        });
        assertEquals(0, timed[0], "scheduling latencies recorded by 800 cancelled parks in place");
    }

    /** A pinned G that waits for nobody is part of a deadlock, like any parked G. */
    @Test
    void pinnedParkForeverIsADeadlock() {
        Scheduler s = new Scheduler(TestSupport.config(1));
        GortFatalError e = assertThrows(
                GortFatalError.class,
                () -> s.run(() -> {
                    Continuation.pin();
                    try {
                        new GoSema(0).acquire();
                    } finally {
                        Continuation.unpin();
                    }
                }));
        assertEquals("all goroutines are asleep - deadlock!", e.getMessage());
    }
}
