package dev.gort.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * The spinning protocol ({@link Idle}) driven with real threads through its {@link Idle.Ms} seam:
 * the Ms are plain test threads that play findRunnable's part with the global queue as the only
 * source of work (take work; else become spinning while spinners are fewer than half the busy Ps;
 * under sched.lock re-check the queue and needspinning, drop the P; a spinner then does the
 * delicate dance, {@link Idle#dropspinning} and {@link Idle#recheckGlobal}; then mput and sleep on
 * m.park), and outside threads submit work as {@code goready} from a foreign thread does
 * (globrunqput under the lock, then {@link Idle#wakep}).
 *
 * <p>The rule: no lost wake-up. Work published while every M goes to sleep is always taken: either
 * the submitter's wakep saw {@code nmspinning == 0} and started an M, or the spinner's re-check
 * after its decrement saw the work. Each round submits a small burst from two threads at once, then
 * waits (bounded) until every item ran and every M is parked again, with the counts back at rest
 * ({@code nmspinning == 0}, every P idle, every M on the idle list). A lost wake-up leaves an item
 * in the queue with every M asleep, which the bounded wait reports.
 */
class IdleProtocolTest {
    private static final int PROCS = 3;
    private static final int ROUNDS = 400;
    private static final long ROUND_DEADLINE_NS = 20_000_000_000L;

    @Test
    void noLostWakeupWhileMsGoToSleep() throws Exception {
        Scheduler s = new Scheduler(TestSupport.config(PROCS).withSpinning(true));
        Idle idle = s.idle;
        // Outside threads may ready work: checkdead must not call the all-asleep state a deadlock.
        ExternalWaker waker = s.externalWaker();
        AtomicInteger consumed = new AtomicInteger();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        List<Thread> ms = new CopyOnWriteArrayList<>();
        List<M> allm = new CopyOnWriteArrayList<>();
        boolean[] stop = {false};
        idle.ms = mp -> {
            Thread t = new Thread(() -> mloop(s, mp, consumed, stop, failure), "test-" + mp);
            t.setDaemon(true);
            allm.add(mp);
            ms.add(t);
            t.start();
        };
        long goid = 0;
        int submitted = 0;
        CyclicBarrier both = new CyclicBarrier(2);
        try {
            for (int round = 0; round < ROUNDS; round++) {
                int each = 1 + round % 3;
                G[][] work = new G[2][each];
                for (int k = 0; k < 2; k++) {
                    for (int i = 0; i < each; i++) {
                        work[k][i] = new G(s, ++goid, 0, null, () -> {});
                    }
                }
                Thread[] submitters = new Thread[2];
                for (int k = 0; k < 2; k++) {
                    G[] mine = work[k];
                    submitters[k] = new Thread(() -> {
                        try {
                            both.await();
                            for (G gp : mine) {
                                synchronized (s.sched.lock) {
                                    s.sched.runq.globrunqput(gp);
                                }
                                idle.wakep();
                            }
                        } catch (Throwable t) {
                            failure.compareAndSet(null, t);
                        }
                    });
                    submitters[k].start();
                }
                for (Thread t : submitters) {
                    t.join();
                }
                submitted += 2 * each;
                awaitQuiescent(s, consumed, submitted, allm, failure, round);
            }
            assertTrue(!allm.isEmpty() && allm.size() <= 2 * PROCS, "Ms started: " + allm.size());
        } finally {
            synchronized (s.sched.lock) {
                stop[0] = true;
            }
            for (M mp : allm) {
                mp.park.notewakeup();
            }
            for (Thread t : ms) {
                t.join(10_000);
            }
            waker.close();
        }
        assertEquals(submitted, consumed.get());
    }

    /** A runtime that is never started: its Ms are the test's, the seam records what startm starts. */
    private static Scheduler unstarted(int procs, List<M> started) {
        Scheduler s = new Scheduler(TestSupport.config(procs).withSpinning(true));
        s.idle.ms = started::add;
        return s;
    }

    /** A test M holding an idle P and spinning, as findRunnable makes it before its steal pass. */
    private static M spinnerWithP(Scheduler s, long id) {
        M mp = new M(s, id, "test");
        P pp;
        synchronized (s.sched.lock) {
            pp = s.idle.pidleget();
        }
        mp.acquirep(pp);
        s.idle.becomeSpinning(mp);
        return mp;
    }

    /** findRunnable's "return P and block" for a spinner that found nothing, up to the dance. */
    private static void dropP(Scheduler s, M mp) {
        synchronized (s.sched.lock) {
            assertTrue(s.sched.runq.empty());
            P pp = mp.releasep();
            s.idle.pidleput(pp);
        }
    }

    private static void submit(Scheduler s, G gp) {
        synchronized (s.sched.lock) {
            s.sched.runq.globrunqput(gp);
        }
        s.idle.wakep();
    }

    /**
     * The delicate dance, one order: the work is published while the last spinner has dropped its P
     * but not yet nmspinning. The submitter's wakep sees a spinner and wakes nobody, so the
     * spinner's re-check after its decrement must find the work (and take a P for it).
     */
    @Test
    void spinnerThatDropsAfterThePublishSeesTheWork() {
        List<M> started = new CopyOnWriteArrayList<>();
        Scheduler s = unstarted(2, started);
        M mp = spinnerWithP(s, 1);
        dropP(s, mp);
        submit(s, new G(s, 1, 0, null, () -> {}));
        assertEquals(List.of(), started, "wakep with a spinner must not start an M");
        assertEquals(1, s.idle.nmspinning.get());
        s.idle.dropspinning(mp, "findRunnable");
        P pp;
        synchronized (s.sched.lock) {
            pp = s.idle.recheckGlobal();
        }
        assertTrue(pp != null, "the re-check after the decrement must see the work published before it");
        assertEquals(1, s.idle.npidle.get());
    }

    /**
     * The other order: the spinner dropped nmspinning (and found nothing) before the work was
     * published. Then the submitter's wakep sees nmspinning == 0 and starts a spinning M itself:
     * a new one through the seam, or the idle one, handed a P.
     */
    @Test
    void submitterAfterTheDecrementStartsASpinner() {
        List<M> started = new CopyOnWriteArrayList<>();
        Scheduler s = unstarted(2, started);
        M mp = spinnerWithP(s, 1);
        dropP(s, mp);
        s.idle.dropspinning(mp, "findRunnable");
        synchronized (s.sched.lock) {
            assertEquals(null, s.idle.recheckGlobal());
        }
        submit(s, new G(s, 1, 0, null, () -> {}));
        assertEquals(1, started.size(), "wakep with nmspinning == 0 and an idle P must start an M");
        M nm = started.get(0);
        assertTrue(nm.spinning && nm.nextp != null, "the new M spins and is handed a P");
        assertEquals(1, s.idle.nmspinning.get());
    }

    /** A spinner that found work stops spinning and wakes the next spinner (there is an idle P). */
    @Test
    void resetspinningWakesTheNextSpinner() {
        List<M> started = new CopyOnWriteArrayList<>();
        Scheduler s = unstarted(2, started);
        M mp = spinnerWithP(s, 1);
        s.idle.resetspinning(mp);
        assertTrue(!mp.spinning);
        assertEquals(1, started.size(), "resetspinning must wakep: a new spinner for the idle P");
        assertTrue(started.get(0).spinning && started.get(0).nextp != null);
        assertEquals(1, s.idle.nmspinning.get());
    }

    /** wakep prefers an M asleep on the idle list: startm hands it the P and the spinning flag. */
    @Test
    void wakepReusesAnIdleM() {
        List<M> started = new CopyOnWriteArrayList<>();
        Scheduler s = unstarted(2, started);
        M sleeper = new M(s, 1, "test");
        try (ExternalWaker w = s.externalWaker()) { // mput's checkdead: an outside waker may still ready work
            synchronized (s.sched.lock) {
                s.idle.mput(sleeper);
            }
            submit(s, new G(s, 1, 0, null, () -> {}));
        }
        assertEquals(List.of(), started, "an idle M exists: no new one");
        assertTrue(sleeper.spinning && sleeper.nextp != null, "the idle M is handed a P and spins");
        assertEquals(0, s.idle.synced.nmidle);
        assertEquals(1, s.idle.nmspinning.get());
    }

    private static final AtomicInteger TEST_M_IDS = new AtomicInteger(100);

    /** Idle Ms that stopped on the given CPUs, pushed in order (the last one is the list's head). */
    private static M[] idleMs(Scheduler s, int... cpus) {
        M[] ms = new M[cpus.length];
        synchronized (s.sched.lock) {
            for (int i = 0; i < cpus.length; i++) {
                ms[i] = new M(s, TEST_M_IDS.incrementAndGet(), "test");
                ms[i].stoppedOnCpu = cpus[i];
                s.idle.mput(ms[i]);
            }
        }
        return ms;
    }

    /**
     * mget's CPU rule: the M that stopped last (Go's LIFO), unless it stopped on the waker's CPU and
     * one of the next few stopped on another; an M of unknown CPU is never preferred.
     */
    @Test
    void mgetPassesOverMsThatStoppedOnTheWakersCpu() {
        Scheduler s = unstarted(2, new CopyOnWriteArrayList<>());
        try (ExternalWaker w = s.externalWaker()) { // mput's checkdead
            M[] m = idleMs(s, 0, 0, -1, 1); // list, head first: m3 (CPU 1), m2 (unknown), m1 (0), m0 (0)
            synchronized (s.sched.lock) {
                assertSame(
                        m[1],
                        s.idle.mget(1),
                        "waker on CPU 1: past the head and the unknown CPU, the first M of another");
                assertEquals(3, s.idle.synced.nmidle);
                assertSame(m[3], s.idle.synced.midle, "unlinked from the middle: the head stays");
                assertSame(m[2], m[3].schedlink);
                assertSame(m[0], m[2].schedlink);
                assertNull(m[1].schedlink);
                assertSame(m[3], s.idle.mget(0), "waker on CPU 0: the head stopped elsewhere, Go's choice");
                assertSame(m[2], s.idle.mget(-1), "waker's CPU unknown: the head");
                assertSame(m[0], s.idle.mget(0), "the scan runs off the list's end: the head");
                assertNull(s.idle.mget(1));
                assertEquals(0, s.idle.synced.nmidle);
                assertNull(s.idle.synced.midle);
            }
            m = idleMs(s, 1, -1); // head m1 (unknown), m0 (1)
            synchronized (s.sched.lock) {
                assertSame(m[1], s.idle.mget(1), "a head of unknown CPU is Go's choice");
                assertSame(m[0], s.idle.mget(1));
            }
        }
    }

    /** The search is bounded: an M of another CPU beyond MGET_CPU_SCAN Ms of the waker's is not taken. */
    @Test
    void mgetLooksOnlyAFewMsDownTheList() {
        Scheduler s = unstarted(2, new CopyOnWriteArrayList<>());
        int[] cpus = new int[Idle.MGET_CPU_SCAN + 2];
        java.util.Arrays.fill(cpus, 1);
        cpus[0] = 0; // the tail, one place beyond the scan
        try (ExternalWaker w = s.externalWaker()) {
            M[] m = idleMs(s, cpus);
            synchronized (s.sched.lock) {
                assertSame(m[m.length - 1], s.idle.mget(1), "the CPU-0 M is MGET_CPU_SCAN + 1 places down: the head");
                assertSame(m[0], s.idle.mget(1), "now it is MGET_CPU_SCAN places down: taken");
            }
        }
    }

    /** GODEBUG=midlecpu=0 turns the CPU rule off (Go's plain LIFO); it is on only where the CPU is known. */
    @Test
    void midlecpuZeroTurnsTheRuleOff() {
        Scheduler s = unstarted(2, new CopyOnWriteArrayList<>());
        assertFalse(new Idle(s, GoDebug.parse("midlecpu=0")).cpuAware);
        assertEquals(ThreadCpu.available(), new Idle(s, GoDebug.parse("")).cpuAware);
    }

    /** Where sched_getcpu is reachable (Linux, native access on: the build's test flags), it answers. */
    @Test
    void threadCpuAnswersWhereAvailable() {
        Assumptions.assumeTrue(ThreadCpu.available(), "sched_getcpu not reachable here");
        int cpu = ThreadCpu.current();
        assertTrue(cpu >= 0, "sched_getcpu: " + cpu);
    }

    /** Waits until every item ran and every M sleeps with the protocol's counts at rest. */
    private static void awaitQuiescent(
            Scheduler s,
            AtomicInteger consumed,
            int submitted,
            List<M> allm,
            AtomicReference<Throwable> failure,
            int round) {
        long deadline = System.nanoTime() + ROUND_DEADLINE_NS;
        for (; ; ) {
            Throwable t = failure.get();
            if (t != null) {
                throw new AssertionError("an M or submitter failed", t);
            }
            boolean rest;
            int queued;
            synchronized (s.sched.lock) {
                queued = s.sched.runq.sizeAcquire();
                rest = consumed.get() == submitted
                        && queued == 0
                        && s.idle.nmspinning.get() == 0
                        && s.idle.npidle.get() == PROCS
                        && s.idle.synced.nmidle == allm.size();
            }
            if (rest) {
                return;
            }
            if (System.nanoTime() - deadline > 0) {
                synchronized (s.sched.lock) {
                    fail("round " + round + ": not at rest: consumed " + consumed.get() + " of " + submitted
                            + ", global queue " + s.sched.runq.sizeAcquire() + ", nmspinning " + s.idle.nmspinning.get()
                            + ", npidle " + s.idle.npidle.get() + ", nmidle " + s.idle.synced.nmidle + " of "
                            + allm.size() + " Ms (a lost wake-up leaves work queued with every M asleep)");
                }
            }
            Thread.onSpinWait();
        }
    }

    /**
     * One test M: findRunnable's order against the global queue, with the product's Idle methods
     * at every protocol step; mstart's first step (take nextp) included.
     */
    private static void mloop(
            Scheduler s, M mp, AtomicInteger consumed, boolean[] stop, AtomicReference<Throwable> failure) {
        Idle idle = s.idle;
        Sched sc = s.sched;
        try {
            P first = mp.nextp;
            mp.nextp = null;
            mp.acquirep(first);
            for (; ; ) {
                G gp;
                synchronized (sc.lock) {
                    if (stop[0]) {
                        return;
                    }
                    gp = sc.runq.globrunqget();
                }
                if (gp != null) {
                    if (mp.spinning) {
                        idle.resetspinning(mp); // a spinner that found work wakes the next one
                    }
                    consumed.incrementAndGet();
                    continue;
                }
                if (!mp.spinning && 2 * idle.nmspinning.get() < s.gomaxprocs - idle.npidle.get()) {
                    idle.becomeSpinning(mp);
                    continue; // look again as a spinner (findRunnable's steal pass)
                }
                P pp = mp.p;
                boolean again = false;
                synchronized (sc.lock) {
                    if (!sc.runq.empty()) {
                        again = true;
                    } else if (!mp.spinning && idle.needspinning.get() == 1) {
                        idle.becomeSpinning(mp);
                        again = true;
                    } else {
                        mp.releasep();
                        idle.pidleput(pp);
                    }
                }
                if (again) {
                    continue;
                }
                if (mp.spinning) {
                    idle.dropspinning(mp, "findRunnable");
                    P pp2;
                    synchronized (sc.lock) {
                        pp2 = idle.recheckGlobal();
                    }
                    if (pp2 != null) {
                        mp.acquirep(pp2);
                        idle.becomeSpinning(mp);
                        continue;
                    }
                }
                // stopm
                synchronized (sc.lock) {
                    if (stop[0]) {
                        return;
                    }
                    idle.mput(mp);
                }
                mp.park.notesleep();
                mp.park.noteclear();
                synchronized (sc.lock) {
                    if (stop[0]) {
                        return;
                    }
                }
                P np = mp.nextp;
                mp.nextp = null;
                if (np == null) {
                    throw new AssertionError(mp + " woken without a P");
                }
                mp.acquirep(np);
            }
        } catch (Throwable t) {
            failure.compareAndSet(null, t);
        }
    }
}
