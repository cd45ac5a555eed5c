package dev.gort.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * {@link LockFrames#scan()} inside callbacks the JDK runs under a {@code ReentrantLock} it took
 * itself, which no agent hook counts: a poll there must refuse (a preemption in place keeps the
 * carrier too). A {@code CyclicBarrier}'s action preempted and resumed on another carrier threw
 * {@code IllegalMonitorStateException} from the barrier's unlock and left the lock held (a new
 * user's program hung, 8 of 13 runs).
 */
class JdkLockFramesTest {
    private static int scanInAGoroutine(java.util.function.Consumer<int[]> body) {
        int[] seen = {-1};
        new Scheduler(TestSupport.config(1)).run(() -> body.accept(seen));
        return seen[0];
    }

    @Test
    void aBarrierActionRunsInsideAJdkLock() {
        int seen = scanInAGoroutine(out -> {
            try {
                new CyclicBarrier(1, () -> out[0] = LockFrames.scan()).await();
            } catch (Exception e) {
                throw new AssertionError(e);
            }
        });
        assertEquals(LockFrames.JDK_LOCK, seen);
    }

    @Test
    void anExecutorsTerminatedHookRunsInsideAJdkLock() {
        int seen = scanInAGoroutine(out -> {
            ThreadPoolExecutor ex = new ThreadPoolExecutor(1, 1, 1, TimeUnit.SECONDS, new LinkedBlockingQueue<>()) {
                @Override
                protected void terminated() {
                    out[0] = LockFrames.scan();
                }
            };
            ex.shutdown(); // no worker: tryTerminate runs terminated() here, under mainLock
        });
        assertEquals(LockFrames.JDK_LOCK, seen);
    }

    /** The control: the same scan outside any JDK lock finds nothing. */
    @Test
    void aPlainCallIsNoLockFrame() {
        assertEquals(LockFrames.NONE, scanInAGoroutine(out -> out[0] = LockFrames.scan()));
    }
}
