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
 * Go's {@code sync.RWMutex}: any number of readers or one writer. A pending writer blocks new
 * readers (so a writer is not starved); readers that arrived before it finish first. Not reentrant
 * for reading either: a goroutine holding a read lock that read-locks again may deadlock if a
 * writer arrives in between (Go's rule).
 *
 * <p>{@code readerCount} is the number of readers, minus {@code 1 << 30} while a writer is pending
 * or active; {@code readerWait} is the number of departing readers the writer still waits for.
 *
 * <p>Go: sync/rwmutex.go
 */
public class RWMutex implements Locker, WaitTarget {
    /** Go: rwmutexMaxReaders. */
    static final int RWMUTEX_MAX_READERS = 1 << 30;

    private static final VarHandle READER_COUNT;
    private static final VarHandle READER_WAIT;

    static {
        try {
            MethodHandles.Lookup l = MethodHandles.lookup();
            READER_COUNT = l.findVarHandle(RWMutex.class, "readerCount", int.class);
            READER_WAIT = l.findVarHandle(RWMutex.class, "readerWait", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** Held if there are pending writers. Go: rw.w. */
    private final Mutex w;
    /** Semaphore for writers to wait for completing readers. */
    private final Sema writerSem;
    /** Semaphore for readers to wait for completing writers. */
    private final Sema readerSem;
    /** Number of pending readers (any goroutine, getAndAdd / CAS; volatile). */
    private volatile int readerCount;
    /** Number of departing readers (any goroutine, getAndAdd; volatile). */
    private volatile int readerWait;

    public RWMutex() {
        this(GoParker.INSTANCE);
    }

    RWMutex(Parker parker) {
        w = new Mutex(parker);
        writerSem = new Sema(parker, this);
        readerSem = new Sema(parker, this);
    }

    /**
     * Locks for reading; blocks while a writer holds or waits for the lock.
     *
     * <p>Go: (*RWMutex).RLock
     */
    public void rlock() {
        if ((int) READER_COUNT.getAndAdd(this, 1) + 1 < 0) {
            // A writer is pending, wait for it.
            readerSem.semacquire(false, WaitReason.SYNC_RWMUTEX_RLOCK, 0);
        }
    }

    /** Go: (*RWMutex).TryRLock. */
    public boolean tryRLock() {
        for (; ; ) {
            int c = readerCount;
            if (c < 0) {
                return false;
            }
            if (READER_COUNT.compareAndSet(this, c, c + 1)) {
                return true;
            }
        }
    }

    /**
     * Undoes one rlock; a fatal error if the mutex is not read-locked.
     *
     * <p>Go: (*RWMutex).RUnlock
     */
    public void runlock() {
        int r = (int) READER_COUNT.getAndAdd(this, -1) - 1;
        if (r < 0) {
            // Outlined slow path to allow the fast path to be inlined.
            rUnlockSlow(r);
        }
    }

    private void rUnlockSlow(int r) {
        if (r + 1 == 0 || r + 1 == -RWMUTEX_MAX_READERS) {
            throw Fatal.userFatal(Scheduler.current(), "sync: RUnlock of unlocked RWMutex");
        }
        // A writer is pending.
        if ((int) READER_WAIT.getAndAdd(this, -1) - 1 == 0) {
            // The last reader unblocks the writer.
            writerSem.semrelease(false, 1); // + rUnlockSlow
        }
    }

    /**
     * Locks for writing: waits for other writers, then for the active readers to leave.
     *
     * <p>Go: (*RWMutex).Lock
     */
    @Override
    public void lock() {
        // First, resolve competition with other writers.
        w.lock();
        // Announce to readers there is a pending writer.
        int r = (int) READER_COUNT.getAndAdd(this, -RWMUTEX_MAX_READERS);
        // Wait for active readers.
        if (r != 0 && (int) READER_WAIT.getAndAdd(this, r) + r != 0) {
            writerSem.semacquire(false, WaitReason.SYNC_RWMUTEX_LOCK, 0);
        }
    }

    /** Go: (*RWMutex).TryLock. */
    public boolean tryLock() {
        if (!w.tryLock()) {
            return false;
        }
        if (!READER_COUNT.compareAndSet(this, 0, -RWMUTEX_MAX_READERS)) {
            w.unlock();
            return false;
        }
        return true;
    }

    /**
     * Unlocks for writing and lets the readers that queued meanwhile in.
     *
     * <p>Go: (*RWMutex).Unlock
     */
    @Override
    public void unlock() {
        // Announce to readers there is no active writer.
        int r = (int) READER_COUNT.getAndAdd(this, RWMUTEX_MAX_READERS) + RWMUTEX_MAX_READERS;
        if (r >= RWMUTEX_MAX_READERS) {
            throw Fatal.userFatal(Scheduler.current(), "sync: Unlock of unlocked RWMutex");
        }
        // Unblock blocked readers, if any.
        for (int i = 0; i < r; i++) {
            readerSem.semrelease(false, 0);
        }
        // Allow other writers to proceed.
        w.unlock();
    }

    /** A Locker whose lock/unlock are rlock/runlock. Go: (*RWMutex).RLocker. */
    public Locker rlocker() {
        return new Locker() {
            @Override
            public void lock() {
                rlock();
            }

            @Override
            public void unlock() {
                runlock();
            }
        };
    }

    @Override
    public String toString() {
        return "sync.RWMutex@" + Integer.toHexString(System.identityHashCode(this));
    }

    /** {@code sync.RWMutex@... (readers: 2, writer pending; ...)}, racy. */
    @Override
    public String describe() {
        int c = readerCount;
        StringBuilder sb = new StringBuilder(toString()).append(" (");
        if (c < 0) {
            sb.append("writer pending or active, readers: ").append(c + RWMUTEX_MAX_READERS);
        } else {
            sb.append("readers: ").append(c);
        }
        sb.append("; waiting writer: ").append(writerSem.waiterNames());
        sb.append("; waiting readers: ").append(readerSem.waiterNames());
        return sb.append(')').toString();
    }

    /** The writer: the goroutine holding the write lock, or waiting for the readers to leave (racy). */
    @Override
    public G waitTargetHolder() {
        return w.waitTargetHolder();
    }

    /**
     * A reader waits for the writer ({@link #waitTargetHolder()}); a writer parked in {@link #lock}
     * waits for the readers that hold read locks, which nobody tracks (Go's RWMutex counts them,
     * it does not name them; one may even have ended while holding its lock): null, never the
     * writer itself, which holds {@code w} but cannot release its own wait.
     */
    @Override
    public G waitTargetHolder(G waiter) {
        if (waiter != null && waiter.waitReason() == WaitReason.SYNC_RWMUTEX_LOCK) {
            return null;
        }
        return w.waitTargetHolder();
    }
}
