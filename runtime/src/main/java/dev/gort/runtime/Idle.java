package dev.gort.runtime;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Idle Ps, idle Ms and the spinning protocol: the one file to open to change how Ms are woken,
 * parked and counted.
 *
 * <pre>
 *   submitter (goready, newproc, handoffp):  publish G, then wakep()
 *     wakep: nmspinning != 0 ? done : CAS nmspinning 0->1, pidlegetSpinning, startm(P, spinning)
 *   spinner (findRunnable):  becomeSpinning ... found work: resetspinning -> wakep (the next spinner)
 *                            nothing: pidleput(P), dropspinning (StoreLoad), recheckGlobal + every ring
 *   waker without a P:       pidlegetSpinning sets needspinning = 1: the M about to drop its P spins
 *   idle M:                  mput (checkdead), sleep on m.park; startm hands it nextp and wakes it
 * </pre>
 *
 * <p>What {@code sched.lock} guards here is {@link Synced} (tokio's {@code idle::Synced}): the idle
 * lists, their counts and the M accounting. The three words every M reads without the lock
 * ({@link #npidle}, {@link #nmspinning}, {@link #needspinning}) are atomics beside it. Every method
 * whose Javadoc says "sched.lock held" checks it ({@link Sched#assertLockHeld}).
 *
 * <p>{@link Ms} is the seam between the protocol and the threads behind the Ms: a runtime starts
 * carrier threads; {@code IdleProtocolTest} starts test threads that play the M loop's part, so
 * that wakep and nmspinning can be driven with real threads.
 *
 * <p>Go: proc.go wakep, startm, mput, mget, pidleput, pidleget, pidlegetSpinning, handoffp,
 * becomeSpinning, resetspinning, incidlelocked, checkdead, mReserveID, checkmcount, mcount
 */
final class Idle {
    /**
     * The part of the idle state that sched.lock guards (everything here is plain and read and
     * written with the lock held, observers included). Go: the schedt fields under sched.lock.
     */
    static final class Synced {
        /** Idle Ps, LIFO through p.link. Go: sched.pidle. */
        P pidle;
        /** Idle Ms, LIFO through m.schedlink. Go: sched.midle. */
        M midle;
        /** Go: sched.nmidle. */
        int nmidle;
        /** Idle Ms locked to a G (waiting for it), see {@link Idle#idlelockedSleep}. Go: sched.nmidlelocked. */
        int nmidlelocked;
        /** Ms created so far (the next M id). Go: sched.mnext. */
        long mnext;
        /** Ms that exited. Go: sched.nmfreed. */
        long nmfreed;
        /** System Ms not counted by checkdead (sysmon). Go: sched.nmsys. */
        int nmsys;
        /**
         * The id of sysmon's M, -1 until sysmon starts. Not an {@link M} of {@link #allm} (sysmon is a
         * plain thread), but Go's sysmon runs on an M of allm with no P, so scheddetail's M lines and
         * the threadcreate profile list it from this id. Go: newm(sysmon, nil, -1).
         */
        long sysmonM = -1;
        /** Thread limit. Go: sched.maxmcount. */
        int maxmcount = 10_000;
        /** Every M ever started and not exited, newest first (Go's allm order). Go: allm. */
        final List<M> allm = new ArrayList<>();
    }

    /**
     * How the protocol gets threads behind its Ms: the seam for tests. A runtime's is
     * {@link #CARRIERS}.
     */
    interface Ms {
        /**
         * Starts the thread of a new M (allocated, {@code mp.nextp} and {@code mp.spinning} set);
         * the thread acquires nextp and runs the M loop. sched.lock not held. Go: newm, newosproc.
         */
        void newm(M mp);
    }

    /**
     * Carrier threads: the M runs {@code mstart}; each is followed by the runtime's spacer threads
     * ({@link CarrierSpacers}: no two carriers' JVM thread handles on one cache line).
     */
    static final Ms CARRIERS = CarrierSpacers::start;

    /** Immutable. */
    private final Scheduler s;
    /** Immutable: the scheduler's global state (its lock, the global queue, sysmonwait). */
    private final Sched sched;
    /** Immutable: {@code sched.synced.idle}, guarded by sched.lock. */
    final Synced synced;

    /**
     * Whether startm wakes an idle M that stopped on another CPU than the waker's ({@link
     * #mget(int)}): where {@link ThreadCpu} answers, unless {@code GODEBUG=midlecpu=0} (Go's plain
     * LIFO). Immutable.
     */
    final boolean cpuAware;

    /** Number of idle Ps: written under sched.lock, read lock-free. Go: sched.npidle (atomic). */
    final AtomicInteger npidle = new AtomicInteger();
    /**
     * Spinning Ms: CAS / atomic add from any M, outside the lock. Its read-modify-writes are the
     * protocol's StoreLoad points (the essay in {@link Scheduler}). Go: sched.nmspinning.
     */
    final AtomicInteger nmspinning = new AtomicInteger();
    /** Set by pidlegetSpinning (under the lock), cleared by becomeSpinning. Go: sched.needspinning (atomic). */
    final AtomicInteger needspinning = new AtomicInteger();

    /**
     * Open {@link ExternalWaker} registrations: threads outside this runtime that may still ready a
     * goroutine or start one; while it is positive, checkdead does not call "all goroutines are
     * asleep" a deadlock. Any thread increments and decrements, atomically; checkdead reads it under
     * sched.lock.
     */
    final AtomicInteger externalWakers = new AtomicInteger();

    /**
     * The seam ({@link Ms}): written once before the runtime starts (a test installs its own on an
     * unstarted Scheduler), read by startm; volatile.
     */
    volatile Ms ms = CARRIERS;

    Idle(Scheduler s, GoDebug dbg) {
        this.s = s;
        this.sched = s.sched;
        this.synced = sched.synced.idle;
        this.cpuAware = cpuAware(dbg);
    }

    /** {@link #cpuAware} under these GODEBUG settings (also for ./gort env, {@link Config.Settings#midlecpu()}). */
    static boolean cpuAware(GoDebug dbg) {
        return dbg.get("midlecpu", 1) != 0 && ThreadCpu.available();
    }

    // ------------------------------------------------------------------------------------------
    // Waking Ms: the submitter's half of the protocol.

    /**
     * Tries to add one more P to execute Gs: called when a G is made runnable.
     *
     * <p>Go: proc.go wakep
     */
    void wakep() {
        if (SchedCounts.ON) SchedCounts.wakep.increment();
        if (!s.config.spinning()) {
            // No spinning Ms: give every idle P an M while there is queued work.
            if (npidle.get() == 0) {
                return;
            }
            P pp;
            synchronized (sched.lock) {
                pp = pidleget();
            }
            if (pp != null) {
                startm(pp, false);
            }
            return;
        }
        // Be conservative about spinning threads, only start one if none exist already.
        if (nmspinning.get() != 0) {
            if (SchedCounts.ON) SchedCounts.wakepSpinning.increment();
            return;
        }
        // gort: with no idle P and needspinning already set, Go's path below would take sched.lock
        // only to find no P and set needspinning = 1 again. Skip the lock (it is on every goready
        // of a busy program): an M about to drop its P still sees needspinning == 1 under the lock
        // and spins instead, exactly as if we had set it.
        if (npidle.get() == 0 && needspinning.get() == 1) {
            if (SchedCounts.ON) SchedCounts.wakepNoIdleP.increment();
            return;
        }
        if (!nmspinning.compareAndSet(0, 1)) {
            if (SchedCounts.ON) SchedCounts.wakepCasLost.increment();
            return;
        }
        P pp;
        synchronized (sched.lock) {
            pp = pidlegetSpinning();
            if (pp == null) {
                if (SchedCounts.ON) SchedCounts.wakepNoP.increment();
                if (nmspinning.decrementAndGet() < 0) {
                    throw Fatal.fatal(s, "wakep: negative nmspinning");
                }
                return;
            }
        }
        if (SchedCounts.ON) SchedCounts.wakepStartm.increment();
        startm(pp, true);
    }

    /**
     * Schedules some M to run the P (creating an M if necessary). With a null {@code pp}, tries to
     * get an idle P; if none, does nothing.
     *
     * <p>Go: proc.go startm
     */
    void startm(P pp, boolean spinning) {
        M nmp;
        boolean fresh = false;
        int cpu = cpuAware ? ThreadCpu.current() : -1;
        synchronized (sched.lock) {
            if (pp == null) {
                if (spinning) {
                    throw Fatal.fatal(s, "startm: P required for spinning=true");
                }
                pp = pidleget();
                if (pp == null) {
                    return;
                }
            }
            nmp = mget(cpu);
            if (nmp == null) {
                // No M is available, we must drop sched.lock and call newm. However, we already own
                // a P to assign to the M.
                long id = checkmcountAndReserve();
                nmp = allocm(id);
                nmp.spinning = spinning;
                nmp.nextp = pp;
                fresh = true;
            }
        }
        if (fresh) {
            s.stats.mStarts.incrementAndGet();
            ms.newm(nmp);
            return;
        }
        if (nmp.spinning) {
            throw Fatal.fatal(s, "startm: m is spinning");
        }
        if (nmp.nextp != null) {
            throw Fatal.fatal(s, "startm: m has p");
        }
        if (spinning && !pp.runq.runqempty()) {
            throw Fatal.fatal(s, "startm: p has runnable gs");
        }
        // The caller incremented nmspinning, so set m.spinning in the new M.
        nmp.spinning = spinning;
        nmp.nextp = pp;
        if (SchedCounts.ON) {
            SchedCounts.startmWake.increment();
            nmp.wokenAtDebug = System.nanoTime();
        }
        nmp.park.notewakeup();
    }

    /**
     * Starts a new M for {@code pp} outside the spinning protocol (M0 at boot, startTheWorld's Ps
     * with work and no idle M). Go: newm(nil, pp, id).
     */
    void newm(P pp) {
        M nm;
        synchronized (sched.lock) {
            nm = allocm(checkmcountAndReserve());
        }
        nm.nextp = pp;
        s.stats.mStarts.incrementAndGet();
        ms.newm(nm);
    }

    /**
     * Hands off P from a syscall or locked M: starts an M for it if there is anything it could do,
     * otherwise puts it on the idle list. Always runs without a P.
     *
     * <p>Go: proc.go handoffp
     */
    void handoffp(P pp) {
        s.stats.handoffs.incrementAndGet();
        // if it has local work, start it straight away
        if (!pp.runq.runqempty() || !sched.runq.empty()) {
            startm(pp, false);
            return;
        }
        // no local work, check that there are no spinning/idle M's, otherwise our help is not required
        if (s.config.spinning() && nmspinning.get() + npidle.get() == 0 && nmspinning.compareAndSet(0, 1)) {
            needspinning.set(0);
            startm(pp, true);
            return;
        }
        long when;
        synchronized (sched.lock) {
            if (sched.gcwaiting) {
                pp.setStatus(P._Pgcstop);
                s.world.stopwaitDone();
                return;
            }
            if (!sched.runq.empty()) {
                // fall through to startm outside the lock
                when = -1;
            } else if (npidle.get() == s.gomaxprocs - 1 && sched.lastpoll.get() != 0) {
                // If this is the last running P and nobody is polling, start an M: someone must
                // wait for the timers (Go: "poll network").
                when = -1;
            } else {
                when = s.timers.wakeTime(pp);
                pidleput(pp);
            }
        }
        if (when == -1) {
            startm(pp, false);
            return;
        }
        // If we're handing off a P with timers, wake the poller (Go: wakeNetPoller(when)).
        if (when != 0) {
            s.wakeNetPoller(when);
        }
    }

    // ------------------------------------------------------------------------------------------
    // The spinner's half.

    /** Go: proc.go becomeSpinning. Called by {@code mp} itself. */
    void becomeSpinning(M mp) {
        mp.spinning = true;
        if (SchedCounts.ON) SchedCounts.becomeSpinning.increment();
        if (mp.trace.on) mp.trace.spinStart(mp);
        nmspinning.incrementAndGet();
        needspinning.set(0);
    }

    /**
     * An M that {@link #startm} woke or started with {@code spinning} set (wakep counted it in
     * {@link #nmspinning} before the wake) records the start of its spin once its thread runs and
     * holds the P, so that the trace pairs every SpinStop with a SpinStart on the same M, as for a
     * spin that {@link #becomeSpinning} begins. Go's execution trace has no spinning event; gort's
     * timelines count spinning Ms from these. Called by {@code mp} itself, after acquirep.
     */
    void spinningOnWake(M mp) {
        if (mp.spinning && mp.trace.on) mp.trace.spinStart(mp);
    }

    /**
     * The spinner found work: it stops spinning and, since the wakeup policy is conservative, wakes
     * the next spinner. Called by {@code mp} itself.
     *
     * <p>Go: proc.go resetspinning
     */
    void resetspinning(M mp) {
        if (!mp.spinning) {
            throw Fatal.fatal(s, "resetspinning: not a spinning m");
        }
        if (mp.trace.on) mp.trace.spinStop(mp);
        mp.spinning = false;
        int n = nmspinning.decrementAndGet();
        if (n < 0) {
            throw Fatal.fatal(s, "findRunnable: negative nmspinning");
        }
        // M wakeup policy is deliberately somewhat conservative, so check if we need to wakeup
        // another P here.
        wakep();
    }

    /**
     * The delicate dance, first step: a spinner that found nothing (and has dropped its P) stops
     * spinning, decrementing nmspinning before it re-checks every source ({@link #recheckGlobal},
     * then every P's ring): the decrement is a volatile read-modify-write, the StoreLoad that pairs
     * with a submitter's publish-then-read of nmspinning in {@link #wakep}. Either the submitter saw
     * nmspinning == 0 and woke somebody, or the re-check sees the work. Called by {@code mp}
     * itself; {@code fn} names the caller in the fatal error.
     *
     * <p>Go: proc.go findRunnable ("Delicate dance")
     */
    void dropspinning(M mp, String fn) {
        if (mp.trace.on) mp.trace.spinStop(mp);
        mp.spinning = false;
        if (nmspinning.decrementAndGet() < 0) {
            throw Fatal.fatal(s, fn + ": negative nmspinning");
        }
    }

    /**
     * The delicate dance, second step, for the global queue: an idle P for the former spinner if
     * the global queue has work (taken as by a waker about to spin, so needspinning is set when there
     * is none), else null. sched.lock held.
     *
     * <p>Go: proc.go findRunnable ("Check global and P runqueues again")
     */
    P recheckGlobal() {
        sched.assertLockHeld(s, "findRunnable");
        if (!sched.runq.empty()) {
            return pidlegetSpinning();
        }
        return null;
    }

    // ------------------------------------------------------------------------------------------
    // The idle lists (sched.lock held).

    /** Puts mp on the idle list, then checks for deadlock; sched.lock held. Go: proc.go mput. */
    void mput(M mp) {
        sched.assertLockHeld(s, "mput");
        mp.schedlink = synced.midle;
        synced.midle = mp;
        synced.nmidle++;
        checkdead();
    }

    /** Takes an idle M, the one that stopped last; sched.lock held. Go: proc.go mget. */
    M mget() {
        return mget(-1);
    }

    /** How far down the idle-M list {@link #mget(int)} looks for an M of another CPU. */
    static final int MGET_CPU_SCAN = 4;

    /**
     * Takes an idle M to wake from a thread on CPU {@code wakerCpu} (-1: unknown, or the rule off):
     * Go's choice, the M that stopped last, unless that M stopped on the waker's CPU and one of the
     * next {@link #MGET_CPU_SCAN} stopped elsewhere; then that one. sched.lock held.
     *
     * <p>Why (gort, not Go): Linux places a woken thread on its previous CPU when that CPU is
     * idle, else, when the CPUs are busy, often on the waker's own CPU without looking for an idle
     * one (the scheduler's idle-CPU scan is cut short under load). An M that stopped on the
     * waker's CPU is then queued behind the waker, which keeps running, while the CPU the other M
     * left idle stays idle: on the 2-CPU test machine, echo over 1,000 connections at
     * GOMAXPROCS=2 (issue 14) waited 0.47 ms on average from startm's wake-up to the M running
     * (up to 5 ms, a core idle all the while: {@code perf sched}), 0.08 ms with this choice, and
     * the carriers' CPU use rose from ~1.7 to ~1.95 cores. The idle list is LIFO so that the
     * warmest M runs; passing over a few Ms keeps that in spirit.
     *
     * <p>Go: proc.go mget
     */
    M mget(int wakerCpu) {
        sched.assertLockHeld(s, "mget");
        M mp = synced.midle;
        if (mp == null) {
            return null;
        }
        if (wakerCpu >= 0 && mp.stoppedOnCpu == wakerCpu) {
            M prev = mp;
            M q = mp.schedlink;
            for (int i = 0; q != null && i < MGET_CPU_SCAN; i++, prev = q, q = q.schedlink) {
                if (q.stoppedOnCpu != wakerCpu && q.stoppedOnCpu >= 0) {
                    prev.schedlink = q.schedlink;
                    q.schedlink = null;
                    synced.nmidle--;
                    if (SchedCounts.ON) SchedCounts.mgetOtherCpu.increment();
                    return q;
                }
            }
        }
        synced.midle = mp.schedlink;
        mp.schedlink = null;
        synced.nmidle--;
        return mp;
    }

    /**
     * Puts pp on the idle-P list; sched.lock held. Go: proc.go pidleput (its {@code now} feeds the
     * GC's idle-time accounting, which gort does not have).
     */
    void pidleput(P pp) {
        sched.assertLockHeld(s, "pidleput");
        if (!pp.runq.runqempty()) {
            throw Fatal.fatal(s, "pidleput: P has non-empty run queue");
        }
        pp.link = synced.pidle;
        synced.pidle = pp;
        pp.setIdleOpaque(true);
        if (SchedCounts.ON) pp.idleSinceDebug = System.nanoTime();
        npidle.incrementAndGet();
    }

    /**
     * Takes an idle P; sched.lock held. Go: proc.go pidleget (without its {@code now}: see
     * {@link #pidleput}).
     */
    P pidleget() {
        sched.assertLockHeld(s, "pidleget");
        P pp = synced.pidle;
        if (pp != null) {
            synced.pidle = pp.link;
            pp.link = null;
            pp.setIdleOpaque(false);
            if (SchedCounts.ON) SchedCounts.pIdleNanos.add(System.nanoTime() - pp.idleSinceDebug);
            npidle.decrementAndGet();
            if (sched.sysmonwait) {
                // Leaving the all-idle state: sysmon may be in its deep sleep (Go: sysmonwake).
                sched.sysmonwait = false;
                s.sysmon.wake();
            }
        }
        return pp;
    }

    /**
     * pidleget for a caller about to spin: with no idle P, sets needspinning so that an M about to
     * drop its P spins instead. sched.lock held. Go: proc.go pidlegetSpinning.
     */
    P pidlegetSpinning() {
        sched.assertLockHeld(s, "pidlegetSpinning");
        P pp = pidleget();
        if (pp == null) {
            // See "Delicate dance" comment in findRunnable. We found work that we cannot take, we
            // must synchronize with non-spinning Ms that may be preparing to drop their P.
            needspinning.set(1);
            return null;
        }
        return pp;
    }

    /** pidlegetSpinning, or plain pidleget with the spinning protocol switched off; sched.lock held. */
    P pidlegetSpinningIfConfigured() {
        sched.assertLockHeld(s, "pidlegetSpinning");
        return s.config.spinning() ? pidlegetSpinning() : pidleget();
    }

    // ------------------------------------------------------------------------------------------
    // Ms locked to a G, and deadlock.

    /**
     * {@code incidlelocked(1)} for {@code mp} itself: it is about to sleep until its locked G (or
     * the G parked in place on it) is runnable again, so it no longer counts as running, and a
     * deadlock is checked for. Unless that G's waker ({@link #idlelockedWake}) got there first:
     * then the G is already runnable and the M already handed a P or unparked, so it never counts
     * as idle. Go does the increment after the G is published (globrunqput, unlockf) and the
     * waker's decrement unconditionally: when the waker wins, nmidlelocked dips to -1 and the
     * increment's checkdead sees this M idle while its own G is runnable ({@code checkdead:
     * runnable g}, with every other M idle); pairing the two per M closes that window.
     *
     * <p>Go: proc.go incidlelocked(1) in stoplockedm (and exitsyscall0's)
     */
    void idlelockedSleep(M mp) {
        synchronized (sched.lock) {
            if (mp.idlelockedWoken) {
                mp.idlelockedWoken = false;
                return;
            }
            if (mp.idlelocked) {
                System.err.println("runtime: M" + mp.id + " nmidlelocked=" + synced.nmidlelocked);
                throw Fatal.fatal(s, "incidlelocked: m counted idle-locked twice");
            }
            mp.idlelocked = true;
            synced.nmidlelocked++;
            checkdead();
        }
    }

    /**
     * {@code incidlelocked(-1)} for the M that sleeps (or is about to) until {@code mp}'s G runs:
     * called by the waker (startlockedm, ready of a G parked in place) before it hands over.
     *
     * <p>Go: proc.go incidlelocked(-1) in startlockedm
     */
    void idlelockedWake(M mp) {
        synchronized (sched.lock) {
            if (mp.idlelocked) {
                mp.idlelocked = false;
                synced.nmidlelocked--;
            } else {
                mp.idlelockedWoken = true;
            }
        }
    }

    /**
     * Adjusts the count of Ms waiting for their locked G (or parked in place with it), then checks
     * for deadlock when it grows (sysmon's pretend-running decrement around a retake and around
     * its injectglist). Go: proc.go incidlelocked.
     */
    void incidlelocked(int v) {
        synchronized (sched.lock) {
            synced.nmidlelocked += v;
            if (v > 0) {
                checkdead();
            }
        }
    }

    /**
     * Checks for deadlock: every M idle and no G runnable, running or in a syscall, and no timer
     * pending. sched.lock held.
     *
     * <p>Go: proc.go checkdead
     */
    void checkdead() {
        sched.assertLockHeld(s, "checkdead");
        if (s.exiting) {
            return;
        }
        long run = mcount() - synced.nmidle - synced.nmidlelocked - synced.nmsys;
        if (run > 0) {
            return;
        }
        if (externalWakers.get() > 0) {
            // A registered thread outside the runtime (ExternalWaker) may ready a G or start one:
            // it counts as a running M, as Go counts the extra M of a cgo callback (its G may even
            // sit in the global queue already, on its way to wakep).
            return;
        }
        if (s.netpoll.netpollAnyWaiters() && run == 0) {
            // gort: a goroutine parked on the network can be woken by the poller. In Go the M
            // blocked in netpoll is not idle (run > 0); gort's is not either, and this also covers
            // the moment it has returned from the poll and not yet taken a P.
            return;
        }
        if (run < 0) {
            System.err.println("runtime: checkdead: nmidle=" + synced.nmidle + " nmidlelocked=" + synced.nmidlelocked
                    + " mcount=" + mcount() + " nmsys=" + synced.nmsys);
            throw Fatal.fatal(s, "checkdead: inconsistent counts");
        }
        int grunning = 0;
        for (G gp : s.allgs.snapshot()) {
            switch (gp.readgstatus()) {
                case G._Gwaiting, G._Gpreempted -> grunning++;
                case G._Grunnable, G._Grunning, G._Gsyscall -> {
                    System.err.println("runtime: checkdead: find g " + gp.goid + " in status " + gp.readgstatus());
                    throw Fatal.fatal(s, "checkdead: runnable g");
                }
                default -> {}
            }
        }
        if (grunning == 0) { // possible if main goroutine calls runtime.Goexit()
            throw Fatal.userFatal(s, "no goroutines (main called runtime.Goexit) - deadlock!");
        }
        // There are no goroutines running, so we can look at the P's.
        for (P pp : s.allp) {
            if (s.timers.wakeTime(pp) != 0) {
                return;
            }
        }
        throw Fatal.userFatal(s, "all goroutines are asleep - deadlock!");
    }

    /**
     * An ExternalWaker closed: one outside waker fewer, which can leave every M idle and every G
     * asleep with nobody left to wake them, so check for deadlock (Go: "when increasing nmidle ...
     * call checkdead"). Any thread.
     */
    void externalWakerDone() {
        if (externalWakers.decrementAndGet() == 0 && s.mainStarted) {
            synchronized (sched.lock) {
                checkdead();
            }
        }
    }

    // ------------------------------------------------------------------------------------------
    // M accounting (sched.lock held unless said otherwise).

    /** Creates (does not start) a new M; sched.lock held. Go: proc.go allocm/newm. */
    M allocm(long id) {
        sched.assertLockHeld(s, "allocm");
        M mp = new M.Padded(s, id, s.config.name());
        if (s.trace.on) s.trace.mCreate(id);
        synced.allm.add(0, mp); // newest first
        return mp;
    }

    /**
     * Reserves an M id, enforcing the thread limit; sched.lock held.
     *
     * <p>Go: proc.go mReserveID, checkmcount
     */
    long checkmcountAndReserve() {
        sched.assertLockHeld(s, "mReserveID");
        long id = synced.mnext;
        synced.mnext++;
        checkmcount();
        return id;
    }

    /** sched.lock held. Go: proc.go checkmcount. Sysmon counts as an M, as in Go. */
    void checkmcount() {
        sched.assertLockHeld(s, "checkmcount");
        long count = mcount();
        if (count > synced.maxmcount) {
            System.err.println("runtime: program exceeds " + synced.maxmcount + "-thread limit");
            throw Fatal.fatal(s, "thread exhaustion");
        }
    }

    /** sched.lock held. Go: proc.go mcount: threads ever created minus those that exited. */
    long mcount() {
        sched.assertLockHeld(s, "mcount");
        return synced.mnext - synced.nmfreed;
    }

    /** Reserves an id for a system thread (sysmon), counted against the limit and by nmsys. */
    long newSystemM() {
        synchronized (sched.lock) {
            long id = checkmcountAndReserve();
            synced.nmsys++;
            synced.sysmonM = id;
            if (s.trace.on) s.trace.mCreate(id, true);
            return id;
        }
    }

    /** An M's thread ends (runtime exit). Go: proc.go mexit. */
    void mexit(M mp) {
        if (mp.exitThread && mp.p != null && !s.exiting) {
            // A G locked to this M ended: the thread exits with it. Release our P (Go: mexit).
            handoffp(mp.releasep());
        }
        synchronized (sched.lock) {
            synced.nmfreed++;
            if (mp.exitThread) {
                synced.allm.remove(mp);
                s.syscallStats.retire(mp);
                checkdead();
            }
        }
    }

    /** Go: debug.SetMaxThreads. Returns the previous limit. */
    int setMaxThreads(int n) {
        synchronized (sched.lock) {
            int old = synced.maxmcount;
            synced.maxmcount = n;
            checkmcount();
            return old;
        }
    }
}
