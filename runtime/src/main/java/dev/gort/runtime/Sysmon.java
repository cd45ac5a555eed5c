package dev.gort.runtime;

import java.util.concurrent.locks.LockSupport;
import java.util.function.LongConsumer;

/**
 * The system monitor: one platform thread per runtime that holds no P and runs no goroutine. It
 * wakes every 20 µs, doubling the sleep after 50 rounds in which it retook nothing, up to 10 ms;
 * it sleeps deeply (until the next timer, at most 60 s) while every P is idle or the world is
 * stopped, unless schedtrace is on. Each round it runs {@link #retake}: a P whose schedtick has
 * not moved for {@link Preempt#forcePreemptNS} (10 ms, counted from sysmon's first sighting, so a
 * runnext chain shares one slice) gets {@code preemptone}; a P in a syscall for at least one
 * sysmon tick is taken away from its M and handed off: Go 1.26+'s, a {@code _Prunning} P whose G
 * is {@code _Gsyscall}, through the G's scan bit ({@link #retakeSyscall126}); Go 1.25's
 * ({@code GODEBUG=psyscall=1}), a {@code _Psyscall} P by CAS ({@link #retakeSyscall}).
 *
 * <p>It is woken from its deep sleep by {@link #wake} (Go's {@code sysmonwake}: a plain flag read
 * under {@code sched.lock} in {@code pidleget}, which every transition out of "all Ps idle" passes,
 * and in startTheWorld; the syscall layer calls {@link Scheduler#sysmonwake()} too).
 *
 * <p>Difference from Go: sysmon never sleeps past the end of the earliest running slice it has
 * seen start (see the loop), so a slice ends within a wake-up's jitter of 10 ms instead of up to
 * one back-off step later.
 *
 * <p>Not ported: the forced GC, the scavenger, GOMAXPROCS updates. The
 * sleep uses {@code LockSupport.parkNanos}, as Go's {@code usleep} is subject to the kernel's
 * timer slack (about 50 µs on Linux), so the shortest real period is ~60-80 µs on both. No Agrona
 * idle strategy: the sleep policy is Go's exact back-off, and spinning or yielding would burn a
 * core that the Ms need (2-core machines).
 *
 * <p>Go: proc.go sysmon, retake, incidlelocked; runtime2.go sysmontick
 */
public final class Sysmon {
    /**
     * Run by sysmon each round between the round's first clock read and retake's (a test's stand-in
     * for a slow netpoll or GOMAXPROCS check, or a descheduled sysmon); null in production.
     * Written by tests before the runtime starts and after it ended; read by sysmon.
     */
    static volatile Runnable beforeRetakeForTest;

    /** Go: forcegcperiod / 2, the longest deep sleep (no GC here, but keep sysmon sampling). */
    static final long DEEP_SLEEP_MAX_NS = 60_000_000_000L;

    private final Scheduler s;
    /** sysmon's deep sleep. Go: sched.sysmonnote. */
    private final Note sysmonnote = new Note();
    /**
     * Held by sysmon for each round's work (retake, schedtrace). Go: sched.sysmonlock. Layers that
     * must not race with a sysmon round (e.g. printing a final schedtrace) may take it.
     */
    final Object sysmonlock = new Object();

    /**
     * Longest sleep between rounds, µs (Go: 10 ms; the runtime's Config.Settings.sysmonMaxDelayUs,
     * {@code -Dgort.sysmon.maxdelay}, a research knob). Immutable.
     */
    final long maxDelayUs;
    /** Written by start/stop (any thread), read by sysmon: volatile. */
    private volatile boolean stopped;

    private volatile Thread thread;

    /**
     * A lock holder waits for a P held by a carrier blocked in user code ({@link #hurry}): start
     * the back-off again from 20 µs at the next wake-up. Set by any thread, cleared by sysmon;
     * volatile.
     */
    private volatile boolean hurried;

    /** schedtrace period in ns (Go: debug.schedtrace ms); 0 = off. Written by the observability layer. */
    private volatile long schedtraceNanos;
    /** Called by sysmon under {@link #sysmonlock} every schedtrace period with nanotime. */
    private volatile LongConsumer schedtrace;

    /**
     * The earliest end (System.nanoTime) of a slice that the last retake saw running and not yet
     * overdue, or 0. Written and read by sysmon only (plain).
     */
    private long nextSliceEnd;

    // ---- statistics (sysmon writes plain; racy reads by observers) ----
    volatile long rounds;
    volatile long deepSleeps;
    volatile long syscallRetakes;

    Sysmon(Scheduler s, int maxDelayUs) {
        this.s = s;
        this.maxDelayUs = maxDelayUs;
    }

    /**
     * {@code -Dgort.sysmon.maxdelay} / {@code GORT_SYSMON_MAXDELAY}: sysmon's longest sleep in µs
     * (>= 20; Go: 10 ms). Read by {@link Config.Settings#fromEnvironment()}; a runtime uses its Config's.
     */
    public static int maxDelayFromEnvironment() {
        return Config.intSetting("gort.sysmon.maxdelay", "GORT_SYSMON_MAXDELAY", 10_000, 20, Integer.MAX_VALUE);
    }

    /**
     * Installs schedtrace: every {@code periodNanos} sysmon calls {@code printer} with the current
     * nanotime (under {@link #sysmonlock}); while installed sysmon never deep-sleeps, as in Go.
     * Pass {@code periodNanos <= 0} or a null printer to remove it.
     *
     * <p>Go: proc.go sysmon (debug.schedtrace), schedtrace
     */
    void setSchedtrace(long periodNanos, LongConsumer printer) {
        if (periodNanos <= 0 || printer == null) {
            schedtraceNanos = 0;
            schedtrace = null;
            return;
        }
        schedtrace = printer;
        schedtraceNanos = periodNanos;
        wake();
    }

    /** Starts the thread; counts it as a system M (thread limit, ignored by checkdead). */
    void start() {
        if (thread != null) {
            return;
        }
        long id = s.idle.newSystemM();
        Thread t = new Thread(null, this::run, s.config.name() + "-sysmon-M" + id, 0, false);
        t.setDaemon(true);
        thread = t;
        t.start();
    }

    /** Stops the thread at its next wake-up (runtime shutdown). */
    void stop() {
        stopped = true;
        sysmonnote.notewakeup();
        Thread t = thread;
        if (t != null) {
            LockSupport.unpark(t);
        }
    }

    /** Wakes sysmon from its deep sleep. Cheap: one volatile store and, if sleeping, one unpark. */
    void wake() {
        sysmonnote.notewakeup();
    }

    /**
     * Wakes sysmon from its light sleep and restarts its back-off at 20 µs, so that a P held by a
     * carrier blocked in user code is retaken within two short ticks instead of two of up to 10 ms
     * ({@link Preempt#boostLockHolder}: a Java lock's holder waits for that P). gort only (Go
     * wakes sysmon from its deep sleep only).
     */
    void hurry() {
        hurried = true;
        Thread t = thread;
        if (t != null) {
            LockSupport.unpark(t);
        }
    }

    /** For tests: whether {@link #hurry} was called since the last look (sysmon's or this); clears it. */
    boolean hurriedForTest() {
        boolean h = hurried;
        hurried = false;
        return h;
    }

    Thread thread() {
        return thread;
    }

    long rounds() {
        return rounds;
    }

    long deepSleeps() {
        return deepSleeps;
    }

    long syscallRetakes() {
        return syscallRetakes;
    }

    private void run() {
        try {
            sysmon();
        } catch (GortFatalError e) {
            // already reported (checkdead); the runtime is ending
        } catch (Throwable t) {
            Fatal.crashed(s, "sysmon", t);
        }
    }

    /**
     * The monitor loop.
     *
     * <p>Go: proc.go sysmon
     */
    private void sysmon() {
        synchronized (s.sched.lock) {
            s.idle.checkdead();
        }
        long lasttrace = 0;
        long lastgomaxprocs = System.nanoTime();
        final boolean updatemaxprocs = s.config.maxprocs().update();
        int idle = 0; // how many cycles in succession we had not woken somebody
        long delay = 0; // µs
        final Sched sc = s.sched;
        while (!stopped && !s.exiting) {
            if (idle == 0) { // start with 20us sleep...
                delay = 20;
            } else if (idle > 50) { // start doubling the sleep after 1ms...
                delay *= 2;
            }
            if (delay > maxDelayUs) { // up to 10ms
                delay = maxDelayUs;
            }
            long sleepNs = delay * 1000;
            // gort: wake no later than the end of the earliest running slice that retake has seen
            // start, so that a slice is not stretched by the back-off step in progress (after
            // 5.12 ms of doubling, Go's next sleep is 10 ms: a slice sighted just before it would
            // run 15 ms). Never below 20 µs; overdue slices (request pending) do not count.
            long sliceEnd = nextSliceEnd;
            if (sliceEnd != 0) {
                long until = sliceEnd - System.nanoTime();
                if (until < sleepNs) {
                    sleepNs = Math.max(until, 20_000L);
                }
            }
            LockSupport.parkNanos(this, sleepNs);
            if (stopped) {
                return;
            }
            if (hurried) {
                hurried = false;
                idle = 0;
                delay = 20;
            }

            // sysmon should not enter deep sleep if schedtrace is enabled so that it can print that
            // information at the right time. It should also not enter deep sleep if there are any
            // active P's so that it can retake P's from syscalls and preempt long running G's.
            long now = System.nanoTime();
            s.coarseNanotime = now;
            // gort: nor while it watches a retaken carrier that is blocked (watchRetaken): when that
            // carrier runs again, sysmon must re-arm its notice. Nor while the world is being
            // stopped and some P still runs: its carrier may be blocked in user code, and only
            // sysmon's retake stops such a P (a GOMAXPROCS change waited up to a minute for it).
            if (schedtraceNanos <= 0
                    && retaken.isEmpty()
                    && ((sc.gcwaiting && !anyPRunning()) || s.idle.npidle.get() == s.gomaxprocs)) {
                long sleep = 0;
                synchronized (sc.lock) {
                    if ((sc.gcwaiting && !anyPRunning()) || s.idle.npidle.get() == s.gomaxprocs) {
                        long next = timeSleepUntil();
                        long tnow = Scheduler.nanotime(); // timers' clock (not System.nanoTime's origin)
                        if (next > tnow) {
                            sc.sysmonwait = true;
                            s.coarseNanotime = 0; // stale while we sleep: parks read the real clock
                            // Make wake-up period small enough for the sampling to be correct.
                            sleep = DEEP_SLEEP_MAX_NS;
                            if (next - tnow < sleep) {
                                sleep = next - tnow;
                            }
                        }
                    }
                }
                if (sleep > 0) {
                    // pidleget and startTheWorld clear sysmonwait and notewakeup under sched.lock.
                    deepSleeps++;
                    boolean syscallWake = sysmonnote.notetsleep(sleep);
                    synchronized (sc.lock) {
                        sc.sysmonwait = false;
                        sysmonnote.noteclear();
                    }
                    if (syscallWake) {
                        idle = 0;
                        delay = 20;
                    }
                }
            }
            if (stopped || s.exiting) {
                return;
            }

            synchronized (sysmonlock) {
                // Update now in case we blocked on sysmonnote or spent a long time blocked on
                // sched.lock or sysmonlock above.
                now = System.nanoTime();
                rounds++;
                // poll network if not polled for more than 10ms
                Netpoll np = s.netpoll;
                long lastpoll = sc.lastpoll.get();
                long pnow = Scheduler.nanotime(); // lastpoll's clock
                if (np.netpollinited() && lastpoll != 0 && lastpoll + 10_000_000L < pnow) {
                    sc.lastpoll.compareAndSet(lastpoll, pnow);
                    if (SchedCounts.ON) SchedCounts.sysmonNetpolls.increment();
                    G list = np.netpoll(0); // non-blocking - returns list of goroutines
                    if (list != null) {
                        // Need to decrement number of idle locked M's (pretending that one more is
                        // running) before injectglist. Otherwise it can lead to the following
                        // situation: injectglist grabs all P's but before it starts M's to run the
                        // P's, another M returns from syscall, finishes running its G, observes
                        // that there is no work to do and no other running M's and reports
                        // deadlock.
                        s.idle.incidlelocked(-1);
                        np.injectglist(list);
                        s.idle.incidlelocked(1);
                    }
                }
                // Check if we need to update GOMAXPROCS at most once per second (Go 1.25).
                if (updatemaxprocs && lastgomaxprocs + 1_000_000_000L <= now) {
                    s.sysmonUpdateGOMAXPROCS();
                    lastgomaxprocs = now;
                }
                // retake P's blocked in syscalls and preempt long running G's. gort reads the clock
                // again first (Go passes the now read above): a time slice that began after that
                // read, during the netpoll or the GOMAXPROCS check (or while this thread was
                // descheduled on a loaded machine), would be stamped with the earlier time, and its
                // G asked to stop before it ran forcePreemptNS (ShowcaseIT's tight loop, preempted
                // 9.0 ms into its slice in a CI run, 2026-12-02). A later now only ever delays a
                // request.
                Runnable hook = beforeRetakeForTest;
                if (hook != null) {
                    hook.run(); // a test stands for that work here
                }
                now = System.nanoTime();
                if (retake(now) != 0) {
                    idle = 0;
                } else {
                    idle++;
                }
                checkRetaken(now);
                long period = schedtraceNanos;
                LongConsumer tr = schedtrace;
                if (period > 0 && tr != null && lasttrace + period <= now) {
                    lasttrace = now;
                    tr.accept(now);
                }
            }
        }
    }

    /**
     * Ms whose P {@link Retake#retakeBlocked} took while their carrier was blocked in user code, and
     * whose G is still in that "syscall". While such a carrier stays blocked, sysmon keeps its
     * preemption word's REQ and NOTICE parked ({@link Preempt#park}): a blocked carrier cannot
     * poll, and an armed word would send every poll on every thread of the JVM down the slow path
     * until it wakes (issue 12: FastDateFormatTest.testParseSync, a goroutine in
     * {@code awaitTermination} while ten executor threads ran instrumented code). Once it runs
     * again, they are armed again (its next poll leaves the "syscall"). Only the sysmon thread
     * reads or writes the list (retakeBlocked runs in sysmon's retake): a plain ArrayList.
     */
    private final java.util.ArrayList<M> retaken = new java.util.ArrayList<>();

    /**
     * The ms window of {@link #mayAskKernel} and {@link #mayReadCpu}, and the reads of each kind
     * made in it. Sysmon only, plain.
     */
    private long kernelAskWindow;

    private int kernelAsks;

    private int cpuReads;

    /** {@link #mayReadCpu} said no since checkRetaken last cleared it. Sysmon only, plain. */
    private boolean cpuReadDenied;

    /**
     * May sysmon read one more carrier's kernel state ({@link KernelThreads#sleeping}, about 15 µs
     * here) now? At most {@link Retake#KERNEL_ASKS_PER_MS} per ms, whatever the number of Ps whose
     * carriers look blocked. Counts the read it allows. Sysmon only.
     */
    boolean mayAskKernel(long now) {
        newKernelWindow(now);
        if (kernelAsks >= Retake.KERNEL_ASKS_PER_MS) {
            return false;
        }
        kernelAsks++;
        return true;
    }

    /**
     * May sysmon read one more carrier's CPU time ({@link KernelThreads#cpuTime}, about 2 µs here)
     * now? At most {@link Retake#CPU_READS_PER_MS} per ms, for retakeBlocked's looks and
     * checkRetaken's watch together: with hundreds of carriers retaken asleep (goroutines blocked
     * in unwrapped socket reads) each is read every few ms instead of every ms. Counts the read it
     * allows. Sysmon only.
     */
    boolean mayReadCpu(long now) {
        newKernelWindow(now);
        if (cpuReads >= Retake.CPU_READS_PER_MS) {
            cpuReadDenied = true;
            return false;
        }
        cpuReads++;
        return true;
    }

    private void newKernelWindow(long now) {
        if (now - kernelAskWindow >= Retake.KERNEL_LOOK_NS) {
            kernelAskWindow = now;
            kernelAsks = 0;
            cpuReads = 0;
        }
    }

    /** Some P is {@code _Prunning} (a racy look: the caller decides only whether to deep-sleep). */
    private boolean anyPRunning() {
        for (P pp : s.allp) {
            if (pp != null && pp.status() == P._Prunning) {
                return true;
            }
        }
        return false;
    }

    /** retakeBlocked took {@code mp}'s P (its carrier is blocked): park its word and watch it. sysmon. */
    void watchRetaken(M mp) {
        Preempt.park(mp.thread);
        if (!retaken.contains(mp)) {
            retaken.add(mp);
        }
    }

    /**
     * Each round: a watched carrier still blocked keeps its word parked (a request raised since is
     * parked too); one that runs again is re-armed; one whose G has left the "syscall" (a gort
     * call, its end) is re-armed and dropped (a stale NOTICE is cleared by its next poll). sysmon.
     */
    private void checkRetaken(long now) {
        M firstDenied = null;
        for (int i = retaken.size() - 1; i >= 0; i--) {
            M mp = retaken.get(i);
            G gp = mp.curg;
            boolean inRetake =
                    gp != null && gp.syscallImplicit == G.SYSCALL_RETAKE && gp.readgstatusNoScan() == G._Gsyscall;
            cpuReadDenied = false;
            if (inRetake && Retake.stillBlocked(this, mp, now)) {
                Preempt.park(mp.thread);
            } else {
                Preempt.unpark(mp.thread);
                if (!inRetake) {
                    retaken.remove(i);
                }
            }
            if (cpuReadDenied && firstDenied == null) {
                firstDenied = mp;
            }
        }
        if (firstDenied != null) {
            // This ms's CPU reads ran out during the walk, which starts at the end: rotate the
            // carriers it walked past to the front, so that the first one it could not read is
            // walked first next time (no carrier goes unread for ever).
            int idx = retaken.indexOf(firstDenied);
            if (idx >= 0) {
                java.util.Collections.rotate(retaken, retaken.size() - 1 - idx);
            }
        }
    }

    /**
     * The earliest pending timer over all Ps ({@link Scheduler#nanotime()} time), or
     * {@code Long.MAX_VALUE}. Go: time.go timeSleepUntil.
     */
    private long timeSleepUntil() {
        long next = Long.MAX_VALUE;
        for (P pp : s.allp) {
            long w = s.timers.wakeTime(pp);
            if (w != 0 && w < next) {
                next = w;
            }
        }
        return next;
    }

    /**
     * Preempts Gs that have run for a whole slice and retakes Ps from syscalls. Returns the number
     * of Ps retaken from syscalls (which alone drives sysmon's back-off).
     *
     * <p>allp is read as a snapshot (Go holds allpLock): procresize replaces the array with the
     * world stopped, a stale P can only be asked to preempt (harmless) and its status CAS from
     * {@code _Psyscall} fails once it is {@code _Pgcstop} or {@code _Pdead}.
     *
     * <p>Go: proc.go retake (Go 1.25, the {@code _Psyscall} model; {@link #retake126} otherwise)
     */
    int retake(long now) {
        if (!s.psyscall) {
            return retake126(now);
        }
        int n = 0;
        long sliceEnd = 0;
        P[] allp = s.allp;
        for (P pp : allp) {
            if (pp == null) {
                continue;
            }
            int st = pp.status();
            boolean sysretake = false;
            if (st == P._Prunning || st == P._Psyscall) {
                // Preempt G if it's running on the same schedtick for too long. This could be from a
                // single long-running goroutine or a sequence of goroutines run via runnext, which
                // share a single schedtick time slice.
                long end = sliceEnd(pp, now);
                int t = pp.sysmonSchedtick;
                if (end > now) {
                    if (sliceEnd == 0 || end < sliceEnd) {
                        sliceEnd = end; // for sysmon's next sleep
                    }
                } else if (s.seeded && st == P._Prunning) {
                    // gort: a seeded runtime never preempts on the wall clock, whose 10 ms would
                    // land at a different instruction every run (Decisions); a running G yields where
                    // it blocks or yields, or under the budget strategy after a count of polls.
                } else {
                    s.preempt.preemptone(pp, pp.sysmonSchedwhen);
                    // In case of syscall, preemptone() doesn't work, because there is no M wired to P.
                    sysretake = true;
                    if (st == P._Psyscall) {
                        // If the G's exit beats our retake CAS (short syscalls in a loop), its exit
                        // sees this and yields (Syscalls.exitsyscall): the slice survives syscalls.
                        Preempt.markSyscall(pp, t);
                    }
                }
            }
            if (st == P._Psyscall) {
                pp.sysmonBlockedG = null;
                if (retakeSyscall(pp, st, now, sysretake)) {
                    n++;
                }
            } else if (st == P._Prunning) {
                // gort's own branch: a carrier blocked in user code nobody wrapped in a syscall.
                if (Retake.retakeBlocked(s, pp, now)) {
                    n++;
                }
            }
        }
        if (n != 0) {
            syscallRetakes += n;
        }
        nextSliceEnd = sliceEnd;
        return n;
    }

    /**
     * Go 1.26+'s retake: every {@code _Prunning} P, whether its G runs or is in a syscall (the G's
     * status says which); a syscall's P is taken with the G's scan bit held
     * ({@link Syscalls#setBlockOnExitSyscall}), so the syscall's exit waits rather than races.
     *
     * <p>Go: proc.go retake (Go 1.26+)
     */
    /**
     * sysmon's record of pp's time slice, restarted at {@code now} when pp's schedtick moved since
     * the last look (schedwhen == 0: never seen; Go's sysmon starts after the first execute, so its
     * zeroed record never matches, gort's may start first); returns when the slice ends. Both
     * retakes' first step. Go: proc.go retake (the pd.schedtick / pd.schedwhen part)
     */
    private static long sliceEnd(P pp, long now) {
        int t = pp.schedtickOpaque();
        if (pp.sysmonSchedtick != t || pp.sysmonSchedwhen == 0) {
            pp.sysmonSchedtick = t;
            pp.sysmonSchedwhen = now;
        }
        return pp.sysmonSchedwhen + Preempt.forcePreemptNS;
    }

    private int retake126(long now) {
        int n = 0;
        long sliceEnd = 0;
        P[] allp = s.allp;
        for (P pp : allp) {
            if (pp == null || pp.status() != P._Prunning) {
                continue;
            }
            boolean sysretake = false;
            long end = sliceEnd(pp, now);
            int t = pp.sysmonSchedtick;
            if (end > now) {
                if (sliceEnd == 0 || end < sliceEnd) {
                    sliceEnd = end;
                }
            } else {
                M m = pp.mOpaque();
                G cur = m == null ? null : m.curg;
                if (cur != null && (cur.readgstatusRaw() & ~G._Gscan) == G._Gsyscall) {
                    // preemptone cannot reach a G in a syscall (Go skips it); as in the 1.25
                    // model, mark the P so that an exit that beats the retake yields.
                    Preempt.markSyscall(pp, t);
                    sysretake = true;
                } else if (!s.seeded) {
                    s.preempt.preemptone(pp, pp.sysmonSchedwhen);
                    sysretake = true;
                }
                // (seeded: as in the 1.25 model above, never a preemption on the wall clock)
            }
            int r = retakeSyscall126(pp, now, sysretake);
            if (r > 0) {
                n++;
            } else if (r < 0 && Retake.retakeBlocked(s, pp, now)) {
                // gort's own branch: a carrier blocked in user code nobody wrapped in a syscall.
                n++;
            }
        }
        if (n != 0) {
            syscallRetakes += n;
        }
        nextSliceEnd = sliceEnd;
        return n;
    }

    /**
     * The syscall half of Go 1.26+'s retake for one {@code _Prunning} P: -1 if its G is not in a
     * syscall, 0 if it is and the P stays, 1 if the P was taken and handed off. Same rule as the
     * 1.25 model's {@link #retakeSyscall}: one sysmon tick in the same syscall, then only if there
     * is work for it, no idle capacity elsewhere, or 10 ms have passed.
     *
     * <p>Go: proc.go retake (the setBlockOnExitSyscall part, Go 1.26+)
     */
    int retakeSyscall126(P pp, long now, boolean sysretake) {
        // Need to decrement number of idle locked M's (pretending that one more is running) before
        // we take the P and resume. Otherwise the M from which we retake can exit the syscall,
        // increment nmidle and report deadlock.
        incidlelocked(-1);
        try {
            Syscalls.SyscallingThread thread = Syscalls.setBlockOnExitSyscall(pp);
            if (thread == null) {
                return -1; // not in a syscall, or something changed out from under us
            }
            pp.sysmonBlockedG = null;
            int t = pp.syscalltickOpaque();
            if (!sysretake && pp.sysmonSyscalltick != t) {
                pp.sysmonSyscalltick = t;
                pp.sysmonSyscallwhen = now;
                thread.resume();
                return 0;
            }
            if (pp.runq.runqempty()
                    && s.idle.nmspinning.get() + s.idle.npidle.get() > 0
                    && pp.sysmonSyscallwhen + 10_000_000L > now) {
                thread.resume();
                return 0;
            }
            // Take the P: with the scan bit held the goroutine is at worst spinning in exitsyscall.
            thread.takeP();
            thread.resume();
            s.syscallStats.retakes.incrementAndGet();
            s.idle.handoffp(pp);
            return 1;
        } finally {
            incidlelocked(1);
        }
    }

    /**
     * The syscall half of retake for one P seen in {@code _Psyscall}: retakes it if it has been in
     * the same syscall for at least one sysmon tick (&ge; 20 µs) and there is work for it, or no
     * idle capacity elsewhere, or it has been there for 10 ms. Returns true if the P was taken.
     *
     * <p>Go: proc.go retake (the {@code s == _Psyscall} branch, Go 1.25)
     */
    boolean retakeSyscall(P pp, int st, long now, boolean sysretake) {
        final Sched sc = s.sched;
        // Retake P from syscall if it's there for more than 1 sysmon tick (at least 20us).
        int t = pp.syscalltickOpaque();
        if (!sysretake && pp.sysmonSyscalltick != t) {
            pp.sysmonSyscalltick = t;
            pp.sysmonSyscallwhen = now;
            return false;
        }
        // On the one hand we don't want to retake Ps if there is no other work to do, but on the
        // other hand we want to retake them eventually because they can prevent the sysmon thread
        // from deep sleep.
        if (pp.runq.runqempty()
                && s.idle.nmspinning.get() + s.idle.npidle.get() > 0
                && pp.sysmonSyscallwhen + 10_000_000L > now) {
            return false;
        }
        // Need to decrement number of idle locked M's (pretending that one more is running) before
        // the CAS. Otherwise the M from which we retake can exit the syscall, increment nmidle and
        // report deadlock.
        incidlelocked(-1);
        boolean taken = false;
        try {
            if (pp.casStatus(st, P._Pidle)) {
                taken = true;
                pp.incSyscalltickOpaque();
                s.syscallStats.retakes.incrementAndGet();
                if (s.trace.on) s.trace.handoff(pp, pp.mOpaque());
                s.idle.handoffp(pp);
            }
        } finally {
            incidlelocked(1);
        }
        return taken;
    }

    /** Go: proc.go incidlelocked (see {@link Idle#incidlelocked}). */
    void incidlelocked(int v) {
        s.idle.incidlelocked(v);
    }
}
