package dev.gort.runtime;

import java.util.ArrayDeque;

/**
 * The tests' counting semaphore: waiters park as goroutines (FIFO) straight on gopark/goready, so
 * core tests need no channel. Shared with the agent's and api's tests through runtime's test jar.
 * A park that finds a permit after taking the lock is cancelled and retried, as Go's semacquire.
 */
public final class GoSema implements Describable {
    private final Object lock = new Object();
    private final ArrayDeque<G> waiters = new ArrayDeque<>();
    private final String name;
    /** How its waiters park (dumps and traces show it); SEMACQUIRE unless a test chooses. */
    private final WaitReason reason;

    private int count;

    public GoSema(int initial) {
        this("sema", initial);
    }

    /** {@code name} shows in goroutine dumps and traces ("waiting on sema NAME ..."). */
    public GoSema(String name, int initial) {
        this(name, initial, WaitReason.SEMACQUIRE);
    }

    /** A semaphore whose waiters park with {@code reason} (a test's stand-in for a channel, a mutex...). */
    public GoSema(String name, int initial, WaitReason reason) {
        this.name = name;
        this.count = initial;
        this.reason = reason;
    }

    public void acquire() {
        for (; ; ) {
            synchronized (lock) {
                if (count > 0) {
                    count--;
                    return;
                }
            }
            Scheduler.gopark(
                    (G gp, GoSema s) -> {
                        synchronized (s.lock) {
                            if (s.count > 0) {
                                return false; // cancel the park; retry
                            }
                            s.waiters.add(gp);
                            return true;
                        }
                    },
                    this,
                    reason,
                    this);
        }
    }

    /** Non-blocking acquire: Go's select with default on a buffered channel. */
    public boolean tryAcquire() {
        synchronized (lock) {
            if (count > 0) {
                count--;
                return true;
            }
            return false;
        }
    }

    public void release() {
        G w;
        synchronized (lock) {
            count++;
            w = waiters.poll();
        }
        if (w != null) {
            w.scheduler().goready(w);
        }
    }

    @Override
    public String describe() {
        synchronized (lock) {
            return "sema " + name + " (count " + count + ", " + waiters.size() + " waiting)";
        }
    }
}
