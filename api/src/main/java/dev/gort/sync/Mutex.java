package dev.gort.sync;

import dev.gort.internal.GoParker;
import dev.gort.internal.Parker;
import dev.gort.internal.Sema;
import dev.gort.runtime.Fatal;
import dev.gort.runtime.G;
import dev.gort.runtime.Scheduler;
import dev.gort.runtime.WaitReason;
import dev.gort.runtime.WaitTarget;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * Go's {@code sync.Mutex}: a mutual exclusion lock whose waiters park as goroutines (never the
 * carrier thread). Not owned by a goroutine: one may lock it and another unlock it (Go allows
 * this; {@code TestPseudoRandomSend} relies on it), so it is not a {@code ReentrantLock} and it is
 * not reentrant.
 *
 * <h2>Fairness (Go's two modes)</h2>
 * <p><b>Normal mode</b>: waiters queue FIFO, but a woken waiter competes with newly arriving
 * goroutines, which have the advantage of already running (and may spin briefly when that can
 * pay off). A waiter that loses goes back to the <i>front</i> of the queue. A waiter that has not
 * got the mutex for more than 1 ms switches it to <b>starvation mode</b>: ownership is handed
 * directly from the unlocking goroutine to the waiter at the front (which runs next, in runnext),
 * newcomers neither spin nor try, they queue at the tail. A waiter that gets the mutex and is the
 * last one, or waited less than 1 ms, switches back to normal mode.
 *
 * <pre>
 *  state: | waiters (29 bits) | starving | woken | locked |
 *           bit 3 ..            bit 2      bit 1   bit 0
 * </pre>
 *
 * <p>Go: sync/mutex.go (internal/sync/mutex.go in Go 1.24+)
 */
public class Mutex implements Locker, WaitTarget {
    static final int MUTEX_LOCKED = 1; // mutex is locked
    static final int MUTEX_WOKEN = 1 << 1;
    static final int MUTEX_STARVING = 1 << 2;
    static final int MUTEX_WAITER_SHIFT = 3;
    /** Go: starvationThresholdNs = 1e6 (1 ms). */
    static final long STARVATION_THRESHOLD_NS = 1_000_000L;

    private static final VarHandle STATE;

    static {
        try {
            STATE = MethodHandles.lookup().findVarHandle(Mutex.class, "state", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** Any goroutine: CAS / getAndAdd; read volatile. Go: m.state. */
    private volatile int state;
    /** Immutable: where waiters park. Go: m.sema. */
    final Sema sema;
    /** The waiter that last locked it, for dumps only: plain, racy. */
    private Object holder;

    public Mutex() {
        this(GoParker.INSTANCE);
    }

    Mutex(Parker parker) {
        this.sema = new Sema(parker, this);
    }

    /**
     * Locks m, parking the goroutine until the mutex is available.
     *
     * <p>Go: sync/mutex.go (*Mutex).Lock
     */
    @Override
    public void lock() {
        // Fast path: grab unlocked mutex.
        if (STATE.compareAndSet(this, 0, MUTEX_LOCKED)) {
            holder = sema.parker().current();
            return;
        }
        // Slow path (outlined so that the fast path can be inlined)
        lockSlow();
        holder = sema.parker().current();
    }

    /**
     * Tries to lock m without blocking. Correct uses are rare (Go's warning applies).
     *
     * <p>Go: (*Mutex).TryLock
     */
    public boolean tryLock() {
        int old = state;
        if ((old & (MUTEX_LOCKED | MUTEX_STARVING)) != 0) {
            return false;
        }
        // There may be a goroutine waiting for the mutex, but we are running now and can try to
        // grab the mutex before that goroutine wakes up.
        if (!STATE.compareAndSet(this, old, old | MUTEX_LOCKED)) {
            return false;
        }
        holder = sema.parker().current();
        return true;
    }

    private void lockSlow() {
        Parker parker = sema.parker();
        long waitStartTime = 0;
        boolean starving = false;
        boolean awoke = false;
        int iter = 0;
        int old = state;
        for (; ; ) {
            // Don't spin in starvation mode: ownership is handed off to waiters, so we won't be able
            // to acquire the mutex anyway.
            if ((old & (MUTEX_LOCKED | MUTEX_STARVING)) == MUTEX_LOCKED && parker.canSpin(iter)) {
                // Active spinning makes sense. Try to set the woken flag so that Unlock does not
                // wake other blocked goroutines.
                if (!awoke
                        && (old & MUTEX_WOKEN) == 0
                        && (old >>> MUTEX_WAITER_SHIFT) != 0
                        && STATE.compareAndSet(this, old, old | MUTEX_WOKEN)) {
                    awoke = true;
                }
                doSpin();
                iter++;
                old = state;
                continue;
            }
            int nw = old;
            // Don't try to acquire a starving mutex: new arriving goroutines must queue.
            if ((old & MUTEX_STARVING) == 0) {
                nw |= MUTEX_LOCKED;
            }
            if ((old & (MUTEX_LOCKED | MUTEX_STARVING)) != 0) {
                nw += 1 << MUTEX_WAITER_SHIFT;
            }
            // The current goroutine switches the mutex to starvation mode, but not if it is
            // unlocked: Unlock expects a starving mutex to have waiters, which would not be true.
            if (starving && (old & MUTEX_LOCKED) != 0) {
                nw |= MUTEX_STARVING;
            }
            if (awoke) {
                // The goroutine has been woken from sleep, so reset the flag in either case.
                if ((nw & MUTEX_WOKEN) == 0) {
                    throw Fatal.fatal(Scheduler.current(), "sync: inconsistent mutex state");
                }
                nw &= ~MUTEX_WOKEN;
            }
            if (STATE.compareAndSet(this, old, nw)) {
                if ((old & (MUTEX_LOCKED | MUTEX_STARVING)) == 0) {
                    break; // locked the mutex with CAS
                }
                // If we were already waiting before, queue at the front of the queue.
                boolean queueLifo = waitStartTime != 0;
                if (waitStartTime == 0) {
                    waitStartTime = parker.nanotime();
                }
                sema.semacquire(queueLifo, WaitReason.SYNC_MUTEX_LOCK, 1); // + lockSlow
                starving = starving || parker.nanotime() - waitStartTime > STARVATION_THRESHOLD_NS;
                old = state;
                if ((old & MUTEX_STARVING) != 0) {
                    // We were woken in starvation mode: ownership was handed to us, but the state is
                    // not yet consistent: the locked bit is clear and we still count as a waiter.
                    if ((old & (MUTEX_LOCKED | MUTEX_WOKEN)) != 0 || (old >>> MUTEX_WAITER_SHIFT) == 0) {
                        throw Fatal.fatal(Scheduler.current(), "sync: inconsistent mutex state");
                    }
                    int delta = MUTEX_LOCKED - (1 << MUTEX_WAITER_SHIFT);
                    if (!starving || (old >>> MUTEX_WAITER_SHIFT) == 1) {
                        // Exit starvation mode. Critical to do it here and consider wait time:
                        // starvation mode is so inefficient that two goroutines can go lock-step
                        // forever once they switch the mutex to it.
                        delta -= MUTEX_STARVING;
                    }
                    STATE.getAndAdd(this, delta);
                    break;
                }
                awoke = true;
                iter = 0;
            } else {
                old = state;
            }
        }
    }

    /** Go: proc.go sync_runtime_doSpin (procyield(active_spin_cnt = 30)). */
    private static void doSpin() {
        for (int i = 0; i < 30; i++) {
            Thread.onSpinWait();
        }
    }

    /**
     * Unlocks m. Unlocking an unlocked mutex is a fatal error ({@code fatal error: sync: unlock of
     * unlocked mutex}). Any goroutine may unlock a mutex another one locked.
     *
     * <p>Go: (*Mutex).Unlock
     */
    @Override
    public void unlock() {
        holder = null;
        // Fast path: drop lock bit.
        int nw = (int) STATE.getAndAdd(this, -MUTEX_LOCKED) - MUTEX_LOCKED;
        if (nw != 0) {
            // Outlined slow path to allow inlining the fast path.
            unlockSlow(nw);
        }
    }

    private void unlockSlow(int nw) {
        if (((nw + MUTEX_LOCKED) & MUTEX_LOCKED) == 0) {
            throw Fatal.userFatal(Scheduler.current(), "sync: unlock of unlocked mutex");
        }
        if ((nw & MUTEX_STARVING) == 0) {
            int old = nw;
            for (; ; ) {
                // If there are no waiters, or a goroutine has already been woken or grabbed the lock,
                // no need to wake anyone. In starvation mode ownership is handed off directly from
                // the unlocking goroutine to the next waiter; we are not part of that chain, since
                // we did not observe the starving bit when we unlocked above. So get out of the way.
                if ((old >>> MUTEX_WAITER_SHIFT) == 0 || (old & (MUTEX_LOCKED | MUTEX_WOKEN | MUTEX_STARVING)) != 0) {
                    return;
                }
                // Grab the right to wake someone.
                nw = (old - (1 << MUTEX_WAITER_SHIFT)) | MUTEX_WOKEN;
                if (STATE.compareAndSet(this, old, nw)) {
                    sema.semrelease(false, 1); // + unlockSlow
                    return;
                }
                old = state;
            }
        } else {
            // Starving mode: hand ownership to the next waiter and yield our slot so that it runs
            // at once. The locked bit is not set; the waiter sets it after wakeup, but the mutex is
            // still considered locked while the starving bit is set, so newcomers won't take it.
            sema.semrelease(true, 1);
        }
    }

    /** The raw state word (tests). */
    int state() {
        return state;
    }

    public boolean isLocked() {
        return (state & (MUTEX_LOCKED | MUTEX_STARVING)) != 0;
    }

    @Override
    public String toString() {
        return "sync.Mutex@" + Integer.toHexString(System.identityHashCode(this));
    }

    /** {@code sync.Mutex@1b6d3586 (locked, starving; waiters: G5, G6)}, racy. */
    @Override
    public String describe() {
        int s = state;
        StringBuilder sb = new StringBuilder(toString()).append(" (");
        sb.append((s & MUTEX_LOCKED) != 0 ? "locked" : "unlocked");
        if ((s & MUTEX_STARVING) != 0) {
            sb.append(", starving");
        }
        return sb.append("; waiters: ").append(sema.waiterNames()).append(')').toString();
    }

    @Override
    public G waitTargetHolder() {
        return holder instanceof G g ? g : null;
    }
}
