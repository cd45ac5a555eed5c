package dev.gort;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gort.runtime.Config;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Go 1.25's own synctest tests (src/internal/synctest/synctest_test.go) that {@link SynctestTest}
 * does not already cover, one method per Go test (named after it), each asserting what Go's does.
 */
@Timeout(60)
class GoSynctestPortsTest {
    static final Instant EPOCH = SynctestTest.EPOCH;

    static Config config(int procs) {
        return SynctestTest.config(procs);
    }

    /** New goroutines see the bubble's clock, which starts at 2000-01-01 and moves with sleeps. */
    @Test
    void testNow() {
        Synctest.test(() -> {
            assertEquals(EPOCH, Time.now());
            Chan<Instant> seen = Chan.make(1);
            Go.go(() -> seen.send(Time.now()));
            Time.sleep(Duration.ofSeconds(1));
            assertEquals(EPOCH, seen.recv());
            assertEquals(EPOCH.plusSeconds(1), Time.now());
        });
    }

    /** Times from outside a bubble compare with the bubble's: sleeping until one reaches it. */
    @Test
    void testMonotonicClock() {
        Instant start = Instant.now();
        Synctest.test(() -> {
            Time.sleep(Time.until(start));
            assertEquals(start, Time.now());
            Time.sleep(Duration.ofSeconds(1));
            assertEquals(Duration.ofSeconds(1), Time.since(start));
        });
    }

    /** TestRunEmpty, TestSimpleWait, TestGoroutineWait: nothing to wait for returns at once. */
    @Test
    void testRunEmptySimpleWaitAndGoroutineWait() {
        Synctest.test(() -> {});
        Synctest.test(Synctest::waitBubble);
        Synctest.test(() -> {
            Go.go(() -> {});
            Synctest.waitBubble();
        });
    }

    /** Wait returns only once a chain of 100 goroutines, each starting the next, has finished. */
    @Test
    void testWait() {
        Synctest.test(() -> {
            AtomicBoolean done = new AtomicBoolean();
            Chan<Integer> ch = Chan.make();
            Runnable[] f = new Runnable[1];
            f[0] = () -> {
                int count = ch.recv();
                if (count == 0) {
                    done.set(true);
                } else {
                    Go.go(f[0]);
                    ch.send(count - 1);
                }
            };
            Go.go(f[0]);
            ch.send(100);
            Synctest.waitBubble();
            assertTrue(done.get());
        });
    }

    /** A timer read after its deadline gives the instant it was due, not the instant it was read. */
    @Test
    void testTimerReadAfterDeadline() {
        Synctest.test(() -> {
            Instant want = Time.now().plusSeconds(1);
            Timer tm = Time.newTimer(Duration.ofSeconds(1));
            Time.sleep(Duration.ofSeconds(2));
            assertEquals(want, tm.c().recv());
        });
    }

    /** TestTimerRanInPast: the same through a non-blocking receive (select with default). */
    @Test
    void testTimerRanInPast() {
        Synctest.test(() -> {
            Instant want = Time.now().plusSeconds(1);
            Timer tm = Time.newTimer(Duration.ofSeconds(1));
            Time.sleep(Duration.ofSeconds(2));
            Chan.Received<Instant> r = tm.c().tryRecv();
            assertNotNull(r, "the timer channel is readable");
            assertEquals(want, r.value());
        });
    }

    /** A 0-duration timer's channel is readable at once, without the bubble blocking. */
    @Test
    void testTimerRunsImmediately() {
        Synctest.test(() -> {
            Timer tm = Time.newTimer(0);
            Chan.Received<Instant> r = tm.c().tryRecv();
            assertNotNull(r, "0-duration timer channel is readable");
            assertEquals(EPOCH, r.value());
        });
    }

    /** Reset moves a timer to the new instant, whether it fired, is pending or was slept past. */
    @Test
    void testTimerReset() {
        Synctest.test(() -> {
            Instant start = Time.now();
            Timer tm = Time.newTimer(Duration.ofSeconds(1));
            assertEquals(start.plusSeconds(1), tm.c().recv());
            tm.reset(Duration.ofSeconds(2));
            assertEquals(start.plusSeconds(1 + 2), tm.c().recv());
            tm.reset(Duration.ofSeconds(3));
            Time.sleep(Duration.ofSeconds(1));
            tm.reset(Duration.ofSeconds(3));
            assertEquals(start.plusSeconds(1 + 2 + 4), tm.c().recv());
        });
    }

    /** An afterFunc's goroutine, and the goroutines it starts, are in the bubble. */
    @Test
    void testTimeAfter() {
        Synctest.test(() -> {
            AtomicInteger i = new AtomicInteger();
            Time.afterFunc(Duration.ofSeconds(1), () -> {
                i.incrementAndGet(); // 1
                Go.go(() -> {
                    Time.sleep(Duration.ofSeconds(1));
                    i.incrementAndGet(); // 2
                });
            });
            Time.sleep(Duration.ofSeconds(3));
            Synctest.waitBubble();
            assertEquals(2, i.get());
        });
    }

    /** A pending afterFunc left when the bubble ends never runs (and is no deadlock). */
    @Test
    void testTimerAfterBubbleExit() {
        AtomicBoolean run = new AtomicBoolean();
        Synctest.test(() -> Time.afterFunc(Duration.ofSeconds(1), () -> run.set(true)));
        assertFalse(run.get(), "timer ran before bubble exit");
    }

    /** A timer made outside runs on the real clock even when a bubble goroutine receives from it. */
    @Test
    void testTimerFromOutsideBubble() {
        Go.run(config(2), () -> {
            Timer tm = Time.newTimer(10 * Time.MILLISECOND);
            Synctest.test(() -> tm.c().recv());
            assertFalse(tm.stop(), "Test returned before the timer fired");
        });
    }

    /** A goroutine ranging over a ticker is blocked for good once main has exited. */
    @Test
    void testDeadlockTicker() {
        AtomicBoolean ticked = new AtomicBoolean();
        PanicError e = assertThrows(
                PanicError.class,
                () -> Synctest.test(() -> Go.go(() -> {
                    for (Instant t : Time.tick(Duration.ofSeconds(1))) {
                        ticked.set(true);
                        return;
                    }
                })));
        assertEquals("deadlock: main bubble goroutine has exited but blocked goroutines remain", e.getMessage());
        assertFalse(ticked.get(), "ticker unexpectedly ran");
    }

    /**
     * TestChannelFromOutsideBubble: a bubble goroutine may wait on a channel made outside (not
     * durably: the outside wakes it), whether it is closed, sent on, received from, or selected
     * on alone or with a bubble channel.
     */
    @Test
    void testChannelFromOutsideBubble() {
        Go.run(config(2), () -> {
            Chan<Void> choutside = Chan.make();
            record Case(
                    String desc,
                    java.util.function.Consumer<Chan<Integer>> outside,
                    java.util.function.Consumer<Chan<Integer>> inside) {}
            for (Case c : java.util.List.of(
                    new Case("read closed", Chan::close, Chan::recv),
                    new Case("read value", ch -> ch.send(0), Chan::recv),
                    new Case("write value", Chan::recv, ch -> ch.send(0)),
                    new Case(
                            "select outside only",
                            Chan::close,
                            ch -> Select.select(Select.recv(ch, () -> {}), Select.recv(choutside, () -> {}))),
                    new Case("select mixed", Chan::close, ch -> {
                        Chan<Void> ch2 = Chan.make();
                        Select.select(Select.recv(ch, () -> {}), Select.recv(ch2, () -> {}));
                    }))) {
                Chan<Integer> ch = Chan.make();
                Time.afterFunc(Time.MILLISECOND, () -> c.outside().accept(ch));
                Synctest.test(() -> c.inside().accept(ch));
            }
        });
    }

    /** TestChannelMovedOutOfBubble, different_bubble: a bubble's channel used in another bubble panics. */
    @Test
    void testChannelMovedToAnotherBubble() {
        Go.run(config(2), () -> {
            AtomicReference<Chan<Void>> made = new AtomicReference<>();
            Synctest.test(() -> made.set(Chan.make()));
            Chan<Void> c = made.get();
            AtomicReference<String> recv = new AtomicReference<>();
            AtomicReference<String> send = new AtomicReference<>();
            AtomicReference<String> close = new AtomicReference<>();
            Synctest.test(() -> {
                recv.set(assertThrows(PanicError.class, c::recv).getMessage());
                send.set(assertThrows(PanicError.class, () -> c.send(null)).getMessage());
                close.set(assertThrows(PanicError.class, c::close).getMessage());
            });
            assertEquals("receive on synctest channel from outside bubble", recv.get());
            assertEquals("send on synctest channel from outside bubble", send.get());
            assertEquals("close of synctest channel from outside bubble", close.get());
        });
    }

    /**
     * Wait orders what other goroutines did before they blocked or exited (goroutines, blocked
     * goroutines, afterFunc goroutines, blocked afterFunc goroutines) before what follows it, and
     * Test's return orders all of it before the caller.
     */
    @Test
    void testHappensBefore() {
        int[] v1 = {0};
        int[] v2 = {0};
        Synctest.test(() -> {
            v1[0]++; // 1
            v2[0]++; // 1
            Go.go(() -> v1[0]++); // 2
            Go.go(() -> v2[0]++); // 2
            Synctest.waitBubble();
            v1[0]++; // 3
            v2[0]++; // 3
            Chan<Void> ch1 = Chan.make();
            Go.go(() -> {
                v1[0]++; // 4
                ch1.recv();
            });
            Go.go(() -> {
                v2[0]++; // 4
                ch1.recv();
            });
            Synctest.waitBubble();
            v1[0]++; // 5
            v2[0]++; // 5
            ch1.close();
            Time.afterFunc(0, () -> v1[0]++); // 6
            Time.afterFunc(0, () -> v2[0]++); // 6
            Synctest.waitBubble();
            v1[0]++; // 7
            v2[0]++; // 7
            Chan<Void> ch2 = Chan.make();
            Time.afterFunc(0, () -> {
                v1[0]++; // 8
                ch2.recv();
            });
            Time.afterFunc(0, () -> {
                v2[0]++; // 8
                ch2.recv();
            });
            Synctest.waitBubble();
            v1[0]++; // 9
            v2[0]++; // 9
            ch2.close();
        });
        Synctest.test(() -> {
            Go.go(() -> Go.go(() -> v1[0]++)); // 10
            Go.go(() -> Go.go(() -> v2[0]++)); // 10
        });
        assertEquals(10, v1[0]);
        assertEquals(10, v2[0]);
    }
}
