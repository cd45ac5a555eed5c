package dev.gort.agent.work;

import dev.gort.runtime.G;
import dev.gort.runtime.Scheduler;
import java.util.List;
import java.util.concurrent.AbstractExecutorService;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * User code reached through a call site that names a JDK blocking method, or used to: a direct
 * ExecutorService (tasks run in the caller) whose invokeAll the call site names as
 * ExecutorService.invokeAll (on the agent's list until the review of cc4f823), and a library's
 * subclass of a JDK queue whose take runs its own code, called as BlockingQueue.take (on the
 * list; the receiver is not a JDK class, so no syscall).
 */
public final class HookedUserCode {
    private HookedUserCode() {}

    /** Runs every task in the caller. */
    static final class Direct extends AbstractExecutorService {
        private volatile boolean shut;

        @Override
        public void execute(Runnable r) {
            r.run();
        }

        @Override
        public void shutdown() {
            shut = true;
        }

        @Override
        public List<Runnable> shutdownNow() {
            shut = true;
            return List.of();
        }

        @Override
        public boolean isShutdown() {
            return shut;
        }

        @Override
        public boolean isTerminated() {
            return shut;
        }

        @Override
        public boolean awaitTermination(long timeout, TimeUnit unit) {
            return true;
        }
    }

    /**
     * Spins for {@code nanos} inside a hooked invokeAll; returns the longest time (ns) it ran user
     * code still in _Gsyscall after the other goroutine started ({@code otherAt}, nanoTime).
     */
    public static long spinInsideInvokeAll(AtomicLong otherAt, long nanos) throws Exception {
        ExecutorService es = new Direct();
        Callable<Long> task = () -> spinNoting(otherAt, nanos);
        return es.invokeAll(List.of(task)).get(0).get();
    }

    /** A library's queue: a subclass of a JDK queue whose take runs its own code (here, it spins). */
    static final class SpinningQueue extends java.util.concurrent.LinkedBlockingQueue<Long> {
        private final AtomicLong otherAt;
        private final long nanos;

        SpinningQueue(AtomicLong otherAt, long nanos) {
            this.otherAt = otherAt;
            this.nanos = nanos;
        }

        @Override
        public Long take() {
            return spinNoting(otherAt, nanos);
        }
    }

    /**
     * Spins for {@code nanos} inside a {@code take} that the call site names
     * {@code BlockingQueue.take} (one of the agent's blocking calls) on a library's queue; returns
     * what {@link #spinInsideInvokeAll} returns.
     */
    public static long spinInsideTake(AtomicLong otherAt, long nanos) throws InterruptedException {
        java.util.concurrent.BlockingQueue<Long> q = new SpinningQueue(otherAt, nanos);
        return q.take();
    }

    /**
     * Spins for {@code nanos}; returns the longest time (ns) it ran still in _Gsyscall after the
     * other goroutine started ({@code otherAt}, nanoTime).
     */
    static long spinNoting(AtomicLong otherAt, long nanos) {
        long end = System.nanoTime() + nanos;
        long max = 0;
        long now;
        while ((now = System.nanoTime()) < end) {
            long at = otherAt.get();
            if (at != 0 && Scheduler.getg().readgstatus() == G._Gsyscall) {
                max = Math.max(max, now - at);
            }
        }
        return max;
    }

    /** Notes when it started ({@code at}), then spins for {@code nanos}. */
    public static void other(AtomicLong at, long nanos) {
        at.set(System.nanoTime());
        long end = System.nanoTime() + nanos;
        while (System.nanoTime() < end) {
            Thread.onSpinWait();
        }
    }
}
