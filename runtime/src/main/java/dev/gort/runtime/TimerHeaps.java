package dev.gort.runtime;

/**
 * The scheduler's view of the per-P timer heaps ({@link TimerHeap}, one in every {@link P}):
 * installed on every {@link Scheduler} by its constructor.
 *
 * <p>Go has no such object: {@code findRunnable}, {@code stealWork}, {@code checkTimersNoP},
 * {@code handoffp}, {@code checkdead} and {@code (*p).destroy} call the P's {@code timers} methods
 * directly. gort keeps the {@link Timers} interface so the core can run without timers.
 *
 * <p>Go: proc.go checkTimersNoP; time.go (*timers).check, wakeTime, take
 */
final class TimerHeaps implements Timers {
    @Override
    public long check(M mp, P pp, long now) {
        return pp.timers.check(now, true);
    }

    /** Go's timerpMask bit, narrowed to "has timers" (thieves skip running Ps without timers). */
    @Override
    public boolean hasTimers(P pp) {
        return pp.timers.wakeTime() != 0;
    }

    @Override
    public long stealTimers(M mp, P thief, P victim, long now) {
        return victim.timers.check(now, false);
    }

    /**
     * The earliest wake time over every P's timers, idle Ps included (Go reads the timerpMask
     * snapshot, whose bit stays set for an idle P that has timers), lowered from pollUntil.
     *
     * <p>Go: proc.go checkTimersNoP
     */
    @Override
    public long checkTimersNoP(Scheduler sched, P[] allp, long pollUntil) {
        for (P p2 : allp) {
            long w = p2.timers.wakeTime();
            if (w != 0 && (pollUntil == 0 || w < pollUntil)) {
                pollUntil = w;
            }
        }
        return pollUntil;
    }

    @Override
    public long wakeTime(P pp) {
        return pp.timers.wakeTime();
    }

    @Override
    public void take(P from, P to) {
        to.timers.take(from.timers);
    }

    /** Timers in pp's heap, zombies included (scheddetail's {@code timerslen=}; Go: len(pp.timers.heap)). */
    @Override
    public int len(P pp) {
        return pp.timers.len();
    }
}
