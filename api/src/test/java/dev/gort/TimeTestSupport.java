package dev.gort;

import dev.gort.runtime.Config;
import dev.gort.runtime.G;
import dev.gort.runtime.Scheduler;
import dev.gort.runtime.WaitReason;
import java.util.ArrayDeque;
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

    /** A counting semaphore whose waiters park as goroutines (FIFO): a buffered channel's stand-in. */
    static final class Sema {
        private final Object lock = new Object();
        private int count;
        private final ArrayDeque<G> waiters = new ArrayDeque<>();

        Sema(int initial) {
            count = initial;
        }

        void acquire() {
            for (; ; ) {
                synchronized (lock) {
                    if (count > 0) {
                        count--;
                        return;
                    }
                }
                Scheduler.gopark(
                        (G gp, Sema s) -> {
                            synchronized (s.lock) {
                                if (s.count > 0) {
                                    return false; // cancel the park; retry
                                }
                                s.waiters.add(gp);
                                return true;
                            }
                        },
                        this,
                        WaitReason.SEMACQUIRE,
                        this);
            }
        }

        /** Non-blocking acquire: Go's select with default on a buffered channel. */
        boolean tryAcquire() {
            synchronized (lock) {
                if (count > 0) {
                    count--;
                    return true;
                }
                return false;
            }
        }

        void release() {
            G w;
            synchronized (lock) {
                count++;
                w = waiters.poll();
            }
            if (w != null) {
                w.scheduler().goready(w);
            }
        }
    }
}
