package dev.gort.runtime.trace;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gort.runtime.Scheduler;
import java.lang.ref.WeakReference;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A runtime that was traced and has finished is garbage like any other: nothing the tracer leaves
 * behind (in the threads that wrote to it, in JVM-wide registries) keeps it reachable.
 */
class TracerLifetimeTest {
    /** How many finished runtimes of {@code n} are still reachable once the GC had its chances. */
    private static int stillReachable(int n, boolean traced) {
        List<WeakReference<Scheduler>> refs = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            Scheduler s = new Scheduler(Workloads.config(2, true));
            if (traced) {
                s.trace.start(new Tracer.Options().window(1));
            }
            s.run(() -> Workloads.pingPongBody(1000));
            if (traced) {
                s.trace.stop();
            }
            refs.add(new WeakReference<>(s));
        }
        int alive = n;
        for (int attempt = 0; attempt < 50 && alive > 0; attempt++) {
            System.gc(); // a full collection under G1 (the build's GC): it clears the weak references
            alive = 0;
            for (WeakReference<Scheduler> r : refs) {
                if (r.get() != null) {
                    alive++;
                }
            }
        }
        return alive;
    }

    /**
     * This test thread starts the runtimes and so writes to their traces as a foreign thread (the
     * main goroutine's creation). A buffer kept in a ThreadLocal of that thread kept every traced
     * runtime reachable while the thread lived: 8 of 8 before the fix.
     */
    @Test
    void aStoppedTraceLeavesItsRuntimeCollectable() {
        assertEquals(0, stillReachable(8, false), "untraced runtimes are collectable (the control)");
        assertEquals(0, stillReachable(8, true), "traced runtimes still reachable after their trace stopped");
    }

    /**
     * The buffers of threads outside the runtime are dropped from the session's map once their
     * threads have ended: the JFR-only session lives as long as its runtime, and 100 short-lived
     * outside threads (a pool's, virtual threads) must not stay in it.
     */
    @Test
    void endedOutsideThreadsLeaveTheSessionsMap() throws InterruptedException {
        Tracer.Session s = new Tracer.Session(Tracer.NOOP, 0, false, "jfr-only");
        writeFromEndedThreads(s, 100);
        assertTrue(s.foreign.size() < 16, s.foreign.size() + " ended threads still in the map");
        Thread alive = Thread.currentThread();
        s.foreignBuf(alive);
        writeFromEndedThreads(s, 40);
        assertTrue(s.foreign.containsKey(alive), "a live thread's buffer was dropped");
    }

    /** {@code n} threads, one after another, each taking its buffer as the tracer's hooks do, then ending. */
    private static void writeFromEndedThreads(Tracer.Session s, int n) throws InterruptedException {
        for (int i = 0; i < n; i++) {
            Thread t = new Thread(() -> s.foreignBuf(Thread.currentThread()));
            t.start();
            t.join();
        }
    }
}
