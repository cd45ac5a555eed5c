package dev.gort.agent.work;

import dev.gort.runtime.G;
import dev.gort.runtime.Syscalls;
import java.util.concurrent.atomic.AtomicBoolean;

/** Review repros for the blocking-call hooks and Thread.yield in place. */
public final class BlockingReview {
    private BlockingReview() {}

    /**
     * Inside the goroutine's own syscall ({@code Syscall.block}: the P stays with the M in the
     * default model until sysmon takes it), holding a monitor, yields until {@code go} is set.
     * Returns the number of yields.
     */
    public static int yieldLockedInOwnSyscall(Object lock, AtomicBoolean go) {
        G gp = Syscalls.entersyscall();
        try {
            synchronized (lock) {
                int n = 0;
                while (!go.get()) {
                    Thread.yield();
                    n++;
                }
                return n;
            }
        } finally {
            Syscalls.exitsyscall(gp);
        }
    }

    /** An element whose comparison spins with Thread.yield() until {@code go}. */
    public static final class Spin implements Comparable<Spin> {
        private final Object lock;
        private final AtomicBoolean go;
        int yields;

        Spin(Object lock, AtomicBoolean go) {
            this.lock = lock;
            this.go = go;
        }

        @Override
        public int compareTo(Spin o) {
            // No monitor of its own (its hook would leave the syscall): PriorityBlockingQueue.offer
            // holds the queue's lock around this call, a JDK lock (LockFrames: R_JDK_LOCK).
            while (!go.get()) {
                Thread.yield();
                yields++;
            }
            return 0;
        }
    }

    /**
     * A hooked blocking call ({@code PriorityBlockingQueue.put}: blockingEnter, a HOOK syscall
     * whose M keeps its P in the default model) whose JDK callee calls back into instrumented
     * code ({@code compareTo}) that yields inside the queue's lock. Returns the yields.
     */
    public static int putSpinning(Object lock, AtomicBoolean go) throws InterruptedException {
        java.util.concurrent.PriorityBlockingQueue<Spin> q = new java.util.concurrent.PriorityBlockingQueue<>();
        Spin a = new Spin(lock, go);
        Spin b = new Spin(lock, go);
        q.put(a); // nothing to compare with
        q.put(b); // b.compareTo(a) inside the hooked put
        return a.yields + b.yields;
    }
}
