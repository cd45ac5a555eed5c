package dev.gort.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/**
 * sysmon's retake with an explicit clock, on a runtime that is built but not started (no carrier
 * runs): the slice rule (10 ms from sysmon's first sighting of a schedtick, shared by a runnext
 * chain) and the Go 1.25 {@code _Psyscall} retake rule.
 */
class SysmonRetakeTest {
    private static final long MS = 1_000_000L;

    private static Scheduler newScheduler(int procs) {
        Scheduler s = new Scheduler(TestSupport.config(procs).withSpinning(false));
        synchronized (s.sched.lock) {
            s.idle.synced.mnext = 1; // pretend one M is running, so incidlelocked's checkdead stays quiet
        }
        return s;
    }

    /** Takes P0 off the idle list and wires it to a fresh (unstarted) M running gp. */
    private static M runOn(Scheduler s, P pp, G gp) {
        M mp = new M(s, 99, "test");
        pp.setM(mp);
        pp.setStatus(P._Prunning);
        mp.p = pp;
        mp.curg = gp;
        gp.m = mp;
        return mp;
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
        pp.incSchedtick();
        long t0 = 1_000 * MS;

        assertEquals(0, s.sysmon.retake(t0));
        s.sysmon.retake(t0 + 9 * MS);
        assertFalse(g1.preemptRequested(), "preempted before 10 ms");
        assertFalse(mp.thread.preemptRequested());

        s.sysmon.retake(t0 + 10 * MS);
        assertTrue(g1.preemptRequested(), "not preempted after 10 ms on the same schedtick");
        assertTrue(mp.thread.preemptRequested());
        assertEquals(t0, mp.thread.preemptSliceWhen);
        assertEquals(1, s.preempt.snapshot().requested());

        // The G parks and its runnext successor inherits the slice (no schedtick++): still preempted.
        Preempt.take(mp.thread);
        G g2 = new G(s, 2, 0, null, () -> {});
        mp.curg = g2;
        g2.m = mp;
        s.preempt.newSlice(mp.thread, true); // execute with inheritTime: g2 owes nothing yet
        s.sysmon.retake(t0 + 11 * MS);
        assertTrue(g2.preemptRequested(), "a runnext chain must share the slice");

        // A new slice (execute without inheritTime): sysmon restarts the count when it sees it.
        Preempt.take(mp.thread);
        G g3 = new G(s, 3, 0, null, () -> {});
        mp.curg = g3;
        g3.m = mp;
        pp.incSchedtick();
        s.preempt.newSlice(mp.thread, false); // execute without inheritTime
        s.sysmon.retake(t0 + 12 * MS);
        s.sysmon.retake(t0 + 21 * MS);
        assertFalse(g3.preemptRequested(), "new slice preempted early");
        s.sysmon.retake(t0 + 22 * MS);
        assertTrue(g3.preemptRequested());
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
    }

    @Test
    void syscallRetakeNeedsOneSysmonTickInTheSameSyscall() {
        Scheduler s = newScheduler(2);
        P pp = takeP(s);
        takeP(s); // the other P is busy too (not idle, not the last running P: handoffp idles ours)
        pp.incSyscalltick(); // a syscall before (exitsyscall bumps the tick); see firstSyscallOfAFreshP
        pp.setStatus(P._Psyscall); // entersyscall: P keeps no M
        pp.incSchedtick();
        int tick = pp.syscalltick();
        long t0 = 1_000 * MS;
        // First sighting: record, never retake (even with no idle P).
        assertEquals(0, s.sysmon.retake(t0));
        assertEquals(P._Psyscall, pp.status());
        // Next tick, same syscall, no idle or spinning capacity: retake and hand off.
        assertEquals(1, s.sysmon.retake(t0 + MS / 50));
        assertEquals(P._Pidle, pp.status());
        assertEquals(tick + 1, pp.syscalltick());
        assertEquals(1, s.npidle(), "handoffp with no work must put the P on the idle list");
    }

    @Test
    void syscallWithIdleCapacityAndNoWorkIsRetakenOnlyAfterTenMilliseconds() {
        Scheduler s = newScheduler(2); // the other P stays idle: npidle > 0
        P pp = takeP(s);
        pp.incSyscalltick();
        pp.incSchedtick(); // the P has run Gs (sysmon's record starts at tick 0, when 0)
        pp.setStatus(P._Psyscall);
        long t0 = 1_000 * MS;
        assertEquals(0, s.sysmon.retake(t0));
        assertEquals(0, s.sysmon.retake(t0 + MS));
        assertEquals(0, s.sysmon.retake(t0 + 9 * MS));
        assertEquals(P._Psyscall, pp.status());
        assertEquals(1, s.sysmon.retake(t0 + 10 * MS));
        assertEquals(P._Pidle, pp.status());
    }

    @Test
    void syscallWithLocalWorkIsRetakenAtTheSecondTick() {
        Scheduler s = newScheduler(2);
        P pp = takeP(s);
        pp.incSyscalltick();
        pp.incSchedtick(); // the P has run Gs (sysmon's record starts at tick 0, when 0)
        pp.setStatus(P._Psyscall);
        G g = new G(s, 7, 0, null, () -> {});
        g.casgstatus(G._Gidle, G._Grunnable);
        pp.runq.runqput(g, false);
        long t0 = 1_000 * MS;
        assertEquals(0, s.sysmon.retake(t0));
        // The handoff starts an M for the queued G: let it run on a started runtime? Not here:
        // stop at the CAS by making the runtime exit first, so handoffp's startm does nothing harmful.
        s.exiting = true;
        assertEquals(1, s.sysmon.retake(t0 + MS / 50));
        assertTrue(pp.status() != P._Psyscall);
    }

    @Test
    void aNewSyscallRestartsTheCount() {
        Scheduler s = newScheduler(2);
        P pp = takeP(s);
        takeP(s); // busy elsewhere: handoffp idles ours instead of starting an M
        pp.incSyscalltick();
        pp.incSchedtick(); // the P has run Gs (sysmon's record starts at tick 0, when 0)
        pp.setStatus(P._Psyscall);
        long t0 = 1_000 * MS;
        assertEquals(0, s.sysmon.retake(t0));
        pp.incSyscalltick(); // the G left the syscall and entered another one between two ticks
        assertEquals(0, s.sysmon.retake(t0 + MS / 50));
        assertEquals(P._Psyscall, pp.status());
        assertEquals(1, s.sysmon.retake(t0 + 2 * MS / 50));
    }

    /**
     * As in Go, sysmon's record starts at tick 0: a P whose very first syscall is seen has
     * {@code syscalltick == sysmontick.syscalltick == 0} and {@code syscallwhen == 0}, so it may be
     * retaken at the first sighting (only exitsyscall bumps the tick).
     */
    @Test
    void firstSyscallOfAFreshPMayBeRetakenAtOnce() {
        Scheduler s = newScheduler(2);
        P pp = takeP(s);
        takeP(s); // busy elsewhere: handoffp idles ours instead of starting an M
        pp.setStatus(P._Psyscall);
        assertEquals(1, s.sysmon.retake(1_000 * MS));
        assertEquals(P._Pidle, pp.status());
    }
}
