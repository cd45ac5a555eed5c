package dev.gort.runtime;

import dev.gort.runtime.trace.Tracer;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * The global run queue: a linked gQueue through {@code g.schedlink}, guarded by {@code sched.lock}.
 * The size is written under the lock and read lock-free (acquire) for the cheap emptiness checks
 * that findRunnable makes before taking the lock.
 *
 * <p>Go: runtime2.go schedt.runq (gQueue), proc.go globrunqput, globrunqputhead, globrunqputbatch,
 * globrunqget, globrunqgetbatch
 */
final class GlobalRunQueue {
    private static final VarHandle SIZE;

    static {
        try {
            SIZE = MethodHandles.lookup().findVarHandle(GlobalRunQueue.class, "size", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** The lock that guards this queue: {@code sched.lock}. */
    final Object lock;
    /** Under lock, plain. */
    private G head, tail;
    /** Written under lock (setRelease), read anywhere (getAcquire). */
    @SuppressWarnings("unused")
    private int size;

    /** Set once by the Scheduler constructor before any M starts (thread start publishes it); plain. */
    Tracer trace = Tracer.NOOP;

    /** Counters (under lock, plain): batches taken, Gs spilled into us in batches. */
    long batchesTaken, batchesPut;

    GlobalRunQueue(Object lock) {
        this.lock = lock;
    }

    int sizeAcquire() {
        return (int) SIZE.getAcquire(this);
    }

    boolean empty() {
        return sizeAcquire() == 0;
    }

    private void setSizeRelease(int n) {
        SIZE.setRelease(this, n);
    }

    /**
     * Checked with assertions (-ea, as under Surefire) or -Dgort.debug.checks: Thread.holdsLock is a
     * native call that cost ~16 % of a Gosched switch when it was always on. Go's assertLockHeld is
     * likewise compiled out unless the runtime is built with static lock ranking.
     */
    private static final boolean CHECK_LOCK =
            GlobalRunQueue.class.desiredAssertionStatus() || Boolean.getBoolean("gort.debug.checks");

    private void assertLockHeld() {
        if (CHECK_LOCK && !Thread.holdsLock(lock)) {
            throw Fatal.fatal("globrunq: sched.lock not held");
        }
    }

    /** Tail put, lock held. Go: globrunqput. */
    void globrunqput(G gp) {
        assertLockHeld();
        gp.schedlink = null;
        if (tail == null) {
            head = gp;
        } else {
            tail.schedlink = gp;
        }
        tail = gp;
        setSizeRelease(sizeAcquire() + 1);
    }

    /** Head put, lock held. Go: globrunqputhead. */
    void globrunqputhead(G gp) {
        assertLockHeld();
        gp.schedlink = head;
        head = gp;
        if (tail == null) {
            tail = gp;
        }
        setSizeRelease(sizeAcquire() + 1);
    }

    /** Appends a linked batch, lock held. Go: globrunqputbatch. */
    void globrunqputbatch(G bhead, G btail, int n) {
        assertLockHeld();
        btail.schedlink = null;
        if (tail == null) {
            head = bhead;
        } else {
            tail.schedlink = bhead;
        }
        tail = btail;
        setSizeRelease(sizeAcquire() + n);
        batchesPut++;
    }

    /** Takes the lock and appends a batch (runqputslow). */
    void putBatch(G bhead, G btail, int n) {
        synchronized (lock) {
            globrunqputbatch(bhead, btail, n);
        }
    }

    /**
     * Takes {@code gp} out of the queue wherever it is, lock held; false if it is not there (gort:
     * a goroutine waiting in place for a P when the runtime exits: Syscalls.waitForP).
     */
    boolean remove(G gp) {
        assertLockHeld();
        G prev = null;
        for (G g = head; g != null; prev = g, g = g.schedlink) {
            if (g == gp) {
                if (prev == null) {
                    head = g.schedlink;
                } else {
                    prev.schedlink = g.schedlink;
                }
                if (tail == g) {
                    tail = prev;
                }
                g.schedlink = null;
                setSizeRelease(sizeAcquire() - 1);
                return true;
            }
        }
        return false;
    }

    /** One G from the head, lock held. Go: globrunqget. */
    G globrunqget() {
        assertLockHeld();
        G gp = head;
        if (gp == null) {
            return null;
        }
        head = gp.schedlink;
        if (head == null) {
            tail = null;
        }
        gp.schedlink = null;
        setSizeRelease(sizeAcquire() - 1);
        return gp;
    }

    /**
     * Takes {@code min(n, size, size/gomaxprocs+1)} Gs, lock held: returns the first and moves the
     * rest into {@code pp}'s ring (whatever does not fit goes back to the global head... in Go it
     * cannot overflow, as the ring had room for 128 when empty). Go: globrunqgetbatch + runqputbatch.
     */
    G globrunqgetbatch(int n, int gomaxprocs, RunQueue into) {
        assertLockHeld();
        int sz = sizeAcquire();
        if (sz == 0) {
            return null;
        }
        n = Math.min(n, sz);
        n = Math.min(n, sz / gomaxprocs + 1);
        G gp = globrunqget();
        n--;
        if (n == 0) {
            if (trace.on) trace.globalBatch(into.pp, gp, null, 1);
            batchesTaken++;
            return gp;
        }
        G bh = head;
        G bt = bh;
        for (int i = 1; i < n; i++) {
            bt = bt.schedlink;
        }
        head = bt.schedlink;
        if (head == null) {
            tail = null;
        }
        bt.schedlink = null;
        setSizeRelease(sizeAcquire() - n);
        if (trace.on) trace.globalBatch(into.pp, gp, bh, n + 1);
        G rest = into.runqputbatch(bh, n);
        if (rest != null) {
            if (trace.on) trace.runqSpill(into.pp, rest);
            // Did not fit: back to the global head, order kept.
            G last = rest;
            int k = 1;
            while (last.schedlink != null) {
                last = last.schedlink;
                k++;
            }
            last.schedlink = head;
            head = rest;
            if (tail == null) {
                tail = last;
            }
            setSizeRelease(sizeAcquire() + k);
        }
        batchesTaken++;
        return gp;
    }

    /** Number of Gs reachable from head (debug checks), lock held. */
    int countLinked() {
        assertLockHeld();
        int n = 0;
        for (G g = head; g != null; g = g.schedlink) {
            n++;
        }
        return n;
    }

    /** Snapshot for observers, lock held. */
    G[] snapshot() {
        assertLockHeld();
        G[] out = new G[sizeAcquire()];
        int i = 0;
        for (G g = head; g != null && i < out.length; g = g.schedlink) {
            out[i++] = g;
        }
        return out;
    }
}
