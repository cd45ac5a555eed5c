package dev.gort.runtime;

import java.util.IdentityHashMap;
import java.util.Map;

/**
 * O(n) scheduler invariant checks, on only with {@link Config#debugChecks()} (-Dgort.debug.checks):
 * style-guide tier 2. Go has no single equivalent; these are the checks a reader of Go's
 * {@code scheddetail} dump makes by eye.
 */
final class DebugChecks {
    private DebugChecks() {}

    /**
     * No G in two places: every G sits in at most one of the Ps' runnext slots, the Ps' rings, the
     * global queue and the Ms' curg; every queued G is runnable; the global queue's size counter
     * matches its links. Called with sched.lock held and the world stopped (no P runs, so the rings
     * cannot change; a goready from a foreign thread needs sched.lock).
     */
    static void checkQueues(Scheduler s, String where) {
        if (!Thread.holdsLock(s.sched.lock)) {
            throw Fatal.fatal(s, "checkQueues: sched.lock not held");
        }
        Map<G, String> seen = new IdentityHashMap<>();
        for (P pp : s.allp) {
            G rn = pp.runq.runnext();
            if (rn != null) {
                place(s, seen, rn, pp + ".runnext", true, where);
            }
            for (G gp : pp.runq.snapshot()) {
                place(s, seen, gp, pp + ".runq", true, where);
            }
        }
        int linked = s.sched.runq.countLinked();
        if (linked != s.sched.runq.sizeAcquire()) {
            System.err.println(
                    "runtime: " + where + ": global runq size " + s.sched.runq.sizeAcquire() + ", linked " + linked);
            throw Fatal.fatal(s, "checkQueues: global runq size mismatch");
        }
        for (G gp : s.sched.runq.snapshot()) {
            place(s, seen, gp, "sched.runq", true, where);
        }
        for (M mp : s.idle.synced.allm) {
            G c = mp.curg;
            if (c != null) {
                place(s, seen, c, mp + ".curg", false, where);
            }
        }
    }

    private static void place(Scheduler s, Map<G, String> seen, G gp, String here, boolean queued, String where) {
        String before = seen.put(gp, here);
        if (before != null) {
            System.err.println("runtime: " + where + ": goroutine " + gp.goid + " in " + before + " and in " + here);
            throw Fatal.fatal(s, "checkQueues: G in two places");
        }
        if (queued && gp.readgstatus() != G._Grunnable) {
            System.err.println("runtime: " + where + ": goroutine " + gp.goid + " in " + here + " has status "
                    + G.gstatusName(gp.readgstatus()));
            throw Fatal.fatal(s, "checkQueues: queued G not runnable");
        }
    }
}
