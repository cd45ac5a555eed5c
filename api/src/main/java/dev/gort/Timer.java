package dev.gort;

import dev.gort.runtime.Scheduler;
import java.time.Duration;

/**
 * A single event: Go's {@code time.Timer}. Made by {@link Time#afterFunc}; {@link #stop()} and
 * {@link #reset(Duration)} return Go's booleans.
 *
 * <p>A timer is meant to be used by one goroutine at a time (as in Go); the runtime copes with the
 * P that runs it concurrently.
 *
 * <p>Go: time/sleep.go type Timer
 */
public final class Timer {
    /** The runtime timer (lives in some P's heap while armed). */
    private final dev.gort.runtime.Timer r;

    private Timer(dev.gort.runtime.Timer r) {
        this.r = r;
    }

    static Timer afterFunc(Scheduler sched, long d, Runnable f) {
        dev.gort.runtime.Timer rt = new dev.gort.runtime.Timer(sched, Timer::goFunc, f);
        Timer t = new Timer(rt);
        rt.reset(dev.gort.runtime.Timer.when(d), 0);
        return t;
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
        return r.reset(dev.gort.runtime.Timer.when(d), 0);
    }
}
