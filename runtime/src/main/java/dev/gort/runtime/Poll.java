package dev.gort.runtime;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.locks.Lock;
import jdk.internal.vm.Continuation;

/**
 * The yield points that gort's java agent injects into user bytecode (preemption-strategies.md).
 * There is no way to stop a continuation from outside on JDK 25, so sysmon raises a flag on the
 * carrier thread ({@link M.MThread#requestPreempt}) and the running G looks for it here.
 *
 * <p><b>Fast path</b> ({@link #poll}): one opaque load of a JVM-wide count of carriers with a
 * pending request, and a branch: 13 bytes of bytecode, far under {@code MaxInlineSize = 35}, so C2
 * inlines it into the loop and compiles the never-taken call to {@link #slow} as an uncommon
 * trap. The load is opaque, never plain: a plain read may be hoisted out of the loop (JLS 17.3)
 * and the G would never stop.
 *
 * <p><b>Why not the carrier's own flag</b> (preemption-strategies.md §5's per-carrier variant):
 * C2 loads {@code Thread.currentThread()} from "immutable memory", so once the poll is inlined into
 * a loop the thread may be computed once, before the loop, and reused after the goroutine yielded
 * in the slow path and was resumed on another carrier: the loop would then watch the old carrier's
 * flag forever (and clear other Gs' requests). The armed count has no such dependency. The price:
 * while any carrier in the JVM has a pending request, every poll on every thread takes the out-of-
 * line slow path, which looks its carrier up through {@link M#current()} (never inlined, always
 * fresh) and returns at once if the request is not its own ({@link PreemptStats#spuriousPolls()}).
 * Requests are pending for microseconds when instrumented code runs; a G stuck in uninstrumented
 * code keeps its request pending until its slice ends (counted as unhonoured).
 *
 * <p><b>Slow path</b> ({@link #slow}, out of line): clears its carrier's flag, drops requests
 * meant for an earlier slice, refuses (and counts) while the G holds a Java monitor or a counted
 * {@code Lock}, runs a class initialiser, has a JDK frame holding a lock on its stack
 * ({@link LockFrames}, one stack walk, only here), or while the M holds a runtime lock, records
 * where it happened, then yields through {@link Scheduler#gopreempt}: the G
 * goes to the global queue tail and gets a new slice when it runs again (Go's
 * {@code gopreempt_m}). A continuation that cannot yield (pinned: native frame, critical section)
 * is counted by {@code onPinned} reason.
 *
 * <p>Monitor bookkeeping ({@link #monitorEnter}/{@link #monitorExit}) is injected around
 * MONITORENTER/MONITOREXIT and synchronized methods: preempting a G inside a Java monitor would let
 * another G on the same carrier enter it (the monitor belongs to the carrier) or hang the carrier
 * (jdk25-continuations.md §3). On the last exit with a refused request pending, the request is
 * re-armed, like Go's {@code releasem} restoring {@code stackPreempt}.
 *
 * <p>Go: stack.go newstack (preemption branch), preempt.go, proc.go gopreempt_m, releasem
 */
public final class Poll {
    private Poll() {}

    /**
     * Carriers (of every runtime in the JVM) with a pending preemption request. Moved by
     * {@link M.MThread} on every flag transition (atomic add); read by the fast path (opaque).
     * JVM-wide on purpose: it is what a poll can read without knowing its thread.
     */
    @SuppressWarnings("unused")
    private static volatile int armed;

    private static final VarHandle ARMED;

    static {
        try {
            ARMED = MethodHandles.lookup().findStaticVarHandle(Poll.class, "armed", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    static void arm() {
        ARMED.getAndAdd(1);
    }

    static void disarm() {
        ARMED.getAndAdd(-1);
    }

    /** Carriers with a pending request right now (JVM-wide). */
    public static int armedCount() {
        return (int) ARMED.getVolatile();
    }

    /**
     * The back-edge / entry poll ({@code backedge}, {@code entry} strategies) as the agent injects
     * it: {@code site} is a constant {@code "class.method"} pushed with {@code ldc}, free on the
     * fast path (a constant the JIT never reads unless the poll fires) and far cheaper than a stack
     * walk when it does (a StackWalker walk from a rarely run, hence interpreted, slow path cost
     * ~90 µs per preemption here).
     */
    public static void poll(String site) {
        if ((int) ARMED.getOpaque() != 0) {
            slow(site);
        }
    }

    /** A poll without a known site (hand-written yield points); the site is found by a stack walk. */
    public static void poll() {
        poll(null);
    }

    /**
     * The {@code budget} strategy's poll: decrements the running slice's budget; when it is spent,
     * yields if other work is runnable (else refills it). sysmon's requests are honoured here too.
     *
     * <p>The budget lives on the carrier and is reached through {@code Thread.currentThread()}, so
     * the JIT caveat above applies: after a yield inside the same compiled activation the loop may
     * go on charging its previous carrier's budget. That only blurs the budget (the slow path
     * refills the real carrier's); it cannot preempt the wrong G, because the yield decision is
     * taken in the slow path on the carrier found through {@link M#current()}.
     */
    public static void budget(String site) {
        Thread t = Thread.currentThread();
        if (t instanceof M.MThread mt) {
            int b = mt.budget - 1;
            mt.budget = b;
            if (b <= 0) {
                budgetSlow(site);
                return;
            }
        }
        if ((int) ARMED.getOpaque() != 0) {
            slow(site);
        }
    }

    /** {@link #budget(String)} without a known site. */
    public static void budget() {
        budget(null);
    }

    /** After MONITORENTER and at the entry of a synchronized method. */
    public static void monitorEnter() {
        M mp = M.current(); // never a cached carrier: see the class comment
        if (mp != null) {
            G gp = mp.curg;
            if (gp != null) {
                gp.monitorDepth++;
            }
        }
    }

    /** After MONITOREXIT and on every exit of a synchronized method (returns and exceptions). */
    public static void monitorExit() {
        M mp = M.current();
        if (mp != null) {
            G gp = mp.curg;
            if (gp != null) {
                release(mp, gp);
            }
        }
    }

    /** One carrier-owned lock fewer; on the last one, re-arms a refused request (Go: releasem). */
    private static void release(M mp, G gp) {
        int d = gp.monitorDepth - 1;
        if (d <= 0) {
            // Clamped: an exception edge we could not see (e.g. a StackOverflowError inside
            // the hook) must not leave the G unpreemptible forever, nor negative.
            gp.monitorDepth = 0;
            gp.lockDepth = 0;
            if (gp.preemptRequested() && mp.thread.rearmPreempt()) {
                mp.sched.preempt.rearmed.incrementAndGet();
            }
        } else {
            gp.monitorDepth = d;
        }
    }

    /**
     * After a call of {@code lock()} or {@code lockInterruptibly()} on {@code lock} returned (the
     * agent passes the receiver of every such call; only {@link Lock}s count). A {@code Lock}
     * belongs to the carrier thread ({@code ReentrantLock}, both locks of a
     * {@code ReentrantReadWriteLock}): counted like a monitor, so that neither preemption nor a park
     * yields while it is held (a park then parks in place: {@link Scheduler#gopark}). Every
     * {@code Lock} counts, also those that no thread owns: for them this only delays preemption.
     */
    public static void lockAcquired(Object lock) {
        if (lock instanceof Lock) {
            M mp = M.current();
            G gp = mp == null ? null : mp.curg;
            if (gp != null) {
                gp.lockDepth++;
                gp.monitorDepth++;
            }
        }
    }

    /** After {@code tryLock()} / {@code tryLock(long, TimeUnit)} returned {@code ok}: counts a success. */
    public static boolean lockTried(Object lock, boolean ok) {
        if (ok) {
            lockAcquired(lock);
        }
        return ok;
    }

    /**
     * After a call of {@code unlock()} on {@code lock} returned (one that threw released nothing).
     * An unlock of a lock that no counted call took (taken in uninstrumented code) changes nothing.
     */
    public static void lockReleased(Object lock) {
        if (lock instanceof Lock) {
            M mp = M.current();
            G gp = mp == null ? null : mp.curg;
            if (gp != null && gp.lockDepth > 0) {
                gp.lockDepth--;
                release(mp, gp);
            }
        }
    }

    /** First in an instrumented class initialiser ({@code <clinit>}). */
    public static void clinitEnter() {
        M mp = M.current();
        G gp = mp == null ? null : mp.curg;
        if (gp != null) {
            gp.clinitDepth++;
        }
    }

    /**
     * On every exit of an instrumented class initialiser. After the last one, a request refused
     * (or a syscall exit deferred) inside it is re-armed, so that the next poll honours it.
     */
    public static void clinitExit() {
        M mp = M.current();
        G gp = mp == null ? null : mp.curg;
        if (gp != null) {
            int d = gp.clinitDepth - 1;
            if (d <= 0) {
                gp.clinitDepth = 0; // clamped, as monitorExit
                boolean deferred = gp.syscallExitDeferred && gp.readgstatusNoScan() == G._Gsyscall;
                gp.syscallExitDeferred = false;
                if ((deferred || gp.preemptRequested()) && mp.thread.rearmPreempt()) {
                    mp.sched.preempt.rearmed.incrementAndGet();
                }
            } else {
                gp.clinitDepth = d;
            }
        }
    }

    /** The preemption slow path; never inlined into loops (it is big and cold). */
    static void slow(String site) {
        M mp = M.current();
        if (mp == null) {
            return; // instrumented code on a thread outside gort
        }
        M.MThread mt = mp.thread;
        if (!mt.preemptRequestedAcquire()) {
            mp.sched.preempt.spuriousPolls.incrementAndGet();
            return; // another carrier's request
        }
        long requestedAt = mt.preemptRequestedAt;
        long sliceWhen = mt.preemptSliceWhen;
        int tick = mt.preemptTick;
        mt.clearPreemptIfSet();
        G gp = mp.curg;
        if (gp == null) {
            return;
        }
        if (gp.readgstatusNoScan() == G._Gsyscall) {
            if (!gp.syscallByRetake) {
                // The G's own syscall (Syscall.block around code with polls), with a request
                // sysmon raised for the slice it ran before: a G in a syscall is not preempted
                // (Go's syscalls run no preemptible code). exitsyscall honours the G's own
                // request (G.preempt) when the call returns.
                mp.sched.preempt.stale.incrementAndGet();
                return;
            }
            // Raised by Retake.retakeBlocked: sysmon took this carrier's P while it was blocked in
            // user code. Exit that "syscall" (get a P back, maybe on another M) and carry on;
            // but not inside a class initialiser: the G cannot leave its carrier there, so with
            // no idle P it would wait for one, while the Ms holding every P may be waiting for
            // this very class (a wait that looks RUNNABLE: sysmon never retakes them). It runs on
            // without a P, as in a syscall, until a poll after the initialiser (clinitExit
            // re-arms it), its next gort call or its end.
            if (gp.clinitDepth != 0 || LockFrames.scan() == LockFrames.CLINIT) {
                gp.syscallExitDeferred = true;
                mp.sched.preempt.syscallExitsDeferred.incrementAndGet();
                return;
            }
            gp.syscallExitDeferred = false;
            Syscalls.exitsyscall();
            return;
        }
        Preempt pr = mp.sched.preempt;
        P pp = mp.p;
        if (pp == null || pp.schedtick() != tick) {
            // Raised for an earlier slice (sysmon read a stale schedtick/curg): not ours.
            pr.stale.incrementAndGet();
            return;
        }
        gp.setPreempt(true); // a G inheriting the slice inherits its request (monitorExit re-arms it)
        tryPreempt(mp, gp, pr, requestedAt, sliceWhen, site);
    }

    private static void budgetSlow(String site) {
        M mp = M.current();
        if (mp == null) {
            return;
        }
        M.MThread mt = mp.thread;
        if (mt.preemptRequested()) {
            slow(site);
            return;
        }
        G gp = mp.curg;
        Preempt pr = mp.sched.preempt;
        mt.budget = pr.budgetQuantum; // refill: either we keep running or the next slice starts full
        if (gp == null) {
            return;
        }
        P pp = mp.p;
        // Yield only if somebody is waiting for this P: its own queue or the global queue.
        if (pp == null || (pp.runq.runqempty() && mp.sched.sched.runq.empty())) {
            return;
        }
        if (gp.monitorDepth != 0 || gp.clinitDepth != 0 || mp.locks != 0 || LockFrames.scan() != LockFrames.NONE) {
            return; // the budget strategy does not count refusals: sysmon's requests do
        }
        if (Scheduler.gopreempt()) {
            pr.budgetYields.incrementAndGet();
        } else {
            pr.recordPinned(gp.cont.pinnedReason);
        }
    }

    private static void tryPreempt(M mp, G gp, Preempt pr, long requestedAt, long sliceWhen, String knownSite) {
        if (gp.monitorDepth != 0) {
            // G.preempt stays set: monitorExit / lockReleased re-arm the request when the last
            // monitor or lock is released.
            (gp.monitorDepth > gp.lockDepth ? pr.refusedMonitor : pr.refusedLock).incrementAndGet();
            return;
        }
        if (gp.clinitDepth != 0) {
            pr.refusedClinit.incrementAndGet(); // clinitExit re-arms it
            return;
        }
        if (mp.locks != 0) {
            pr.refusedRuntimeLock.incrementAndGet();
            return;
        }
        int frames = LockFrames.scan();
        if (frames != LockFrames.NONE) {
            // A JDK frame holds a lock around our caller, or an uninstrumented class initialiser
            // runs: nothing tells us when it ends, so G.preempt stays set and sysmon asks again.
            (frames == LockFrames.CLINIT ? pr.refusedClinit : pr.refusedJdkLock).incrementAndGet();
            return;
        }
        String site = !pr.recordSites ? null : knownSite != null ? knownSite : site();
        long yieldAt = System.nanoTime();
        if (Scheduler.gopreempt()) {
            pr.recordYield(requestedAt, sliceWhen, yieldAt, site);
        } else {
            // Pinned (native frame, critical section, ...): G.preempt stays set; sysmon asks again.
            Continuation.Pinned why = gp.cont.pinnedReason;
            pr.recordPinned(why);
        }
    }

    /** A small first batch: the site is a few frames up (tryPreempt, slow, poll, the caller). */
    private static final StackWalker WALKER = StackWalker.getInstance(java.util.Set.of(), 6);

    private static final String POLL = Poll.class.getName();

    static {
        site(); // bootstrap the walker and its lambdas now, not inside the first preemption
        LockFrames.scan(); // and the lock-frame walk (class values, reflection), likewise
    }

    /** "class.method" of the poll's caller, by a stack walk (polls that were not given their site). */
    private static String site() {
        return WALKER.walk(s -> s.filter(f -> !f.getClassName().equals(POLL))
                .findFirst()
                .map(f -> f.getClassName() + "." + f.getMethodName())
                .orElse("(unknown)"));
    }
}
