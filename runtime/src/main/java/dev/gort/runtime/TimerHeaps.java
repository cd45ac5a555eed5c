package dev.gort.runtime;

/**
 * The scheduler's view of the per-P timer heaps ({@link TimerHeap}, one in every {@link P}): what
 * findRunnable runs on its own P, what thieves run on the last steal pass and what bounds how long
 * an idle M or sysmon sleeps. One per {@link Scheduler} ({@code Scheduler.timers}, immutable).
 *
 * <p>Go has no such object: {@code findRunnable}, {@code stealWork}, {@code checkTimersNoP},
 * {@code handoffp}, {@code checkdead} and {@code (*p).destroy} call the P's {@code timers} methods
 * directly. gort gathers those calls here. (There was a {@code Timers} interface in front of this
 * class, so that a test could install a fake timer layer; the test now arms a real timer.)
 *
 * <p>Go: proc.go checkTimersNoP; time.go (*timers).check, wakeTime, take
 */
final class TimerHeaps {
    /**
     * Runs pp's due timers on mp (readied Gs go to pp's runnext); returns the next when, or 0.
     * {@code now} is {@link Scheduler#nanotime()}, or 0 to have it read only if timers are pending.
     * Go: (*timers).check.
     */
    long check(M mp, P pp, long now) {
        return pp.timers.check(now, true);
    }

    /** Go's timerpMask bit, narrowed to "has timers" (thieves skip running Ps without timers). */
    boolean hasTimers(P pp) {
        return pp.timers.wakeTime() != 0;
    }

    /** Runs victim's due timers on thief's M (readied Gs land on thief); returns victim's next when, or 0. */
    long stealTimers(M mp, P thief, P victim, long now) {
        return victim.timers.check(now, false);
    }

    /**
     * The earliest wake time over every P's timers, idle Ps included (Go reads the timerpMask
     * snapshot, whose bit stays set for an idle P that has timers), lowered from pollUntil.
     *
     * <p>Go: proc.go checkTimersNoP
     */
    long checkTimersNoP(Scheduler sched, P[] allp, long pollUntil) {
        for (P p2 : allp) {
            long w = p2.timers.wakeTime();
            if (w != 0 && (pollUntil == 0 || w < pollUntil)) {
                pollUntil = w;
            }
        }
        return pollUntil;
    }

    /** pp's next timer, or 0. Go: (*timers).wakeTime. */
    long wakeTime(P pp) {
        return pp.timers.wakeTime();
    }

    /** Moves a dying P's timers to {@code to}. Go: (*p).destroy's timers.take. */
    void take(P from, P to) {
        to.timers.take(from.timers);
    }

    /** Timers in pp's heap, zombies included (scheddetail's {@code timerslen=}; Go: len(pp.timers.heap)). */
    int len(P pp) {
        return pp.timers.len();
    }
}
