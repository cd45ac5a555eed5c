package dev.gort.bench;

import dev.gort.runtime.G;
import dev.gort.runtime.Scheduler;
import dev.gort.runtime.WaitReason;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A one-shot count-down latch for one waiting goroutine, built directly on the core's parking
 * primitive ({@code gopark}/{@code goready}) so that the benchmarks need nothing but the core. It is
 * Go's {@code sync.WaitGroup} reduced to one waiter.
 *
 * <p>Protocol (no lost wake-up): the waiter parks; its unlock function (run by the M once the G is
 * {@code _Gwaiting}) publishes the G in {@link #waiter} and then re-reads the count. The last
 * {@link #countDown} brings the count to 0 and then reads {@link #waiter}. Whichever side takes the
 * waiter out of the slot with a CAS (non-null to null) owns the wake-up: the unlock function cancels
 * the park, or the counter calls {@code goready}. Both the count (volatile decrement) and the slot
 * (volatile CAS) are sequentially consistent, so at least one side sees the other.
 *
 * <p>Go: sync/waitgroup.go (Add/Done/Wait) on runtime/sema.go's park/ready pair
 */
public final class GLatch {
    private static final VarHandle WAITER;

    static {
        try {
            WAITER = MethodHandles.lookup().findVarHandle(GLatch.class, "waiter", G.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** Any thread decrements (volatile RMW). */
    private final AtomicInteger count;
    /** The parked waiter: set by its M in the unlock function, taken by CAS (either side). */
    @SuppressWarnings("unused")
    private volatile G waiter;
    /** The waiter's runtime: written by the waiter before it parks, read by the counter that wakes it. */
    private volatile Scheduler sched;

    public GLatch(int count) {
        this.count = new AtomicInteger(count);
    }

    /** Called by any goroutine (or thread): the one that reaches 0 wakes the waiter. */
    public void countDown() {
        int c = count.decrementAndGet();
        if (c == 0) {
            G w = (G) WAITER.getAndSet(this, (G) null);
            if (w != null) {
                sched.goready(w);
            }
        } else if (c < 0) {
            throw new IllegalStateException("GLatch: negative count");
        }
    }

    public int count() {
        return count.get();
    }

    /** Parks the calling goroutine until the count reaches 0. */
    public void await() {
        if (count.get() == 0) {
            return;
        }
        sched = Scheduler.current();
        Scheduler.gopark(GLatch::parkUnlock, this, WaitReason.SYNC_WAITGROUP_WAIT, this);
        if (count.get() != 0) {
            throw new IllegalStateException("GLatch: woken with count " + count.get());
        }
    }

    private static boolean parkUnlock(G gp, GLatch l) {
        WAITER.setVolatile(l, gp);
        if (l.count.get() == 0) {
            // The last countDown may have missed us: whoever clears the slot wakes the G.
            return !WAITER.compareAndSet(l, gp, (G) null);
        }
        return true;
    }
}
