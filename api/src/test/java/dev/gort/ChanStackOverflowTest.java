package dev.gort;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.gort.runtime.GortFatalError;
import dev.gort.sync.Mutex;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * A StackOverflowError inside a channel, select or semaphore operation never leaks the lock (issue
 * 12, defect 4). A goroutine recurses until the stack overflows and, unwinding, performs the
 * operation at every depth, catching StackOverflowError each time: near the bottom the operation
 * overflows at its entry (harmless: nothing was locked, the program goes on), a little higher it
 * overflows inside the locked section or between dequeuing a waiter and readying it. Go's answer
 * to a stack overflow in the runtime is {@code fatal error: stack overflow}; before the fix the
 * lock stayed held and the next operation on it spun forever (100 % CPU, no error). Now the run
 * either ends normally with every value accounted for, or dies with that fatal error; it never
 * hangs.
 */
class ChanStackOverflowTest {
    private static final Duration LIMIT = Duration.ofSeconds(60);

    @Test
    void unbufferedSendsAtEveryDepthNeverHang() {
        runOps(c -> c.send(1), false);
    }

    @Test
    void bufferedSendsAtEveryDepthNeverHang() {
        runOps(c -> c.send(1), true);
    }

    @Test
    void selectsAtEveryDepthNeverHang() {
        runOps(c -> Select.select(Select.send(c, 1, () -> {})), false);
    }

    @Test
    void mutexAtEveryDepthNeverHangs() {
        AtomicLong held = new AtomicLong();
        outcome(() -> {
            Mutex mu = new Mutex();
            Chan<Boolean> done = Chan.make();
            // A contender keeps the mutex's semaphore busy, so that unlock has a waiter to wake.
            Go.go(() -> {
                for (int i = 0; i < 20_000; i++) {
                    mu.lock();
                    mu.unlock();
                }
                done.send(true);
            });
            Runnable critical = () -> {
                mu.lock();
                held.incrementAndGet();
                mu.unlock();
            };
            critical.run();
            deep(0, critical);
            done.recv();
        });
    }

    interface Op {
        void run(Chan<Integer> c);
    }

    /** Receiver G counts what arrives; main sends at every depth of an overflowing recursion. */
    private static void runOps(Op op, boolean buffered) {
        AtomicLong sent = new AtomicLong();
        AtomicLong received = new AtomicLong();
        boolean completed = outcome(() -> {
            Chan<Integer> c = buffered ? Chan.make(4) : Chan.make();
            Chan<Boolean> done = Chan.make();
            Go.go(() -> {
                for (Integer v : c) {
                    received.addAndGet(v);
                }
                done.send(true);
            });
            Runnable send = () -> {
                op.run(c);
                sent.incrementAndGet();
            };
            send.run(); // classes initialised and call sites linked at a shallow depth first
            deep(0, send);
            c.close();
            done.recv();
        });
        if (completed) {
            assertEquals(sent.get(), received.get(), "every value sent was received exactly once");
            assertTrue(sent.get() > 0);
        }
    }

    /** True if the program ended normally; false if it died with Go's stack-overflow fatal error. */
    private static boolean outcome(Runnable main) {
        try {
            GortTesting.run(2, LIMIT, main);
            return true;
        } catch (GortFatalError e) {
            assertEquals("stack overflow", e.getMessage());
            return false;
        } catch (AssertionError e) {
            if (e.getMessage() != null && e.getMessage().contains("did not return")) {
                fail("hung: a lock left held after a StackOverflowError", e);
            }
            throw e;
        }
    }

    /** Recurses until the stack overflows, then runs op once per frame on the way back up. */
    private static int deep(int d, Runnable op) {
        int r = d;
        try {
            r = deep(d + 1, op);
        } catch (StackOverflowError e) {
            // the bottom: unwind
        }
        try {
            op.run();
        } catch (StackOverflowError e) {
            // too deep for this operation: it had no effect (or the runtime died loudly)
        }
        return r;
    }
}
