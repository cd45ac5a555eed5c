package dev.gort.runtime.trace;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gort.runtime.ExternalWaker;
import dev.gort.runtime.GoSema;
import dev.gort.runtime.GortFatalError;
import dev.gort.runtime.Scheduler;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Tracer's trace sections (Tracer.sectionBegin): a trace start takes its snapshot only once every
 * section under way has ended, nested ones counted once, and an end without a begin is a fatal
 * error. Deterministic: the start is observed waiting (its flag up, no session published) while
 * a thread outside the runtime holds a section open, and finishing once it closes
 * ({@link Tracer#startsThatWaited} says that it found one open).
 */
@Timeout(60)
class TraceSectionsTest {
    @ParameterizedTest(name = "depth={0}")
    @ValueSource(ints = {1, 2})
    void aStartWaitsOutTheSectionsUnderWay(int depth) throws Exception {
        Scheduler s = new Scheduler(Workloads.config(2, true));
        List<String> failures = new ArrayList<>();
        s.run(() -> {
            Scheduler rt = Scheduler.current();
            Tracer tr = rt.trace;
            CountDownLatch open = new CountDownLatch(1);
            CountDownLatch[] close = new CountDownLatch[depth];
            CountDownLatch[] closed = new CountDownLatch[depth];
            for (int i = 0; i < depth; i++) {
                close[i] = new CountDownLatch(1);
                closed[i] = new CountDownLatch(1);
            }
            Thread inside = new Thread(
                    () -> { // a thread outside the runtime, in a (nested) section
                        for (int i = 0; i < depth; i++) {
                            tr.sectionBegin(null);
                        }
                        open.countDown();
                        for (int i = 0; i < depth; i++) {
                            await(close[i]);
                            tr.sectionEnd(null);
                            closed[i].countDown();
                        }
                    });
            GoSema started = new GoSema("started", 0);
            ExternalWaker waker = rt.externalWaker();
            Thread starter = new Thread(
                    () -> { // a trace start from outside: it waits for the section
                        try (waker) {
                            await(open);
                            tr.start();
                            started.release();
                        }
                    });
            Thread checker = new Thread(() -> {
                await(open);
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
                while (tr.startsThatWaited() == 0 && System.nanoTime() < deadline) {
                    Thread.onSpinWait(); // the start reaches its wait (its goroutine stops the world first)
                }
                check(failures, tr.startsThatWaited() == 1, "the start did not wait for the open section");
                for (int i = 0; i < depth; i++) {
                    check(
                            failures,
                            !tr.recording() && tr.snapshotting(),
                            "a session was published with a section open");
                    close[i].countDown();
                    await(closed[i]);
                }
            });
            inside.start();
            starter.start();
            checker.start();
            started.acquire(); // this goroutine parks: the P is free for the start's goroutine
            check(failures, tr.recording() && !tr.snapshotting(), "the start did not finish once the section ended");
            tr.stop();
            join(inside);
            join(starter);
            join(checker);
        });
        assertEquals(List.of(), failures);
    }

    @Test
    void anEndWithoutABeginIsAFatalError() throws InterruptedException {
        Scheduler s = new Scheduler(Workloads.config(1, true));
        GortFatalError e = assertThrows(GortFatalError.class, () -> s.trace.sectionEnd(null));
        assertTrue(e.getMessage().contains("traceRelease: a trace section ended that had not begun"), e.getMessage());
        s.trace.sectionBegin(null); // the depth is whole again: a balanced pair still works
        s.trace.sectionEnd(null);
        // And so is the count: a start finds no section open. A stuck count would keep the start
        // spinning: on a daemon thread, so that the test fails instead of hanging.
        Thread starter = new Thread(s.trace::start);
        starter.setDaemon(true);
        starter.start();
        starter.join(TimeUnit.SECONDS.toMillis(20));
        assertFalse(starter.isAlive(), "the start is still waiting for a section");
        assertEquals(0, s.trace.startsThatWaited());
        assertTrue(s.trace.recording());
        s.trace.stop();
    }

    private static void check(List<String> failures, boolean ok, String what) {
        if (!ok) {
            synchronized (failures) {
                failures.add(what);
            }
        }
    }

    private static void await(CountDownLatch l) {
        try {
            if (!l.await(20, TimeUnit.SECONDS)) {
                throw new AssertionError("timed out");
            }
        } catch (InterruptedException e) {
            throw new AssertionError(e);
        }
    }

    private static void join(Thread t) {
        try {
            t.join(TimeUnit.SECONDS.toMillis(20));
        } catch (InterruptedException e) {
            throw new AssertionError(e);
        }
    }
}
