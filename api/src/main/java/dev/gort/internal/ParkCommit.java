package dev.gort.internal;

import dev.gort.runtime.G;

/**
 * What a parking waiter runs once it is committed to sleep: releases the lock that protects the
 * queue it is on (Go's {@code chanparkcommit}, {@code selparkcommit}, the unlock of
 * {@code goparkunlock}). In production it runs on the M after the goroutine's continuation has
 * yielded, so a waker that takes the lock can never resume a goroutine that is still running.
 *
 * <p>Returning false cancels the park (the waiter runs on at once).
 *
 * <p>Go: proc.go gopark's unlockf
 */
@FunctionalInterface
public interface ParkCommit<L> extends G.ParkUnlock<L> {
    boolean commit(L lock);

    @Override
    default boolean unlock(G gp, L lock) {
        return commit(lock);
    }
}
