package dev.gort;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gort.runtime.Bubble;
import dev.gort.runtime.Config;
import dev.gort.runtime.G;
import dev.gort.runtime.Poll;
import dev.gort.runtime.Scheduler;
import dev.gort.runtime.WaitReason;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A bubble goroutine that parks while holding a Java monitor parks in place, on its carrier
 * (Syscalls.parkInPlace, ADR 0004), instead of yielding: Go's synctest rules still hold for it. On
 * a bubble channel it is durably blocked, so the fake clock moves and {@code waitBubble} returns
 * while it is parked; woken, it counts as running again; left blocked for good, the bubble is
 * deadlocked with Go's panic. The monitor is counted as the agent's hooks count it
 * ({@link Poll#monitorEnter()} after the monitor is entered, {@link Poll#monitorExit()} before it is
 * left), so these tests need no agent.
 */
@Timeout(60)
class SynctestParkInPlaceTest {
    static Config config(int procs) {
        return Config.fromEnvironment().withGomaxprocs(procs).withPanicExits(false);
    }

    /** Runs body inside {@code synchronized (mon)}, counted: a park inside parks in place. */
    static void inMonitor(Object mon, Runnable body) {
        synchronized (mon) {
            Poll.monitorEnter();
            try {
                body.run();
            } finally {
                Poll.monitorExit();
            }
        }
    }

    static long parksInPlace() {
        Scheduler s = Scheduler.current();
        return s.syscallStats.snapshot(s).pinnedParks();
    }

    /** Parked in place on a bubble channel, a goroutine is durably blocked: another's hour passes. */
    @Test
    void aDurableParkInPlaceLetsTheFakeClockMove() {
        Go.run(config(2), SynctestParkInPlaceTest::durableParkInPlace);
    }

    static void durableParkInPlace() {
        List<String> log = Collections.synchronizedList(new ArrayList<>());
        long before = parksInPlace();
        Synctest.test(() -> {
            Chan<Integer> c = Chan.make();
            Object mon = new Object();
            Go.go(() -> inMonitor(mon, () -> log.add("got " + c.recv() + " at " + Time.now())));
            Time.sleep(Duration.ofHours(1)); // ends only once the receiver is durably blocked
            log.add("slept to " + Time.now());
            c.send(1);
        });
        assertEquals(List.of("slept to 2000-01-01T01:00:00Z", "got 1 at 2000-01-01T01:00:00Z"), log);
        assertTrue(parksInPlace() > before, "the receiver parked in place");
    }

    /**
     * waitBubble returns while a goroutine is parked in place on a bubble channel, and the counts
     * follow it: durable while parked, running once woken (until it parks in place again), gone
     * once it exits.
     */
    @Test
    void waitBubbleReturnsWhileAGoroutineIsParkedInPlaceAndTheCountsFollowIt() {
        Go.run(config(2), SynctestParkInPlaceTest::waitWhileParkedInPlace);
    }

    static void waitWhileParkedInPlace() {
        long before = parksInPlace();
        Synctest.test(() -> {
            Bubble b = Bubble.current();
            Chan<Integer> first = Chan.make();
            Chan<Integer> second = Chan.make();
            Chan<Integer> out = Chan.make(2);
            AtomicReference<G> g = new AtomicReference<>();
            Object mon = new Object();
            Go.go(() -> inMonitor(mon, () -> {
                g.set(Scheduler.currentG());
                out.send(first.recv());
                out.send(second.recv());
            }));
            Synctest.waitBubble(); // the receiver is parked in place on `first`
            assertEquals(G._Gwaiting, g.get().readgstatus());
            assertEquals(WaitReason.SYNCTEST_CHAN_RECEIVE, g.get().waitReason());
            assertEquals(3, b.total(), "root, main and the receiver");
            assertEquals(1, b.running(), "main; the receiver parked in place is durably blocked");
            first.send(1); // wakes it: it runs, then parks in place again on `second`
            Synctest.waitBubble();
            assertEquals(WaitReason.SYNCTEST_CHAN_RECEIVE, g.get().waitReason());
            assertEquals(3, b.total());
            assertEquals(1, b.running(), "woken, it counted as running, then as blocked again");
            second.send(2);
            Synctest.waitBubble(); // it has exited
            assertEquals(2, b.total(), "root and main");
            assertEquals(1, b.running());
            assertEquals(1, out.recv());
            assertEquals(2, out.recv());
            Time.sleep(Time.SECOND); // the clock still moves: nothing is left counted as running
            assertEquals(SynctestTest.EPOCH.plusSeconds(1), Time.now());
        });
        assertTrue(parksInPlace() - before >= 2, "the receiver parked in place twice");
    }

    /** Both fake-clock scenarios above, 100 times in one runtime: the same fake times every time. */
    @Test
    void bothScenariosRepeat100TimesIdentically() {
        repeat(2, 100);
    }

    /** The same at GOMAXPROCS 1 and 4, 300 times each (stress tier). */
    @org.junit.jupiter.api.Tag("stress")
    @org.junit.jupiter.params.ParameterizedTest
    @org.junit.jupiter.params.provider.ValueSource(ints = {1, 4})
    void bothScenariosRepeatIdenticallyAtOtherGomaxprocs(int procs) {
        repeat(procs, 300);
    }

    static void repeat(int procs, int times) {
        Go.run(config(procs), () -> {
            for (int i = 0; i < times; i++) {
                durableParkInPlace();
                waitWhileParkedInPlace();
            }
        });
    }

    /**
     * Every goroutine of the bubble durably blocked, one of them parked in place: Go's deadlock
     * panics, raised in the caller of test, not a hang; and when the program then ends, the
     * carrier left parked under the goroutine sleeps (it must not spin on the interrupt shutdown
     * sends to carriers that still run a goroutine).
     */
    @Test
    void aDeadlockWithAGoroutineParkedInPlaceIsGosPanicNotAHang() throws Exception {
        List<String> log = new ArrayList<>();
        List<Thread> carriers = Collections.synchronizedList(new ArrayList<>());
        Go.run(config(2), () -> {
            PanicError all = assertThrows(
                    PanicError.class,
                    () -> Synctest.test(() -> inMonitor(new Object(), () -> {
                        carriers.add(Thread.currentThread());
                        Chan.<Integer>make().recv();
                    })));
            log.add(all.getMessage());
            PanicError exited = assertThrows(
                    PanicError.class,
                    () -> Synctest.test(() -> {
                        Go.go(() -> inMonitor(new Object(), () -> {
                            carriers.add(Thread.currentThread());
                            Chan.<Integer>make().recv();
                        }));
                        Time.sleep(Duration.ofSeconds(1)); // ends once the goroutine is parked in place
                    }));
            log.add(exited.getMessage());
        });
        assertEquals(
                List.of(
                        "deadlock: all goroutines in bubble are blocked",
                        "deadlock: main bubble goroutine has exited but blocked goroutines remain"),
                log);
        assertEquals(2, carriers.size());
        // The program has ended with two goroutines parked in place for good: each carrier stays
        // parked (ADR 0004: a park in place has no exit path) and must not burn a core spinning on
        // the interrupt status shutdown left it. A wait-for-condition (bounded): 100 samples in a
        // row, 1 ms apart, find it WAITING (a parked thread once it has taken the interrupt; a
        // spinning one shows RUNNABLE about every other sample, so never 100 times in a row).
        for (Thread t : carriers) {
            long end = System.nanoTime() + 20 * Time.SECOND;
            int inARow = 0;
            while (inARow < 100) {
                Thread.State st = t.getState();
                inARow = st == Thread.State.WAITING || st == Thread.State.TERMINATED ? inARow + 1 : 0;
                assertTrue(
                        System.nanoTime() < end,
                        t + " was never WAITING 100 samples in a row in 20 s (spinning?): last " + st);
                Thread.sleep(1); // the sampling interval, on this plain thread: not an ordering
            }
        }
    }
}
