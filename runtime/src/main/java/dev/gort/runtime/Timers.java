package dev.gort.runtime;

/**
 * The timer layer as the scheduler sees it: per-P timer heaps that the scheduling M runs in
 * findRunnable, that thieves run on the last steal pass, and that bound how long an idle M sleeps.
 * A runtime without timers installed ({@code Scheduler.timers == null}) never calls these.
 *
 * <p>Go: time.go (*timers).check, wakeTime; proc.go checkTimersNoP
 */
public interface Timers {
    /**
     * Runs pp's due timers on mp (readied Gs go to pp's runnext); returns the next when, or 0.
     * {@code now} is {@link Scheduler#nanotime()}, or 0 to have it read only if timers are pending.
     */
    long check(M mp, P pp, long now);

    /** Whether pp has timers (Go: timerpMask bit). */
    boolean hasTimers(P pp);

    /** Runs victim's due timers on thief's M (readied Gs land on thief); returns victim's next when, or 0. */
    long stealTimers(M mp, P thief, P victim, long now);

    /**
     * The earliest when over every P with timers (idle ones included: Go's timerpMask keeps the bit
     * of an idle P that has timers), lowered from pollUntil. Go: checkTimersNoP.
     */
    long checkTimersNoP(Scheduler sched, P[] allp, long pollUntil);

    /** pp's next timer, or 0. Go: (*timers).wakeTime. */
    long wakeTime(P pp);

    /** Moves a dying P's timers to {@code to}. Go: (*p).destroy's timers.take. */
    void take(P from, P to);

    /** Number of timers in pp's heap, for scheddetail's {@code timerslen=} (Go: len(pp.timers.heap)). */
    default int len(P pp) {
        return hasTimers(pp) ? 1 : 0;
    }
}
