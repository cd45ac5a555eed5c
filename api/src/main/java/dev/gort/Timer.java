package dev.gort;

import dev.gort.runtime.Scheduler;
import java.time.Duration;
import java.time.Instant;

/**
 * A single event: Go's {@code time.Timer}. Made by {@link Time#newTimer} (the time is sent on
 * {@link #c()}) or {@link Time#afterFunc} (a function runs in its own goroutine); {@link #stop()}
 * and {@link #reset(Duration)} return Go's booleans. For a channel timer, no value sent before
 * stop/reset returned can be received after (Go 1.23).
 *
 * <p>A timer is meant to be used by one goroutine at a time (as in Go); the runtime copes with the
 * P that runs it concurrently.
 *
 * <p>Go: time/sleep.go type Timer
 */
public final class Timer {
    /** The runtime timer (lives in some P's heap while armed). */
    private final dev.gort.runtime.Timer r;
    /** The channel of a {@code newTimer} timer; null for {@code afterFunc} (Go: t.C). */
    private final Chan<Instant> c;

    private Timer(dev.gort.runtime.Timer r, Chan<Instant> c) {
        this.r = r;
        this.c = c;
    }

    /** Go: time.NewTimer: a channel timer (cap 1 inside, reported as 0). */
    static Timer newTimer(Scheduler sched, long d) {
        Chan<Instant> c = Chan.make(1);
        dev.gort.runtime.Timer rt = new dev.gort.runtime.Timer(sched, Time::sendTime, c, c::timerchandrain);
        c.timer = rt;
        rt.reset(dev.gort.runtime.Timer.when(d), 0);
        return new Timer(rt, c);
    }

    /**
     * The channel on which the time is delivered ({@code t.C}); null for an {@code afterFunc} timer.
     * Receive from it only: sending on it or closing it is a misuse Go's types rule out.
     */
    public Chan<Instant> c() {
        return c;
    }

    static Timer afterFunc(Scheduler sched, long d, Runnable f) {
        dev.gort.runtime.Timer rt = new dev.gort.runtime.Timer(sched, Timer::goFunc, f);
        Timer t = new Timer(rt, null);
        rt.reset(dev.gort.runtime.Timer.when(d), 0);
        return t;
    }

    /**
     * A bubble's timer is stopped or reset only from that bubble. Go: time.go stopTimer,
     * resetTimer ({@code stop of synctest timer from outside bubble}; a fatal error in Go 1.25).
     */
    static void checkBubble(dev.gort.runtime.Timer r, String op) {
        dev.gort.runtime.Bubble b = r.bubble();
        if (b != null && dev.gort.runtime.Bubble.current() != b) {
            throw new PanicError(op + " of synctest timer from outside bubble");
        }
    }

    /** AfterFunc's timer function: {@code go f()} on the M that runs the timer. Go: time.goFunc. */
    private static void goFunc(Object arg, long seq, long delay) {
        Scheduler s = Scheduler.current();
        s.newproc((Runnable) arg);
    }

    /**
     * Prevents the timer from firing. Returns true if the call stops the timer, false if it had
     * already expired or been stopped. For an {@code afterFunc} timer, false means f has already
     * been started in its own goroutine; stop does not wait for it.
     *
     * <p>Go: (*time.Timer).Stop
     */
    public boolean stop() {
        checkBubble(r, "stop");
        return r.stop();
    }

    /**
     * Changes the timer to expire after {@code d} ({@code d <= 0}: now). Returns true if the timer
     * had been active, false if it had expired or been stopped. For an {@code afterFunc} timer, f
     * runs again after {@code d}.
     *
     * <p>Go: (*time.Timer).Reset
     */
    public boolean reset(Duration d) {
        return reset(Time.nanos(d));
    }

    /** {@link #reset(Duration)} with a nanosecond duration. */
    public boolean reset(long d) {
        checkBubble(r, "reset");
        return r.reset(dev.gort.runtime.Timer.when(d), 0);
    }
}
