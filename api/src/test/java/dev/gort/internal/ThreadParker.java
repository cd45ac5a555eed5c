package dev.gort.internal;

import dev.gort.runtime.WaitReason;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

/**
 * The test binding of {@link Parker}: waiters are real threads that block with
 * {@link LockSupport#park}, which lincheck's model checker can explore (it cannot explore
 * continuation switches). A fresh {@link Waiter} stands for the caller in each blocking
 * operation; its {@code readied} permit makes a ready that races ahead of the park harmless, as
 * the production commit-after-yield ordering does.
 */
public final class ThreadParker implements Parker {
    public static final ThreadParker INSTANCE = new ThreadParker();

    /** A blocked thread: Go's g for the parker's purposes. */
    public static final class Waiter {
        final Thread thread = Thread.currentThread();
        /** The permit: set by ready, consumed by park. */
        volatile boolean readied;

        volatile Object param;
        final AtomicInteger selectDone = new AtomicInteger();

        @Override
        public String toString() {
            return "T(" + thread.getName() + ")";
        }
    }

    @Override
    public Object current() {
        return new Waiter();
    }

    @Override
    public Sudog acquireSudog(Object w) {
        return new Sudog();
    }

    @Override
    public <L> void park(Object w, ParkCommit<L> commit, L lock, WaitReason reason, Object waitingOn) {
        Waiter me = (Waiter) w;
        if (commit == null) {
            for (; ; ) {
                LockSupport.park(waitingOn); // forever: nil channel, select {}
            }
        }
        if (!commit.commit(lock)) {
            return;
        }
        while (!me.readied) {
            LockSupport.park(waitingOn);
        }
        me.readied = false; // consume the permit (semacquire may park again with the same waiter)
    }

    @Override
    public void ready(Object w) {
        Waiter t = (Waiter) w;
        t.readied = true;
        LockSupport.unpark(t.thread);
    }

    @Override
    public Object param(Object w) {
        return ((Waiter) w).param;
    }

    @Override
    public void setParam(Object w, Object v) {
        ((Waiter) w).param = v;
    }

    @Override
    public boolean casSelectDone(Object w) {
        return ((Waiter) w).selectDone.compareAndSet(0, 1);
    }

    @Override
    public void clearSelectDone(Object w) {
        ((Waiter) w).selectDone.set(0);
    }

    /**
     * Deterministic, so that lincheck can replay an interleaving (poll order [n-1, 0, 1, ...]);
     * the uniformity of the shuffle is tested on the real runtime (TestSelectFairness).
     */
    @Override
    public int cheaprandn(int n) {
        return 0;
    }

    @Override
    public boolean canSpin(int iter) {
        return false;
    }

    @Override
    public void goyield() {
        Thread.yield();
    }

    @Override
    public long nanotime() {
        return 0; // no starvation mode under the model checker (time is not explored)
    }
}
