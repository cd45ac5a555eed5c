package dev.gort.compat;

import dev.gort.Chan;
import dev.gort.Go;
import dev.gort.runtime.ExternalWaker;
import dev.gort.runtime.Scheduler;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

/**
 * One gort runtime for a whole test run, on a thread of its own: its main goroutine receives
 * {@link Runnable}s from a channel and starts each one as a goroutine ({@code go job()}), while
 * {@code hogs} CPU hog goroutines ({@link Hog}) keep every P busy so that sysmon preempts whatever
 * runs longer than 10 ms: the test bodies too, at the polls the agent put in the library.
 *
 * <p>The JUnit thread is outside the runtime: it hands a job over with a non-blocking
 * {@link Chan#trySend} (which {@code Chan} allows from any thread), and the main goroutine holds an
 * {@link ExternalWaker} for the whole run, so that "main waits for the JUnit thread" is not a
 * deadlock. A test body that deadlocks on gort's primitives is therefore not reported by checkdead;
 * {@link InGoroutine}'s hang guard reports it instead.
 */
public final class GoroutineHost {
    /** Sentinel that ends the main goroutine's loop. */
    private static final Runnable STOP = () -> {};

    /** Guarded by the class: the host of this JVM, started on first use. */
    private static GoroutineHost instance;

    /** Written once by the main goroutine before {@link #ready} opens; read after it. */
    private Chan<Runnable> jobs;
    /** Written once by the main goroutine before {@link #ready} opens; read after it. */
    private Scheduler sched;

    private final CountDownLatch ready = new CountDownLatch(1);
    /** Written once by the main goroutine before {@link #ready} opens: counts the hogs that ended. */
    private CountDownLatch hogsDone;
    /** Set (volatile) by {@link #stop}; the hogs read it between rounds. */
    final AtomicInteger stopping = new AtomicInteger();

    private final Thread thread;
    /** Written by the host thread if {@code Go.run} throws; read after {@link #thread} is joined. */
    private volatile Throwable failure;

    private GoroutineHost(int hogs) {
        this.thread = new Thread(() -> {
            try {
                Go.run(() -> main(hogs));
            } catch (Throwable t) {
                failure = t;
                ready.countDown();
            }
        });
        thread.setName("gort-compat-host");
        // Not setDaemon(true): the host takes the daemon status of the JUnit thread that starts it,
        // as the bodies' threads do in the plain run. Carriers copy the Go.run caller's status
        // (M.Origin), so a daemon host made every Thread a body created daemon and failed
        // BasicThreadFactoryTest.testNewThreadNoDaemonFlag in the gort runs only (issue 12's
        // defect 5, seen in the gort2 run of 2026-12-01 21:00). SuiteMain ends with System.exit,
        // so a non-daemon host does not keep the JVM.
    }

    /**
     * The host of this JVM, started with {@code -Dgort.compat.hogs} hog goroutines (default: one per
     * P) the first time it is asked for.
     */
    public static synchronized GoroutineHost get() {
        if (instance == null) {
            String h = System.getProperty("gort.compat.hogs");
            GoroutineHost host = new GoroutineHost(h == null ? -1 : Integer.parseInt(h));
            host.start();
            instance = host;
        }
        return instance;
    }

    /** The host if one was started, else null. */
    public static synchronized GoroutineHost started() {
        return instance;
    }

    private void start() {
        thread.start();
        try {
            ready.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while the gort runtime starts", e);
        }
        if (failure != null) {
            throw new IllegalStateException("the gort runtime did not start", failure);
        }
    }

    private void main(int hogs) {
        jobs = Chan.make(64);
        sched = Scheduler.current();
        ExternalWaker outside = Go.external(); // the JUnit thread sends every job
        int n = hogs < 0 ? Go.gomaxprocs() : hogs;
        hogsDone = new CountDownLatch(n);
        for (int i = 0; i < n; i++) {
            Go.go(() -> {
                try {
                    Hog.spin(stopping);
                } finally {
                    hogsDone.countDown();
                }
            });
        }
        ready.countDown();
        for (; ; ) {
            Runnable job = jobs.recv();
            if (job == STOP) {
                break;
            }
            Go.go(job);
        }
        outside.close();
    }

    /** The runtime the jobs run in. */
    public Scheduler scheduler() {
        return sched;
    }

    /**
     * Starts {@code job} as a goroutine. Any thread; returns once the main goroutine's channel has
     * it (the buffer holds 64, and the JUnit thread submits one body at a time).
     */
    public void go(Runnable job) {
        while (!jobs.trySend(job)) {
            LockSupport.parkNanos(100_000); // full: wait for the main goroutine to take one
        }
    }

    /** Stops the hogs and the main goroutine and waits (bounded) for the runtime to end. */
    public void stop() throws InterruptedException {
        stopping.set(1);
        go(STOP);
        hogsDone.await(60, TimeUnit.SECONDS);
        thread.join(TimeUnit.SECONDS.toMillis(60));
    }
}
