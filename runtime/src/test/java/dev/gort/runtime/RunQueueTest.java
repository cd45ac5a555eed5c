package dev.gort.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Go's run-queue unit tests (proc_test.go TestSchedLocalQueue, TestSchedLocalQueueSteal,
 * TestSchedLocalQueueEmpty, with the bodies from export_test.go), plus runqputslow and runqget's
 * runnext rule. No scheduler runs: the queues are driven directly, as Go's tests drive a bare p.
 */
class RunQueueTest {

    /** A G that is never run: only its identity matters to the queues. */
    static G g(long id) {
        return new G(null, id, 0, null, () -> {});
    }

    static G[] gs(int n) {
        G[] a = new G[n];
        for (int i = 0; i < n; i++) {
            a[i] = g(i + 1);
        }
        return a;
    }

    /** Go: export_test.go RunSchedLocalQueueTest. */
    @ParameterizedTest(name = "capacity {0}")
    @ValueSource(ints = {256, 4})
    void schedLocalQueue(int capacity) {
        RunQueue q = new RunQueue(capacity);
        G[] gs = gs(capacity);
        for (int i = 0; i < capacity; i++) {
            assertNull(q.runqget(), "runq is not empty initially");
            for (int j = 0; j < i; j++) {
                q.runqput(gs[i], false);
            }
            for (int j = 0; j < i; j++) {
                assertSame(gs[i], q.runqget(), "bad element at iter " + i + "/" + j);
            }
            assertNull(q.runqget(), "runq is not empty afterwards");
        }
    }

    /** The ring is FIFO across wrap-around: distinct Gs come out in the order they went in. */
    @ParameterizedTest(name = "capacity {0}")
    @ValueSource(ints = {256, 4})
    void schedLocalQueueIsFifoAcrossWrapAround(int capacity) {
        RunQueue q = new RunQueue(capacity);
        G[] gs = gs(capacity);
        for (int round = 0; round < 3 * capacity; round++) {
            int n = 1 + round % capacity;
            for (int j = 0; j < n; j++) {
                q.runqput(gs[j], false);
            }
            for (int j = 0; j < n; j++) {
                assertSame(gs[j], q.runqget(), "round " + round + " element " + j);
            }
            assertTrue(q.runqempty());
        }
    }

    /** Go: export_test.go RunSchedLocalQueueStealTest, at Go's capacity and at the model-checking one. */
    @ParameterizedTest(name = "capacity {0}")
    @ValueSource(ints = {256, 4})
    void schedLocalQueueSteal(int capacity) {
        RunQueue p1 = new RunQueue(capacity);
        RunQueue p2 = new RunQueue(capacity);
        G[] gs = gs(capacity);
        for (int i = 0; i < capacity; i++) {
            Map<G, Integer> sig = new IdentityHashMap<>();
            for (int j = 0; j < i; j++) {
                sig.put(gs[j], 0);
                p1.runqput(gs[j], false);
            }
            G gp = p2.runqsteal(p1.steal, true);
            int s = 0;
            if (gp != null) {
                s++;
                sig.merge(gp, 1, Integer::sum);
            }
            while ((gp = p2.runqget()) != null) {
                s++;
                sig.merge(gp, 1, Integer::sum);
            }
            while ((gp = p1.runqget()) != null) {
                sig.merge(gp, 1, Integer::sum);
            }
            for (int j = 0; j < i; j++) {
                assertEquals(1, sig.get(gs[j]), "bad element " + j + " at iter " + i);
            }
            assertEquals(i, sig.size(), "a G that was never put came out at iter " + i);
            if (s != i / 2 && s != i / 2 + 1) {
                fail("bad steal " + s + ", want " + (i / 2) + " or " + (i / 2 + 1) + ", iter " + i);
            }
            // gort's runqgrab takes exactly the older half rounded up (Go: n - n/2).
            assertEquals(i - i / 2, s, "iter " + i);
        }
    }

    /** A thief takes the victim's oldest Gs, and the one it returns is the newest of those. */
    @Test
    void stealTakesTheOlderHalfAndReturnsItsLast() {
        RunQueue victim = new RunQueue(256);
        RunQueue thief = new RunQueue(256);
        G[] gs = gs(10);
        for (G gp : gs) {
            victim.runqput(gp, false);
        }
        G ran = thief.runqsteal(victim.steal, false);
        assertSame(gs[4], ran);
        for (int i = 0; i < 4; i++) {
            assertSame(gs[i], thief.runqget());
        }
        assertNull(thief.runqget());
        for (int i = 5; i < 10; i++) {
            assertSame(gs[i], victim.runqget());
        }
        assertNull(victim.runqget());
    }

    /**
     * runqsteal says through the caller's holder how many Gs it moved, the one returned included
     * (what stealWork adds to stats.stolenGs), and 0 when it finds nothing.
     */
    @Test
    void stealReportsHowManyGsItMovedInTheHolder() {
        RunQueue victim = new RunQueue(256);
        RunQueue thief = new RunQueue(256);
        for (G gp : gs(10)) {
            victim.runqput(gp, false);
        }
        Found out = new Found();
        assertTrue(thief.runqsteal(victim.steal, false, out) != null);
        assertEquals(5, out.stolen, "half of 10");
        assertTrue(thief.runqsteal(victim.steal, false, out) != null);
        assertEquals(3, out.stolen, "5 - 5/2");
        RunQueue empty = new RunQueue(4);
        assertNull(thief.runqsteal(empty.steal, true, out));
        assertEquals(0, out.stolen, "nothing stolen");
    }

    /** runnext is stolen only when asked (Go: the last of stealWork's four passes) and the ring is empty. */
    @Test
    void stealTakesRunnextOnlyWhenAskedAndTheRingIsEmpty() {
        RunQueue victim = new RunQueue(4);
        RunQueue thief = new RunQueue(4);
        G a = g(1);
        G b = g(2);
        victim.runqput(a, true);
        assertNull(thief.runqsteal(victim.steal, false), "runnext stolen on an early pass");
        assertSame(a, victim.runnext());
        victim.runqput(b, false);
        assertSame(b, thief.runqsteal(victim.steal, true), "the ring goes first, even on the last pass");
        assertSame(a, victim.runnext());
        assertSame(a, thief.runqsteal(victim.steal, true));
        assertNull(victim.runnext());
        assertTrue(victim.runqempty());
        assertNull(thief.runqsteal(victim.steal, true));
    }

    /** runqget prefers runnext and says so through inheritTime; ring Gs do not inherit. */
    @Test
    void runqgetPrefersRunnextAndReportsInheritTime() {
        RunQueue q = new RunQueue(256);
        G a = g(1);
        G b = g(2);
        G c = g(3);
        q.runqput(a, false);
        q.runqput(b, true);
        q.runqput(c, true); // kicks b to the tail: ring a, b; runnext c
        Found found = new Found();
        assertSame(c, q.runqget(found));
        assertTrue(found.inheritTime, "a G from runnext inherits the time slice");
        assertSame(a, q.runqget(found));
        assertFalse(found.inheritTime, "a G from the ring starts a new time slice");
        assertSame(b, q.runqget(found));
        assertFalse(found.inheritTime);
        assertNull(q.runqget(found));
        assertFalse(found.inheritTime);
    }

    /**
     * A full 256-slot ring spills its oldest 128 plus the new G to the global queue in one batch,
     * oldest first, the new G last; the newer 128 stay local.
     */
    @Test
    void runqputOverflowMovesHalfPlusOneToGlobalInOneBatch() {
        Object lock = new Object();
        GlobalRunQueue global = new GlobalRunQueue(lock);
        RunQueue q = new RunQueue(256, null, global);
        G[] gs = gs(257);
        for (int i = 0; i < 256; i++) {
            q.runqput(gs[i], false);
        }
        assertEquals(0, global.sizeAcquire());
        assertEquals(256, q.size());
        q.runqput(gs[256], false);
        assertEquals(129, global.sizeAcquire());
        assertEquals(128, q.size());
        G[] spilled;
        synchronized (lock) {
            assertEquals(1, global.batchesPut, "the spill must be one globrunqputbatch");
            spilled = global.snapshot();
        }
        for (int i = 0; i < 128; i++) {
            assertSame(gs[i], spilled[i], "global position " + i);
        }
        assertSame(gs[256], spilled[128], "the new G goes last");
        assertEquals(1, q.spills);
        for (int i = 128; i < 256; i++) {
            assertSame(gs[i], q.runqget());
        }
        assertNull(q.runqget());
    }

    /** runqput(next=true) on a full ring: the displaced runnext is the G that spills last. */
    @Test
    void runqputNextOverflowSpillsTheKickedRunnext() {
        Object lock = new Object();
        GlobalRunQueue global = new GlobalRunQueue(lock);
        RunQueue q = new RunQueue(4, null, global);
        G[] gs = gs(6);
        q.runqput(gs[0], true);
        for (int i = 1; i <= 4; i++) {
            q.runqput(gs[i], false);
        }
        q.runqput(gs[5], true); // kicks gs[0] into a full ring
        assertSame(gs[5], q.runnext());
        G[] spilled;
        synchronized (lock) {
            spilled = global.snapshot();
            assertEquals(1, global.batchesPut);
        }
        assertEquals(3, spilled.length);
        assertSame(gs[1], spilled[0]);
        assertSame(gs[2], spilled[1]);
        assertSame(gs[0], spilled[2]);
        assertSame(gs[5], q.runqget());
        assertSame(gs[3], q.runqget());
        assertSame(gs[4], q.runqget());
        assertNull(q.runqget());
    }

    /** runqdrain (procresize's destroy) returns runnext first, then the ring head to tail. */
    @Test
    void runqdrainReturnsRunnextThenTheRing() {
        RunQueue q = new RunQueue(4);
        G[] gs = gs(4);
        q.runqput(gs[0], false);
        q.runqput(gs[1], false);
        q.runqput(gs[2], false);
        q.runqput(gs[3], true);
        List<G> out = new ArrayList<>();
        assertEquals(4, q.runqdrain(out));
        assertEquals(List.of(gs[3], gs[0], gs[1], gs[2]), out);
        assertTrue(q.runqempty());
    }

    /** Go: proc_test.go TestSchedLocalQueueEmpty (short mode). */
    @Test
    void schedLocalQueueEmpty() throws Exception {
        runSchedLocalQueueEmpty(Integer.getInteger("gort.test.runqEmptyIters", 20_000));
    }

    /** Go: proc_test.go TestSchedLocalQueueEmpty (full: 1e5 iterations). */
    @Test
    @Tag("stress")
    void schedLocalQueueEmptyStress() throws Exception {
        runSchedLocalQueueEmpty(100_000);
    }

    /**
     * Go: export_test.go RunSchedLocalQueueEmptyTest. With one G queued, the owner adds a second
     * (runnext or ring, in all four combinations) and takes one, while an observer on another thread
     * calls runqempty at the same moment: it must never report empty. Go starts a goroutine per
     * iteration; here one observer thread meets the owner at a spinning rendezvous each iteration.
     */
    static void runSchedLocalQueueEmpty(int iters) throws Exception {
        assumeTrue(Runtime.getRuntime().availableProcessors() >= 2, "the observer must run in parallel");
        RunQueue p = new RunQueue(256);
        G[] gs = gs(2);
        AtomicInteger ready = new AtomicInteger();
        AtomicInteger done = new AtomicInteger();
        AtomicReference<String> failure = new AtomicReference<>();
        Thread observer = new Thread(
                () -> {
                    for (int i = 0; i < iters; i++) {
                        int target = 2 * (i + 1);
                        ready.incrementAndGet();
                        while (ready.get() < target) {
                            if (failure.get() != null) {
                                return;
                            }
                            Thread.onSpinWait();
                        }
                        if (p.runqempty()) {
                            failure.compareAndSet(
                                    null,
                                    "queue is empty at iter " + i + " next: " + ((i & 1) == 0) + " " + ((i & 2) == 0));
                        }
                        done.set(i + 1);
                    }
                },
                "runqempty-observer");
        observer.setDaemon(true);
        observer.start();
        for (int i = 0; i < iters; i++) {
            boolean next0 = (i & 1) == 0;
            boolean next1 = (i & 2) == 0;
            p.runqput(gs[0], next0);
            int target = 2 * (i + 1);
            ready.incrementAndGet();
            while (ready.get() < target) {
                Thread.onSpinWait();
            }
            p.runqput(gs[1], next1);
            p.runqget();
            while (done.get() < i + 1) {
                Thread.onSpinWait();
            }
            p.runqget();
            if (failure.get() != null) {
                break;
            }
        }
        observer.join(10_000);
        if (failure.get() != null) {
            fail(failure.get());
        }
        assertTrue(p.runqempty());
    }
}
