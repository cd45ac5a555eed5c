package dev.gort.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** The O(n) checks behind Config.debugChecks: they pass on a sane runtime and catch a G in two places. */
class DebugChecksTest {

    /** A stop-the-world with 40 goroutines queued in runnext, the ring and the global queue passes. */
    @Test
    void stopTheWorldWithQueuedGoroutinesPasses() {
        AtomicInteger ran = new AtomicInteger();
        Scheduler s = new Scheduler(TestSupport.config(2).withDebugChecks(true).withStealing(false));
        s.run(() -> {
            Scheduler rt = Scheduler.current();
            GoSema done = new GoSema(0);
            for (int i = 0; i < 40; i++) {
                rt.newproc(() -> {
                    ran.incrementAndGet();
                    done.release();
                });
            }
            Scheduler.gosched(); // main to the global queue, so it is not empty either
            rt.gomaxprocs(1);
            rt.gomaxprocs(2);
            for (int i = 0; i < 40; i++) {
                done.acquire();
            }
        });
        assertEquals(40, ran.get());
    }

    /** A G queued twice (a corrupted run queue) is fatal at the next stop-the-world. */
    @Test
    void aGInTwoPlacesIsFatal() {
        Scheduler s = new Scheduler(TestSupport.config(1).withDebugChecks(true));
        GortFatalError e = assertThrows(
                GortFatalError.class,
                () -> s.run(() -> {
                    Scheduler rt = Scheduler.current();
                    G twice = rt.newproc(() -> {}); // in runnext
                    M.current().p().runq.runqput(twice, false); // and in the ring: corrupt
                    rt.gomaxprocs(2);
                }));
        assertEquals("checkQueues: G in two places", e.getMessage());
    }

    /** A waiting G found in a run queue is fatal. */
    @Test
    void aWaitingGInARunQueueIsFatal() {
        Scheduler s = new Scheduler(TestSupport.config(1).withDebugChecks(true));
        GortFatalError e = assertThrows(
                GortFatalError.class,
                () -> s.run(() -> {
                    Scheduler rt = Scheduler.current();
                    GoSema never = new GoSema(0);
                    GoSema parked = new GoSema(0);
                    G waiter = rt.newproc(() -> {
                        parked.release();
                        never.acquire();
                    });
                    parked.acquire(); // the waiter has parked on never
                    M.current().p().runq.runqput(waiter, false); // corrupt: a waiting G in the ring
                    rt.gomaxprocs(2);
                }));
        assertEquals("checkQueues: queued G not runnable", e.getMessage());
    }
}
