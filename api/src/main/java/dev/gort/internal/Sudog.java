package dev.gort.internal;

/**
 * A waiter on a wait queue: one per blocked channel operation, one per case of a blocked select,
 * one per semaphore or Cond waiter. Every field is guarded by the lock of the queue the sudog is
 * on (a channel's or a semaphore's), plain; the owner reads {@code elem}, {@code success} and
 * {@code ticket} after it is readied (the ready hand-off orders them).
 *
 * <p>Go: runtime2.go type sudog
 */
public final class Sudog {
    /** The waiter (a G in production). */
    public Object g;
    /** Links in a {@link WaitQ} (or a semaphore's queue). */
    public Sudog next, prev;
    /** The value sent (a sender's), or the value received (written by the waker for a receiver). */
    public Object elem;
    /** The channel or semaphore this sudog waits on. */
    public Object c;
    /** select: the goroutine's sudogs in lock order (Go: gp.waiting / sg.waitlink). */
    public Sudog waitlink;
    /** closechan: the list of waiters to ready once the lock is dropped (Go: the gList via g.schedlink). */
    public Sudog glink;
    /** Part of a select: a waker must win the waiter's selectDone first. */
    public boolean isSelect;
    /** Woken by a communication (true) or by close (false). */
    public boolean success;
    /** Semaphore hand-off flag / notifyList ticket. */
    public int ticket;
    /** select: the case this sudog stands for. */
    public int caseIndex;
    /**
     * Block profile: -1 while a profiled waiter waits (set by the waiter before it queues, 0 when
     * not profiled), the waker's {@code nanotime} when it readies the waiter (written before the
     * ready, read by the waiter after it). Go: sudog.releasetime.
     */
    public long releasetime;
    /**
     * Mutex profile: when the waiter started waiting (0: not profiled); written by the waiter
     * before it queues, read by the releaser that dequeues it. Go: sudog.acquiretime.
     */
    public long acquiretime;

    /**
     * Drops the references a finished wait left (Go: releaseSudog). The links are already null: a
     * dequeue clears next/prev, select's pass 3 clears waitlink, closechan clears glink; flags and
     * the ticket are set by the next user.
     */
    public void release() {
        g = null;
        elem = null;
        c = null;
    }
}
