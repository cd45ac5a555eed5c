package dev.gort.bench;

import dev.gort.Go;
import dev.gort.runtime.Config;
import dev.gort.runtime.G;
import dev.gort.runtime.Scheduler;
import dev.gort.runtime.WaitReason;
import java.util.ArrayDeque;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A gort runtime kept alive for a JMH trial (for the timer benchmarks): goroutine 1 runs jobs handed
 * over from the benchmark thread, so that timer heaps (e.g. Go's garbage timers) survive across
 * invocations. A hand-off costs a carrier wake-up, so jobs are batches.
 */
final class TimerHost implements AutoCloseable {
    private static final Runnable STOP = () -> {};

    private final Thread thread;
    private final CountDownLatch started = new CountDownLatch(1);
    private final GSema jobs = new GSema(0);
    private volatile Scheduler sched;
    private volatile Runnable job;
    private volatile CountDownLatch done;
    private final AtomicReference<Throwable> failure = new AtomicReference<>();

    TimerHost(int gomaxprocs) {
        Config cfg = Config.fromEnvironment().withGomaxprocs(gomaxprocs).withPanicExits(false);
        thread = new Thread(() -> Go.run(cfg, this::serve), "gort-timer-host");
        thread.setDaemon(true);
        thread.start();
        try {
            started.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    private void serve() {
        sched = Go.current();
        // Goroutine 1 waits for the benchmark thread, which checkdead cannot see: keep a timer
        // pending for the host's lifetime (a pending timer is a future wake-up, not a deadlock).
        dev.gort.Timer keepalive = dev.gort.Time.afterFunc(dev.gort.Time.HOUR, () -> { });
        started.countDown();
        for (;;) {
            jobs.acquire();
            Runnable j = job;
            if (j == STOP) {
                keepalive.stop();
                return;
            }
            try {
                j.run();
            } catch (Throwable t) {
                failure.set(t);
            }
            done.countDown();
        }
    }

    Scheduler scheduler() {
        return sched;
    }

    /** Runs {@code j} as goroutine 1 and waits for it. */
    void run(Runnable j) {
        CountDownLatch d = new CountDownLatch(1);
        done = d;
        job = j;
        jobs.release();
        try {
            d.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
        Throwable t = failure.getAndSet(null);
        if (t != null) {
            throw new IllegalStateException("job failed", t);
        }
    }

    @Override
    public void close() throws InterruptedException {
        job = STOP;
        jobs.release();
        thread.join(10_000);
    }

    /** A counting semaphore whose waiters park as goroutines; release works from any thread. */
    static final class GSema {
        private final Object lock = new Object();
        private int count;
        private final ArrayDeque<G> waiters = new ArrayDeque<>();

        GSema(int initial) {
            count = initial;
        }

        void acquire() {
            for (;;) {
                synchronized (lock) {
                    if (count > 0) {
                        count--;
                        return;
                    }
                }
                Scheduler.gopark((G gp, GSema s) -> {
                    synchronized (s.lock) {
                        if (s.count > 0) {
                            return false;
                        }
                        s.waiters.add(gp);
                        return true;
                    }
                }, this, WaitReason.SEMACQUIRE, this);
            }
        }

        void acquire(int n) {
            for (int i = 0; i < n; i++) {
                acquire();
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
