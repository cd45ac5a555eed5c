package dev.gort.bench;

import dev.gort.Chan;
import dev.gort.Go;
import dev.gort.runtime.Config;
import java.util.concurrent.CountDownLatch;

/**
 * One gort runtime kept alive for a JMH trial: goroutine 1 ranges over a job channel and runs each
 * job as itself (jobs may spawn goroutines and block). A job is handed in from the benchmark
 * thread with a non-blocking send (a parked goroutine 1 is readied onto the global queue and an
 * M is woken) and its end is signalled with a latch; that hand-off costs tens of microseconds, so
 * jobs are batches of many operations.
 */
final class ChanHost implements AutoCloseable {
    private final Chan<Runnable> jobs = Chan.make(1);
    private final Thread thread;
    private volatile Throwable failure;

    ChanHost(int gomaxprocs) {
        Config config = Config.fromEnvironment().withGomaxprocs(gomaxprocs).withPanicExits(false);
        CountDownLatch started = new CountDownLatch(1);
        thread = new Thread(() -> {
            try {
                Go.run(config, () -> {
                    started.countDown();
                    jobs.forEach(Runnable::run);
                });
            } catch (Throwable t) {
                failure = t;
                started.countDown();
            }
        }, "chan-host-P" + gomaxprocs);
        thread.setDaemon(true);
        thread.start();
        await(started);
    }

    /** Runs job as goroutine 1 and waits for it. */
    void run(Runnable job) {
        CountDownLatch done = new CountDownLatch(1);
        Throwable[] err = new Throwable[1];
        Runnable wrapped = () -> {
            try {
                job.run();
            } catch (Throwable t) {
                err[0] = t;
            } finally {
                done.countDown();
            }
        };
        while (!jobs.trySend(wrapped)) {
            if (failure != null) {
                throw new IllegalStateException("gort runtime died", failure);
            }
            Thread.onSpinWait();
        }
        await(done);
        if (err[0] != null) {
            throw new IllegalStateException("benchmark job failed", err[0]);
        }
    }

    private static void await(CountDownLatch l) {
        try {
            l.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    @Override
    public void close() {
        jobs.close();
        try {
            thread.join(10_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
