package dev.gort.runtime;

import dev.gort.runtime.trace.Ev;
import java.util.concurrent.locks.LockSupport;
import jdk.internal.vm.Continuation;

/**
 * Syscalls: a goroutine about to block its carrier thread tells the scheduler, which lets its P go
 * to other goroutines for as long as the call lasts, and gets a P back afterwards.
 *
 * <h2>What is a syscall in gort</h2>
 * Any Java call that may block the carrier: file or socket I/O, JNI, a JDK blocking call. The user
 * marks it with {@code Syscall.block(() -> ...)} ({@link #entersyscall} / {@link #exitsyscall}) or
 * {@code Syscall.blockHandoff} ({@link #entersyscallblock}: the P is handed off at once). Carriers
 * that block in user code without saying so are found by sysmon ({@link Retake#retakeBlocked}) and
 * put into the same state after the fact.
 *
 * <h2>State machine (Go 1.26+, the default)</h2>
 * <pre>
 *   entersyscall:  m.locks++; trace, m.syscalltick, m.oldp = p (the P is still ours);
 *                  G _Grunning -> _Gsyscall (CAS): the P stays _Prunning with its M
 *   a thief:       setBlockOnExitSyscall: P _Prunning, its M's G _Gsyscall -> _Gsyscall|_Gscan (CAS),
 *                  same G/M/P? then takeP (p.m = nil, m.p = nil, P -> _Pidle, syscalltick++) or
 *                  gcstopP (P -> _Pgcstop), and resume (clear the scan bit). Thieves: sysmon's
 *                  retake (then handoffp), stopTheWorld, another M's exit taking its old P back
 *   exitsyscall:   G _Gsyscall -> _Grunning (CAS; spins while a thief holds the scan bit);
 *                  m.p still set ? keep it (schedtick kept: the slice goes on)
 *                  : exitsyscallTryGetP (the old P from its current syscall, or an idle P)
 *                  : G -> _Gsyscall again, no P, and the slow exit below
 * </pre>
 * The G's status word is the only arbiter: a P whose G is in {@code _Gsyscall} belongs to its M
 * until someone holds the G's scan bit (Go: "a P is identified as 'in a system call' by looking at
 * the goroutine's state"; runtime2.go's {@code _Psyscall_unused}).
 *
 * <h2>State machine (Go 1.25, {@code GODEBUG=psyscall=1})</h2>
 * <pre>
 *   entersyscall:  G _Grunning -> _Gsyscall; m.oldp = p; m.p = nil; p.m = nil; P -> _Psyscall
 *   sysmon retake: P _Psyscall -> _Pidle (CAS), syscalltick++, handoffp(P)      [Retake]
 *   exitsyscall:   fast: CAS old P _Psyscall -> _Prunning (schedtick kept: the slice goes on)
 *                        or any idle P;  G _Gsyscall -> _Grunning
 * </pre>
 * Here the P's status word is the arbiter: a P in {@code _Psyscall} belongs to whoever wins the
 * CAS out of it.
 *
 * <p>Both models' slow exit: the G yields (YIELD_SYSCALL) still {@code _Gsyscall}; its M, on its
 * own stack, runs exitsyscall0: G -> _Grunnable; idle P ? execute it : global queue + stopm.
 *
 * <h2>Goroutines that cannot leave their carrier</h2>
 * The slow exit yields the continuation so that the G can run on any M. A G that cannot yield
 * (pinned: native frames, {@code Continuation.pin}, a legacy-locked monitor; or holding a Java
 * monitor, {@code monitorDepth > 0}; or locked to its thread) instead waits for a P on its own
 * carrier ({@link #waitForP}): the G goes to the global queue locked to this M (internally, Go's
 * {@code lockOSThread}), and whichever M dequeues it hands this M its P ({@code startlockedm}).
 * {@link #parkInPlace} is the same idea for {@code gopark}: the carrier blocks with the G mounted,
 * the P is handed off at once, and {@code goready} wakes that carrier instead of queueing the G.
 *
 * <p>Go: proc.go entersyscall, reentersyscall, entersyscallHandleGCWait, entersyscallblock,
 * exitsyscall, exitsyscallTryGetP, setBlockOnExitSyscall, syscallingThread (Go 1.26+); Go 1.25's
 * entersyscall_gcwait, exitsyscallfast, exitsyscallfast_reacquired, exitsyscallfast_pidle
 * (exitsyscall0 is in {@link M})
 */
public final class Syscalls {
    private Syscalls() {}

    /**
     * The calling goroutine is about to make a call that may block its carrier: its G goes to
     * {@code _Gsyscall} and sysmon may retake its P (Go 1.26+: the P stays {@code _Prunning} with
     * its M until then; Go 1.25: it goes to {@code _Psyscall}). Returns the goroutine, to be passed to
     * {@link #exitsyscall(G)}, or null outside a goroutine (then the caller just makes the call).
     * Calling it again inside a syscall does nothing.
     *
     * <p>Go: proc.go entersyscall
     */
    public static G entersyscall() {
        M mp = M.current();
        G gp;
        if (mp == null || (gp = mp.curg) == null) {
            return null;
        }
        reentersyscall(mp, gp, G.SYSCALL_OWN);
        return gp;
    }

    /**
     * Go: proc.go reentersyscall (Go 1.26+; {@link #reentersyscall125} under {@code psyscall=1}).
     * {@code implicit}: who enters it ({@link G#syscallImplicit}: the G's own call, or the agent's
     * hook around a blocking JDK call); a G already in a syscall stays in it, its own from then on.
     */
    static void reentersyscall(M mp, G gp, byte implicit) {
        Scheduler s = mp.sched;
        if (s.psyscall) {
            reentersyscall125(mp, gp, implicit);
            return;
        }
        // Disable preemption (and sysmon's blocked-carrier retake) while the P is still ours to touch.
        mp.locks++;
        int st = gp.readgstatusNoScan();
        if (st != G._Grunning) {
            mp.locks--;
            if (st == G._Gsyscall) {
                // Already in a syscall: nested, or sysmon retook the P from this blocked carrier.
                if (implicit == G.SYSCALL_OWN) {
                    ownRetakenSyscall(gp);
                }
                return;
            }
            throw Fatal.fatal(s, "entersyscall: bad g status " + G.gstatusName(st));
        }
        P pp = mp.p;
        // Everything that touches the P comes before the switch to _Gsyscall: from then on a thief
        // (sysmon, a stop-the-world, another syscall's exit) may take it (setBlockOnExitSyscall).
        if (s.trace.on) s.trace.syscallEnter(mp, pp, gp);
        mp.syscalltick = pp.syscalltickOpaque();
        mp.oldp = pp;
        if (s.sched.gcwaiting) {
            // Optimization: a pending STW gets our P now.
            entersyscallHandleGCWait(s, mp, pp);
        }
        if (gp.syscallImplicit != implicit) {
            gp.syscallImplicit = implicit; // the G's own, or the hook's (see G.syscallImplicit)
        }
        // As soon as we switch to _Gsyscall, we are in danger of losing our P: a CAS (a full fence,
        // the Dekker half against stopTheWorld, which sets gcwaiting and then reads G statuses).
        if (!gp.tryCasgstatus(G._Grunning, G._Gsyscall)) {
            gp.casgstatus(G._Grunning, G._Gsyscall);
        }
        if (s.sched.sysmonwait) {
            s.sysmonwake(); // Go: entersyscallWakeSysmon
        }
        mp.locks--;
        if (s.sched.gcwaiting && mp.p == pp) {
            // gort: a stop-the-world that set gcwaiting after our check above and then saw us still
            // _Grunning waits for this P; Go's waits until the syscall returns, gort's calls can
            // block on goroutines the stopped world will not run. Stop the P ourselves, as the STW
            // would have.
            entersyscallGCStopSelf(s, pp);
        }
    }

    /** Go: proc.go entersyscallHandleGCWait (Go 1.26+): the P goes to {@code _Pgcstop} before the G is in its syscall. */
    private static void entersyscallHandleGCWait(Scheduler s, M mp, P pp) {
        synchronized (s.sched.lock) {
            if (s.world.synced.stopwait > 0) {
                pp.setMOpaque(null);
                mp.setPRelease(null);
                pp.setStatus(P._Pgcstop);
                if (s.trace.on) s.trace.handoff(pp, mp); // the P leaves the syscall's M (Go: ProcStop)
                pp.incSyscalltickOpaque();
                s.world.stopwaitDone();
            }
        }
    }

    /** See the end of {@link #reentersyscall}: what stopTheWorld does for a P whose G is in a syscall. */
    private static void entersyscallGCStopSelf(Scheduler s, P pp) {
        synchronized (s.sched.lock) {
            if (s.world.synced.stopwait > 0) {
                SyscallingThread t = setBlockOnExitSyscall(pp);
                if (t != null) {
                    t.gcstopP();
                    t.resume();
                    s.world.stopwaitDone();
                }
            }
        }
    }

    /** Go 1.25's reentersyscall: the P goes to {@code _Psyscall} without its M. Go: proc.go reentersyscall (1.25). */
    static void reentersyscall125(M mp, G gp, byte implicit) {
        if (!gp.tryCasgstatus(G._Grunning, G._Gsyscall) && !casToSyscallSlow(mp, gp)) {
            // Already in a syscall: nested, or sysmon retook the P from this blocked carrier.
            if (implicit == G.SYSCALL_OWN) {
                ownRetakenSyscall(gp);
            }
            return;
        }
        if (gp.syscallImplicit != implicit) {
            gp.syscallImplicit = implicit; // the G's own, or the hook's (see G.syscallImplicit)
        }
        P pp = mp.p;
        Scheduler s = mp.sched;
        if (s.trace.on) s.trace.syscallEnter(mp, pp, gp);
        mp.syscalltick = pp.syscalltickOpaque();
        pp.setMOpaque(null);
        mp.oldp = pp;
        mp.setPRelease(null);
        // Volatile store: a StoreLoad before the gcwaiting read below (Dekker with stopTheWorld,
        // which sets gcwaiting and then looks for _Psyscall Ps).
        pp.setStatus(P._Psyscall);
        if (s.sched.sysmonwait) {
            s.sysmonwake(); // Go: entersyscall_sysmon (a racy read first, as Go's atomic load)
        }
        if (s.sched.gcwaiting) {
            entersyscall_gcwait(s, pp);
        }
    }

    /**
     * The G, already in {@code _Gsyscall}, enters a syscall of its own (it wrapped a call in
     * {@code Syscall.block}): if that {@code _Gsyscall} was sysmon's ({@link Retake#retakeBlocked}
     * retook the P of its blocked carrier and nothing since has left the retake), it is the G's own
     * from now on, as if the G had entered it with a P. Otherwise a preemption poll inside the call
     * (or a blocking call's return, {@link Poll#blockingExit}) would leave the "retake" and take a P
     * into the G's blocking call, out of sysmon's sight, and sysmon would keep watching the carrier
     * as a retaken one. Safe without the scan bit: sysmon writes the flag true only while it moves
     * the G from {@code _Grunning}, which it is not.
     */
    private static void ownRetakenSyscall(G gp) {
        if (gp.syscallImplicit != G.SYSCALL_OWN) {
            gp.syscallImplicit = G.SYSCALL_OWN; // this syscall is the G's own (see G.syscallImplicit)
        }
    }

    /** The G is not plainly _Grunning: wait out sysmon's scan bit; false if already _Gsyscall. */
    private static boolean casToSyscallSlow(M mp, G gp) {
        for (; ; ) {
            int st = gp.readgstatusNoScan();
            if (st == G._Gsyscall) {
                return false;
            }
            if (st != G._Grunning) {
                throw Fatal.fatal(mp.sched, "entersyscall: bad g status " + G.gstatusName(st));
            }
            if (gp.tryCasgstatus(G._Grunning, G._Gsyscall)) {
                return true;
            }
        }
    }

    /** A stop-the-world is under way: give it our P now rather than at exit. Go: entersyscall_gcwait. */
    private static void entersyscall_gcwait(Scheduler s, P pp) {
        synchronized (s.sched.lock) {
            if (s.world.synced.stopwait > 0 && pp.casStatus(P._Psyscall, P._Pgcstop)) {
                // Go's trace: ProcSteal (the P may have been stolen and put back in _Psyscall since)
                if (s.trace.on) s.trace.handoff(pp, null);
                pp.incSyscalltickOpaque();
                s.world.stopwaitDone();
            }
        }
    }

    /**
     * The same as {@link #entersyscall}, for a call known to block for a while: the P is handed
     * off at once instead of waiting for sysmon. Returns the goroutine for {@link #exitsyscall(G)}.
     *
     * <p>Go: proc.go entersyscallblock, entersyscallblock_handoff
     */
    public static G entersyscallblock() {
        M mp = M.current();
        G gp;
        if (mp == null || (gp = mp.curg) == null) {
            return null;
        }
        Scheduler s = mp.sched;
        if (!s.psyscall) {
            // Go 1.26+: the P is handed off before the G is _Gsyscall (a thief may take a P whose G
            // is in a syscall): a short window _Grunning without a P.
            int st = gp.readgstatusNoScan();
            if (st == G._Gsyscall) {
                ownRetakenSyscall(gp); // no P to hand off: nested, or sysmon took it
                return gp;
            }
            if (st != G._Grunning) {
                throw Fatal.fatal(s, "entersyscallblock: bad g status " + G.gstatusName(st));
            }
            if (gp.syscallImplicit != G.SYSCALL_OWN) {
                gp.syscallImplicit = G.SYSCALL_OWN;
            }
            mp.locks++;
            P pp = mp.p;
            if (s.trace.on) s.trace.syscallEnter(mp, pp, gp);
            mp.syscalltick = pp.syscalltickOpaque();
            pp.incSyscalltickOpaque();
            mp.oldp = null;
            s.syscallStats.handoffAtEntry.incrementAndGet();
            s.idle.handoffp(mp.releasep());
            gp.casgstatus(G._Grunning, G._Gsyscall);
            mp.locks--;
            return gp;
        }
        if (!gp.tryCasgstatus(G._Grunning, G._Gsyscall) && !casToSyscallSlow(mp, gp)) {
            ownRetakenSyscall(gp); // no P to hand off: nested, or sysmon took it
            return gp;
        }
        if (gp.syscallImplicit != G.SYSCALL_OWN) {
            gp.syscallImplicit = G.SYSCALL_OWN; // this syscall is the G's own (see G.syscallImplicit)
        }
        P pp = mp.p;
        if (s.trace.on) s.trace.syscallEnter(mp, pp, gp);
        mp.syscalltick = pp.syscalltickOpaque();
        pp.incSyscalltickOpaque();
        mp.oldp = null;
        s.syscallStats.handoffAtEntry.incrementAndGet();
        s.idle.handoffp(mp.releasep());
        return gp;
    }

    /**
     * The goroutine's blocking call returned: get a P to run on. Keeps the old P if sysmon did not
     * take it (and with it the time slice: schedtick does not move), else any idle P; else the G
     * yields and its M queues it globally and parks ({@code exitsyscall0}). Does nothing if the
     * caller is not in a syscall. Returns true if the goroutine moved (it may now be on another
     * M: re-read {@code M.current()}).
     *
     * <p>Go: proc.go exitsyscall
     */
    public static boolean exitsyscall() {
        M mp = M.current();
        G gp = mp == null ? null : mp.curg;
        return gp != null && exitsyscall(gp);
    }

    /**
     * The calling carrier's M, after its goroutine left the "syscall" that sysmon made of a block
     * it has since returned from ({@link Retake}: no gort call since), as its next gort call would:
     * for runtime calls that need the P. Null outside a goroutine.
     */
    static M currentLeavingRetake() {
        M mp = M.current();
        G gp = mp == null ? null : mp.curg;
        if (gp != null
                && gp.syscallImplicit != G.SYSCALL_OWN
                && gp.readgstatusNoScan() == G._Gsyscall
                && exitsyscall(gp)) {
            mp = M.current(); // it moved
        }
        return mp;
    }

    /**
     * {@link #exitsyscall()} for the goroutine {@link #entersyscall()} returned (null: nothing to
     * do). Saves looking the carrier up again: a G's M is {@code gp.m} while it runs.
     */
    public static boolean exitsyscall(G gp) {
        if (gp == null || gp.readgstatusNoScan() != G._Gsyscall) {
            return false;
        }
        M mp = gp.m;
        if (!mp.sched.psyscall) {
            return exitsyscall126(mp, gp);
        }
        P oldp = mp.oldp;
        mp.oldp = null;
        if (exitsyscallfast(mp, oldp)) {
            // There's a cpu for us, so we can run.
            P pp = mp.p;
            pp.incSyscalltickOpaque();
            // Nobody else changes a _Gsyscall G's status (sysmon's scan bit is for _Grunning, a
            // dump's for parked Gs): a release store, not a CAS.
            gp.setgstatusRelease(G._Grunning);
            if (mp.trace.on) mp.trace.syscallExit(mp, pp, gp, pp == oldp ? Ev.X_SAME_P : Ev.X_OTHER_P);
            if (Preempt.owedOpaque(mp) || (pp == oldp && pp.preempt)) {
                // sysmon asked for the slice: preemptone (OWED) before the call, or, during
                // it, Sysmon.retake's mark on the P (it cannot reach a G in a syscall).
                return mp.sched.preempt.preemptAtExit(mp, gp);
            }
            return false;
        }
        return exitsyscallSlow(mp, gp);
    }

    /**
     * Go 1.26+'s exitsyscall: the G switches back to {@code _Grunning} first (waiting out a thief's
     * scan bit), and then the M still holds its P unless someone took it; else it tries to take its
     * old P back from whatever syscall is on it now, or any idle P. With none, the G goes back to
     * {@code _Gsyscall} without a P (gort: the state a retaken syscall leaves in the 1.25 model,
     * from which the slow exit departs; Go's exitsyscallNoP starts from {@code _Grunning}).
     *
     * <p>Go: proc.go exitsyscall, exitsyscallTryGetP
     */
    private static boolean exitsyscall126(M mp, G gp) {
        gp.casgstatus(G._Gsyscall, G._Grunning);
        P oldp = mp.oldp;
        mp.oldp = null;
        P pp = mp.p;
        if (pp != null) {
            // Fast path: we still have our P (schedtick kept: the slice goes on).
            if (mp.trace.on) mp.trace.syscallExit(mp, pp, gp, Ev.X_SAME_P);
            mp.syscallFastOldP++;
        } else if ((pp = exitsyscallTakeOldP(oldp)) != null) {
            // Our old P, taken back from the syscall on it now.
            mp.acquirep(pp);
            if (mp.trace.on) mp.trace.syscallExit(mp, pp, gp, Ev.X_OTHER_P);
            mp.syscallFastOldP++;
        } else if ((pp = exitsyscallIdleP(mp)) != null) {
            mp.acquirep(pp);
            if (mp.trace.on) mp.trace.syscallExit(mp, pp, gp, Ev.X_OTHER_P);
            mp.syscallFastIdleP++;
        }
        if (pp != null) {
            pp.incSyscalltickOpaque();
            if (Preempt.owedOpaque(mp) || (pp == oldp && pp.preempt)) {
                return mp.sched.preempt.preemptAtExit(mp, gp);
            }
            return false;
        }
        gp.casgstatus(G._Grunning, G._Gsyscall);
        return exitsyscallSlow(mp, gp);
    }

    /**
     * exitsyscall's attempt to get a P back (Go 1.26+), first half: our old P, if a syscall holds
     * it now (taken with the same CAS a thief uses). The P returned is {@code _Pidle}, for acquirep.
     *
     * <p>Go: proc.go exitsyscallTryGetP (its two halves are apart here so that the syscall
     * statistics can tell the old P from an idle one)
     */
    private static P exitsyscallTakeOldP(P oldp) {
        if (oldp != null) {
            SyscallingThread t = setBlockOnExitSyscall(oldp);
            if (t != null) {
                t.takeP();
                t.resume();
                return oldp;
            }
        }
        return null;
    }

    /** exitsyscallTryGetP's second half: any idle P (it may be our old one, gone idle). Go: exitsyscallTryGetP. */
    private static P exitsyscallIdleP(M mp) {
        Scheduler s = mp.sched;
        if (s.idle.npidle.get() > 0) {
            P pp;
            synchronized (s.sched.lock) {
                pp = s.idle.pidleget();
                if (pp != null && s.sched.sysmonwait) {
                    s.sysmonwake();
                }
            }
            return pp;
        }
        return null;
    }

    /**
     * A thread in a system call that, while a thief holds it, cannot advance out of it: the G's scan
     * bit on {@code _Gsyscall} makes its exitsyscall spin. Go 1.26+ only.
     *
     * <p>Go: proc.go syscallingThread
     */
    static final class SyscallingThread {
        final G gp;
        final M mp;
        final P pp;

        private SyscallingThread(G gp, M mp, P pp) {
            this.gp = gp;
            this.mp = mp;
            this.pp = pp;
        }

        /**
         * Unwires the P and moves it to {@code _Pgcstop} for the stop-the-world under way
         * (sched.lock held); the caller counts it off stopwait. Go: gcstopP.
         */
        void gcstopP() {
            mp.sched.sched.assertLockHeld(mp.sched, "gcstopP");
            releaseP(P._Pgcstop);
        }

        /** Unwires the P and moves it to {@code _Pidle} (for handoffp or acquirep). Go: takeP. */
        void takeP() {
            releaseP(P._Pidle);
        }

        /** Go: releaseP. */
        private void releaseP(int state) {
            if (state != P._Pidle && state != P._Pgcstop) {
                throw Fatal.fatal(mp.sched, "attempted to release P into a bad state");
            }
            pp.setMOpaque(null);
            mp.setPRelease(null);
            pp.setStatus(state);
            if (mp.trace.on) mp.trace.handoff(pp, mp); // Go's trace: ProcSteal
            pp.incSyscalltickOpaque();
        }

        /** Lets the thread advance beyond exitsyscall. Go: resume. */
        void resume() {
            gp.casfromgscanstatus();
        }
    }

    /**
     * Prevents pp's thread from advancing out of exitsyscall: if pp is {@code _Prunning} and its M's
     * G is in {@code _Gsyscall}, takes the G's scan bit and checks that it is still the same G, M and
     * P. Null if pp is not in a syscall or that changed meanwhile (racy reads on purpose, as Go's).
     * The caller must {@link SyscallingThread#resume} the result.
     *
     * <p>Go: proc.go setBlockOnExitSyscall
     */
    static SyscallingThread setBlockOnExitSyscall(P pp) {
        if (pp.status() != P._Prunning) {
            return null;
        }
        M mp = pp.mOpaque();
        if (mp == null) {
            return null;
        }
        G gp = mp.curg;
        if (gp == null || (gp.readgstatusRaw() & ~G._Gscan) != G._Gsyscall) {
            return null;
        }
        if (!gp.tryCasgstatus(G._Gsyscall, G._Gsyscall | G._Gscan)) {
            return null;
        }
        if (gp.m != mp || mp.p != pp) {
            gp.casfromgscanstatus();
            return null;
        }
        return new SyscallingThread(gp, mp, pp);
    }

    /**
     * Takes the old P back if it is still in {@code _Psyscall}, else any idle P. On success this M
     * holds a {@code _Prunning} P (Go 1.25's model).
     *
     * <p>Go: proc.go exitsyscallfast, exitsyscallfast_reacquired, exitsyscallfast_pidle
     */
    static boolean exitsyscallfast(M mp, P oldp) {
        // Try to re-acquire the last P.
        if (oldp != null && oldp.status() == P._Psyscall && oldp.casStatus(P._Psyscall, P._Prunning)) {
            // There's a cpu for us, so we can run (wirep).
            oldp.setMOpaque(mp);
            mp.setPRelease(oldp);
            if (mp.syscalltick != oldp.syscalltickOpaque()) {
                // The p was retaken and then entered a syscall again (since m.syscalltick has
                // changed): we are taking it from that syscall.
                oldp.incSyscalltickOpaque();
                if (mp.trace.on) {
                    mp.trace.handoff(oldp, null); // Go's trace: ProcSteal
                    mp.trace.procStart(mp, oldp);
                }
            }
            mp.syscallFastOldP++;
            return true;
        }
        // Try to get any other idle P.
        Scheduler s = mp.sched;
        if (s.idle.npidle.get() > 0) {
            P pp;
            synchronized (s.sched.lock) {
                pp = s.idle.pidleget();
            }
            if (pp != null) {
                mp.acquirep(pp);
                mp.syscallFastIdleP++;
                return true;
            }
        }
        return false;
    }

    /**
     * Ends the syscall of a G that is leaving it by parking or yielding (or has left its carrier
     * already), without ever waiting: exitsyscall's fast path only. True: this M holds a P and
     * the G is {@code _Grunning}. False: no P free; the G stays {@code _Gsyscall} and departs from
     * there (parking, or queueing a G globally, needs no P). Never yields, never blocks: safe
     * while the caller holds a channel or semaphore lock.
     *
     * <p>Go: proc.go exitsyscallfast (Go's Gs never park from _Gsyscall; gort's may, see gopark)
     */
    static boolean exitsyscallNoWait(M mp, G gp) {
        P op = mp.oldp;
        mp.oldp = null;
        if (!mp.sched.psyscall) {
            // Go 1.26+: running again, then the P if it is still ours, else one without waiting.
            gp.casgstatus(G._Gsyscall, G._Grunning);
            P pp = mp.p;
            boolean kept = pp != null;
            if (kept) {
                mp.syscallFastOldP++;
            } else if ((pp = exitsyscallTakeOldP(op)) != null) {
                mp.acquirep(pp);
                mp.syscallFastOldP++;
            } else if ((pp = exitsyscallIdleP(mp)) != null) {
                mp.acquirep(pp);
                mp.syscallFastIdleP++;
            }
            if (pp != null) {
                pp.incSyscalltickOpaque();
                if (mp.trace.on) mp.trace.syscallExit(mp, pp, gp, kept ? Ev.X_SAME_P : Ev.X_OTHER_P);
                return true;
            }
            gp.casgstatus(G._Grunning, G._Gsyscall); // no P: depart from the syscall, as below
            if (mp.trace.on) mp.trace.syscallExit(mp, null, gp, Ev.X_OTHER_P);
            return false;
        }
        if (exitsyscallfast(mp, op)) {
            mp.p.incSyscalltickOpaque();
            gp.casgstatus(G._Gsyscall, G._Grunning);
            if (mp.trace.on) mp.trace.syscallExit(mp, mp.p, gp, Ev.X_OTHER_P);
            return true;
        }
        // No P: the G leaves from the syscall. The trace shows it running on no P for the instant
        // it takes to stop (X_OTHER_P with no P), so that the stop event that follows fits.
        if (mp.trace.on) mp.trace.syscallExit(mp, null, gp, Ev.X_OTHER_P);
        return false;
    }

    /**
     * No P at hand: yield to the M (exitsyscall0), or, if the G cannot leave its carrier, wait here.
     * It cannot when it is locked to it, holds a monitor or lock the agent counted, or, in a
     * "syscall" that sysmon made of a blocked carrier ({@link Retake}), runs inside a JDK frame
     * that holds a lock ({@link LockFrames}: a carrier blocked inside
     * {@code ConcurrentHashMap.computeIfAbsent}'s mapping function): a yield would carry that
     * monitor to another carrier (jdk25-continuations.md: its ownership may stay with this one, a
     * leaked lock). The frame walk costs 5-11 µs here (15-55 frames), so only retaken exits pay
     * it (they follow a block of a sysmon tick or more); an explicit {@code Syscall.block} inside
     * such a frame is not walked, as a park there is not ({@link LockFrames}, "Not covered").
     */
    private static boolean exitsyscallSlow(M mp, G gp) {
        int frames = LockFrames.NONE;
        if (gp.lockedm() == null
                && gp.monitorDepth == 0
                && (gp.syscallImplicit == G.SYSCALL_OWN || (frames = LockFrames.scan()) == LockFrames.NONE)) {
            gp.yieldReason = G.YIELD_SYSCALL;
            if (Continuation.yield(G.SCOPE)) {
                M.current().p.incSyscalltickOpaque();
                return true;
            }
            gp.yieldReason = G.YIELD_NONE; // pinned: wait on this carrier
        }
        Scheduler s = mp.sched;
        (gp.lockedm() != null && gp.lockedInt() == 0 ? s.syscallStats.slowLocked : s.syscallStats.slowInPlace)
                .incrementAndGet();
        waitForP(mp, gp, true, holdsLock(gp, frames)); // from _Gsyscall
        mp.p.incSyscalltickOpaque();
        return false;
    }

    /**
     * Whether gp, about to wait on its carrier for a P, holds what other goroutines may be waiting
     * for: a Java monitor or counted {@code Lock} (not a parker method's hold on its carrier alone,
     * {@code G.Rare.parkerDepth}), a class initialiser, or ({@code frames}, a {@link LockFrames}
     * verdict) a JDK frame's lock. Such a waiter takes a running goroutine's P
     * ({@link Preempt#boostLockHolder}); a locked goroutine does not (it waits for its own M's turn).
     */
    static boolean holdsLock(G gp, int frames) {
        return gp.lockedm() == null
                && (gp.monitorDepth > gp.parkerDepth() || gp.clinitDepth() != 0 || frames != LockFrames.NONE);
    }

    /**
     * exitsyscall0 for a G that stays mounted on its carrier (pinned, monitor held, or locked):
     * G is {@code _Grunnable} ({@code _Gsyscall} if {@code fromSyscall}) and this M has no P. Takes
     * an idle P, or queues the G globally, locked to this M for the moment, and sleeps until the M
     * that dequeues it hands over its P (startlockedm). Returns with a P and the G
     * {@code _Grunning} on a new slice.
     * {@code fromSyscall}: the G leaves a syscall (else a park in place or a preemption in place:
     * it is runnable already); its CAS to runnable and the exit's record are one trace section
     * ({@link dev.gort.runtime.trace.Tracer#sectionBegin}).
     * {@code lockHolder}: the G holds a Java lock ({@link #holdsLock}): with no idle P it waits at
     * the global queue's head, not its tail, and asks a running goroutine for its P
     * ({@link Preempt#boostLockHolder}; gort only: Go's locks do not stay with a thread).
     *
     * <p>Go: proc.go exitsyscall0 + stoplockedm, run on the G's own stack
     */
    static void waitForP(M mp, G gp, boolean fromSyscall, boolean lockHolder) {
        Scheduler s = mp.sched;
        P pp = null;
        boolean temp = false;
        if (fromSyscall) {
            s.trace.sectionBegin(mp);
        }
        try {
            if (fromSyscall) {
                gp.casgstatus(G._Gsyscall, G._Grunnable);
            }
            synchronized (s.sched.lock) {
                pp = s.idle.pidleget();
                if (pp == null) {
                    if (gp.lockedm() == null) {
                        // Only this carrier can run it: lock it here until it runs (Go: lockOSThread).
                        temp = true;
                        gp.rare().lockedInt++;
                        ThreadLock.dolockOSThread(mp, gp);
                    } else if (gp.lockedm() != mp) {
                        throw Fatal.fatal(s, "waitForP: g locked to another m");
                    }
                    if (lockHolder) {
                        s.sched.runq.globrunqputhead(gp);
                        s.preempt.boostLockHolder(mp);
                    } else {
                        s.sched.runq.globrunqput(gp);
                    }
                }
            }
            if (pp != null) {
                mp.acquirep(pp);
                if (s.trace.on) {
                    if (fromSyscall) {
                        s.trace.syscallExit(mp, pp, gp, Ev.X_OTHER_P);
                    } else {
                        s.trace.goStart(mp, pp, gp, Ev.F_GLOBAL, 0, false); // ready put it "in global"
                    }
                }
            } else if (fromSyscall && s.trace.on) {
                s.trace.syscallExit(mp, null, gp, Ev.X_NO_P);
            }
        } finally {
            if (fromSyscall) {
                s.trace.sectionEnd(mp); // before the sleep below: a section never waits for a P
            }
        }
        if (pp == null) {
            // Wait until another thread schedules gp and so m again (Go: stoplockedm).
            s.preempt.carrierSleeps(mp.thread); // no poll answers a REQ left here: it would arm every poll
            s.idle.idlelockedSleep(mp);
            mp.blocked = true;
            P np;
            boolean interrupted = false;
            do {
                interrupted |= mp.park.notesleep();
                mp.park.noteclear();
                np = mp.nextp;
                if (np == null && s.exiting && leaveAtExit(s, mp, gp, temp)) {
                    throw G.Goexit.INSTANCE; // see leaveAtExit
                }
            } while (np == null);
            mp.nextp = null;
            mp.blocked = false;
            restorePermit(mp);
            if (interrupted) {
                mp.thread.interrupt(); // the mounted goroutine's status, which the sleep cleared
            }
            int st = gp.readgstatus();
            if (st != G._Grunnable) {
                System.err.println("runtime:stoplockedm: lockedg (atomicstatus=" + st + ") is not Grunnable");
                throw Fatal.fatal(s, "stoplockedm: not runnable");
            }
            pp = np;
            if (temp) {
                gp.rare().lockedInt--;
                ThreadLock.dounlockOSThread(mp, gp);
            }
            mp.acquirep(pp);
            if (s.trace.on)
                s.trace.goStart(mp, pp, gp, mp.found.from, mp.found.fromVictim, false); // from: startlockedm
        }
        // execute(gp, false): a new slice, without the mark of the slice that ended (schedule's).
        pp.setPreemptRelease(false);
        gp.casgstatus(G._Grunnable, G._Grunning); // clears waitsince (the runnable stamp)
        pp.incSchedtickOpaque();
        mp.thread.budget = s.preempt.budgetQuantum;
        s.preempt.newSlice(mp.thread, false);
        pp.gsRun++;
    }

    /**
     * The runtime is ending (main returned, or a fatal error) while gp waits on its carrier for a
     * P: no M will schedule it again, and the carrier, as non-daemon as the caller of run, would
     * sleep for ever holding the locks that kept gp on it (a lock holder preempted in place). If gp
     * is still in the global queue (no M took it on its way to handing us a P), takes it out, and
     * makes gp running again so that the caller can end it with {@code Goexit}: its finally blocks
     * release its locks, the continuation ends, and the carrier leaves at its next scheduling point
     * (Go's process simply exits; a late panic is dropped, gdestroy). Returns false if an M has it
     * already (its P is on its way: sleep on).
     */
    private static boolean leaveAtExit(Scheduler s, M mp, G gp, boolean temp) {
        synchronized (s.sched.lock) {
            if (mp.nextp != null || !s.sched.runq.remove(gp)) {
                return false;
            }
        }
        mp.blocked = false;
        restorePermit(mp);
        if (temp) {
            gp.rare().lockedInt--;
            ThreadLock.dounlockOSThread(mp, gp);
        }
        gp.casgstatus(G._Grunnable, G._Grunning);
        return true;
    }

    /**
     * gopark for a G that must not leave its carrier (pinned, or holding a Java monitor): the G
     * becomes waiting with its continuation still mounted, the unlock function runs here, the P is
     * handed off at once (Go: entersyscallblock), and the carrier sleeps until {@code ready}
     * clears {@link G#parkedOn()} (after its CAS to runnable and the bubble's count) and wakes
     * it; then it finds a P as a syscall exit would ({@link #waitForP}).
     * While it sleeps the M counts as idle-locked, so checkdead still sees a deadlock.
     */
    static void parkInPlace(M mp, G gp, G.ParkUnlock<Object> unlockf, Object lock) {
        Scheduler s = mp.sched;
        // In a syscall (see gopark): take a P back only if one is free at once; never wait for
        // one here, where the caller may still hold the lock that unlockf releases. With none,
        // the exit's record and the park's are one trace section (as M.run's departures).
        boolean section = gp.readgstatusNoScan() == G._Gsyscall;
        int from;
        try {
            if (section) {
                s.trace.sectionBegin(mp);
            }
            from = section && !exitsyscallNoWait(mp, gp) ? G._Gsyscall : G._Grunning;
            gp.setParkedOn(mp); // before the CAS to waiting: a waker found gp through the lock unlockf releases
            // The park's record before the G can be readied (the CAS, then unlockf's release): a
            // producer is stamped before what it publishes (Tracer, "Timestamps"), so that a waker's
            // unblock on another M never sorts before it.
            if (s.trace.on) s.trace.goStop(mp, mp.p, gp, Ev.S_PARK);
            gp.casgstatus(from, G._Gwaiting);
            if (gp.waitsince == 0) {
                gp.waitsince = System.nanoTime();
            }
            if (unlockf != null && !unlockf.unlock(gp, lock)) {
                // Cancelled: unlockf guarantees nobody can ready it. Run on (Go: execute(gp, true)),
                // still in the syscall if it was; traced as M.run traces a cancelled park.
                gp.setParkedOn(null);
                gp.casgstatus(G._Gwaiting, from);
                gp.waitsince = 0;
                if (s.trace.on) s.trace.goStart(mp, mp.p, gp, Ev.F_RESUME, 0, true);
                return;
            }
        } finally {
            if (section) {
                s.trace.sectionEnd(mp);
            }
        }
        s.syscallStats.pinnedParks.incrementAndGet();
        if (from == G._Grunning) {
            s.idle.handoffp(mp.releasep());
        }
        s.preempt.carrierSleeps(mp.thread);
        s.idle.idlelockedSleep(mp); // the waker may have readied gp already: then it does not count
        mp.blocked = true;
        boolean interrupted = false;
        while (gp.parkedOn() != null) {
            LockSupport.park(gp); // ready: CAS to _Grunnable, clear parkedOn, unpark this thread
            // An interrupt is no wake-up (see Note): shutdown interrupts carriers that still run a
            // goroutine, as does goroutine code interrupting its own carrier; a status left set
            // would make every park return at once and this sleep a busy loop. It is the mounted
            // goroutine's status: given back once the goroutine runs again.
            interrupted |= Thread.interrupted();
        }
        mp.blocked = false;
        restorePermit(mp);
        if (interrupted) {
            mp.thread.interrupt(); // waitForP keeps it across its own sleep
        }
        // The waker did idlelockedWake. Now a P, as for a syscall exit without its P.
        waitForP(mp, gp, false, holdsLock(gp, LockFrames.NONE));
    }

    /**
     * After the carrier slept with a goroutine mounted (a wait for a P in place, a park in place):
     * gives the thread back the {@code LockSupport} permit its sleep may have eaten. The goroutine's
     * own code may have named this thread to a waker before (a future's waiter node: the agent's
     * parker methods wait here rather than move), and that waker's {@code unpark} may have landed
     * during our sleep, whose park loop took it as a spurious wake-up; the goroutine's next
     * {@code LockSupport.park} would then wait for a wake-up already spent. An extra permit only
     * makes that park return at once, which every caller of park must accept.
     */
    private static void restorePermit(M mp) {
        LockSupport.unpark(mp.thread);
    }

    /**
     * The P that code running on {@code mp} may use as "its" P: null if the M has none, or if its
     * goroutine is in a syscall (explicit, or sysmon retook the P while the carrier was blocked).
     * Callers hold {@code mp.locks} across their use of the P, so that sysmon never retakes it in
     * the middle ({@link Retake#retakeBlocked} backs off when it sees locks != 0).
     */
    static P pForRuntime(M mp) {
        G cur = mp.curg;
        if (cur != null && cur.readgstatusNoScan() != G._Grunning) {
            return null;
        }
        return mp.p;
    }
}
