package dev.gort.agent.work;

import dev.gort.runtime.G;
import dev.gort.runtime.M;
import dev.gort.runtime.Scheduler;
import java.time.Duration;
import java.util.Queue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Calls of JDK methods that block their thread, for the agent's blocking-call hooks
 * ({@code PollInjector.isBlockingCall}) and its {@code Thread.sleep}/{@code Thread.yield}
 * replacements: a queue's {@code take}, its constructor's and class initialiser's, a call that
 * does not block, a timed wait that throws, and sleeps and yields with and without a monitor.
 */
public final class Blockers {
    /** Taken in the class initialiser: no hook there. */
    public static final Object TAKEN_IN_CLINIT;

    static {
        LinkedBlockingQueue<Object> q = new LinkedBlockingQueue<>();
        q.add("clinit");
        try {
            TAKEN_IN_CLINIT = q.take();
        } catch (InterruptedException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** The goroutine's status after a constructor's timed wait timed out ({@link #Blockers(CompletableFuture)}). */
    public int statusAfterTimeout = -3;

    /** A constructor that takes from a queue after its super(): hooked with a handler, as in a method. */
    public Blockers(BlockingQueue<Object> q) throws InterruptedException {
        q.take();
    }

    /** A constructor that takes from a queue for its this(...): hooked without a handler. */
    public Blockers(SynchronousQueue<Object> q, int unused) throws InterruptedException {
        this(q.take());
    }

    private Blockers(Object taken) {}

    /**
     * A constructor whose timed {@code Future.get} times out: {@link #statusAfterTimeout} is the
     * goroutine's status after the catch (with no gort call in between), or -1 outside a goroutine.
     */
    public Blockers(CompletableFuture<Object> f) throws InterruptedException, ExecutionException {
        try {
            f.get(1, TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            G gp = Scheduler.getg();
            statusAfterTimeout = gp == null ? -1 : gp.readgstatus();
        }
    }

    public static Object take(BlockingQueue<Object> q) throws InterruptedException {
        return q.take();
    }

    /** The owner is the queue's own class, as javac names it for a field of that type. */
    public static Object takeSynchronous(SynchronousQueue<Object> q) throws InterruptedException {
        return q.take();
    }

    public static void putSynchronous(SynchronousQueue<Object> q, Object x) throws InterruptedException {
        q.put(x);
    }

    /** {@code Queue.poll()} does not block: left alone. */
    public static Object nonBlocking(Queue<Object> q) {
        return q.poll();
    }

    /**
     * A timed {@code Future.get} that times out: returns the goroutine's status after the catch
     * (with no gort call in between), or -1 outside a goroutine.
     */
    public static int statusAfterTimeout(CompletableFuture<Object> f) throws InterruptedException, ExecutionException {
        try {
            f.get(1, TimeUnit.MILLISECONDS);
            return -2;
        } catch (TimeoutException e) {
            G gp = Scheduler.getg();
            return gp == null ? -1 : gp.readgstatus();
        }
    }

    /** An array read of a stream typed {@code InputStream}: {@code Poll.streamRead}. */
    public static int read(java.io.InputStream in, byte[] b) throws java.io.IOException {
        return in.read(b, 0, b.length);
    }

    /** A plain array read at an instrumented call site ({@code Poll.streamRead}'s stand-in). */
    public static int readRange(java.io.InputStream in, byte[] b, int off, int len) throws java.io.IOException {
        return in.read(b, off, len);
    }

    /** A buffered stream's array read at an instrumented call site (the wrappers' hook). */
    public static int readBuffered(java.io.BufferedInputStream in, byte[] b, int off, int len)
            throws java.io.IOException {
        return in.read(b, off, len);
    }

    /** A reader's array read at an instrumented call site (the wrappers' hook). */
    public static int readChars(java.io.BufferedReader r, char[] c, int off, int len) throws java.io.IOException {
        return r.read(c, off, len);
    }

    /** A close at an instrumented call site (an interface's: {@code Closeable.close}). */
    public static void close(java.io.Closeable c) throws java.io.IOException {
        c.close();
    }

    /** {@code n} lines read at one call site of one invocation, as a server's read loop reads. */
    public static java.util.List<String> readLines(java.io.BufferedReader r, int n) throws java.io.IOException {
        java.util.List<String> lines = new java.util.ArrayList<>();
        for (int i = 0; i < n; i++) {
            lines.add(r.readLine());
        }
        return lines;
    }

    /**
     * {@code n} array reads of a stream typed {@code InputStream} ({@code Poll.streamRead}'s
     * stand-in) in one invocation, each into a fresh array: what each got.
     */
    public static java.util.List<String> readChunks(java.io.InputStream in, int n) throws java.io.IOException {
        java.util.List<String> chunks = new java.util.ArrayList<>();
        for (int i = 0; i < n; i++) {
            byte[] b = new byte[64];
            int got = in.read(b);
            chunks.add(got < 0 ? null : new String(b, 0, got, java.nio.charset.StandardCharsets.UTF_8));
        }
        return chunks;
    }

    /** {@code r.readLine()} at an instrumented call site, or the exception it threw. */
    public static Object readLineOrThrown(java.io.BufferedReader r) {
        try {
            return r.readLine();
        } catch (java.io.IOException e) {
            return e;
        }
    }

    public static void sleep(long millis) throws InterruptedException {
        Thread.sleep(millis);
    }

    public static void sleep(long millis, int nanos) throws InterruptedException {
        Thread.sleep(millis, nanos);
    }

    public static void sleep(Duration d) throws InterruptedException {
        Thread.sleep(d);
    }

    public static void sleep(TimeUnit unit, long n) throws InterruptedException {
        unit.sleep(n);
    }

    /** Sleeps while holding {@code lock} until {@code go} is set; true if it kept its carrier and the monitor. */
    public static boolean sleepLockedUntil(Object lock, AtomicBoolean go) throws InterruptedException {
        synchronized (lock) {
            Thread carrier = M.current().thread(); // out of line: never a carrier C2 kept across a yield
            while (!go.get()) {
                Thread.sleep(1);
            }
            return M.current().thread() == carrier && Thread.holdsLock(lock);
        }
    }

    /**
     * Yields while holding {@code lock} until {@code go} is set; the number of yields, or -1 if it
     * left the carrier that owns the monitor.
     */
    public static int yieldLockedUntil(Object lock, AtomicBoolean go) {
        synchronized (lock) {
            Thread carrier = M.current().thread();
            int n = 0;
            while (!go.get()) {
                Thread.yield();
                n++;
            }
            return M.current().thread() == carrier ? n : -1;
        }
    }
}
