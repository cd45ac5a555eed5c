package dev.gort.runtime;

/**
 * An object goroutines wait on (a channel, a mutex, a WaitGroup...) that can say what it is, for
 * goroutine dumps ({@code goroutine 7 [chan receive]: ... waiting on chan#3 (len 0/cap 0, 2 waiting
 * senders)}), traces and the HTML timeline. Pass it as {@code waitingOn} to {@link Scheduler#gopark}.
 *
 * <p>{@link #describe} is called while dumping, so it must not block on a lock a parked goroutine
 * may hold; a racy read of len/cap and the waiter counts is what Go's dumps show too.
 */
public interface Describable {
    /** A stable id, unique among live objects of this runtime (e.g. a channel's sort key). */
    default long objectId() {
        return System.identityHashCode(this) & 0xFFFFFFFFL;
    }

    /** One line, e.g. {@code chan#7 int (len 0/cap 0, 1 waiting receiver)}. */
    String describe();
}
