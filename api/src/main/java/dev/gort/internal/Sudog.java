package dev.gort.internal;

/**
 * A waiter on a wait queue: one per blocked channel operation, one per case of a blocked select
 * ({@link OfSelect}), one per semaphore or Cond waiter. Every field is guarded by the lock of the
 * queue the sudog is on (a channel's or a semaphore's), plain; the owner reads {@code elem} and
 * {@code ticket} after it is readied (the ready hand-off orders them).
 *
 * <p>Three of Go's fields are not fields here (issue 19: with them a parked receiver's sudog was a
 * 48-byte object, without them 40): {@code isSelect} is the sudog's class ({@link #isSelect()});
 * {@code success} is what {@code elem} holds once the waiter is readied (see there); {@code c} is
 * not needed (a select's park commit unlocks the select's own channel list, which cannot change
 * while any of those locks is held).
 *
 * <p>Go: runtime2.go type sudog
 */
public sealed class Sudog permits Sudog.OfSelect {
    /** The waiter (a G in production). */
    public Object g;
    /**
     * Links in a {@link WaitQ} (or a semaphore's queue). Once dequeued, {@code next} also links
     * closechan's list of waiters to ready after the lock is dropped (Go links their Gs through
     * g.schedlink; a sudog of its own for that would be 4 more bytes on every parked goroutine's
     * sudog, issue 19): closechan clears it before it readies the waiter.
     */
    public Sudog next, prev;
    /**
     * The value sent (a sender's), or the value received (written by the waker for a receiver).
     * It also says what Go's {@code success} says: a receiver's starts as the channel's closed
     * marker and a sender's as its value; a communication leaves the value received (a
     * receiver's) or null (a sender's, taken); closechan leaves the marker.
     */
    public Object elem;
    /** select: the goroutine's sudogs in lock order (Go: gp.waiting / sg.waitlink). */
    public Sudog waitlink;
    /**
     * Semaphore hand-off flag / notifyList ticket. (A select finds the case a sudog stands for by
     * its place in the lock-ordered waitlink list, as Go's selectgo does, not from a field.)
     */
    public int ticket;
    /**
     * The profiles' two times ({@link Times}), or null: allocated the first time a profile is on for
     * a wait on this sudog (a goroutine's sudog is reused, so once per goroutine), so that a parked
     * goroutine does not carry 16 bytes of profile state when no profile runs (issue 19). Same
     * guard as the times it holds.
     */
    private Times times;

    /**
     * Go's sudog.releasetime and sudog.acquiretime (and the block profile's start), off the sudog. Guarded as the sudog's fields.
     */
    private static final class Times {
        long releasetime;
        long acquiretime;
        long blockstart;
    }

    private Times times() {
        Times t = times;
        if (t == null) {
            t = new Times();
            times = t;
        }
        return t;
    }

    /**
     * Block profile: -1 while a profiled waiter waits (set by the waiter before it queues, 0 when
     * not profiled), the waker's {@code nanotime} when it readies the waiter (written before the
     * ready, read by the waiter after it). Go: sudog.releasetime.
     */
    public long releasetime() {
        Times t = times;
        return t == null ? 0 : t.releasetime;
    }

    /** Sets {@link #releasetime()}; a 0 on a sudog that never had a time allocates nothing. */
    public void setReleasetime(long v) {
        if (v != 0 || times != null) {
            times().releasetime = v;
        }
    }

    /**
     * Block profile: the waiter's {@code nanotime} when it blocked (Go: chanrecv's and chansend's
     * local t0), kept here rather than in the blocked frame: every local live across the park is
     * a slot in the parked goroutine's frozen stack. Written and read by the waiter; meaningful
     * only while {@link #releasetime()} is not 0.
     */
    public long blockstart() {
        Times t = times;
        return t == null ? 0 : t.blockstart;
    }

    /** Starts a profiled wait: {@link #blockstart()} = t0 and {@link #releasetime()} = -1. */
    public void startBlockProfile(long t0) {
        Times t = times();
        t.blockstart = t0;
        t.releasetime = -1;
    }

    /**
     * Mutex profile: when the waiter started waiting (0: not profiled); written by the waiter
     * before it queues, read by the releaser that dequeues it. Go: sudog.acquiretime.
     */
    public long acquiretime() {
        Times t = times;
        return t == null ? 0 : t.acquiretime;
    }

    /** Sets {@link #acquiretime()}; a 0 on a sudog that never had a time allocates nothing. */
    public void setAcquiretime(long v) {
        if (v != 0 || times != null) {
            times().acquiretime = v;
        }
    }

    /**
     * Part of a select: a waker must win the waiter's selectDone first (Go: sudog.isSelect). A
     * select's sudogs are its own ({@link OfSelect}), never a goroutine's plain one.
     */
    public final boolean isSelect() {
        return this instanceof OfSelect;
    }

    /**
     * Drops the references a finished wait left (Go: releaseSudog). The links are already null: a
     * dequeue clears next/prev, select's pass 3 clears waitlink, closechan clears next again; the
     * ticket is set by the next user.
     */
    public void release() {
        g = null;
        elem = null;
    }

    /** The sudog of one case of a select: {@link #isSelect()}. No fields of its own. */
    public static final class OfSelect extends Sudog {}
}
