package dev.gort.internal;

import java.lang.invoke.VarHandle;

/**
 * The one-word lock of channels, semaphores and Cond's notify list (Go's runtime {@code mutex}):
 * an {@code int} field of the owner, 0 free / 1 held, taken by CAS and dropped with a release
 * store. It is never held across a continuation yield: a parking goroutine's M drops it in the
 * park commit, after the yield. The field stays in the owner (no extra object per channel); the
 * owner passes its VarHandle, a constant once {@link #lock} is inlined into the owner's method.
 *
 * <p>Go: lock_futex.go lock2/unlock2 (spin, then yield the CPU; gort never sleeps in the kernel here)
 */
public final class SpinLock {
    private SpinLock() {}

    /** Takes the lock word of {@code owner}. */
    public static void lock(VarHandle word, Object owner) {
        if (!word.compareAndSet(owner, 0, 1)) {
            lockSlow(word, owner);
        }
    }

    private static void lockSlow(VarHandle word, Object owner) {
        int spins = 0;
        for (; ; ) {
            if ((int) word.getOpaque(owner) == 0 && word.compareAndSet(owner, 0, 1)) {
                return;
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
        word.setRelease(owner, 0);
    }
}
