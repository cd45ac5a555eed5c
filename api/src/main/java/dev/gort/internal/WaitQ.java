package dev.gort.internal;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * A FIFO of {@link Sudog}s: a channel's {@code recvq} or {@code sendq}. Guarded by the channel's
 * lock, except that {@link #isEmptyRacy} may be read without it (the lock-free "would block"
 * checks of non-blocking operations), so {@code first} is written with release and read with
 * acquire there.
 *
 * <p>Go: chan.go type waitq, enqueue, dequeue; select.go dequeueSudoG
 */
public final class WaitQ {
    private static final VarHandle FIRST;

    static {
        try {
            FIRST = MethodHandles.lookup().findVarHandle(WaitQ.class, "first", Sudog.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** Under the lock; setRelease so that racy readers see a consistent reference. */
    private Sudog first;
    /** Under the lock, plain. */
    private Sudog last;

    public Sudog first() {
        return first;
    }

    /** Lock-free "nobody waiting" check. Go: c.recvq.first == nil (read without the lock). */
    public boolean isEmptyRacy() {
        return FIRST.getAcquire(this) == null;
    }

    private void setFirstRelease(Sudog s) {
        FIRST.setRelease(this, s);
    }

    /** Lock held. Go: (*waitq).enqueue. */
    public void enqueue(Sudog sgp) {
        sgp.next = null;
        Sudog x = last;
        if (x == null) {
            sgp.prev = null;
            setFirstRelease(sgp);
            last = sgp;
            return;
        }
        sgp.prev = x;
        x.next = sgp;
        last = sgp;
    }

    /**
     * Lock held. Removes and returns the first waiter that may be woken: a select's sudog is skipped
     * (and dropped) if another case of that select already won its selectDone, since that select is
     * about to remove itself from this queue.
     *
     * <p>Go: (*waitq).dequeue
     */
    public Sudog dequeue(Parker parker) {
        for (; ; ) {
            Sudog sgp = first;
            if (sgp == null) {
                return null;
            }
            Sudog y = sgp.next;
            if (y == null) {
                setFirstRelease(null);
                last = null;
            } else {
                y.prev = null;
                setFirstRelease(y);
                sgp.next = null; // mark as removed (see dequeueSudoG)
            }
            // A select's goroutine may have been woken through another case and not yet have taken
            // this channel's lock to remove itself: whoever wins selectDone wakes it, the others skip.
            if (sgp.isSelect() && !parker.casSelectDone(sgp.g)) {
                continue;
            }
            return sgp;
        }
    }

    /** Lock held. Removes sgp wherever it is, or does nothing if it was already dequeued. Go: dequeueSudoG. */
    public void dequeueSudoG(Sudog sgp) {
        Sudog x = sgp.prev;
        Sudog y = sgp.next;
        if (x != null) {
            if (y != null) {
                // middle of queue
                x.next = y;
                y.prev = x;
                sgp.next = null;
                sgp.prev = null;
                return;
            }
            // end of queue
            x.next = null;
            last = x;
            sgp.prev = null;
            return;
        }
        if (y != null) {
            // start of queue
            y.prev = null;
            setFirstRelease(y);
            sgp.next = null;
            return;
        }
        // x == y == null: either sgp is the only element or it was already removed.
        if (first == sgp) {
            setFirstRelease(null);
            last = null;
        }
    }

    /** Waiters' goroutines in queue order, for dumps (racy, lock not required). */
    public void appendWaiters(StringBuilder sb, java.util.function.Function<Object, String> name) {
        int n = 0;
        for (Sudog s = first; s != null && n < 16; s = s.next, n++) {
            if (n > 0) {
                sb.append(", ");
            }
            sb.append(name.apply(s.g));
        }
        if (n == 0) {
            sb.append("none");
        } else if (n == 16) {
            sb.append(", ...");
        }
    }
}
