package dev.gort;

import dev.gort.runtime.Scheduler;
import java.time.Duration;
import java.time.Instant;

/**
 * Delivers ticks of a clock at intervals: Go's {@code time.Ticker}. The channel {@link #c()} holds
 * at most one tick; a slow receiver loses ticks (the period adjusts, as in Go:
 * {@code when + period * (1 + delay / period)}). Go 1.23 semantics: {@code len}/{@code cap} report 0,
 * the ticker is in a timer heap only while a goroutine waits on its channel, and no stale tick is
 * received after {@link #stop()} or {@link #reset} return.
 *
 * <p>Go: time/tick.go type Ticker
 */
public final class Ticker {
    private final dev.gort.runtime.Timer r;
    private final Chan<Instant> c;

    private Ticker(dev.gort.runtime.Timer r, Chan<Instant> c) {
        this.r = r;
        this.c = c;
    }

    /** Go: time.NewTicker. */
    static Ticker newTicker(Scheduler sched, long d) {
        if (d <= 0) {
            throw new PanicError("non-positive interval for NewTicker");
        }
        Chan<Instant> c = Chan.make(1);
        dev.gort.runtime.Timer rt = new dev.gort.runtime.Timer(sched, Time::sendTime, c, c::timerchandrain);
        c.timer = rt;
        rt.reset(dev.gort.runtime.Timer.when(d), d);
        return new Ticker(rt, c);
    }

    /** The channel on which the ticks are delivered ({@code t.C}). Receive from it only. */
    public Chan<Instant> c() {
        return c;
    }

    /** Turns the ticker off: no more ticks are sent (the channel is not closed). Go: (*Ticker).Stop. */
    public void stop() {
        Timer.checkBubble(r, "stop");
        r.stop();
    }

    /**
     * Stops the ticker and restarts it with period {@code d}: the next tick arrives after {@code d}.
     * {@code d <= 0} panics. Go: (*Ticker).Reset.
     */
    public void reset(Duration d) {
        reset(Time.nanos(d));
    }

    /** {@link #reset(Duration)} with a nanosecond duration. */
    public void reset(long d) {
        if (d <= 0) {
            throw new PanicError("non-positive interval for Ticker.Reset");
        }
        Timer.checkBubble(r, "reset");
        r.reset(dev.gort.runtime.Timer.when(d), d);
    }
}
