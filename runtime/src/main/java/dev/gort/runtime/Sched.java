package dev.gort.runtime;

import java.util.concurrent.atomic.AtomicLong;

/**
 * The scheduler's global state that is not the spinning protocol's ({@link Idle}) or
 * stop-the-world's ({@link World}): sched.lock itself, what it guards ({@link Synced}), the global
 * run queue and the lock-free words that any M reads. Every field says whether the lock guards it.
 *
 * <p>Go: runtime2.go type schedt
 */
final class Sched {
    /** sched.lock: a plain monitor; never held across a continuation yield. */
    final Object lock = new Object();

    /**
     * Everything {@link #lock} guards, as data: a field is in here if and only if it is read and
     * written under sched.lock only (the global run queue, {@link #runq}, guards its own links with
     * the same lock and checks it). Code that reaches into it says "sched.lock held" and calls
     * {@link #assertLockHeld}.
     */
    static final class Synced {
        /** Idle Ps and Ms, and the M accounting (Go: pidle, midle, nmidle, mnext, ...). */
        final Idle.Synced idle = new Idle.Synced();
        /** Stop-the-world's count and request (Go: stopwait, newprocs). */
        final World.Synced world = new World.Synced();
    }

    /** Guarded by {@link #lock}; touch it only through {@link Idle} and {@link World}. */
    final Synced synced = new Synced();

    /** Guarded by lock (size readable lock-free). Go: sched.runq, sched.runqsize. */
    final GlobalRunQueue runq = new GlobalRunQueue(lock);

    /**
     * The last goroutine id handed out: atomic from any thread, advanced to the end of an aligned
     * block of {@link #GOID_CACHE_BATCH} ids by a P taking the rest of that block for its
     * {@link P#goidcache} (a CAS loop), and by one for a goroutine created without a P (the main
     * goroutine; one started from outside the runtime or from another runtime's goroutine; one
     * created while its carrier's P was retaken). Go: sched.goidgen.
     */
    final AtomicLong goidgen = new AtomicLong();

    /**
     * The size (a power of two) of the aligned blocks a P takes its ids from, the rest of one block
     * at a time (Go takes 16 ids from wherever {@code goidgen} stands; gort keeps a P's batch inside
     * one block so that {@link AllGs}'s stripes, one per block, stay apart). Go: proc.go
     * _GoidCacheBatch.
     */
    static final int GOID_CACHE_BATCH = 16;

    /**
     * A stop-the-world is under way: written under lock by {@link World}, read volatile (lock-free)
     * by every M at its scheduling points and by the syscall paths. Go: sched.gcwaiting (atomic).
     */
    volatile boolean gcwaiting;

    /**
     * sysmon is deep-sleeping: written under lock, read volatile (lock-free pre-check). Go:
     * sched.sysmonwait.
     */
    volatile boolean sysmonwait;

    /**
     * lastpoll != 0 means nobody blocks in netpoll; else when the last poll ended (nanotime). Any
     * thread, atomic. Go: sched.lastpoll.
     */
    final AtomicLong lastpoll = new AtomicLong(1);
    /** When the M blocked in netpoll will wake; written by that M, read by wakers (atomic). Go: sched.pollUntil. */
    final AtomicLong pollUntil = new AtomicLong();

    /**
     * Whether {@link #assertLockHeld} checks: with assertions enabled (-ea: the test suite), as Go
     * checks only in lock-ranking builds. A constant for the JIT: free when off.
     */
    static final boolean CHECK_LOCK_HELD = Sched.class.desiredAssertionStatus();

    /**
     * The pair of every "sched.lock held" comment: a fatal error if the calling thread does not hold
     * sched.lock (when {@link #CHECK_LOCK_HELD}).
     *
     * <p>Go: lockrank_on.go assertLockHeld
     */
    void assertLockHeld(Scheduler s, String fn) {
        if (CHECK_LOCK_HELD && !Thread.holdsLock(lock)) {
            throw Fatal.fatal(s, fn + ": sched.lock not held");
        }
    }
}
