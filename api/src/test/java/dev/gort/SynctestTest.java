package dev.gort;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gort.context.CancelContext;
import dev.gort.context.Context;
import dev.gort.runtime.Bubble;
import dev.gort.runtime.Config;
import dev.gort.runtime.ExternalWaker;
import dev.gort.runtime.G;
import dev.gort.runtime.Scheduler;
import dev.gort.runtime.WaitReason;
import dev.gort.sync.Cond;
import dev.gort.sync.Mutex;
import dev.gort.sync.WaitGroup;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Go 1.25's testing/synctest rules (src/testing/synctest, runtime/synctest.go, and Go's
 * internal/synctest tests): the fake clock, durable blocking, Wait, the deadlock panics, misuse
 * from outside a bubble. Nothing here sleeps for real: every wait is the bubble's own.
 */
@Timeout(60)
class SynctestTest {
    static final Instant EPOCH = Instant.parse("2000-01-01T00:00:00Z");

    static Config config(int procs) {
        return Config.fromEnvironment().withGomaxprocs(procs).withPanicExits(false);
    }

    /** Each scenario, run once; {@link #everyScenarioRepeats100TimesIdentically} runs them 100 times. */
    static String sleepChain() {
        List<String> log = new ArrayList<>();
        long wall = System.nanoTime();
        Synctest.test(() -> {
            log.add("start " + Time.now());
            for (int i = 0; i < 3600; i++) {
                Time.sleep(Duration.ofSeconds(1));
            }
            log.add("end " + Time.now() + " since " + Time.since(EPOCH));
        });
        // A hang guard only (the fake hour must not take a real one); the results are fake times.
        assertTrue(System.nanoTime() - wall < 10 * Time.SECOND, "a fake hour took real seconds");
        return String.join("; ", log);
    }

    @Test
    void anHourOfSleepsIsAnHourOfFakeTime() {
        Go.run(
                config(2),
                () -> assertEquals("start 2000-01-01T00:00:00Z; end 2000-01-01T01:00:00Z since PT1H", sleepChain()));
    }

    static String contextDeadline() {
        List<String> log = new ArrayList<>();
        Synctest.test(() -> {
            CancelContext ctx = Context.withTimeout(Context.background(), Duration.ofSeconds(5));
            log.add("deadline " + ctx.deadline().orElseThrow());
            Time.sleep(5 * Time.SECOND - 1);
            Synctest.waitBubble();
            log.add("at " + Time.now() + " err " + ctx.err());
            Time.sleep(1);
            Synctest.waitBubble();
            log.add("at " + Time.now() + " err " + ctx.err());
            ctx.done().recv(); // closed: returns at once
            ctx.cancel();
        });
        return String.join("; ", log);
    }

    @Test
    void aContextDeadlineFiresAtItsExactFakeInstant() {
        Go.run(
                config(2),
                () -> assertEquals(
                        "deadline 2000-01-01T00:00:05Z; at 2000-01-01T00:00:04.999999999Z err null;"
                                + " at 2000-01-01T00:00:05Z err context deadline exceeded",
                        contextDeadline()));
    }

    static String ticker() {
        List<String> log = new ArrayList<>();
        Synctest.test(() -> {
            Ticker t = Time.newTicker(Duration.ofMillis(1500));
            for (int i = 0; i < 4; i++) {
                Instant tick = t.c().recv();
                log.add(tick + "@" + Time.now());
            }
            t.stop();
        });
        return String.join("; ", log);
    }

    @Test
    void aTickerTicksAtExactFakeInstants() {
        Go.run(
                config(2),
                () -> assertEquals(
                        "2000-01-01T00:00:01.500Z@2000-01-01T00:00:01.500Z; 2000-01-01T00:00:03Z@2000-01-01T00:00:03Z;"
                                + " 2000-01-01T00:00:04.500Z@2000-01-01T00:00:04.500Z; 2000-01-01T00:00:06Z@2000-01-01T00:00:06Z",
                        ticker()));
    }

    static String afterFuncAndTimers() {
        List<String> log = Collections.synchronizedList(new ArrayList<>());
        Synctest.test(() -> {
            Time.afterFunc(
                    Duration.ofMinutes(3),
                    () -> log.add("afterFunc " + Time.now() + " bubbled " + Synctest.isInBubble()));
            Timer stopped = Time.afterFunc(Duration.ofMinutes(1), () -> log.add("stopped timer ran"));
            assertTrue(stopped.stop());
            Instant at = Time.after(Duration.ofMinutes(2)).recv();
            log.add("after " + at + " now " + Time.now());
            Time.sleep(Duration.ofMinutes(5));
            log.add("slept to " + Time.now());
        });
        return String.join("; ", log);
    }

    @Test
    void afterFuncAndAfterFireAtExactFakeInstantsAndAStoppedTimerMovesNoClock() {
        Go.run(
                config(2),
                () -> assertEquals(
                        "after 2000-01-01T00:02:00Z now 2000-01-01T00:02:00Z;"
                                + " afterFunc 2000-01-01T00:03:00Z bubbled true; slept to 2000-01-01T00:07:00Z",
                        afterFuncAndTimers()));
    }

    /**
     * Go's TestAfterFuncRunsImmediately: an afterFunc timer of a bubble that is due when it is set
     * runs at once, in the goroutine that sets it, not once every goroutine of the bubble has
     * blocked: afterFunc(0) starts f while main keeps running (here main only yields, never
     * blocks), and so does a reset to 0 of one that has run.
     */
    @Test
    void anAfterFuncDueWhenSetRunsWithoutWaitingForTheBubbleToBlock() {
        Go.run(
                config(1),
                () -> Synctest.test(() -> {
                    java.util.concurrent.atomic.AtomicInteger runs = new java.util.concurrent.atomic.AtomicInteger();
                    Timer t = Time.afterFunc(0, () -> {
                        if (Synctest.isInBubble() && Time.now().equals(EPOCH)) {
                            runs.incrementAndGet();
                        }
                    });
                    yieldUntil(() -> runs.get() == 1, "afterFunc(0, f) never started f in the bubble");
                    assertFalse(t.reset(-1), "the timer had run");
                    yieldUntil(() -> runs.get() == 2, "reset(-1) of a timer that ran never started f again");
                }));
    }

    /** Yields (main never blocks, so the bubble's clock cannot move) until done holds. */
    private static void yieldUntil(java.util.function.BooleanSupplier done, String failure) {
        for (int i = 0; i < 100_000 && !done.getAsBoolean(); i++) {
            Go.gosched();
        }
        assertTrue(done.getAsBoolean(), failure);
    }

    /**
     * Go's TestTimerNondeterminism and TestSleepNondeterminism: timers due at the same instant
     * fire, and goroutines sleeping to the same instant wake, in no fixed order (Go ranks a
     * bubble's timers at random as they enter its heap), so that no test comes to rely on one. At
     * GOMAXPROCS=1 the order used to be always the same: the first timer made fired first, the
     * last sleeper readied ran first.
     */
    @Test
    void timersDueAtTheSameInstantFireInNoFixedOrder() {
        Go.run(
                config(1),
                () -> Synctest.test(() -> {
                    boolean[] seen = new boolean[2];
                    for (int i = 0; i < 1000 && !(seen[0] && seen[1]); i++) {
                        Timer tm1 = Time.newTimer(1);
                        Timer tm2 = Time.newTimer(1);
                        Select.select(
                                Select.recv(tm1.c(), () -> seen[0] = true), Select.recv(tm2.c(), () -> seen[1] = true));
                        Synctest.waitBubble();
                    }
                    assertTrue(seen[0] && seen[1], "timer 1 first: " + seen[0] + ", timer 2 first: " + seen[1]);
                }));
        Go.run(
                config(1),
                () -> Synctest.test(() -> {
                    boolean[] seen = new boolean[2];
                    for (int i = 0; i < 1000 && !(seen[0] && seen[1]); i++) {
                        java.util.concurrent.atomic.AtomicInteger first =
                                new java.util.concurrent.atomic.AtomicInteger();
                        Go.go(() -> {
                            Time.sleep(1);
                            first.compareAndSet(0, 1);
                        });
                        Go.go(() -> {
                            Time.sleep(1);
                            first.compareAndSet(0, 2);
                        });
                        Time.sleep(1);
                        Synctest.waitBubble();
                        seen[first.get() - 1] = true;
                    }
                    assertTrue(seen[0] && seen[1], "sleeper 1 first: " + seen[0] + ", sleeper 2 first: " + seen[1]);
                }));
    }

    static String waitSemantics() {
        List<String> log = Collections.synchronizedList(new ArrayList<>());
        Synctest.test(() -> {
            Chan<Integer> c = Chan.make();
            Go.go(() -> log.add("got " + c.recv() + " at " + Time.now()));
            Go.go(() -> {
                Time.sleep(Duration.ofSeconds(10));
                log.add("sleeper woke at " + Time.now());
            });
            Synctest.waitBubble(); // the receiver and the sleeper are durably blocked
            log.add("waited at " + Time.now()); // Wait moves no clock
            c.send(7);
            Synctest.waitBubble(); // the receiver has exited
            Time.sleep(Duration.ofSeconds(20));
            log.add("main at " + Time.now());
        });
        return String.join("; ", log);
    }

    @Test
    void waitReturnsWhenTheOthersAreDurablyBlockedAndMovesNoClock() {
        Go.run(
                config(2),
                () -> assertEquals(
                        "waited at 2000-01-01T00:00:00Z; got 7 at 2000-01-01T00:00:00Z;"
                                + " sleeper woke at 2000-01-01T00:00:10Z; main at 2000-01-01T00:00:20Z",
                        waitSemantics()));
    }

    static String syncDurable() {
        List<String> log = Collections.synchronizedList(new ArrayList<>());
        Synctest.test(() -> {
            Mutex mu = new Mutex();
            Cond cond = new Cond(mu);
            WaitGroup wg = new WaitGroup();
            boolean[] ready = {false};
            wg.add(1);
            Go.go(() -> {
                mu.lock();
                while (!ready[0]) {
                    cond.await(); // durable
                }
                mu.unlock();
                log.add("cond woke at " + Time.now());
                wg.done();
            });
            Go.go(() -> {
                Time.sleep(Duration.ofSeconds(3));
                mu.lock();
                ready[0] = true;
                cond.broadcast();
                mu.unlock();
            });
            wg.await(); // durable: the group is the bubble's
            log.add("wg done at " + Time.now());
        });
        return String.join("; ", log);
    }

    @Test
    void condAndABubbleWaitGroupAreDurable() {
        Go.run(
                config(2),
                () -> assertEquals(
                        "cond woke at 2000-01-01T00:00:03Z; wg done at 2000-01-01T00:00:03Z", syncDurable()));
    }

    static String deadlocks() {
        List<String> log = new ArrayList<>();
        PanicError all = assertThrows(
                PanicError.class, () -> Synctest.test(() -> Chan.<Integer>make().recv()));
        log.add(all.getMessage());
        Chan<Integer> leak = Chan.make(); // outside: the goroutine below blocks on its own channel
        PanicError exited = assertThrows(
                PanicError.class,
                () -> Synctest.test(() -> {
                    Chan<Integer> c = Chan.make();
                    Go.go(c::recv);
                    Time.sleep(Duration.ofSeconds(1)); // the goroutine is blocked before main exits
                }));
        log.add(exited.getMessage());
        assertEquals(0, leak.len());
        return String.join("; ", log);
    }

    @Test
    void aDeadlockedBubblePanicsTheRootWithGosMessages() {
        Go.run(
                config(2),
                () -> assertEquals(
                        "deadlock: all goroutines in bubble are blocked;"
                                + " deadlock: main bubble goroutine has exited but blocked goroutines remain",
                        deadlocks()));
    }

    @Test
    void testReturnsOnlyWhenEveryBubbleGoroutineHasExited() {
        Go.run(config(2), () -> {
            List<String> log = Collections.synchronizedList(new ArrayList<>());
            Synctest.test(() -> {
                // main returns at once; its goroutines still play ping-pong (no clock involved)
                for (int i = 1; i <= 3; i++) {
                    int n = i;
                    Go.go(() -> {
                        Chan<Integer> ping = Chan.make();
                        Chan<Integer> pong = Chan.make();
                        Go.go(() -> {
                            for (Integer v : ping) {
                                pong.send(v + 1);
                            }
                            pong.close();
                        });
                        int v = 0;
                        for (int k = 0; k < 100; k++) {
                            ping.send(v);
                            v = pong.recv();
                        }
                        ping.close();
                        pong.recv2();
                        log.add("g" + n + " " + v);
                    });
                }
            });
            Collections.sort(log);
            assertEquals(List.of("g1 100", "g2 100", "g3 100"), log);
            // Time stops once main has exited: goroutines left sleeping are a deadlock.
            assertEquals(
                    "deadlock: main bubble goroutine has exited but blocked goroutines remain",
                    assertThrows(PanicError.class, () -> Synctest.test(() -> Go.go(() -> Time.sleep(Time.HOUR))))
                            .getMessage());
        });
    }

    @Test
    void nestedBubblesPanicAsInGo() {
        Go.run(config(2), () -> {
            AtomicReference<String> msg = new AtomicReference<>();
            Synctest.test(() -> msg.set(assertThrows(PanicError.class, () -> Synctest.test(() -> {}))
                    .getMessage()));
            assertEquals("synctest.Run called from within a synctest bubble", msg.get());
            assertEquals(
                    "goroutine is not in a bubble",
                    assertThrows(PanicError.class, Synctest::waitBubble).getMessage());
        });
    }

    @Test
    void concurrentBubblesKeepClocksOfTheirOwn() {
        Go.run(config(2), () -> {
            List<String> log = Collections.synchronizedList(new ArrayList<>());
            WaitGroup wg = new WaitGroup();
            for (int i = 1; i <= 3; i++) {
                int n = i;
                wg.go(() -> Synctest.test(() -> {
                    Time.sleep(n * Time.HOUR);
                    log.add("bubble" + n + " " + Time.since(EPOCH));
                }));
            }
            wg.await();
            Collections.sort(log);
            assertEquals(List.of("bubble1 PT1H", "bubble2 PT2H", "bubble3 PT3H"), log);
        });
    }

    @Test
    void aBubbleChannelUsedFromOutsidePanics() {
        Go.run(config(2), () -> {
            AtomicReference<Chan<Integer>> ref = new AtomicReference<>();
            AtomicReference<Timer> timer = new AtomicReference<>();
            Synctest.test(() -> {
                ref.set(Chan.make(1));
                timer.set(Time.newTimer(Duration.ofSeconds(1)));
                timer.get().stop();
            });
            Chan<Integer> c = ref.get();
            assertEquals(
                    "send on synctest channel from outside bubble",
                    assertThrows(PanicError.class, () -> c.trySend(1)).getMessage());
            assertEquals(
                    "receive on synctest channel from outside bubble",
                    assertThrows(PanicError.class, c::tryRecv).getMessage());
            assertEquals(
                    "close of synctest channel from outside bubble",
                    assertThrows(PanicError.class, c::close).getMessage());
            assertEquals(
                    "select on synctest channel from outside bubble",
                    assertThrows(
                                    PanicError.class,
                                    () -> Select.select(Select.recv(c, v -> {}), Select.defaultCase(() -> {})))
                            .getMessage());
            assertEquals(
                    "reset of synctest timer from outside bubble",
                    assertThrows(PanicError.class, () -> timer.get().reset(1)).getMessage());
            // The other way round is allowed: a bubble goroutine may use an outside channel.
            Chan<Integer> outside = Chan.make(1);
            Synctest.test(() -> outside.send(3));
            assertEquals(3, outside.recv());
        });
    }

    /**
     * Go 1.25's WaitGroup association (Go's TestWaitGroupMovedIntoBubble, ...OutOfBubble,
     * ...BetweenBubblesWithNonZeroCount, ...BetweenBubblesAfterWait, TestWaitGroupOutOfBubble):
     * while its count is in use a group belongs to the bubble, or the outside, that Adds to it
     * (Done included); a Wait of its bubble that sees the count at zero ends the association.
     * Go's fatal errors are panics here.
     */
    @Test
    void aWaitGroupBelongsToOneBubbleUntilAWaitSeesItsCountAtZero() {
        String inAndOut = "sync: WaitGroup.Add called from inside and outside synctest bubble";
        Go.run(config(2), () -> {
            WaitGroup into = new WaitGroup();
            into.add(1);
            Synctest.test(() -> assertEquals(
                    inAndOut, assertThrows(PanicError.class, () -> into.add(1)).getMessage()));

            WaitGroup outOf = new WaitGroup();
            Synctest.test(() -> outOf.add(1));
            assertEquals(
                    inAndOut, assertThrows(PanicError.class, () -> outOf.add(1)).getMessage());
            assertEquals(inAndOut, assertThrows(PanicError.class, outOf::done).getMessage());

            WaitGroup between = new WaitGroup();
            Synctest.test(() -> between.add(1));
            Synctest.test(() -> assertEquals(
                    "sync: WaitGroup.Add called from multiple synctest bubbles",
                    assertThrows(PanicError.class, () -> between.add(1)).getMessage()));

            // After a Wait with the count at zero, the group moves on: to another bubble, then out.
            WaitGroup reused = new WaitGroup();
            Synctest.test(() -> {
                reused.go(() -> Time.sleep(Time.SECOND));
                reused.await(); // durable: woken by the Done after the sleep (Add released it)
            });
            Synctest.test(() -> {
                reused.go(() -> {});
                Synctest.waitBubble(); // the Done came first: the Wait below finds zero
                reused.await();
            });
            reused.add(1);
            reused.done();

            // An outside group's Wait in a bubble is not durable: the clock waits for the Done.
            WaitGroup outside = new WaitGroup();
            outside.add(1);
            Chan<Instant> waited = Chan.make(1);
            Chan<Void> over = Chan.make();
            Go.go(() -> {
                Synctest.test(() -> {
                    Go.go(() -> Time.sleep(Time.HOUR));
                    outside.await();
                    waited.send(Time.now());
                    Time.sleep(Time.HOUR);
                });
                over.close();
            });
            Time.sleep(Time.MILLISECOND);
            outside.done();
            assertEquals(EPOCH, waited.recv(), "the clock did not move while Wait blocked");
            over.recv2();
        });
    }

    /**
     * A goroutine blocked on a mutex is not durably blocked (something outside the bubble may
     * unlock it): the clock must not move while it waits, even though every other goroutine of the
     * bubble sleeps. An outside thread watches the bubble, then unlocks.
     */
    @Test
    void aMutexBlockedGoroutineIsNotDurablyBlocked() throws Exception {
        Go.run(config(2), () -> {
            Mutex mu = new Mutex();
            AtomicReference<Bubble> bubble = new AtomicReference<>();
            AtomicReference<G> blocked = new AtomicReference<>();
            AtomicReference<String> seen = new AtomicReference<>();
            ExternalWaker w = Go.external();
            Thread outside = new Thread(() -> {
                try (w) {
                    // wait-for-condition (bounded): the goroutine is parked on the mutex, and the
                    // bubble counts exactly it as running
                    long deadline = System.nanoTime() + 30 * Time.SECOND;
                    while (!(blocked.get() != null
                            && blocked.get().waitReason() == WaitReason.SYNC_MUTEX_LOCK
                            && bubble.get().running() == 1)) {
                        if (System.nanoTime() > deadline) {
                            seen.set("timed out: running="
                                    + (bubble.get() == null ? -1 : bubble.get().running()));
                            break;
                        }
                        Thread.onSpinWait();
                    }
                    if (seen.get() == null) {
                        seen.set("clock " + Time.fakeInstant(bubble.get().now()));
                    }
                    mu.unlock();
                }
            });
            List<String> log = Collections.synchronizedList(new ArrayList<>());
            Synctest.test(() -> {
                bubble.set(Bubble.current());
                mu.lock();
                Go.go(() -> {
                    blocked.set(Scheduler.currentG());
                    mu.lock();
                    log.add("locked at " + Time.now());
                    mu.unlock();
                });
                outside.start();
                Time.sleep(Duration.ofHours(1));
                log.add("main woke at " + Time.now());
            });
            assertEquals("clock 2000-01-01T00:00:00Z", seen.get());
            assertEquals(List.of("locked at 2000-01-01T00:00:00Z", "main woke at 2000-01-01T01:00:00Z"), log);
        });
    }

    /**
     * The same rule on the bubble's own count, deterministically: at GOMAXPROCS=1 a goroutine's
     * park (status and count) completes on the M before main runs again, so once the goroutine is
     * parked on the mutex the bubble counts it among its running goroutines (main and it), where a
     * channel-blocked one would not be counted.
     */
    @Test
    void aMutexBlockedGoroutineCountsAsRunning() {
        Go.run(
                config(1),
                () -> Synctest.test(() -> {
                    Bubble b = Bubble.current();
                    Mutex mu = new Mutex();
                    mu.lock();
                    AtomicReference<G> locker = new AtomicReference<>();
                    Go.go(() -> {
                        locker.set(Scheduler.currentG());
                        mu.lock();
                        mu.unlock();
                    });
                    Chan<Integer> c = Chan.make();
                    AtomicReference<G> receiver = new AtomicReference<>();
                    Go.go(() -> {
                        receiver.set(Scheduler.currentG());
                        c.recv();
                    });
                    while (locker.get() == null
                            || receiver.get() == null
                            || locker.get().readgstatus() != G._Gwaiting
                            || receiver.get().readgstatus() != G._Gwaiting) {
                        Go.gosched(); // one P: each goroutine runs until it parks, park included
                    }
                    assertEquals(WaitReason.SYNC_MUTEX_LOCK, locker.get().waitReason());
                    assertEquals(
                            WaitReason.SYNCTEST_CHAN_RECEIVE, receiver.get().waitReason());
                    assertEquals(4, b.total(), "root, main, the locker and the receiver");
                    assertEquals(2, b.running(), "main and the mutex-blocked locker; not the receiver");
                    mu.unlock();
                    c.send(1);
                }));
    }

    /** Every fake-clock scenario above, 100 times in one runtime: identical results every time. */
    @Test
    void everyScenarioRepeats100TimesIdentically() {
        repeatEveryScenario(2, 100);
    }

    /** The same at GOMAXPROCS 1 and 4, 300 times each (stress tier). */
    @org.junit.jupiter.api.Tag("stress")
    @org.junit.jupiter.params.ParameterizedTest
    @org.junit.jupiter.params.provider.ValueSource(ints = {1, 4})
    void everyScenarioRepeatsIdenticallyAtOtherGomaxprocs(int procs) {
        repeatEveryScenario(procs, 300);
    }

    static void repeatEveryScenario(int procs, int times) {
        List<Supplier<String>> scenarios = List.of(
                SynctestTest::sleepChain,
                SynctestTest::contextDeadline,
                SynctestTest::ticker,
                SynctestTest::afterFuncAndTimers,
                SynctestTest::waitSemantics,
                SynctestTest::syncDurable,
                SynctestTest::deadlocks);
        Go.run(config(procs), () -> {
            for (Supplier<String> s : scenarios) {
                String first = s.get();
                for (int i = 1; i < times; i++) {
                    assertEquals(first, s.get(), "run " + i);
                }
            }
        });
    }

    @Test
    void testFromAPlainThreadStartsItsOwnRuntimeAndRethrows() {
        AtomicReference<Instant> at = new AtomicReference<>();
        Synctest.test(() -> {
            Time.sleep(Duration.ofDays(1));
            at.set(Time.now());
        });
        assertEquals(EPOCH.plus(Duration.ofDays(1)), at.get());
        AssertionError e = assertThrows(AssertionError.class, () -> Synctest.test(() -> assertEquals(1, 2)));
        assertTrue(e.getMessage().contains("expected: <1> but was: <2>"), e.getMessage());
        assertSame(
                Synctest.DeadlockError.class,
                assertThrows(PanicError.class, () -> Synctest.test(() -> Select.block()))
                        .getClass());
    }
}
