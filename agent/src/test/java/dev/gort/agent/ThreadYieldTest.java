package dev.gort.agent;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gort.runtime.GoSema;
import dev.gort.runtime.PreemptStats;
import dev.gort.runtime.PreemptStrategy;
import dev.gort.runtime.Scheduler;
import java.lang.reflect.Method;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@code Thread.yield()} in instrumented code is {@code runtime.Gosched()} where the goroutine may
 * yield ({@code Poll.threadYield}), as a virtual thread's yields the virtual thread. Before, it
 * yielded only the carrier: at GOMAXPROCS=1 a goroutine waiting by yielding for another goroutine
 * (a spin-then-yield wait, a yielding idle strategy) kept the only P until sysmon preempted it,
 * 10-25 ms per hand-off (a 300-round ping-pong: 23 s, against 0.55 s on two threads).
 */
class ThreadYieldTest {
    private static final int ROUNDS = 300;

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void threadYieldIsGoschedWhereTheGoroutineMayYield() throws Exception {
        Method pingPong = AgentPreemptionTest.method(
                PreemptStrategy.BACKEDGE, "Yielders", "pingPong", int.class, int.class, AtomicInteger.class);
        Method yieldLocked = AgentPreemptionTest.method(
                PreemptStrategy.BACKEDGE, "Yielders", "yieldLocked", Object.class, int.class);
        Scheduler s = AgentPreemptionTest.newScheduler(1);
        AtomicReference<Throwable> failure = new AtomicReference<>();
        AtomicInteger locked = new AtomicInteger(-1);
        s.run(() -> {
            Scheduler rt = Scheduler.current();
            GoSema done = new GoSema(0);
            AtomicInteger turn = new AtomicInteger();
            for (int me = 0; me < 2; me++) {
                int m = me;
                rt.newproc(() -> {
                    try {
                        AgentPreemptionTest.call(pingPong, null, m, ROUNDS, turn);
                    } catch (Throwable t) {
                        failure.compareAndSet(null, t);
                    } finally {
                        done.release();
                    }
                });
            }
            done.acquire();
            done.acquire();

            // Inside a monitor the yield stays a hint to the carrier, with a goroutine runnable
            // beside it: the goroutine does not leave the carrier that owns the monitor (sysmon
            // may still preempt it in place, which keeps it there).
            rt.newproc(done::release);
            locked.set((int) AgentPreemptionTest.call(yieldLocked, null, new Object(), 100));
            done.acquire();
        });
        PreemptStats ps = s.preempt.snapshot();
        assertNull(failure.get(), () -> "a goroutine failed: " + failure.get());
        // Each of the 2 * ROUNDS hand-offs needed one of sysmon's preemptions before.
        assertTrue(ps.honoured() < ROUNDS / 10, "the hand-offs waited for sysmon's preemptions: " + ps);
        assertEquals(0, locked.get(), "yields inside a monitor that moved the goroutine off the monitor's carrier");
    }
}
