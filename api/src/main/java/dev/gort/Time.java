package dev.gort;

import dev.gort.runtime.Scheduler;
import java.time.Duration;

/**
 * Go's package {@code time} for goroutines: {@code Sleep}, {@code AfterFunc}, {@code NewTimer},
 * {@code After}, {@code NewTicker}, {@code Tick}. Durations are {@link Duration}s or, as Go's
 * {@code time.Duration}, {@code long} nanoseconds ({@code Time.sleep(10 * Time.MILLISECOND)}).
 *
 * <p>Timers live in per-P 4-ary heaps and are run by the scheduling Ms (no timer thread): a sleeping
 * goroutine holds no carrier, and when its timer fires it goes to the runnext of the P that ran the
 * timer. A pending timer counts as a future wake-up for deadlock detection.
 *
 * <p>Go: time/sleep.go, time/tick.go; runtime/time.go
 */
public final class Time {
    private Time() {}

    /** Go: time.Nanosecond. */
    public static final long NANOSECOND = 1;
    /** Go: time.Microsecond. */
    public static final long MICROSECOND = 1000 * NANOSECOND;
    /** Go: time.Millisecond. */
    public static final long MILLISECOND = 1000 * MICROSECOND;
    /** Go: time.Second. */
    public static final long SECOND = 1000 * MILLISECOND;
    /** Go: time.Minute. */
    public static final long MINUTE = 60 * SECOND;
    /** Go: time.Hour. */
    public static final long HOUR = 60 * MINUTE;

    /**
     * Pauses the calling goroutine for at least {@code d}; {@code d <= 0} returns at once without
     * yielding. The goroutine parks (its carrier runs other goroutines meanwhile).
     *
     * <p>Go: time.Sleep
     */
    public static void sleep(Duration d) {
        sleep(nanos(d));
    }

    /** {@link #sleep(Duration)} with Go's nanosecond durations. Go: time.Sleep. */
    public static void sleep(long nanos) {
        dev.gort.runtime.Timer.timeSleep(nanos);
    }

    /**
     * Waits for {@code d}, then calls {@code f} in its own goroutine (Go's {@code go f()}). The
     * returned timer can stop the call with {@link Timer#stop()}.
     *
     * <p>Go: time.AfterFunc
     */
    public static Timer afterFunc(Duration d, Runnable f) {
        return afterFunc(nanos(d), f);
    }

    /** {@link #afterFunc(Duration, Runnable)} with a nanosecond duration. */
    public static Timer afterFunc(long nanos, Runnable f) {
        if (f == null) {
            throw new NullPointerException("f");
        }
        return Timer.afterFunc(Go.current(), nanos, f);
    }

    /** The runtime's monotonic clock in nanoseconds (Go's {@code runtimeNano}). */
    public static long nanotime() {
        return Scheduler.nanotime();
    }

    /** Go's time.Since on the monotonic clock: nanoseconds since {@code start} ({@link #nanotime()}). */
    public static long since(long start) {
        return Scheduler.nanotime() - start;
    }

    /** A Duration as Go's int64 nanoseconds, saturating instead of throwing on overflow. */
    static long nanos(Duration d) {
        if (d.isNegative()) {
            return d.compareTo(Duration.ofNanos(Long.MIN_VALUE)) <= 0 ? Long.MIN_VALUE : d.toNanos();
        }
        return d.compareTo(Duration.ofNanos(Long.MAX_VALUE)) >= 0 ? Long.MAX_VALUE : d.toNanos();
    }
}
