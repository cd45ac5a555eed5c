package dev.gort.sync;

import dev.gort.internal.GoParker;
import dev.gort.internal.ParkCommit;
import dev.gort.internal.Parker;
import dev.gort.internal.SpinLock;
import dev.gort.internal.Sudog;
import dev.gort.runtime.GortFatalError;
import dev.gort.runtime.WaitReason;
import dev.gort.runtime.WaitTarget;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * Go's {@code sync.Cond}: a rendezvous point for goroutines waiting for an event, built on the
 * runtime's ticket-based notify list (no lost wake-ups: a waiter takes a ticket before unlocking L,
 * and a signal wakes the waiter holding the oldest unserved ticket).
 *
 * <p>Go: sync/cond.go; runtime/sema.go notifyList, notifyListAdd/Wait/NotifyOne/NotifyAll
 */
public class Cond implements WaitTarget {
    private static final VarHandle WAIT;
    private static final VarHandle NOTIFY;
    private static final VarHandle LOCK;

    static {
        try {
            MethodHandles.Lookup l = MethodHandles.lookup();
            WAIT = l.findVarHandle(Cond.class, "wait", int.class);
            NOTIFY = l.findVarHandle(Cond.class, "notify", int.class);
            LOCK = l.findVarHandle(Cond.class, "lockWord", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** L is held while observing or changing the condition. Go: c.L. */
    public final Locker l;

    private final Parker parker;

    /** Ticket of the next waiter: any goroutine, getAndAdd. Go: notifyList.wait. */
    private volatile int wait;
    /** Ticket of the next waiter to notify: written under the lock (volatile), read racily. Go: notify. */
    private volatile int notify;
    /** {@link SpinLock} word; volatile for the BROKEN store of a section that died. Go: notifyList.lock. */
    private volatile int lockWord;
    /** The waiters, under the lock. */
    private Sudog head;

    private Sudog tail;

    public Cond(Locker l) {
        this(l, GoParker.INSTANCE);
    }

    Cond(Locker l, Parker parker) {
        this.l = l;
        this.parker = parker;
    }

    private void lock() {
        SpinLock.lock(LOCK, this);
    }

    private void unlock() {
        SpinLock.unlock(LOCK, this);
    }

    private static final ParkCommit<Cond> COMMIT = c -> {
        c.unlock();
        return true;
    };

    /**
     * Atomically unlocks L and suspends the goroutine; re-locks L before returning. Call it in a
     * loop that re-checks the condition. ({@code wait} is taken by {@code Object.wait}.)
     *
     * <p>Go: (*Cond).Wait
     */
    public void await() {
        int t = notifyListAdd();
        l.unlock();
        notifyListWait(t);
        l.lock();
    }

    /** Wakes one waiting goroutine, if any. Go: (*Cond).Signal. */
    public void signal() {
        notifyListNotifyOne();
    }

    /** Wakes all waiting goroutines. Go: (*Cond).Broadcast. */
    public void broadcast() {
        notifyListNotifyAll();
    }

    /** Go: sema.go notifyListAdd: takes the next ticket; must be called with L held. */
    private int notifyListAdd() {
        return (int) WAIT.getAndAdd(this, 1);
    }

    /** Wraparound-aware a &lt; b. Go: sema.go less. */
    private static boolean less(int a, int b) {
        return a - b < 0;
    }

    /** Go: sema.go notifyListWait: sleeps unless ticket t was already notified. */
    private void notifyListWait(int t) {
        try {
            notifyListWait1(t);
        } catch (IllegalStateException | GortFatalError e) {
            throw e;
        } catch (Throwable t1) {
            lockWord = t1 instanceof StackOverflowError ? SpinLock.BROKEN_STACK : SpinLock.BROKEN; // no call: SpinLock
            throw SpinLock.died(this, t1, "notifyListWait");
        }
    }

    private void notifyListWait1(int t) {
        lock();
        // Return right away if this ticket has already been notified.
        if (less(t, notify)) {
            unlock();
            return;
        }
        Object gp = parker.current();
        if (gp == null) {
            unlock();
            throw new IllegalStateException("gort: Cond.await needs a goroutine (use Go.run / Go.go)");
        }
        Sudog s = parker.acquireSudog(gp);
        s.g = gp;
        s.ticket = t;
        s.next = null;
        long t0 = 0;
        s.setReleasetime(0);
        if (parker.blockProfileRate(gp) > 0) {
            t0 = parker.nanotime();
            s.setReleasetime(-1);
        }
        if (tail == null) {
            head = s;
        } else {
            tail.next = s;
        }
        tail = s;
        parker.park(gp, COMMIT, this, WaitReason.SYNC_COND_WAIT, this);
        if (t0 != 0) {
            parker.blockevent(s.releasetime() - t0, 2); // + this frame and notifyListWait: Cond.await
        }
        s.release();
    }

    /** Go: sema.go notifyListNotifyAll. */
    private void notifyListNotifyAll() {
        try {
            notifyListNotifyAll1();
        } catch (IllegalStateException | GortFatalError e) {
            throw e;
        } catch (Throwable t1) {
            lockWord = t1 instanceof StackOverflowError ? SpinLock.BROKEN_STACK : SpinLock.BROKEN; // no call: SpinLock
            throw SpinLock.died(this, t1, "notifyListNotifyAll");
        }
    }

    private void notifyListNotifyAll1() {
        // Fast path: no new waiters since the last notification.
        if (wait == notify) {
            return;
        }
        // Pull the list out and mark all its tickets notified.
        lock();
        Sudog s = head;
        head = null;
        tail = null;
        notify = wait;
        unlock();
        // Go through the local list and ready all waiters.
        while (s != null) {
            Sudog next = s.next;
            s.next = null;
            readyWithTime(s);
            s = next;
        }
    }

    /** Go: sema.go notifyListNotifyOne. */
    private void notifyListNotifyOne() {
        try {
            notifyListNotifyOne1();
        } catch (IllegalStateException | GortFatalError e) {
            throw e;
        } catch (Throwable t1) {
            lockWord = t1 instanceof StackOverflowError ? SpinLock.BROKEN_STACK : SpinLock.BROKEN; // no call: SpinLock
            throw SpinLock.died(this, t1, "notifyListNotifyOne");
        }
    }

    private void notifyListNotifyOne1() {
        // Fast path: no new waiters since the last notification.
        if (wait == notify) {
            return;
        }
        lock();
        // Re-check under the lock.
        int t = notify;
        if (t == wait) {
            unlock();
            return;
        }
        // Update the next notify ticket number.
        notify = t + 1;
        // Find the waiter with ticket t: it may not be queued yet (it took the ticket but has not
        // reached notifyListWait); then it will see its ticket notified and not sleep.
        for (Sudog p = null, s = head; s != null; p = s, s = s.next) {
            if (s.ticket == t) {
                Sudog n = s.next;
                if (p != null) {
                    p.next = n;
                } else {
                    head = n;
                }
                if (n == null) {
                    tail = p;
                }
                unlock();
                s.next = null;
                readyWithTime(s);
                return;
            }
        }
        unlock();
    }

    /** Readies a waiter, stamping its release for the block profile first. Go: sema.go readyWithTime. */
    private void readyWithTime(Sudog s) {
        if (s.releasetime() != 0) {
            s.setReleasetime(parker.nanotime());
        }
        parker.ready(s.g);
    }

    @Override
    public String toString() {
        return "sync.Cond@" + Integer.toHexString(System.identityHashCode(this));
    }

    @Override
    public String describe() {
        return toString() + " (" + (wait - notify) + " waiting for a signal)";
    }
}
