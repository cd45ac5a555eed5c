package dev.gort.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * runtime.GOMAXPROCS(n) at run time: stop the world, procresize, start the world.
 */
class GomaxprocsTest {

    /**
     * A goroutine on P1 queues 50 goroutines on P1 and shrinks GOMAXPROCS to 1: procresize retires P1
     * (its own P: the caller moves to P0) and moves P1's runnext and ring to the global queue head, in
     * order, ahead of main (which waits there after a Gosched). Then it grows GOMAXPROCS to 3. All 50
     * still run exactly once, and NumGoroutine counts right throughout.
     *
     * <p>Deterministic: stealing is off, so nothing leaves P1's queue except through procresize; the
     * caller reaches P1 through the global queue (spawned from a plain thread, wakep starts an M for
     * the idle P1) while main keeps P0 busy without a scheduling point.
     */
    @Test
    void shrinkMovesRetiredQueuesToGlobalThenGrow() {
        int children = 50;
        AtomicInteger[] runs = new AtomicInteger[children];
        for (int i = 0; i < children; i++) {
            runs[i] = new AtomicInteger();
        }
        AtomicBoolean callerRunning = new AtomicBoolean();
        AtomicBoolean resized = new AtomicBoolean();
        AtomicReference<String> failure = new AtomicReference<>();
        List<String> observed = new ArrayList<>();

        Scheduler s = new Scheduler(TestSupport.config(2).withStealing(false).withDebugChecks(true));
        s.run(() -> {
            Scheduler rt = Scheduler.current();
            G mainG = Scheduler.currentG();
            GoSema mainDone = new GoSema(0);
            Runnable caller = () -> {
                M m = M.current();
                // No preemption until the global queue has been checked: a request honoured while the
                // caller creates its children (a loaded machine stretches the loop past sysmon's 10 ms)
                // would send the caller to the global queue and let P1 run them (Go's acquirem).
                m.locks++;
                try {
                    P p1 = m.p();
                    observed.add("caller on P" + p1.id);
                    GoSema childDone = new GoSema(0);
                    List<G> gs = new ArrayList<>();
                    for (int i = 0; i < children; i++) {
                        int k = i;
                        gs.add(rt.newproc(() -> {
                            runs[k].incrementAndGet();
                            childDone.release();
                        }));
                    }
                    observed.add("P1 queue " + (p1.runq.size() + (p1.runq.runnext() != null ? 1 : 0)));
                    observed.add("NumGoroutine " + rt.numGoroutine());
                    callerRunning.set(true);

                    int old = rt.gomaxprocs(1);
                    observed.add("GOMAXPROCS " + old + "->" + rt.gomaxprocs() + " allp " + rt.allp().length
                            + " caller on P" + M.current().p().id + " P1 " + P.statusName(p1.status())
                            + " P1 empty " + p1.runq.runqempty());
                    // Only P0 exists and we hold it: the global queue cannot change under us.
                    G[] global = rt.globalRunqSnapshot();
                    List<G> want = new ArrayList<>();
                    want.add(gs.get(children - 1)); // P1's runnext first
                    want.addAll(gs.subList(0, children - 1)); // then its ring, head to tail
                    want.add(mainG); // main was already waiting there
                    observed.add("global in order " + List.of(global).equals(want));
                    resized.set(true);
                    m.locks--; // Go's releasem

                    old = rt.gomaxprocs(3);
                    P[] allp = rt.allp();
                    // Ours runs; the new ones are idle or already running what wakep gave them.
                    boolean live =
                            allp[0].status() == P._Prunning && M.current().p() == allp[0];
                    for (P pp : allp) {
                        live &= pp.status() == P._Prunning || pp.status() == P._Pidle;
                    }
                    observed.add(
                            "GOMAXPROCS " + old + "->" + rt.gomaxprocs() + " allp " + allp.length + " live " + live);

                    for (int i = 0; i < children; i++) {
                        childDone.acquire();
                    }
                    while (rt.numGoroutine() > 2) {
                        Scheduler.gosched(); // the last children are still exiting
                    }
                    observed.add("NumGoroutine " + rt.numGoroutine());
                } catch (Throwable t) {
                    failure.compareAndSet(null, t.toString());
                } finally {
                    mainDone.release();
                }
            };
            Thread outsider = new Thread(() -> rt.newproc(caller), "outsider");
            outsider.start();
            // Keep P0 busy without a scheduling point until the caller runs on P1...
            while (!callerRunning.get()) {
                Thread.onSpinWait();
            }
            // ...then offer scheduling points, so that the stop-the-world can stop P0.
            while (!resized.get()) {
                Scheduler.gosched();
            }
            mainDone.acquire();
        });
        assertNull(failure.get());
        assertEquals(
                List.of(
                        "caller on P1",
                        "P1 queue 50",
                        "NumGoroutine 52",
                        "GOMAXPROCS 2->1 allp 1 caller on P0 P1 dead P1 empty true",
                        "global in order true",
                        "GOMAXPROCS 1->3 allp 3 live true",
                        "NumGoroutine 2"),
                observed);
        for (int i = 0; i < children; i++) {
            assertEquals(1, runs[i].get(), "child " + i);
        }
    }

    /** GOMAXPROCS(0) and GOMAXPROCS(current) only read; from outside a goroutine n > 0 is refused. */
    @Test
    void gomaxprocsReadsAndRefusesOutsideAGoroutine() {
        AtomicInteger read = new AtomicInteger();
        Scheduler s = new Scheduler(TestSupport.config(3));
        s.run(() -> {
            Scheduler rt = Scheduler.current();
            read.set(rt.gomaxprocs(0) * 10 + rt.gomaxprocs(3));
        });
        assertEquals(33, read.get());
        org.junit.jupiter.api.Assertions.assertThrows(IllegalStateException.class, () -> s.gomaxprocs(1));
    }
}
