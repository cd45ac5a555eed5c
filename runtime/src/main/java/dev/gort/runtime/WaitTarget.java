package dev.gort.runtime;

/**
 * A {@link Describable} that goroutines wait on and that one goroutine can <i>hold</i> (a locked
 * mutex), so that fatal-error dumps can follow wait-for chains ({@code G6 -> sync.Mutex@... -> G7
 * -> chan#4}) in gort's wait-for graph ({@link Traceback#waitForGraph}).
 *
 * <p>Called racily, from the thread reporting the error, while the waiters are parked: no locks.
 */
public interface WaitTarget extends Describable {
    /** The goroutine that holds this object and so could release its waiters, or null. */
    default G waitTargetHolder() {
        return null;
    }

    /**
     * The goroutine that could release {@code waiter}, which waits on this object, or null when no
     * single tracked goroutine can. Differs from {@link #waitTargetHolder()} for objects whose
     * waiters wait for different things: a writer of an {@code RWMutex} waits for the readers (not
     * tracked), a reader for the writer. Must not name {@code waiter} unless it really holds what it
     * waits for (a goroutine locking a Mutex it holds: a true cycle).
     */
    default G waitTargetHolder(G waiter) {
        return waitTargetHolder();
    }
}
