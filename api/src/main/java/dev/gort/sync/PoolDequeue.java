package dev.gort.sync;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * A lock-free, fixed-size, single-producer multi-consumer queue: the producer pushes and pops at
 * the head, any goroutine or thread pops at the tail. Unused slots are nulled so that the queue
 * keeps nothing alive (what sync.Pool needs). Null is not a value (Pool never stores one).
 *
 * <pre>
 *  headTail (64 bits): | head (high 32): next slot to fill | tail (low 32): oldest value |
 * </pre>
 *
 * Both indexes count modulo 2^32 and index {@code vals} modulo its length (a power of two). Slots
 * in [tail, head) belong to consumers; a consumer keeps its slot until it nulls it (release), and
 * only then may the producer fill it again. Head sits in the high bits so that the producer's
 * atomic add to it overflows harmlessly.
 *
 * <p>Go: sync/poolqueue.go poolDequeue
 */
class PoolDequeue {
    /** Go: dequeueBits. */
    static final int DEQUEUE_BITS = 32;
    /**
     * The largest size: fullness is detected by the ring wrapping, which must happen before the
     * 32-bit indexes wrap. Go: dequeueLimit ((1 << dequeueBits) / 4).
     */
    static final int DEQUEUE_LIMIT = 1 << 30;

    private static final VarHandle HEAD_TAIL;
    private static final VarHandle VALS = MethodHandles.arrayElementVarHandle(Object[].class);

    static {
        try {
            HEAD_TAIL = MethodHandles.lookup().findVarHandle(PoolDequeue.class, "headTail", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /**
     * Head and tail (see the diagram). The producer adds to head (getAndAdd) and takes back its
     * last slot (CAS); consumers advance tail (CAS); read volatile. Go: headTail.
     */
    private volatile long headTail;
    /**
     * The ring. A slot is written by the producer with a plain store before the volatile add to head
     * that publishes it; taken by the consumer that advanced tail past it (plain read, then a
     * release store of null); checked free by the producer with an acquire load. Go: vals.
     */
    private final Object[] vals;

    PoolDequeue(int size) {
        if (size <= 0 || (size & (size - 1)) != 0 || size > DEQUEUE_LIMIT) {
            throw new IllegalArgumentException("poolDequeue size must be a power of 2 up to 2^30: " + size);
        }
        vals = new Object[size];
    }

    int capacity() {
        return vals.length;
    }

    static int head(long ptrs) {
        return (int) (ptrs >>> DEQUEUE_BITS);
    }

    static int tail(long ptrs) {
        return (int) ptrs;
    }

    static long pack(int head, int tail) {
        return ((long) head << DEQUEUE_BITS) | (tail & 0xFFFF_FFFFL);
    }

    /**
     * Adds val at the head; false if the queue is full. The producer only.
     *
     * <p>Go: (*poolDequeue).pushHead
     */
    boolean pushHead(Object val) {
        long ptrs = headTail;
        int head = head(ptrs);
        int tail = tail(ptrs);
        if (tail + vals.length == head) {
            return false; // queue is full
        }
        int slot = head & (vals.length - 1);
        // Check that popTail has released the head slot (it nulls it with a release store).
        if (VALS.getAcquire(vals, slot) != null) {
            return false; // another goroutine is still cleaning up the tail: still full
        }
        // The head slot is free, so we own it.
        vals[slot] = val;
        // Increment head: passes the slot to popTail and publishes the store above (volatile).
        HEAD_TAIL.getAndAdd(this, 1L << DEQUEUE_BITS);
        return true;
    }

    /**
     * Removes and returns the value at the head, or null if the queue is empty. The producer only.
     *
     * <p>Go: (*poolDequeue).popHead
     */
    Object popHead() {
        int slot;
        for (; ; ) {
            long ptrs = headTail;
            int head = head(ptrs);
            int tail = tail(ptrs);
            if (tail == head) {
                return null; // queue is empty
            }
            // Confirm tail and decrement head, before reading the value, to take the slot back.
            head--;
            if (HEAD_TAIL.compareAndSet(this, ptrs, pack(head, tail))) {
                slot = head & (vals.length - 1);
                break;
            }
        }
        Object val = vals[slot];
        // Zero the slot. Unlike popTail, this does not race with pushHead (same producer).
        vals[slot] = null;
        return val;
    }

    /**
     * Removes and returns the value at the tail, or null if the queue is empty. Any number of
     * consumers, from any goroutine or thread.
     *
     * <p>Go: (*poolDequeue).popTail
     */
    Object popTail() {
        int slot;
        for (; ; ) {
            long ptrs = headTail;
            int head = head(ptrs);
            int tail = tail(ptrs);
            if (tail == head) {
                return null; // queue is empty
            }
            // Confirm head and tail (for the check above) and increment tail: if this succeeds, we
            // own the slot at tail.
            if (HEAD_TAIL.compareAndSet(this, ptrs, pack(head, tail + 1))) {
                slot = tail & (vals.length - 1);
                break;
            }
        }
        // We own the slot: the CAS read the producer's volatile add, so its store is visible.
        Object val = vals[slot];
        // Tell pushHead that we are done with the slot, and keep nothing alive: the release orders
        // our read before the producer's next store there.
        VALS.setRelease(vals, slot, null);
        return val;
    }
}
