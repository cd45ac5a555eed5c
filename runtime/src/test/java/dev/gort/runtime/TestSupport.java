package dev.gort.runtime;

import java.util.ArrayDeque;

/** Minimal blocking primitives built straight on gopark/goready, for core tests (no channels yet). */
final class TestSupport {
    private TestSupport() {}

    static Config config(int procs) {
        return Config.fromEnvironment().withGomaxprocs(procs).withPanicExits(false);
    }

    /** A counting semaphore whose waiters park as goroutines (FIFO). */
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
                G me = Scheduler.currentG();
                final boolean[] parkedOk = new boolean[1];
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

        void release() {
            G w;
            synchronized (lock) {
                count++;
                w = waiters.poll();
            }
            if (w != null) {
                w.sched.goready(w);
            }
        }
    }
}
