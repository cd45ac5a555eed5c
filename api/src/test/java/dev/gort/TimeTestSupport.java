package dev.gort;

import dev.gort.runtime.Config;
import java.util.concurrent.atomic.AtomicReference;

/** Helpers for the time tests: a runtime runner that rethrows, and a goroutine semaphore. */
final class TimeTestSupport {
    private TimeTestSupport() {}

    static Config config(int procs) {
        return Config.fromEnvironment().withGomaxprocs(procs).withPanicExits(false);
    }

    /** Runs body as main on a fresh runtime with GOMAXPROCS procs; rethrows what it threw. */
    static void run(int procs, Runnable body) {
        AtomicReference<Throwable> err = new AtomicReference<>();
        Go.run(config(procs), () -> {
            try {
                body.run();
            } catch (Throwable t) {
                err.set(t);
            }
        });
        Throwable t = err.get();
        if (t instanceof Error e) {
            throw e;
        }
        if (t != null) {
            throw new AssertionError(t);
        }
    }
}
