package dev.gort.runtime;

import dev.gort.runtime.trace.Ev;
import java.util.ArrayList;
import java.util.List;

/**
 * Stopping and starting the world, and changing the number of Ps: the one file to open for
 * {@code runtime.GOMAXPROCS(n)}.
 *
 * <pre>
 *   stopTheWorld:  gcwaiting = true, stopwait = gomaxprocs, preemptall
 *                  own P, _Psyscall Ps (CAS), idle Ps        -> _Pgcstop, stopwait-- each
 *                  running Ps stop themselves at their next scheduling point:
 *                    M.gcstopm, handoffp, entersyscall_gcwait  -> _Pgcstop, {@link #stopwaitDone}
 *                  the last one wakes the initiator (stopnote)
 *   startTheWorld: procresize(newprocs or gomaxprocs), gcwaiting = false,
 *                  every P with work gets an M (an idle one, or a new one), then wakep
 * </pre>
 *
 * <p>What sched.lock guards here is {@link Synced}. {@code allp} and {@code gomaxprocs} stay on
 * {@link Scheduler} (every M reads them); only {@link #procresize} writes them, with sched.lock
 * held and the world stopped.
 *
 * <p>Go: proc.go stopTheWorldWithSema, startTheWorldWithSema, procresize, (*p).destroy;
 * debug.go GOMAXPROCS
 */
final class World {
    /** The part of the stop-the-world state that sched.lock guards (plain). */
    static final class Synced {
        /** Ps still to stop. Go: sched.stopwait. */
        int stopwait;
        /** The initiator's request for a new GOMAXPROCS (0: none). Go: newprocs. */
        int newprocs;
    }

    /** Immutable. */
    private final Scheduler s;
    /** Immutable: the scheduler's global state (its lock, gcwaiting). */
    private final Sched sched;
    /** Immutable: {@code sched.synced.world}, guarded by sched.lock. */
    final Synced synced;
    /** The initiator waits here for the last P; woken by {@link #stopwaitDone} (and shutdown). Go: sched.stopnote. */
    final Note stopnote = new Note();

    World(Scheduler s) {
        this.s = s;
        this.sched = s.sched;
        this.synced = sched.synced.world;
    }

    /**
     * A P just went to {@code _Pgcstop} for the stop-the-world under way: one fewer to wait for; the
     * last one wakes the initiator. sched.lock held.
     *
     * <p>Go: the {@code sched.stopwait--; if sched.stopwait == 0 { notewakeup(&sched.stopnote) }}
     * block of gcstopm, handoffp and entersyscall_gcwait
     */
    void stopwaitDone() {
        sched.assertLockHeld(s, "stopwait");
        if (--synced.stopwait == 0) {
            stopnote.notewakeup();
        }
    }

    /**
     * Held by a goroutine that stops the world to change GOMAXPROCS, so that two never stop it at
     * once (an explicit GOMAXPROCS and sysmon's update). CAS false -> true to take; others
     * Gosched until it is free. Go: worldsema.
     */
    private final java.util.concurrent.atomic.AtomicBoolean worldsema = new java.util.concurrent.atomic.AtomicBoolean();

    /**
     * Go: runtime.GOMAXPROCS: returns the previous setting; n &lt; 1 only reads it. A set (even to
     * the current value) is explicit: sysmon stops following the default (Go 1.25).
     */
    int gomaxprocs(int n) {
        int ret = s.gomaxprocs;
        if (n <= 0) {
            return ret;
        }
        M mp = Syscalls.currentLeavingRetake();
        if (mp == null || mp.sched != s || mp.p == null) {
            throw new IllegalStateException("gort: GOMAXPROCS(n) must be called from a goroutine of this runtime");
        }
        s.customGOMAXPROCS = true;
        if (n != ret) {
            setprocs(n);
        }
        return ret;
    }

    /** Takes {@link #worldsema}, letting the goroutine that holds it run meanwhile. Go: semacquire(&worldsema). */
    private void acquireWorldsema() {
        while (!worldsema.compareAndSet(false, true)) {
            Scheduler.gosched(); // another goroutine is stopping the world: let it
        }
    }

    /** Stops the world, sets newprocs, starts it (procresize). Go: the STW of GOMAXPROCS. */
    void setprocs(int n) {
        acquireWorldsema();
        try {
            if (n != s.gomaxprocs) {
                stopTheWorld();
                synchronized (sched.lock) {
                    synced.newprocs = n;
                }
                startTheWorld();
            }
        } finally {
            worldsema.set(false);
        }
    }

    /**
     * Runs {@code body} on the calling goroutine with the world stopped: every other P in {@code
     * _Pgcstop}, its goroutine back in a run queue, so that nothing changes state under the body
     * but the caller (and threads outside the runtime). Go stops the world this way to start a
     * trace (StartTrace, traceAdvance: stopTheWorld(stwStartTrace)). From a goroutine of this
     * runtime holding its P.
     */
    void withWorldStopped(Runnable body) {
        M mp = Syscalls.currentLeavingRetake();
        if (mp == null || mp.sched != s || mp.p == null) {
            throw new IllegalStateException("gort: stopping the world must be done from a goroutine of this runtime");
        }
        acquireWorldsema();
        try {
            stopTheWorld();
            try {
                body.run();
            } finally {
                startTheWorld();
            }
        } finally {
            worldsema.set(false);
        }
    }

    /**
     * Stops every P: the caller's at once, idle and syscall ones under the lock, running ones at
     * their next scheduling point (preemptall asks them).
     *
     * <p>Go: proc.go stopTheWorldWithSema
     */
    void stopTheWorld() {
        M mp = M.current();
        mp.locks++;
        boolean wait;
        synchronized (sched.lock) {
            synced.stopwait = s.gomaxprocs;
            sched.gcwaiting = true;
            s.preemptall();
            // stop current P
            mp.p.setStatus(P._Pgcstop);
            synced.stopwait--;
            // try to retake all P's in syscalls
            for (P pp : s.allp) {
                if (s.psyscall) {
                    // Go 1.25: Ps in _Psyscall status
                    if (pp.status() == P._Psyscall && pp.casStatus(P._Psyscall, P._Pgcstop)) {
                        if (s.trace.on) s.trace.handoff(pp, null); // Go's trace: ProcSteal
                        pp.incSyscalltickOpaque();
                        synced.stopwait--;
                    }
                } else {
                    // Go 1.26+: _Prunning Ps whose G is in a syscall
                    Syscalls.SyscallingThread thread = Syscalls.setBlockOnExitSyscall(pp);
                    if (thread != null) {
                        thread.gcstopP();
                        thread.resume();
                        synced.stopwait--;
                    }
                }
            }
            // stop idle P's
            for (; ; ) {
                P pp = s.idle.pidleget();
                if (pp == null) {
                    break;
                }
                pp.setStatus(P._Pgcstop);
                synced.stopwait--;
            }
            wait = synced.stopwait > 0;
        }
        // wait for remaining P's to stop voluntarily
        if (wait) {
            for (; ; ) {
                // wait for 100us, then try to re-preempt in case of any races
                if (stopnote.notetsleep(100_000, mp.thread)) {
                    stopnote.noteclear();
                    break;
                }
                if (s.exiting) {
                    break;
                }
                synchronized (sched.lock) {
                    s.preemptall();
                }
            }
        }
        synchronized (sched.lock) {
            if (synced.stopwait != 0 && !s.exiting) {
                throw Fatal.fatal(s, "stopTheWorld: not stopped (stopwait != 0)");
            }
            for (P pp : s.allp) {
                if (pp.status() != P._Pgcstop && !s.exiting) {
                    throw Fatal.fatal(s, "stopTheWorld: not stopped (status != _Pgcstop)");
                }
            }
            if (s.config.debugChecks() && !s.exiting) {
                DebugChecks.checkQueues(s, "stopTheWorld");
            }
        }
        mp.locks--;
    }

    /** Go: proc.go startTheWorldWithSema. */
    void startTheWorld() {
        M mp = M.current();
        mp.locks++;
        P p1;
        synchronized (sched.lock) {
            int procs = s.gomaxprocs;
            if (synced.newprocs != 0) {
                procs = synced.newprocs;
                synced.newprocs = 0;
            }
            p1 = procresize(procs, mp);
            sched.gcwaiting = false;
            if (sched.sysmonwait) {
                sched.sysmonwait = false;
                s.sysmon.wake();
            }
        }
        while (p1 != null) {
            P pp = p1;
            p1 = p1.link;
            pp.link = null;
            M nmp = pp.mOpaque();
            if (nmp != null) {
                pp.setMOpaque(null);
                if (nmp.nextp != null) {
                    throw Fatal.fatal(s, "startTheWorld: inconsistent mp->nextp");
                }
                nmp.nextp = pp;
                nmp.park.notewakeup();
            } else {
                // Start M to run P. Do not start another M below.
                s.idle.newm(pp);
            }
        }
        // Wakeup an additional proc in case we have excessive runnable goroutines in local queues
        // or in the global queue.
        s.idle.wakep();
        mp.locks--;
    }

    /**
     * Changes the number of Ps; sched.lock held and the world stopped (or at boot, mp == null).
     * Returns the list of Ps with local work, each with an idle M assigned (p.m) or none.
     *
     * <p>Go: proc.go procresize
     */
    P procresize(int nprocs, M mp) {
        sched.assertLockHeld(s, "procresize");
        int old = s.gomaxprocs;
        if (old < 0 || nprocs <= 0) {
            throw Fatal.fatal(s, "procresize: invalid arg");
        }
        // Grow allp if necessary.
        P[] cur = s.allp;
        if (nprocs > cur.length) {
            P[] na = java.util.Arrays.copyOf(cur, nprocs);
            for (int i = cur.length; i < nprocs; i++) {
                na[i] = new P.Padded(s, i, s.config.runqSize());
            }
            cur = na;
        }
        // initialize new P's
        for (int i = old; i < nprocs; i++) {
            if (cur[i].status() == P._Pdead) {
                cur[i].setStatus(P._Pgcstop);
            }
        }
        P keep = mp == null ? null : mp.p;
        if (keep != null && keep.id < nprocs) {
            // continue to use the current P
            keep.setStatus(P._Prunning);
        } else {
            // release the current P and acquire allp[0].
            if (keep != null) {
                if (s.trace.on) {
                    // Pretend that we were descheduled and then scheduled again to keep the trace
                    // consistent: the caller leaves its P (which is about to be destroyed) ...
                    s.trace.goStop(mp, keep, mp.curg, Ev.S_GOSCHED);
                    s.trace.procStop(mp, keep);
                }
                keep.setMOpaque(null);
                mp.p = null;
            }
            if (mp != null) {
                P pp = cur[0];
                pp.setMOpaque(null);
                pp.setStatus(P._Pidle);
                mp.acquirep(pp); // traces ProcStart
                if (keep != null && s.trace.on) {
                    // ... and runs again on P0 ("from the global queue", where its GoSched put it)
                    s.trace.goStart(mp, pp, mp.curg, Ev.F_GLOBAL, 0, false);
                }
            }
        }
        // release resources from unused P's
        for (int i = nprocs; i < old; i++) {
            destroyP(cur[i], cur[0]);
        }
        if (nprocs < cur.length) {
            cur = java.util.Arrays.copyOf(cur, nprocs);
        }
        s.allp = cur;
        s.gomaxprocs = nprocs;
        if (s.trace.on) s.trace.gomaxprocs(nprocs);
        s.stealOrder.reset(nprocs);

        P runnablePs = null;
        for (int i = nprocs - 1; i >= 0; i--) {
            P pp = cur[i];
            if (mp != null && mp.p == pp) {
                continue;
            }
            pp.setStatus(P._Pidle);
            pp.setMOpaque(null);
            if (pp.runq.runqempty()) {
                s.idle.pidleput(pp);
            } else {
                pp.setMOpaque(s.idle.mget());
                pp.link = runnablePs;
                runnablePs = pp;
            }
        }
        return runnablePs;
    }

    /**
     * A P beyond the new GOMAXPROCS: its Gs go to the global queue head (ring from its tail, order
     * kept, then runnext), its timers to {@code to}. sched.lock held, the world stopped.
     *
     * <p>Go: proc.go (*p).destroy
     */
    private void destroyP(P pp, P to) {
        sched.assertLockHeld(s, "destroy");
        // The owner is stopped (world stopped): take runnext, then the ring, head to tail.
        G runnext = pp.runq.runnext();
        if (runnext != null && !pp.runq.casRunnext(runnext, null)) {
            throw Fatal.fatal(s, "destroy: runnext changed while the world is stopped");
        }
        if (runnext != null && s.trace.on) s.trace.runqDestroy(pp, runnext);
        List<G> gs = new ArrayList<>();
        pp.runq.runqdrain(gs);
        for (int i = 0; i < gs.size() && s.trace.on; i++) s.trace.runqDestroy(pp, gs.get(i));
        // Move all runnable goroutines to the global queue: the ring from its tail to the global
        // head (so its order is kept), then runnext at the very head.
        for (int i = gs.size() - 1; i >= 0; i--) {
            sched.runq.globrunqputhead(gs.get(i));
        }
        if (runnext != null) {
            sched.runq.globrunqputhead(runnext);
        }
        s.timers.take(pp, to);
        s.stats.goroutinesCreated.addAndGet(pp.takeGoroutinesCreated());
        pp.setStatus(P._Pdead);
    }
}
