package dev.gort.sync;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * A dynamically-sized {@link PoolDequeue}: a doubly-linked list of dequeues, each twice the size of
 * the previous one (8 first, at most {@link PoolDequeue#DEQUEUE_LIMIT}). The producer pushes only to
 * the newest; pops at the tail start from the oldest, and a drained oldest dequeue is dropped from
 * the list. Same roles as PoolDequeue: one producer (pushHead, popHead), any consumer (popTail).
 *
 * <p>Go: sync/poolqueue.go poolChain
 */
final class PoolChain {
    /** Go: poolChainElt. */
    static final class Elt extends PoolDequeue {
        /**
         * The next (newer) dequeue: written once, null to non-null, by the producer (volatile);
         * read volatile by consumers.
         */
        volatile Elt next;
        /**
         * The previous (older) dequeue: set at construction, then only non-null to null, by the
         * consumer that drops it (volatile); read volatile by the producer.
         */
        volatile Elt prev;

        Elt(int size, Elt prev) {
            super(size);
            this.prev = prev;
        }
    }

    private static final VarHandle TAIL;

    static {
        try {
            TAIL = MethodHandles.lookup().findVarHandle(PoolChain.class, "tail", Elt.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** The dequeue to push to: the producer only, plain. Go: head. */
    private Elt head;
    /**
     * The dequeue to pop the tail from: set once by the producer's first push (volatile), then
     * advanced by consumers (CAS). Go: tail.
     */
    private volatile Elt tail;

    /**
     * Adds val at the head, growing the chain if the newest dequeue is full. The producer only.
     *
     * <p>Go: (*poolChain).pushHead
     */
    void pushHead(Object val) {
        Elt d = head;
        if (d == null) {
            // Initialize the chain.
            d = new Elt(8, null);
            head = d;
            tail = d;
        }
        if (d.pushHead(val)) {
            return;
        }
        // The current dequeue is full: allocate one twice the size.
        int newSize = (int) Math.min((long) d.capacity() * 2, PoolDequeue.DEQUEUE_LIMIT);
        Elt d2 = new Elt(newSize, d);
        head = d2;
        d.next = d2;
        d2.pushHead(val);
    }

    /**
     * Removes the newest value, or null. The producer only.
     *
     * <p>Go: (*poolChain).popHead
     */
    Object popHead() {
        Elt d = head;
        while (d != null) {
            Object val = d.popHead();
            if (val != null) {
                return val;
            }
            // There may still be values in the previous dequeue: back up.
            d = d.prev;
        }
        return null;
    }

    /**
     * Removes the oldest value, or null. Any consumer.
     *
     * <p>Go: (*poolChain).popTail
     */
    Object popTail() {
        Elt d = tail;
        if (d == null) {
            return null;
        }
        for (; ; ) {
            // Load next before popping: d may be empty only for a moment, but if next was set
            // before a pop that failed, d is empty for good, and only then may it be dropped.
            Elt d2 = d.next;
            Object val = d.popTail();
            if (val != null) {
                return val;
            }
            if (d2 == null) {
                return null; // the only dequeue: empty now, but it may be pushed to later
            }
            // The tail dequeue is drained: move on to the next, and try to drop it from the chain
            // so that the next pop need not look at it again.
            if (TAIL.compareAndSet(this, d, d2)) {
                // We won the race: let the GC collect it and stop popHead from backing up into it.
                d2.prev = null;
            }
            d = d2;
        }
    }
}
