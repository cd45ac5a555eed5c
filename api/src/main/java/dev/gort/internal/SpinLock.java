package dev.gort.internal;

import dev.gort.runtime.Fatal;
import dev.gort.runtime.G;
import dev.gort.runtime.GortFatalError;
import dev.gort.runtime.Scheduler;
import java.lang.invoke.VarHandle;

/**
 * The one-word lock of channels, semaphores and Cond's notify list (Go's runtime {@code mutex}):
 * an {@code int} field of the owner, {@link #FREE} / {@link #HELD}, taken by CAS and dropped with a
 * release store. It is never held across a continuation yield: a parking goroutine's M drops it in
 * the park commit, after the yield. The field stays in the owner (no extra object per channel); the
 * owner passes its VarHandle, a constant once {@link #lock} is inlined into the owner's method.
 *
 * <h2>A section that dies</h2>
 * A {@code StackOverflowError} (or an {@code OutOfMemoryError}) can be thrown at any call inside
 * a locked section, leaving the queue and buffer half-updated, a waiter dequeued but never
 * readied. Go's runtime treats a stack overflow there as {@code fatal error: stack overflow}, and so
 * does gort: each owner catches what escapes its section (its own outcomes, a Go panic such as
 * {@code send on closed channel}, misuse, or a fatal error, are thrown with the lock released and
 * pass through a multi-catch) and, before any call (a call is where a second overflow would
 * strike), stores {@link #BROKEN} (or {@link #BROKEN_STACK}) into its lock word with a plain store
 * to the {@code volatile} field; then {@link #died} prints and raises the fatal error. If
 * even that overflows, the word stays BROKEN, and the next goroutine that wants the lock raises
 * the fatal error from its own, deeper stack ({@link #lockSlow}), instead of spinning forever. The
 * VarHandle accesses keep their explicit modes; the field is volatile only for that one store.
 *
 * <p>Go: lock_futex.go lock2/unlock2 (spin, then yield the CPU; gort never sleeps in the kernel
 * here); stack.go newstack's "fatal error: stack overflow"
 */
public final class SpinLock {
    private SpinLock() {}

    /** The lock word: free. */
    public static final int FREE = 0;
    /** The lock word: held. */
    public static final int HELD = 1;
    /** The lock word: its holder died inside the section; the state behind it is unknown. */
    public static final int BROKEN = 2;
    /** The lock word: as {@link #BROKEN}, of a StackOverflowError. */
    public static final int BROKEN_STACK = 3;

    /** Takes the lock word of {@code owner}. */
    public static void lock(VarHandle word, Object owner) {
        if (!word.compareAndSet(owner, FREE, HELD)) {
            lockSlow(word, owner);
        }
    }

    private static void lockSlow(VarHandle word, Object owner) {
        int spins = 0;
        for (; ; ) {
            int w = (int) word.getOpaque(owner);
            if (w == FREE && word.compareAndSet(owner, FREE, HELD)) {
                return;
            }
            if (w >= BROKEN) {
                throw broken(owner, w);
            }
            if (++spins < 100) {
                Thread.onSpinWait();
            } else {
                // The holder may be a carrier the OS descheduled; let it run.
                Thread.yield();
            }
        }
    }

    /** Drops the lock word of {@code owner} (release store). */
    public static void unlock(VarHandle word, Object owner) {
        word.setRelease(owner, FREE);
    }

    /**
     * The section of {@code where} on {@code owner} died with {@code t}; the caller has already
     * stored {@link #BROKEN} into the owner's lock word. Prints what happened, then raises Go's
     * fatal error ({@code stack overflow} for a StackOverflowError) with a goroutine dump. Returns
     * only under {@code -Dgort.fatal=throw}, the error for the caller to throw.
     */
    public static GortFatalError died(Object owner, Throwable t, String where) {
        // StringBuilder, not "+": an invokedynamic concatenation linked for the first time this
        // deep would fail (BootstrapMethodError) and stay failed for the rest of the JVM's life.
        G gp = Scheduler.currentG();
        StringBuilder sb = new StringBuilder("runtime: ");
        sb.append(gp == null ? Thread.currentThread().getName() : gp.toString());
        sb.append(": ")
                .append(t)
                .append(" inside ")
                .append(where)
                .append(" on ")
                .append(owner);
        sb.append(": its lock is left held");
        System.err.println(sb);
        String msg = t instanceof StackOverflowError
                ? "stack overflow"
                : new StringBuilder(where).append(": ").append(t).toString();
        return Fatal.fatal(Scheduler.current(), msg);
    }

    /**
     * A goroutine wants a lock whose holder died inside its section and could not even report it
     * (see {@link #died}): report it now, from this goroutine's stack.
     */
    private static GortFatalError broken(Object owner, int w) {
        StringBuilder sb = new StringBuilder("runtime: the lock of ").append(owner);
        sb.append(" was left held by a goroutine that died inside its critical section");
        if (w == BROKEN_STACK) {
            sb.append(": its stack overflowed");
        }
        System.err.println(sb);
        String msg = w == BROKEN_STACK
                ? "stack overflow"
                : new StringBuilder("lock: ")
                        .append(owner)
                        .append(": holder died")
                        .toString();
        return Fatal.fatal(Scheduler.current(), msg);
    }
}
