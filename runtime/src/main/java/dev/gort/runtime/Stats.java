package dev.gort.runtime;

import java.util.concurrent.atomic.AtomicLong;

/**
 * Runtime-wide counters, cheap enough to keep always on (each bumped off the hot paths). Written
 * only by this package (any M or sysmon: atomic adds); the fields are public for readers outside
 * it (runtime/metrics, the examples' lab), which only {@code get()} them.
 */
public final class Stats {
    public final AtomicLong pinnedYields = new AtomicLong();
    /**
     * Goroutines created without a P (the main goroutine; those started from outside the runtime,
     * from another runtime, or while their creator's carrier had lost its P) and those of Ps that
     * procresize destroyed; the total is {@link
     * Scheduler#goroutinesCreated()} (each P counts its own).
     */
    public final AtomicLong goroutinesCreated = new AtomicLong();
    /**
     * Gs that stopped at a preemption yield (the M's side of Preempt's honoured + budgetYields;
     * counted when the G leaves, those when it resumes). Requests and refusals are Preempt's.
     */
    public final AtomicLong preemptions = new AtomicLong();
    /** Successful steals (findRunnable's stealWork took work from another P). */
    public final AtomicLong steals = new AtomicLong();
    /** Goroutines those steals moved (each takes half of the victim's ring, or its runnext). */
    public final AtomicLong stolenGs = new AtomicLong();

    public final AtomicLong mStarts = new AtomicLong();
    public final AtomicLong handoffs = new AtomicLong();
    /** Runnable-to-running waits of every 8th transition (Go: sched.timeToRun, gTrackingPeriod). */
    public final TimeHistogram schedLatencies = new TimeHistogram();

    Stats() {}
}
