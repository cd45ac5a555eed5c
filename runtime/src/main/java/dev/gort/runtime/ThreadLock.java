package dev.gort.runtime;

/**
 * Wiring a goroutine to its carrier thread: a locked G runs only on its M, and that M runs nothing
 * else. When the G yields (parks, Gosched, preempted) its M hands its P away and sleeps
 * ({@code M.stoplockedm}); whichever M later picks the G from a run queue hands that M its own P
 * ({@code M.startlockedm}). A G that ends while still locked takes its thread with it (Go does the
 * same: the goroutine may have left per-thread state behind, here a thread-bound native resource,
 * or the carrier's {@code ThreadLocal}s under {@code -Dgort.threadlocals=carrier}; goroutine-scoped
 * ones leave with the G); its P is handed off and the M is dropped from {@code allm}.
 *
 * <p>{@code lockedExt} counts the user's LockOSThread calls, {@code lockedInt} the runtime's own
 * (a G that cannot leave its carrier while it waits for a P, {@link Syscalls#waitForP}).
 *
 * <p>Go: proc.go LockOSThread, UnlockOSThread, lockOSThread, unlockOSThread, dolockOSThread,
 * dounlockOSThread
 */
public final class ThreadLock {
    private ThreadLock() {}

    /**
     * Wires the calling goroutine to its current carrier thread until it has made as many
     * {@link #UnlockOSThread} calls as LockOSThread calls. Go: runtime.LockOSThread.
     */
    public static void LockOSThread() {
        M mp = M.current();
        G gp = mp == null ? null : mp.curg;
        if (gp == null) {
            throw new IllegalStateException("gort: LockOSThread called outside a goroutine");
        }
        gp.rare().lockedExt++;
        if (gp.lockedExt() == 0) {
            gp.rare().lockedExt--;
            throw new IllegalStateException("LockOSThread nesting overflow");
        }
        dolockOSThread(mp, gp);
    }

    /**
     * Undoes one LockOSThread; at zero the goroutine may run on any thread again. A no-op without
     * a matching LockOSThread. Go: runtime.UnlockOSThread.
     */
    public static void UnlockOSThread() {
        M mp = M.current();
        G gp = mp == null ? null : mp.curg;
        if (gp == null || gp.lockedExt() == 0) {
            return;
        }
        gp.rare().lockedExt--;
        dounlockOSThread(mp, gp);
    }

    /** True if the calling goroutine is locked to its thread (by the user). */
    static boolean isLocked() {
        M mp = M.current();
        G gp = mp == null ? null : mp.curg;
        return gp != null && gp.lockedExt() != 0;
    }

    /** Go: proc.go dolockOSThread. Own G on its own M. */
    static void dolockOSThread(M mp, G gp) {
        mp.lockedg = gp;
        gp.rare().lockedm = mp;
    }

    /** Go: proc.go dounlockOSThread. */
    static void dounlockOSThread(M mp, G gp) {
        if (gp.lockedInt() != 0 || gp.lockedExt() != 0) {
            return;
        }
        mp.lockedg = null;
        gp.setLockedm(null);
    }
}
