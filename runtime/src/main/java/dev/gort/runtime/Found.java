package dev.gort.runtime;

/**
 * What the work-finding functions return beside the G, where Go returns a tuple: findRunnable's
 * {@code (gp, inheritTime)}, runqget's {@code (gp, inheritTime)}, stealWork's {@code (gp,
 * inheritTime, now, pollUntil, newWork)}, how many Gs runqsteal moved, and where the G was found for
 * the tracer. Each M owns one
 * ({@code M.found}) and reuses it, so that returning these allocates nothing (kotlinx's
 * {@code ObjectRef} idea, one holder per worker).
 *
 * <p>Written and read by the owning M's thread only, plain, with one exception:
 * {@code startlockedm} writes the locked M's {@link #from}/{@link #fromVictim} before the note
 * wake-up that publishes them to that M (its {@code nextp} hand-off), which reads them for its
 * GoStart event (M.execute, or Syscalls.waitForP for a G that waited for a P on its carrier).
 */
sealed class Found extends CacheLinePad permits Found.Padded {
    /** The G came from runnext and inherits the time slice (runqget, findRunnable). Go: inheritTime. */
    boolean inheritTime;
    /** Where findRunnable found the G (trace.Ev.F_*), for the GoStart event. */
    int from;
    /** The victim P's id when {@link #from} is F_STOLEN. */
    int fromVictim;
    /** stealWork: the world changed (stop-the-world, procresize): look again. Go: newWork. */
    boolean newWork;
    /** stealWork: the earliest timer seen on another P, 0 for none. Go: pollUntil. */
    long pollUntil;
    /** runqsteal: how many Gs the steal moved, the one returned included (0: none). For stats.stolenGs. */
    int stolen;

    /** An M's holder ({@code M.found}): 64 bytes after the fields ({@link CacheLinePad}). */
    static final class Padded extends Found {
        long q00, q01, q02, q03, q04, q05, q06, q07;
    }
}
