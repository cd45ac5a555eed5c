package dev.gort.sync;

import dev.gort.Go;
import dev.gort.PanicError;
import dev.gort.internal.GoParker;
import dev.gort.internal.Parker;
import dev.gort.internal.Sema;
import dev.gort.runtime.Bubble;
import dev.gort.runtime.WaitReason;
import dev.gort.runtime.WaitTarget;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * Go's {@code sync.WaitGroup}: waits for a collection of goroutines to finish.
 *
 * <pre>
 *  state (64 bits): | counter (high 32, signed) | bubble flag (bit 31) | waiters (low 31) |
 * </pre>
 *
 * <p>In a synctest bubble (Go 1.25): the first Add from a bubble associates the group with it,
 * and then {@link #await} in that bubble is durably blocking. Add from another bubble panics
 * ({@code sync: WaitGroup.Add called from multiple synctest bubbles}), and so does any Add or Done
 * that mixes a bubble and the outside while the count is in use ({@code sync: WaitGroup.Add called
 * from inside and outside synctest bubble}); Go makes these fatal errors. The association ends
 * when a Wait of the bubble returns with the count at zero (Add releasing the waiters, or a Wait
 * finding the count zero), so a group may then move to another bubble or out of it.
 *
 * <p>Go: sync/waitgroup.go
 */
public class WaitGroup implements WaitTarget {
    private static final VarHandle STATE;

    static {
        try {
            STATE = MethodHandles.lookup().findVarHandle(WaitGroup.class, "state", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** state's bit 31: the group is associated with a synctest bubble. Go: waitGroupBubbleFlag. */
    private static final long BUBBLE_FLAG = 0x8000_0000L;
    /** state's waiter count. */
    private static final long WAITERS = 0x7fff_ffffL;

    /** Any goroutine: getAndAdd / CAS; read volatile. Go: wg.state. */
    private volatile long state;
    /** Immutable. Go: wg.sema. */
    private final Sema sema;
    /**
     * The synctest bubble the group is associated with (Go: the bubble special of synctest.Associate),
     * or null: set by the first Add from a bubble (CAS), cleared (Go: synctest.Disassociate) when a
     * Wait of that bubble is over with the count at zero.
     */
    private volatile Bubble bubble;

    private static final VarHandle BUBBLE;

    static {
        try {
            BUBBLE = MethodHandles.lookup().findVarHandle(WaitGroup.class, "bubble", Bubble.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    public WaitGroup() {
        this(GoParker.INSTANCE);
    }

    WaitGroup(Parker parker) {
        sema = new Sema(parker, this);
    }

    /**
     * Adds delta (may be negative) to the counter; at zero, every waiter is released. A negative
     * counter panics {@code sync: negative WaitGroup counter}. Calls with a positive delta that
     * start from zero must happen before Wait.
     *
     * <p>Go: (*WaitGroup).Add
     */
    public void add(int delta) {
        boolean bubbled = false;
        Bubble cur = Bubble.current(); // one volatile read while no bubble runs
        if (cur != null) {
            // Called from within a bubble: every Add must come from this bubble.
            Bubble b = bubble;
            if (b == null && BUBBLE.compareAndSet(this, null, cur)) {
                b = cur; // associated now (Go: synctest.Associate)
            } else if (b == null) {
                b = bubble;
            }
            if (b != cur) {
                // Associated with a different bubble.
                throw new PanicError("sync: WaitGroup.Add called from multiple synctest bubbles");
            }
            bubbled = true;
            long old = (long) STATE.getAndBitwiseOr(this, BUBBLE_FLAG);
            if (old != 0 && (old & BUBBLE_FLAG) == 0) {
                // Add has been called from outside this bubble.
                throw new PanicError("sync: WaitGroup.Add called from inside and outside synctest bubble");
            }
        }
        long st = (long) STATE.getAndAdd(this, (long) delta << 32) + ((long) delta << 32);
        if ((st & BUBBLE_FLAG) != 0 && !bubbled) {
            // Add has been called from within a bubble (and we are not in one).
            throw new PanicError("sync: WaitGroup.Add called from inside and outside synctest bubble");
        }
        int v = (int) (st >> 32);
        int w = (int) (st & WAITERS);
        if (v < 0) {
            throw new PanicError("sync: negative WaitGroup counter");
        }
        if (w != 0 && delta > 0 && v == delta) {
            throw new PanicError("sync: WaitGroup misuse: Add called concurrently with Wait");
        }
        if (v > 0 || w == 0) {
            return;
        }
        // This goroutine has set the counter to 0 while there are waiters. Now there can be no
        // concurrent mutation of state: Adds must not run concurrently with Wait, and Wait does
        // not add a waiter when it sees counter == 0. Still do a cheap misuse check.
        if (state != st) {
            throw new PanicError("sync: WaitGroup misuse: Add called concurrently with Wait");
        }
        // Reset the waiters count to 0.
        state = 0;
        if (bubbled) {
            // Adds must not happen concurrently with Wait when the counter is 0, so the group can
            // safely leave its bubble.
            bubble = null;
        }
        for (; w != 0; w--) {
            sema.semrelease(false, 0);
        }
    }

    /** Go: (*WaitGroup).Done. */
    public void done() {
        add(-1);
    }

    /**
     * Blocks until the counter is zero. ({@code wait} is taken by {@code Object.wait}.)
     *
     * <p>Go: (*WaitGroup).Wait
     */
    public void await() {
        for (; ; ) {
            long st = state;
            int v = (int) (st >> 32);
            int w = (int) (st & WAITERS);
            if (v == 0) {
                // Counter is 0, no need to wait.
                if (w == 0 && (st & BUBBLE_FLAG) != 0 && isAssociated()) {
                    // Adds must not happen concurrently with Wait when the counter is 0, so the
                    // group can leave its bubble.
                    if (STATE.compareAndSet(this, st, 0L)) {
                        bubble = null;
                    }
                }
                return;
            }
            // Increment waiters count.
            if (STATE.compareAndSet(this, st, st + 1)) {
                // Durable only when Add was called in the waiter's own bubble.
                boolean durable = (st & BUBBLE_FLAG) != 0 && isAssociated();
                sema.semacquire(
                        false, durable ? WaitReason.SYNCTEST_WAITGROUP_WAIT : WaitReason.SYNC_WAITGROUP_WAIT, 0);
                if (state != 0) {
                    throw new PanicError("sync: WaitGroup is reused before previous Wait has returned");
                }
                return;
            }
        }
    }

    /**
     * Runs f in a new goroutine, counted by this group. f must not panic: if it does, the group is
     * not told ({@code done} is not called), so that {@link #await} cannot return and let main end
     * the program before the panic has ended it; f ending by {@code Go.goexit()} counts as done.
     * Outside a goroutine it throws as {@code Go.go} does and leaves the counter as it was.
     *
     * <p>Go 1.25: (*WaitGroup).Go (Go 1.26's: a panic is re-raised without Done)
     */
    public void go(Runnable f) {
        java.util.Objects.requireNonNull(f, "f");
        add(1);
        try {
            Go.go(() -> {
                try {
                    f.run();
                } catch (Throwable t) {
                    if (dev.gort.runtime.Scheduler.isGoexit(t)) {
                        done(); // f completed abruptly using Goexit: done, as Go's
                    }
                    throw t; // a panic: no done (see above); it ends the program
                }
                done();
            });
        } catch (RuntimeException | Error e) {
            done(); // no goroutine was started (called outside one): undo the add
            throw e;
        }
    }

    /** The group is associated with the calling goroutine's bubble. Go: synctest.IsAssociated. */
    private boolean isAssociated() {
        Bubble cur = Bubble.current();
        return cur != null && bubble == cur;
    }

    /** The counter (racy). */
    public int counter() {
        return (int) (state >> 32);
    }

    @Override
    public String toString() {
        return "sync.WaitGroup@" + Integer.toHexString(System.identityHashCode(this));
    }

    @Override
    public String describe() {
        long st = state;
        return toString() + " (counter " + (int) (st >> 32) + ", waiters " + (int) (st & WAITERS) + ": "
                + sema.waiterNames() + ")";
    }
}
