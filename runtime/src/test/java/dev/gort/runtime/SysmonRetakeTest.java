package dev.gort.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * sysmon's retake with an explicit clock, on a runtime that is built but not started (no carrier
 * runs): the slice rule (10 ms from sysmon's first sighting of a schedtick, shared by a runnext
 * chain) and the syscall retake rule, in both syscall models ({@code psyscall}: Go 1.25's
 * {@code _Psyscall}; else Go 1.26+'s, the P {@code _Prunning} with its M and the G {@code _Gsyscall}).
 *
 * <p>No thread runs: the Ms that a handoff starts are recorded through the {@link Idle.Ms} seam,
 * never started, so a handed-off P stays where handoffp left it (a real carrier would acquire it
 * for a moment, and a check of its status would race with that carrier).
 */
class SysmonRetakeTest {
    private static final long MS = 1_000_000L;

    /** The Ms that handoffp started (startm's newm), in order; their nextp is the P each was given. */
    private final List<M> started = new ArrayList<>();

    private Scheduler newScheduler(int procs) {
        return newScheduler(procs, false);
    }

    private Scheduler newScheduler(int procs, boolean psyscall) {
        Scheduler s = new Scheduler(TestSupport.config(procs, psyscall).withSpinning(false));
        synchronized (s.sched.lock) {
            s.idle.synced.mnext = 1; // pretend one M is running, so incidlelocked's checkdead stays quiet
        }
        s.idle.ms = started::add;
        return s;
    }

    /** handoffp started one M and gave it pp (Go: startm(pp, false)). */
    private void assertStartedOneMFor(P pp) {
        assertEquals(1, started.size(), "handoffp must start one M for the P");
        assertSame(pp, started.get(0).nextp);
    }

    /** Takes P0 off the idle list and wires it to a fresh (unstarted) M running gp. */
    private static M runOn(Scheduler s, P pp, G gp) {
        M mp = new M(s, 99, "test");
        pp.setMOpaque(mp);
        pp.setStatus(P._Prunning);
        mp.p = pp;
        mp.curg = gp;
        gp.m = mp;
        return mp;
    }

    /** pp's G enters a syscall, as entersyscall leaves it in each model. */
    private static void inSyscall(Scheduler s, P pp) {
        if (s.psyscall) {
            pp.setStatus(P._Psyscall); // entersyscall: P keeps no M
            return;
        }
        G gp = new G(s, 42, 0, null, () -> {});
        gp.casgstatus(G._Gidle, G._Grunnable);
        gp.casgstatus(G._Grunnable, G._Grunning);
        M mp = runOn(s, pp, gp);
        mp.oldp = pp;
        gp.casgstatus(G._Grunning, G._Gsyscall); // the P stays _Prunning with its M
    }

    /** pp is still the syscall's: _Psyscall (1.25), or _Prunning with the syscall's M (1.26+). */
    private static boolean stillInSyscall(Scheduler s, P pp) {
        if (s.psyscall) {
            return pp.status() == P._Psyscall;
        }
        M mp = pp.mOpaque();
        // after a retake, handoffp may already have wired pp to a new M running nothing (curg null)
        G gp = mp == null ? null : mp.curg;
        return pp.status() == P._Prunning && gp != null && gp.readgstatus() == G._Gsyscall && mp.p == pp;
    }

    private static P takeP(Scheduler s) {
        synchronized (s.sched.lock) {
            return s.idle.pidleget();
        }
    }

    @Test
    void sliceIsTenMillisecondsFromFirstSightingAndSharedByRunnextChain() {
        Scheduler s = newScheduler(1);
        P pp = takeP(s);
        G g1 = new G(s, 1, 0, null, () -> {});
        M mp = runOn(s, pp, g1);
        pp.incSchedtickOpaque();
        long t0 = 1_000 * MS;

        assertEquals(0, s.sysmon.retake(t0));
        s.sysmon.retake(t0 + 9 * MS);
        assertFalse(g1.preemptRequestedOpaque(), "preempted before 10 ms");
        assertFalse(mp.thread.preemptRequestedOpaque());

        s.sysmon.retake(t0 + 10 * MS);
        assertTrue(g1.preemptRequestedOpaque(), "not preempted after 10 ms on the same schedtick");
        assertTrue(mp.thread.preemptRequestedOpaque());
        assertEquals(t0, mp.thread.preemptSliceWhen);
        assertEquals(1, s.preempt.snapshot().requested());

        // The G parks and its runnext successor inherits the slice (no schedtick++): still preempted.
        Preempt.take(mp.thread);
        G g2 = new G(s, 2, 0, null, () -> {});
        mp.curg = g2;
        g2.m = mp;
        s.preempt.newSlice(mp.thread, true); // execute with inheritTime: g2 owes nothing yet
        s.sysmon.retake(t0 + 11 * MS);
        assertTrue(g2.preemptRequestedOpaque(), "a runnext chain must share the slice");

        // A new slice (execute without inheritTime): sysmon restarts the count when it sees it.
        Preempt.take(mp.thread);
        G g3 = new G(s, 3, 0, null, () -> {});
        mp.curg = g3;
        g3.m = mp;
        pp.incSchedtickOpaque();
        s.preempt.newSlice(mp.thread, false); // execute without inheritTime
        s.sysmon.retake(t0 + 12 * MS);
        s.sysmon.retake(t0 + 21 * MS);
        assertFalse(g3.preemptRequestedOpaque(), "new slice preempted early");
        s.sysmon.retake(t0 + 22 * MS);
        assertTrue(g3.preemptRequestedOpaque());
        assertTrue(Poll.armedCount() >= 1, "the poll's armed count must follow the carrier flag");
        assertTrue((Preempt.take(mp.thread) & Preempt.REQ) != 0);
    }

    @Test
    void idlePsAreLeftAlone() {
        Scheduler s = newScheduler(2);
        for (P pp : s.allp()) {
            assertEquals(P._Pidle, pp.status());
        }
        assertEquals(0, s.sysmon.retake(5 * MS));
        assertEquals(0, s.sysmon.retake(50 * MS));
        assertEquals(0, s.preempt.snapshot().requested());
        assertTrue(started.isEmpty());
    }

    @ParameterizedTest(name = "psyscall={0}")
    @ValueSource(booleans = {false, true})
    void syscallRetakeNeedsOneSysmonTickInTheSameSyscall(boolean psyscall) {
        Scheduler s = newScheduler(2, psyscall);
        P pp = takeP(s);
        takeP(s); // the other P is busy too (not idle, not the last running P: handoffp idles ours)
        pp.incSyscalltickOpaque(); // a syscall before (exitsyscall bumps the tick); see firstSyscallOfAFreshP
        inSyscall(s, pp);
        pp.incSchedtickOpaque();
        int tick = pp.syscalltickOpaque();
        long t0 = 1_000 * MS;
        // First sighting: record, never retake (even with no idle P).
        assertEquals(0, s.sysmon.retake(t0));
        assertTrue(stillInSyscall(s, pp));
        // Next tick, same syscall, no idle or spinning capacity: retake and hand off.
        assertEquals(1, s.sysmon.retake(t0 + MS / 50));
        assertEquals(P._Pidle, pp.status());
        assertEquals(tick + 1, pp.syscalltickOpaque());
        assertEquals(1, s.npidle(), "handoffp with no work must put the P on the idle list");
        assertTrue(started.isEmpty(), "the other P is running: handoffp must not start an M");
    }

    @ParameterizedTest(name = "psyscall={0}")
    @ValueSource(booleans = {false, true})
    void syscallWithIdleCapacityAndNoWorkIsRetakenOnlyAfterTenMilliseconds(boolean psyscall) {
        Scheduler s = newScheduler(2, psyscall); // the other P stays idle: npidle > 0
        P pp = takeP(s);
        pp.incSyscalltickOpaque();
        pp.incSchedtickOpaque(); // the P has run Gs (sysmon's record starts at tick 0, when 0)
        inSyscall(s, pp);
        long t0 = 1_000 * MS;
        assertEquals(0, s.sysmon.retake(t0));
        assertEquals(0, s.sysmon.retake(t0 + MS));
        assertEquals(0, s.sysmon.retake(t0 + 9 * MS));
        assertTrue(stillInSyscall(s, pp));
        assertTrue(started.isEmpty());
        assertEquals(1, s.sysmon.retake(t0 + 10 * MS));
        // Retaken and unwired; no local work, but the other P is idle and nobody polls the network,
        // so this was the last running P: handoffp starts an M to watch the timers (Go's rule).
        assertEquals(P._Pidle, pp.status());
        assertFalse(stillInSyscall(s, pp));
        assertStartedOneMFor(pp);
        assertEquals(1, s.npidle(), "the P went to the new M, not to the idle list");
    }

    @ParameterizedTest(name = "psyscall={0}")
    @ValueSource(booleans = {false, true})
    void syscallWithLocalWorkIsRetakenAtTheSecondTick(boolean psyscall) {
        Scheduler s = newScheduler(2, psyscall);
        P pp = takeP(s);
        pp.incSyscalltickOpaque();
        pp.incSchedtickOpaque(); // the P has run Gs (sysmon's record starts at tick 0, when 0)
        inSyscall(s, pp);
        G g = new G(s, 7, 0, null, () -> {});
        g.casgstatus(G._Gidle, G._Grunnable);
        pp.runq.runqput(g, false);
        long t0 = 1_000 * MS;
        assertEquals(0, s.sysmon.retake(t0));
        assertEquals(1, s.sysmon.retake(t0 + MS / 50));
        assertFalse(stillInSyscall(s, pp));
        assertStartedOneMFor(pp); // local work: handoffp starts an M for it at once
    }

    @ParameterizedTest(name = "psyscall={0}")
    @ValueSource(booleans = {false, true})
    void aNewSyscallRestartsTheCount(boolean psyscall) {
        Scheduler s = newScheduler(2, psyscall);
        P pp = takeP(s);
        takeP(s); // busy elsewhere: handoffp idles ours instead of starting an M
        pp.incSyscalltickOpaque();
        pp.incSchedtickOpaque(); // the P has run Gs (sysmon's record starts at tick 0, when 0)
        inSyscall(s, pp);
        long t0 = 1_000 * MS;
        assertEquals(0, s.sysmon.retake(t0));
        pp.incSyscalltickOpaque(); // the G left the syscall and entered another one between two ticks
        assertEquals(0, s.sysmon.retake(t0 + MS / 50));
        assertTrue(stillInSyscall(s, pp));
        assertEquals(1, s.sysmon.retake(t0 + 2 * MS / 50));
        assertTrue(started.isEmpty());
    }

    /**
     * As in Go, sysmon's record starts at tick 0: a P whose very first syscall is seen has
     * {@code syscalltick == sysmontick.syscalltick == 0} and {@code syscallwhen == 0}, so it may be
     * retaken at the first sighting (only exitsyscall bumps the tick).
     */
    @ParameterizedTest(name = "psyscall={0}")
    @ValueSource(booleans = {false, true})
    void firstSyscallOfAFreshPMayBeRetakenAtOnce(boolean psyscall) {
        Scheduler s = newScheduler(2, psyscall);
        P pp = takeP(s);
        takeP(s); // busy elsewhere: handoffp idles ours instead of starting an M
        inSyscall(s, pp);
        assertEquals(1, s.sysmon.retake(1_000 * MS));
        assertEquals(P._Pidle, pp.status());
        assertTrue(started.isEmpty());
    }
}
