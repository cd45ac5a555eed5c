package dev.gort.runtime;

import jdk.internal.vm.Continuation;

/**
 * The yield points that gort's java agent injects into user bytecode (preemption-strategies.md).
 * There is no way to stop a continuation from outside on JDK 25, so sysmon raises a flag on the
 * carrier thread ({@link M.MThread#requestPreempt}) and the running G looks at it here.
 *
 * <p><b>Fast path</b> ({@link #poll}): {@code Thread.currentThread()} (re-read every time: a G
 * changes carrier across a yield), a type check, one opaque load of the carrier's flag. It is
 * 28 bytes of bytecode, well under {@code MaxInlineSize = 35}, so C2 inlines it into the loop; the
 * never-taken call to {@link #slow} compiles to an uncommon trap. The load is opaque, never plain:
 * a plain read may be hoisted out of the loop (JLS 17.3) and the G would never stop.
 *
 * <p><b>Slow path</b> ({@link #slow}, out of line): clears the flag, drops requests meant for a G
 * that has already left this carrier, refuses (and counts) while the G holds a Java monitor or the
 * M a runtime lock, records where it happened, then yields through {@link Scheduler#gopreempt}:
 * the G goes to the global queue tail and gets a new slice when it runs again (Go's
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
     * The back-edge / entry poll ({@code backedge}, {@code entry} strategies). Outside a gort
     * carrier it does nothing.
     */
    public static void poll() {
        Thread t = Thread.currentThread();
        if (t instanceof M.MThread mt && mt.preemptRequested()) {
            slow(mt);
        }
    }

    /**
     * The {@code budget} strategy's poll: decrements the running slice's budget; when it is spent,
     * yields if other work is runnable (else refills it). sysmon's request is honoured here too.
     */
    public static void budget() {
        Thread t = Thread.currentThread();
        if (t instanceof M.MThread mt) {
            int b = mt.budget - 1;
            mt.budget = b;
            if (b <= 0 || mt.preemptRequested()) {
                budgetSlow(mt);
            }
        }
    }

    /** After MONITORENTER and at the entry of a synchronized method. */
    public static void monitorEnter() {
        Thread t = Thread.currentThread();
        if (t instanceof M.MThread mt) {
            G gp = mt.m.curg;
            if (gp != null) {
                gp.monitorDepth++;
            }
        }
    }

    /** After MONITOREXIT and on every exit of a synchronized method (returns and exceptions). */
    public static void monitorExit() {
        Thread t = Thread.currentThread();
        if (t instanceof M.MThread mt) {
            G gp = mt.m.curg;
            if (gp != null) {
                int d = gp.monitorDepth - 1;
                if (d <= 0) {
                    // Clamped: an exception edge we could not see (e.g. a StackOverflowError inside
                    // the hook) must not leave the G unpreemptible forever, nor negative.
                    gp.monitorDepth = 0;
                    if (gp.preemptRequested()) {
                        rearm(mt);
                    }
                } else {
                    gp.monitorDepth = d;
                }
            }
        }
    }

    private static void rearm(M.MThread mt) {
        mt.rearmPreempt();
        mt.m.sched.preempt.rearmed.incrementAndGet();
    }

    /** The preemption slow path; never inlined into loops (it is big and cold). */
    static void slow(M.MThread mt) {
        if (!mt.preemptRequestedAcquire()) {
            return; // cleared meanwhile by our own M? (cannot happen on this thread) - be safe
        }
        long requestedAt = mt.preemptRequestedAt;
        long sliceWhen = mt.preemptSliceWhen;
        mt.clearPreempt();
        M mp = mt.m;
        G gp = mp.curg;
        if (gp == null) {
            return;
        }
        Preempt pr = mp.sched.preempt;
        P pp = mp.p;
        if (pp == null || pp.schedtick() != mt.preemptTick) {
            // Raised for an earlier slice (sysmon read a stale schedtick/curg): not ours.
            pr.stale.incrementAndGet();
            return;
        }
        gp.setPreempt(true); // a G inheriting the slice inherits its request (monitorExit re-arms it)
        tryPreempt(mp, gp, pr, requestedAt, sliceWhen);
    }

    private static void budgetSlow(M.MThread mt) {
        if (mt.preemptRequested()) {
            slow(mt);
            return;
        }
        M mp = mt.m;
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
        if (gp.monitorDepth != 0 || mp.locks != 0) {
            return; // the budget strategy does not count refusals: sysmon's requests do
        }
        if (Scheduler.gopreempt()) {
            pr.budgetYields.incrementAndGet();
        } else {
            pr.recordPinned(gp.cont.pinnedReason);
        }
    }

    private static void tryPreempt(M mp, G gp, Preempt pr, long requestedAt, long sliceWhen) {
        if (gp.monitorDepth != 0) {
            // G.preempt stays set: monitorExit re-arms the request when the last monitor is released.
            pr.refusedMonitor.incrementAndGet();
            return;
        }
        if (mp.locks != 0) {
            pr.refusedRuntimeLock.incrementAndGet();
            return;
        }
        String site = pr.recordSites ? site() : null;
        long yieldAt = System.nanoTime();
        if (Scheduler.gopreempt()) {
            pr.recordYield(requestedAt, sliceWhen, yieldAt, site);
        } else {
            // Pinned (native frame, critical section, ...): G.preempt stays set; sysmon asks again.
            Continuation.Pinned why = gp.cont.pinnedReason;
            pr.recordPinned(why);
        }
    }

    private static final StackWalker WALKER = StackWalker.getInstance();
    private static final String POLL = Poll.class.getName();

    static {
        site(); // bootstrap the walker and its lambdas now, not inside the first preemption
    }

    /** "class.method" of the poll's caller: where the instrumented code was preempted. */
    private static String site() {
        return WALKER.walk(s -> s.filter(f -> !f.getClassName().equals(POLL))
                .findFirst()
                .map(f -> f.getClassName() + "." + f.getMethodName())
                .orElse("(unknown)"));
    }
}
