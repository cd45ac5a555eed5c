package dev.gort.internal;

import dev.gort.runtime.Fatal;
import dev.gort.runtime.GortFatalError;
import dev.gort.runtime.Scheduler;
import dev.gort.runtime.WaitReason;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * A semaphore that parks goroutines, for the sync package: Go's {@code semacquire} /
 * {@code semrelease} on one address. Go hashes addresses into a table of treaps; here each
 * semaphore owns its counter, its waiter count and its queue, guarded by a CAS spin lock that a
 * parking goroutine's M releases only after the goroutine has yielded (Go's goparkunlock).
 *
 * <ul>
 *   <li>{@link #semacquire}: take a unit if one is there (CAS); else, under the lock, count
 *       ourselves in {@code nwait}, re-check, queue (FIFO, or at the head with {@code lifo} for a
 *       waiter that already waited, so it does not lose its place), park; on wake, a
 *       {@code ticket} means the unit was handed to us directly.
 *   <li>{@link #semrelease}: add a unit; if nobody waits, done (one volatile read); else dequeue
 *       the first waiter, unlock, and with {@code handoff} try to take the unit on its behalf
 *       ({@code ticket = 1}), ready it (runnext) and yield our slot to it (goyield).
 * </ul>
 *
 * <p>Go: runtime/sema.go semacquire1, semrelease1, cansemacquire, (*semaRoot).queue/dequeue
 */
public final class Sema {
    private static final VarHandle COUNT;
    private static final VarHandle NWAIT;
    private static final VarHandle LOCK;

    static {
        try {
            MethodHandles.Lookup l = MethodHandles.lookup();
            COUNT = l.findVarHandle(Sema.class, "count", int.class);
            NWAIT = l.findVarHandle(Sema.class, "nwait", int.class);
            LOCK = l.findVarHandle(Sema.class, "lockWord", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** Available units (Go: *addr): any thread, CAS / getAndAdd, read volatile. */
    private volatile int count;
    /** Waiters, counted before they re-check and queue (Go: root.nwait): getAndAdd, read volatile. */
    private volatile int nwait;
    /** {@link SpinLock} word: CAS to take, setRelease to drop; volatile for the BROKEN store. Go: root.lock. */
    private volatile int lockWord;
    /** The waiters, FIFO (LIFO inserts at the head); under the lock, plain. */
    private Sudog head;

    private Sudog tail;
    /** Sudogs in the queue; under the lock, plain (the mutex profile's waiters behind the head). */
    private int nqueued;

    /** Immutable. */
    private final Parker parker;
    /** Immutable: what waiters are blocked on, for dumps (the Mutex, WaitGroup...). */
    private final Object owner;

    public Sema(Parker parker, Object owner) {
        this.parker = parker;
        this.owner = owner;
    }

    public Parker parker() {
        return parker;
    }

    /** Go: sema.go cansemacquire. */
    public boolean cansemacquire() {
        for (; ; ) {
            int v = count;
            if (v == 0) {
                return false;
            }
            if (COUNT.compareAndSet(this, v, v - 1)) {
                return true;
            }
        }
    }

    /** Waiters blocked (racy), for dumps and tests. */
    public int nwait() {
        return nwait;
    }

    /** Available units (racy), for tests. */
    public int count() {
        return count;
    }

    private void lock() {
        SpinLock.lock(LOCK, this);
    }

    private void unlock() {
        SpinLock.unlock(LOCK, this);
    }

    private static final ParkCommit<Sema> SEMA_COMMIT = s -> {
        s.unlock();
        return true;
    };

    /**
     * Waits until a unit is available and takes it. A wait this long is a block event whose stack
     * starts {@code skipframes} frames above the caller (Go's skipframes: Mutex.lockSlow passes 1,
     * so that the stack starts at Mutex.lock, the method the user called, as Go's starts at
     * sync.(*Mutex).Lock).
     *
     * <p>Go: sema.go semacquire1
     */
    public void semacquire(boolean lifo, WaitReason reason, int skipframes) {
        // Easy case.
        if (cansemacquire()) {
            return;
        }
        // Harder case: count ourselves as a waiter, try once more, queue, sleep; on wake either the
        // releaser handed us the unit (ticket) or we race for it again.
        Object gp = parker.current();
        if (gp == null) {
            throw new IllegalStateException(
                    "gort: " + reason.go() + " would block outside a goroutine (use Go.run / Go.go)");
        }
        Sudog s = parker.acquireSudog(gp);
        s.g = gp;
        s.elem = null;
        // The profiles (Go's semaBlockProfile and semaMutexProfile flags): every sync wait is a
        // block event; the Mutex and RWMutex waits are also charged to the unlock that ends them.
        long t0 = 0;
        s.setReleasetime(0);
        s.setAcquiretime(0);
        if (parker.blockProfileRate(gp) > 0) {
            t0 = parker.nanotime();
            s.setReleasetime(-1);
        }
        if (reason != WaitReason.SYNC_WAITGROUP_WAIT && parker.mutexProfileRate(gp) > 0) {
            if (t0 == 0) {
                t0 = parker.nanotime();
            }
            s.setAcquiretime(t0);
        }
        lock();
        try {
            for (; ; ) {
                // Add ourselves to nwait to disable the "easy case" in semrelease.
                NWAIT.getAndAdd(this, 1);
                // Check cansemacquire to avoid a missed wakeup.
                if (cansemacquire()) {
                    NWAIT.getAndAdd(this, -1);
                    unlock();
                    break;
                }
                // Any semrelease after the cansemacquire knows we're waiting (we set nwait above).
                s.ticket = 0;
                queue(s, lifo);
                parker.park(gp, SEMA_COMMIT, this, reason, owner);
                if (s.ticket != 0 || cansemacquire()) {
                    break;
                }
                lock();
            }
            if (s.releasetime() > 0) {
                parker.blockevent(s.releasetime() - t0, 1 + skipframes); // + this frame
            }
            s.release();
        } catch (GortFatalError e) {
            throw e;
        } catch (Throwable t) {
            lockWord = t instanceof StackOverflowError ? SpinLock.BROKEN_STACK : SpinLock.BROKEN; // no call: SpinLock
            throw SpinLock.died(this, t, "semacquire");
        }
    }

    /**
     * Adds a unit and wakes the first waiter, if any; with {@code handoff}, passes the unit
     * straight to it and yields so that it runs next. A mutex event it records has the stack from
     * {@code skipframes} frames above the caller (Go's skipframes: Mutex.unlockSlow passes 1).
     *
     * <p>Go: sema.go semrelease1
     */
    public void semrelease(boolean handoff, int skipframes) {
        // From the add on, the unit is out and a waiter may be owed a wake-up: whatever escapes is
        // fatal (SpinLock), lock held or not.
        try {
            semrelease1(handoff, skipframes);
        } catch (GortFatalError e) {
            throw e;
        } catch (Throwable t) {
            lockWord = t instanceof StackOverflowError ? SpinLock.BROKEN_STACK : SpinLock.BROKEN; // no call: SpinLock
            throw SpinLock.died(this, t, "semrelease");
        }
    }

    private void semrelease1(boolean handoff, int skipframes) {
        COUNT.getAndAdd(this, 1);
        // Easy case: no waiters? This check must happen after the add above, to avoid a missed
        // wakeup (see the loop in semacquire).
        if (nwait == 0) {
            return;
        }
        // Harder case: search for a waiter and wake it.
        lock();
        if (nwait == 0) {
            // The count is already consumed by another goroutine, so no need to wake up another.
            unlock();
            return;
        }
        Sudog s = dequeue();
        long t0 = 0;
        long tailtime = 0;
        int waiters = 0;
        if (s != null) {
            NWAIT.getAndAdd(this, -1);
            if (s.acquiretime() != 0) {
                t0 = parker.nanotime();
            }
            waiters = nqueued;
            if (waiters != 0) {
                // Go 1.22's dequeue: the new head's and the tail's waits start again now (0: not
                // profiled, as s), because this unlock charges the waits of everyone still queued
                // up to now; a later unlock charges only what they wait from here.
                tailtime = tail.acquiretime();
                head.setAcquiretime(t0);
                tail.setAcquiretime(t0);
            }
        }
        unlock();
        if (s != null) { // May be slow or even yield, so unlock first.
            long acquiretime = s.acquiretime();
            if (acquiretime != 0) {
                // Charge the contention this (delayed) unlock caused: the woken waiter's wait, and
                // for the N still queued behind it the average of the head's and the tail's
                // waits, N times (O(1), as Go 1.22; a tail not profiled counts as the head).
                long dt0 = t0 - acquiretime;
                long dt = dt0;
                if (waiters != 0) {
                    long dtail = tailtime != 0 ? t0 - tailtime : dt0;
                    dt += (dtail + dt0) / 2 * waiters;
                }
                parker.mutexevent(dt, 2 + skipframes); // + this frame and semrelease's
            }
            if (s.ticket != 0) {
                throw Fatal.fatal(Scheduler.current(), "corrupted semaphore ticket");
            }
            boolean handedOff = handoff && cansemacquire();
            if (handedOff) {
                s.ticket = 1;
            }
            if (s.releasetime() != 0) { // Go: readyWithTime
                s.setReleasetime(parker.nanotime());
            }
            parker.ready(s.g); // s belongs to the waiter from here on
            if (handedOff) {
                // Direct G handoff: ready puts the waiter in runnext, so it runs now instead of
                // waiting for our slice to end; we go to the local tail.
                parker.goyield();
            }
        }
    }

    /** Lock held. Go: (*semaRoot).queue. */
    private void queue(Sudog s, boolean lifo) {
        s.next = null;
        s.prev = null;
        nqueued++;
        if (head == null) {
            head = s;
            tail = s;
        } else if (lifo) {
            // Substitute s in the first place of the queue; the head's acquire time, the oldest
            // wait of the queue (the mutex profile's charges count from it), stays the head's.
            s.setAcquiretime(head.acquiretime());
            s.next = head;
            head.prev = s;
            head = s;
        } else {
            // Add s to the end of the wait list.
            s.prev = tail;
            tail.next = s;
            tail = s;
        }
    }

    /** Lock held. Go: (*semaRoot).dequeue. */
    private Sudog dequeue() {
        Sudog s = head;
        if (s == null) {
            return null;
        }
        nqueued--;
        head = s.next;
        if (head == null) {
            tail = null;
        } else {
            head.prev = null;
        }
        s.next = null;
        return s;
    }

    /** {@code G3, G4} or {@code none}: the queued waiters, racy, for dumps. */
    public String waiterNames() {
        StringBuilder sb = new StringBuilder();
        int n = 0;
        for (Sudog s = head; s != null && n < 16; s = s.next, n++) {
            if (n > 0) {
                sb.append(", ");
            }
            Object g = s.g;
            sb.append(g instanceof dev.gort.runtime.G gg ? "G" + gg.goid : String.valueOf(g));
        }
        return n == 0 ? "none" : sb.toString();
    }
}
