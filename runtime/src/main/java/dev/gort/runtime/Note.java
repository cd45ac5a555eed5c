package dev.gort.runtime;

import java.util.concurrent.locks.LockSupport;

/**
 * A one-shot wake-up for exactly one sleeping thread (an M, or the STW initiator).
 *
 * <p>Interrupts are not wake-ups: a carrier's interrupt status (set, say, by goroutine code calling
 * {@code Thread.currentThread().interrupt()}, which is its carrier) would make every
 * {@code LockSupport.park} return at once and turn the sleep into a busy loop. Like Go's futex
 * sleep on {@code EINTR}, the sleep clears the status and re-checks its condition; only
 * {@link #notewakeup} and the timeout end it. Carriers belong to the runtime: nothing in gort uses
 * their interrupt status.
 *
 * <p>Go: lock_futex.go note, noteclear, notesleep, notetsleep, notewakeup
 */
final class Note {
    /** Any thread sets (notewakeup), the sleeper clears (noteclear). Volatile. */
    private volatile boolean key;
    /** The thread sleeping on this note; set before it sleeps. */
    private volatile Thread waiter;

    void noteclear() {
        key = false;
    }

    void notewakeup() {
        key = true;
        Thread t = waiter;
        if (t != null) {
            if (SchedCounts.ON) SchedCounts.noteUnparks.increment();
            LockSupport.unpark(t);
        }
    }

    /**
     * Sleeps until woken. Returns whether it cleared an interrupt status meanwhile (set before the
     * sleep or during it), so that a caller sleeping with a goroutine mounted can give that
     * goroutine its status back.
     */
    boolean notesleep() {
        waiter = Thread.currentThread();
        boolean interrupted = false;
        while (!key) {
            if (SchedCounts.ON) SchedCounts.noteParks.increment();
            LockSupport.park(this);
            interrupted |= Thread.interrupted(); // EINTR: retry (see the class comment)
        }
        waiter = null;
        return interrupted;
    }

    /** Sleeps until woken or {@code ns} nanoseconds have passed; true if woken. Not from goroutine code. */
    boolean notetsleep(long ns) {
        return notetsleep(ns, Thread.currentThread());
    }

    /**
     * As {@link #notetsleep(long)}, for goroutine code, which must name its carrier ({@code g.m.thread})
     * instead of trusting {@code Thread.currentThread()} (see Scheduler.getg).
     */
    boolean notetsleep(long ns, Thread self) {
        if (ns < 0) {
            notesleep();
            return true;
        }
        waiter = self;
        long deadline = System.nanoTime() + ns;
        while (!key) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                break;
            }
            if (SchedCounts.ON) SchedCounts.noteParks.increment();
            LockSupport.parkNanos(this, left);
            Thread.interrupted(); // EINTR: retry (see the class comment)
        }
        waiter = null;
        return key;
    }

    boolean isSet() {
        return key;
    }
}
