package dev.gort.sync.semaphore;

import dev.gort.Chan;
import dev.gort.PanicError;
import dev.gort.Select;
import dev.gort.context.Context;
import dev.gort.context.ContextError;
import dev.gort.sync.Mutex;

/**
 * golang.org/x/sync's {@code semaphore.Weighted}: bounds concurrent access to a resource; callers
 * acquire it with a weight. Waiters are served first in, first out: a large request at the head
 * of the queue is not overtaken by smaller ones that would fit (a semaphore of N used as a
 * read-write lock does not starve its writer). Built as Go's: a {@link Mutex}, a queue of waiters
 * each with its own {@code ready} channel, closed when the waiter has been given its tokens, and
 * a select on ctx's done channel.
 *
 * <pre>{@code
 * Weighted sem = Weighted.newWeighted(4);
 * sem.acquire(ctx, 1);                 // if err := sem.Acquire(ctx, 1); err != nil { return err }
 * try { work(); } finally { sem.release(1); }
 * }</pre>
 *
 * <p>Errors: Go's {@code Acquire} returns {@code ctx.Err()}; {@link #acquire} throws it (the
 * {@link ContextError} itself, {@link Context#CANCELED} or {@link Context#DEADLINE_EXCEEDED}, so
 * {@code e == Context.CANCELED} holds), as {@code Net.dialContext} throws its ctx's error:
 * unchecked, so that inside an errgroup task an unhandled one is the task's error, Go's {@code
 * return err}.
 *
 * <p>Go: golang.org/x/sync semaphore/semaphore.go Weighted
 */
public final class Weighted {
    /** A blocked Acquire. Go: waiter (the list.Element's links inlined). */
    private static final class Waiter {
        /** Immutable. */
        final long n;
        /** Closed when the semaphore gave this waiter its n tokens. Immutable. */
        final Chan<Void> ready = Chan.make();
        /** Links in the queue; guarded by mu. */
        Waiter prev;

        Waiter next;

        Waiter(long n) {
            this.n = n;
        }
    }

    /** Immutable. Go: s.size. */
    private final long size;
    /** Tokens held; guarded by mu. Go: s.cur. */
    private long cur;
    /** Go: s.mu. */
    private final Mutex mu = new Mutex();
    /** The waiters, oldest first; guarded by mu. Go: s.waiters (a container/list). */
    private Waiter head;

    private Waiter tail;

    /**
     * A weighted semaphore with the given maximum combined weight for concurrent access. Go:
     * semaphore.NewWeighted.
     */
    public Weighted(long n) {
        this.size = n;
    }

    /** Go's name for {@link #Weighted(long)}. Go: semaphore.NewWeighted. */
    public static Weighted newWeighted(long n) {
        return new Weighted(n);
    }

    /**
     * Acquires the semaphore with a weight of n, blocking the goroutine until the tokens are
     * available or ctx is done. On failure it throws {@code ctx.err()} and leaves the semaphore
     * unchanged. A ctx already done fails even when the tokens are free. A request larger than
     * the semaphore's size does not queue (it would block every later one): it waits for ctx
     * alone, for ever under a ctx that is never done, as Go's.
     *
     * <p>Go: (*Weighted).Acquire
     *
     * @throws ContextError ctx's error, when ctx is done before the tokens were acquired
     */
    public void acquire(Context ctx, long n) {
        Chan<Void> done = ctx.done();
        mu.lock();
        if (isClosed(done)) {
            // ctx becoming done has "happened before" acquiring the semaphore, whether it became
            // done before the call began or while we were waiting for the mutex: fail even if the
            // mutex came without blocking.
            mu.unlock();
            throw err(ctx);
        }
        if (size - cur >= n && head == null) {
            // Since mu is held and nothing was synchronized with since done was checked, ctx
            // becoming done now "happened concurrently" with this call: acquiring is fine.
            cur += n;
            mu.unlock();
            return;
        }
        if (n > size) {
            // Don't make other Acquire calls block on one that's doomed to fail.
            mu.unlock();
            done.recv();
            throw err(ctx);
        }
        Waiter w = new Waiter(n);
        pushBack(w);
        mu.unlock();

        Select s = new Select(2);
        int doneCase = s.addRecv(done);
        s.addRecv(w.ready);
        if (s.await() == doneCase) {
            mu.lock();
            try {
                if (isClosed(w.ready)) {
                    // Acquired the semaphore after we were canceled: pretend we didn't and put the
                    // tokens back.
                    cur -= n;
                    notifyWaiters();
                } else {
                    boolean isFront = head == w;
                    remove(w);
                    // At the front with tokens left over: the waiters behind may fit now.
                    if (isFront && size > cur) {
                        notifyWaiters();
                    }
                }
            } finally {
                mu.unlock();
            }
            throw err(ctx);
        }
        // Acquired: check that ctx isn't done already (the done channel, not ctx.err(), which may
        // walk the whole chain of parents).
        if (isClosed(done)) {
            release(n);
            throw err(ctx);
        }
    }

    /**
     * Acquires the semaphore with a weight of n without blocking: true on success; false, with the
     * semaphore unchanged, when the tokens are not free or others wait already.
     *
     * <p>Go: (*Weighted).TryAcquire
     */
    public boolean tryAcquire(long n) {
        mu.lock();
        boolean success = size - cur >= n && head == null;
        if (success) {
            cur += n;
        }
        mu.unlock();
        return success;
    }

    /**
     * Releases the semaphore with a weight of n, handing the tokens to the waiters at the head of
     * the queue that fit. Releasing more than is held panics {@code semaphore: released more than
     * held} ({@link PanicError}) and leaves the count negative, as Go's.
     *
     * <p>Go: (*Weighted).Release
     */
    public void release(long n) {
        mu.lock();
        cur -= n;
        if (cur < 0) {
            mu.unlock();
            throw new PanicError("semaphore: released more than held");
        }
        notifyWaiters();
        mu.unlock();
    }

    /**
     * Gives tokens to the waiters at the head of the queue while the head one fits, and stops at
     * the first that does not: going on to a smaller request behind it could starve a large one
     * (a writer taking all N tokens of a semaphore used as a read-write lock, with a reader always
     * fitting). Under mu.
     *
     * <p>Go: (*Weighted).notifyWaiters
     */
    private void notifyWaiters() {
        for (Waiter w = head; w != null; w = head) {
            if (size - cur < w.n) {
                break; // not enough tokens for the next waiter
            }
            cur += w.n;
            remove(w);
            w.ready.close();
        }
    }

    /** {@code select { case <-c: return true; default: return false }} on a channel only ever closed. */
    private static boolean isClosed(Chan<Void> c) {
        return c.tryRecv() != null;
    }

    /** ctx.err() once its done channel is closed; a Context whose err is then null breaks its contract. */
    private static ContextError err(Context ctx) {
        ContextError e = ctx.err();
        if (e == null) {
            throw new IllegalStateException("semaphore: " + ctx + ": done() is closed but err() is null");
        }
        return e;
    }

    /** Under mu. Go: list.PushBack. */
    private void pushBack(Waiter w) {
        w.prev = tail;
        if (tail == null) {
            head = w;
        } else {
            tail.next = w;
        }
        tail = w;
    }

    /** Under mu; w is queued. Go: list.Remove. */
    private void remove(Waiter w) {
        if (w.prev == null) {
            head = w.next;
        } else {
            w.prev.next = w.next;
        }
        if (w.next == null) {
            tail = w.prev;
        } else {
            w.next.prev = w.prev;
        }
        w.prev = null;
        w.next = null;
    }

    @Override
    public String toString() {
        return "semaphore.Weighted@" + Integer.toHexString(System.identityHashCode(this)) + "(size " + size + ")";
    }
}
