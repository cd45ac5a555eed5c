package dev.gort.runtime;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

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

    /** The screen's, the scan's and the full walk's verdicts, in that order, where they were asked. */
    private static int[] verdicts() {
        return new int[] {LockFrames.screen(), LockFrames.scan(), LockFrames.walk()};
    }

    private static int[] verdictsInAGoroutine(java.util.function.Consumer<int[][]> body) {
        // the pom exports jdk.internal.misc to the tests, as the agent does to a user's program:
        // without it the screen cannot clear anything and these tests would test nothing
        assertTrue(LockFrames.screened(), "the screen is off: jdk.internal.misc is not exported to gort");
        int[][] seen = {null};
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

    /**
     * The screen (the frames' classes alone) cannot clear a stack with a JDK frame of a class that
     * has lock-holding methods: it sends the scan on to the full walk, which names the lock.
     */
    @Test
    void theScreenSendsAJdkLockFrameToTheFullWalk() {
        int[] seen = verdictsInAGoroutine(out -> {
            java.util.Hashtable<Object, Object> t = new java.util.Hashtable<>();
            t.put(
                    new Object() {
                        @Override
                        public int hashCode() {
                            out[0] = verdicts(); // inside Hashtable.put, a synchronized method
                            return 1;
                        }
                    },
                    "v");
        });
        assertArrayEquals(new int[] {LockFrames.SUSPECT, LockFrames.JDK_LOCK, LockFrames.JDK_LOCK}, seen);
    }

    /** Initialised on first use, inside a goroutine: its initialiser asks for the verdicts. */
    static final class AskedInItsInitialiser {
        static final int[] SEEN = verdicts();
    }

    /**
     * A class initialiser on the stack (no agent here: no counter saw it) is a frame of a class not
     * yet initialised, which the screen cannot clear: the full walk finds the initialiser.
     */
    @Test
    void theScreenSendsAClassInitialiserToTheFullWalk() {
        int[] seen = verdictsInAGoroutine(out -> out[0] = AskedInItsInitialiser.SEEN);
        assertArrayEquals(new int[] {LockFrames.SUSPECT, LockFrames.CLINIT, LockFrames.CLINIT}, seen);
    }

    /** The control: a stack of initialised classes that hold nothing is cleared by the screen alone. */
    @Test
    void theScreenClearsAPlainStack() {
        int[] seen = verdictsInAGoroutine(out -> out[0] = verdicts());
        assertArrayEquals(new int[] {LockFrames.CLEAR, LockFrames.NONE, LockFrames.NONE}, seen);
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
