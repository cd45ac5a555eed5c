package dev.gort.agent;

import dev.gort.runtime.G;
import dev.gort.runtime.Scheduler;
import dev.gort.runtime.WaitReason;
import java.util.ArrayDeque;

/** A counting semaphore whose waiters park as goroutines (gopark/goready), for these tests. */
final class GSema {
    private final Object lock = new Object();
    private int count;
    private final ArrayDeque<G> waiters = new ArrayDeque<>();

    void acquire() {
        for (; ; ) {
            synchronized (lock) {
                if (count > 0) {
                    count--;
                    return;
                }
            }
            Scheduler.gopark(
                    (G gp, GSema s) -> {
                        synchronized (s.lock) {
                            if (s.count > 0) {
                                return false;
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
            w.scheduler().goready(w);
        }
    }
}
