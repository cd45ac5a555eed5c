package dev.gort.bench;

import dev.gort.Go;
import dev.gort.runtime.G;
import dev.gort.runtime.Scheduler;
import dev.gort.runtime.WaitReason;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.locks.LockSupport;

/**
 * One gort runtime kept alive for a whole JMH trial, so that an invocation measures the workload
 * and not the boot of carriers. Its main goroutine serves jobs: {@link #run} hands it a job from
 * the benchmark thread, the job runs <em>as goroutine 1</em> (it may spawn goroutines and park), and
 * the benchmark thread is unparked when it returns. The hand-off costs one carrier wake-up (tens of
 * microseconds), so jobs should be batches (milliseconds).
 *
 * <p>Hand-off protocol: the server parks with {@code gopark}; its unlock function publishes the G in
 * {@link #server} and re-reads {@link #job}. The submitter writes {@link #job} and then takes the
 * server out of the slot with getAndSet; whoever takes it (CAS in the unlock function, getAndSet in
 * {@link #run}) owns the wake-up, exactly as in {@link GLatch}.
 */
public final class GortHost implements AutoCloseable {
    private static final VarHandle SERVER;

    static {
        try {
            SERVER = MethodHandles.lookup().findVarHandle(GortHost.class, "server", G.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private static final Runnable STOP = () -> {};

    private final Thread thread;
    private final CountDownLatch started = new CountDownLatch(1);
    /** Written once by goroutine 1 before {@link #started} opens. */
    private volatile Scheduler sched;
    /** The next job: written by the submitter (volatile), cleared by the server. */
    private volatile Runnable job;
    /** The parked server G: set in its unlock function, taken by CAS/getAndSet. */
    @SuppressWarnings("unused")
    private volatile G server;
    /** The thread waiting for the current job; written by the submitter before the job. */
    private volatile Thread caller;
    /** Set by the server when the current job has returned; cleared by the submitter. */
    private volatile boolean done;

    private volatile Throwable failure;
    private volatile Throwable runtimeFailure;

    /** Boots a runtime with {@code gomaxprocs} Ps whose goroutine 1 waits for jobs. */
    public GortHost(int gomaxprocs) {
        thread = new Thread(
                () -> {
                    try {
                        Go.run(Bench.config(gomaxprocs), this::serve);
                    } catch (Throwable t) {
                        runtimeFailure = t;
                        Thread c = caller;
                        done = true;
                        if (c != null) {
                            LockSupport.unpark(c);
                        }
                    } finally {
                        started.countDown(); // a runtime that failed to start must not leave the constructor waiting
                    }
                },
                "gort-host-" + gomaxprocs);
        thread.setDaemon(true);
        thread.start();
        try {
            started.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
        if (sched == null) {
            throw new IllegalStateException("gort runtime failed to start", runtimeFailure);
        }
    }

    /** The runtime (for {@code newproc} from a foreign thread, e.g. to inject work). */
    public Scheduler scheduler() {
        return sched;
    }

    /** Runs {@code task} as goroutine 1 of this runtime and returns when it has returned. */
    public void run(Runnable task) {
        if (runtimeFailure != null) {
            throw new IllegalStateException("gort runtime is dead", runtimeFailure);
        }
        done = false;
        caller = Thread.currentThread();
        job = task;
        G s = (G) SERVER.getAndSet(this, (G) null);
        if (s != null) {
            sched.goready(s);
        }
        while (!done) {
            LockSupport.park(this);
        }
        caller = null;
        Throwable t = failure;
        if (t != null) {
            failure = null;
            throw new IllegalStateException("job failed in goroutine 1", t);
        }
        if (runtimeFailure != null) {
            throw new IllegalStateException("gort runtime died", runtimeFailure);
        }
    }

    private void serve() {
        sched = Scheduler.current();
        // The benchmark thread (outside the runtime) wakes goroutine 1: not a deadlock.
        dev.gort.runtime.ExternalWaker outside = sched.externalWaker();
        started.countDown();
        for (; ; ) {
            Runnable j;
            while ((j = job) == null) {
                Scheduler.gopark(GortHost::parkUnlock, this, WaitReason.CHAN_RECEIVE, this);
            }
            job = null;
            if (j == STOP) {
                outside.close();
                return;
            }
            try {
                j.run();
            } catch (Throwable t) {
                failure = t;
            }
            Thread c = caller;
            done = true;
            LockSupport.unpark(c);
        }
    }

    private static boolean parkUnlock(G gp, GortHost h) {
        SERVER.setVolatile(h, gp);
        if (h.job != null) {
            return !SERVER.compareAndSet(h, gp, (G) null);
        }
        return true;
    }

    /** Ends goroutine 1 (so the runtime shuts down) and waits for the runtime's thread. */
    @Override
    public void close() {
        if (runtimeFailure == null && thread.isAlive()) {
            done = false;
            caller = Thread.currentThread();
            job = STOP;
            G s = (G) SERVER.getAndSet(this, (G) null);
            if (s != null) {
                sched.goready(s);
            }
        }
        try {
            thread.join(10_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (thread.isAlive()) {
            throw new IllegalStateException("gort runtime did not stop within 10 s");
        }
    }
}
