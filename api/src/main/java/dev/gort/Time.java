package dev.gort;

import dev.gort.runtime.Bubble;
import java.time.Duration;
import java.time.Instant;

/**
 * Go's package {@code time} for goroutines: {@code Sleep}, {@code AfterFunc}, {@code NewTimer},
 * {@code After}, {@code NewTicker}, {@code Tick}; channels carry the {@link Instant} the timer fired. Durations are {@link Duration}s or, as Go's
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
        return Timer.afterFunc(Go.sched(), nanos, f);
    }

    /**
     * A timer that sends the current time on its channel {@link Timer#c()} after at least {@code d}.
     * Go 1.23 semantics: the channel is synchronous ({@code len} and {@code cap} report 0), the timer
     * is in a heap only while a goroutine waits on the channel, and after {@link Timer#stop()} or
     * {@link Timer#reset} return no stale value can be received.
     *
     * <p>Go: time.NewTimer
     */
    public static Timer newTimer(Duration d) {
        return newTimer(nanos(d));
    }

    /** {@link #newTimer(Duration)} with a nanosecond duration. */
    public static Timer newTimer(long nanos) {
        return Timer.newTimer(Go.sched(), nanos);
    }

    /**
     * Waits for {@code d}, then sends the current time on the returned channel: {@code
     * newTimer(d).c()}. Since Go 1.23 an unreferenced timer is simply garbage.
     *
     * <p>Go: time.After
     */
    public static Chan<Instant> after(Duration d) {
        return newTimer(d).c();
    }

    /** {@link #after(Duration)} with a nanosecond duration. */
    public static Chan<Instant> after(long nanos) {
        return newTimer(nanos).c();
    }

    /**
     * A ticker sending the time on {@link Ticker#c()} every {@code d}, dropping ticks for slow
     * receivers. {@code d <= 0} panics. Go: time.NewTicker.
     */
    public static Ticker newTicker(Duration d) {
        return newTicker(nanos(d));
    }

    /** {@link #newTicker(Duration)} with a nanosecond duration. */
    public static Ticker newTicker(long nanos) {
        return Ticker.newTicker(Go.sched(), nanos);
    }

    /**
     * The channel of a new ticker ({@code newTicker(d).c()}); {@code d <= 0} returns the nil channel.
     * Go: time.Tick.
     */
    public static Chan<Instant> tick(Duration d) {
        return tick(nanos(d));
    }

    /** {@link #tick(Duration)} with a nanosecond duration. */
    public static Chan<Instant> tick(long nanos) {
        if (nanos <= 0) {
            return Chan.nil();
        }
        return newTicker(nanos).c();
    }

    /**
     * The timer function of channel timers: a non-blocking send of the time at which the timer was
     * due ({@code delay} ns ago: the value may be sent lazily, when a receiver looks). Runs on the
     * M that runs the timer, or in the receiving goroutine.
     *
     * <p>Go: time/sleep.go sendTime
     */
    @SuppressWarnings("unchecked")
    static void sendTime(Object c, long seq, long delay) {
        Chan<Instant> ch = (Chan<Instant>) c;
        if (ch.isClosed()) {
            // Closed by user code: a misuse Go's receive-only <-chan Time rules out at compile time.
            // Java cannot, so the tick is dropped rather than panicking on the M that runs timers.
            return;
        }
        try {
            // A bubble's timer channel gets the bubble's fake time (the root runs the timer).
            ch.trySend((ch.bubble != null ? fakeInstant(ch.bubble.now()) : Instant.now()).minusNanos(delay));
        } catch (PanicError closedMeanwhile) {
            // The same misuse, racing with this send: drop the tick (see above).
        }
    }

    /**
     * The runtime's monotonic clock in nanoseconds (Go's {@code runtimeNano}); inside a synctest
     * bubble, the bubble's fake clock (Unix nanoseconds from 2000-01-01T00:00:00Z on), which moves
     * only when every goroutine of the bubble is durably blocked.
     */
    public static long nanotime() {
        return dev.gort.runtime.Timer.nanotime();
    }

    /** Go's time.Since on the monotonic clock: nanoseconds since {@code start} ({@link #nanotime()}). */
    public static long since(long start) {
        return nanotime() - start;
    }

    /**
     * The current time: {@link Instant#now()}, or inside a synctest bubble the bubble's fake time
     * ({@code 2000-01-01T00:00:00Z} when the bubble starts). Go: time.Now.
     */
    public static Instant now() {
        Bubble b = Bubble.current();
        return b != null ? fakeInstant(b.now()) : Instant.now();
    }

    /** The time elapsed since {@code t}, by {@link #now()}'s clock. Go: time.Since. */
    public static Duration since(Instant t) {
        return Duration.between(t, now());
    }

    /** The time until {@code t}, by {@link #now()}'s clock. Go: time.Until. */
    public static Duration until(Instant t) {
        return Duration.between(now(), t);
    }

    /** A bubble's fake clock (Unix nanoseconds) as an Instant. */
    static Instant fakeInstant(long unixNanos) {
        return Instant.ofEpochSecond(Math.floorDiv(unixNanos, SECOND), Math.floorMod(unixNanos, SECOND));
    }

    /** A Duration as Go's int64 nanoseconds, saturating instead of throwing on overflow. */
    static long nanos(Duration d) {
        if (d.isNegative()) {
            return d.compareTo(Duration.ofNanos(Long.MIN_VALUE)) <= 0 ? Long.MIN_VALUE : d.toNanos();
        }
        return d.compareTo(Duration.ofNanos(Long.MAX_VALUE)) >= 0 ? Long.MAX_VALUE : d.toNanos();
    }
}
