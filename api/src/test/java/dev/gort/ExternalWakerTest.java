package dev.gort;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.gort.runtime.ExternalWaker;
import dev.gort.runtime.G;
import dev.gort.runtime.GortFatalError;
import dev.gort.runtime.Scheduler;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Who may wake a goroutine from outside the runtime (ExternalWaker's rule): checkdead counts an
 * open {@link Go#external()} registration as a running M, so goroutines all asleep waiting for a
 * registered outside thread are not a deadlock; closing the last registration runs checkdead
 * again, so a real deadlock is still reported. Go.run inside a goroutine is rejected.
 */
class ExternalWakerTest {
    /**
     * Outside the runtime: waits (bounded) until {@code gp} is parked and every M of {@code s} is
     * idle, i.e. until checkdead has seen every goroutine asleep (the last M to go idle runs it).
     */
    static void awaitAllAsleep(Scheduler s, G gp) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!(gp.readgstatus() == G._Gwaiting
                && s.npidle() == s.gomaxprocs()
                && s.mcountPublic() - s.nmidle() <= 1)) { // sysmon is the one M that is not idle
            if (System.nanoTime() > deadline) {
                throw new AssertionError("the runtime never went idle");
            }
            Thread.onSpinWait();
        }
    }

    /**
     * The program: main waits for a value that an outside thread sends later with the
     * non-blocking trySend. Registered, it is not a deadlock, though every M went idle first.
     */
    @ParameterizedTest(name = "GOMAXPROCS={0}")
    @ValueSource(ints = {1, 2})
    void goroutineWaitingForARegisteredOutsideThreadIsNotADeadlock(int procs) throws Exception {
        AtomicReference<Throwable> outside = new AtomicReference<>();
        AtomicInteger got = new AtomicInteger();
        GortTesting.run(procs, () -> {
            Scheduler s = Scheduler.current();
            G main = Scheduler.currentG();
            Chan<Integer> c = Chan.make(1);
            ExternalWaker w = Go.external();
            Thread t = new Thread(() -> {
                try (w) {
                    awaitAllAsleep(s, main);
                    c.trySend(42);
                } catch (Throwable e) {
                    outside.set(e);
                }
            });
            t.start();
            got.set(c.recv());
        });
        assertNull(outside.get());
        assertEquals(42, got.get());
    }

    /** close() from outside, and a registration kept by the goroutine side until the value arrived. */
    @Test
    void outsideCloseWakesARangeLoopOfARegisteredRuntime() {
        AtomicInteger sum = new AtomicInteger();
        GortTesting.run(1, () -> {
            Scheduler s = Scheduler.current();
            G main = Scheduler.currentG();
            Chan<Integer> c = Chan.make(4);
            try (ExternalWaker w = Go.external()) {
                Thread t = new Thread(() -> {
                    awaitAllAsleep(s, main);
                    c.trySend(1);
                    awaitAllAsleep(s, main);
                    c.trySend(2);
                    c.close();
                });
                t.start();
                for (int v : c) {
                    sum.addAndGet(v);
                }
            }
        });
        assertEquals(3, sum.get());
    }

    /**
     * A real deadlock is still reported: once the last registration closes with every goroutine
     * asleep, nobody can wake main; the close runs checkdead, which reports it.
     */
    @ParameterizedTest(name = "GOMAXPROCS={0}")
    @ValueSource(ints = {1, 2})
    void closingTheLastRegistrationReportsTheDeadlock(int procs) throws Exception {
        AtomicReference<Throwable> outside = new AtomicReference<>();
        Throwable fatal = assertThrows(
                GortFatalError.class,
                () -> Go.run(GortTesting.config(procs), () -> {
                    Scheduler s = Scheduler.current();
                    G main = Scheduler.currentG();
                    Chan<Integer> c = Chan.make();
                    ExternalWaker w = Go.external();
                    Thread t = new Thread(() -> {
                        try {
                            awaitAllAsleep(s, main);
                            w.close(); // leaves without sending
                        } catch (Throwable e) {
                            outside.set(e);
                        }
                    });
                    t.start();
                    c.recv();
                }));
        assertEquals("all goroutines are asleep - deadlock!", fatal.getMessage());
        // The fatal error was raised on the closing thread (as on any M that runs checkdead).
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (outside.get() == null && System.nanoTime() < deadline) {
            Thread.onSpinWait();
        }
        assertInstanceOf(GortFatalError.class, outside.get());
    }

    /** Registrations are counted once each: a second close does not undo another registration. */
    @Test
    void closeIsIdempotent() {
        GortTesting.run(1, () -> {
            Scheduler s = Scheduler.current();
            ExternalWaker a = Go.external();
            ExternalWaker b = Go.external();
            assertEquals(2, s.externalWakers());
            a.close();
            a.close();
            assertEquals(1, s.externalWakers());
            b.close();
            assertEquals(0, s.externalWakers());
        });
    }

    /**
     * Go.run inside a goroutine is rejected: a program has one main. (Before, it built a second
     * runtime whose checkdead could not see the outer goroutines and reported a false deadlock.)
     */
    @Test
    void goRunInsideAGoroutineIsRejected() {
        AtomicReference<Throwable> thrown = new AtomicReference<>();
        GortTesting.run(1, () -> {
            Chan<Integer> c = Chan.make();
            Go.go(() -> c.send(1));
            try {
                Go.run(() -> c.recv());
            } catch (Throwable e) {
                thrown.set(e);
            }
            c.recv(); // the outer program goes on
        });
        assertInstanceOf(IllegalStateException.class, thrown.get());
        assertEquals(
                "gort: Go.run called from a goroutine: a program has one main goroutine (use Go.go)",
                thrown.get().getMessage());
    }
}
