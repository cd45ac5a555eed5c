package dev.gort.runtime;

/**
 * What a goroutine can wait on (the {@code waitingOn} argument of {@link Scheduler#gopark}): a
 * channel, a select, a mutex, a wait group. Implementing it lets fatal-error dumps print gort's
 * wait-for graph (Go prints only the wait reason): which goroutine waits on which object, that
 * object's state, and which goroutine holds it.
 *
 * <p>The methods are called racily, from the thread reporting the fatal error, while the waiters
 * are parked; they must not block, lock or allocate much, and may see slightly stale state.
 */
public interface WaitTarget {
    /** The object and its state, e.g. {@code chan#7 (len 0/cap 0; receivers waiting: G1; senders waiting: none)}. */
    String waitTargetDescription();

    /** The goroutine that holds this object and so could release its waiters (a locked mutex), or null. */
    default G waitTargetHolder() {
        return null;
    }
}
