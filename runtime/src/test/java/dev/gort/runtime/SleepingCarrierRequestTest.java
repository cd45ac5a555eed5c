package dev.gort.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A carrier that goes to sleep leaves no preemption request armed (Preempt#carrierSleeps). Poll's
 * count of armed carriers is JVM-wide: while it is non-zero every instrumented poll on every thread
 * takes the slow path. A REQ raised for a slice whose goroutine then left its carrier without
 * reaching a poll used to stay armed on that carrier until it next ran a goroutine: for an idle M
 * (stopm), until it was woken again. H2 at GOMAXPROCS=1 with 200 goroutines (an M that handed its P
 * to a goroutine waiting in place kept its REQ through its stopm): the count was non-zero for half
 * the run and 18 million polls took the slow path for nothing. The same for a carrier that sleeps
 * with its goroutine mounted (a park in place). Each case raises the request as sysmon would, for
 * the running slice, then lets the carrier sleep, and looks at its word from outside while it
 * sleeps: nothing armed, the request counted as never honoured.
 */
class SleepingCarrierRequestTest {
    private static final long DEADLINE_NS = 20_000_000_000L;

    /** Waits (bounded) until {@code mp}'s carrier sleeps with no P, as stopm and a park in place leave it. */
    private static void awaitAsleep(M mp) throws InterruptedException {
        long deadline = System.nanoTime() + DEADLINE_NS;
        while (!(mp.blocked && mp.p == null && blockedState(mp.thread.getState()))) {
            if (System.nanoTime() - deadline > 0) {
                throw new AssertionError("M" + mp.id + " never went to sleep: " + mp.thread.getState());
            }
            Thread.sleep(1);
        }
    }

    private static boolean blockedState(Thread.State st) {
        return st == Thread.State.WAITING || st == Thread.State.TIMED_WAITING;
    }

    /**
     * Runs {@code main} (which raises a request on its own carrier and then parks on {@code sema})
     * at GOMAXPROCS=1; an outside thread waits until that carrier sleeps, records its word, and
     * releases the goroutine. Returns the word seen while it slept.
     */
    private static long wordWhileAsleep(Scheduler s, GoSema sema, M[] carrier, Runnable main) throws Exception {
        long[] word = {-1};
        AtomicReference<Throwable> failure = new AtomicReference<>();
        ExternalWaker waker = s.externalWaker(); // the outside thread below wakes the only goroutine
        Thread outside = new Thread(() -> {
            try {
                long deadline = System.nanoTime() + DEADLINE_NS;
                while (carrier[0] == null && System.nanoTime() - deadline < 0) {
                    Thread.sleep(1);
                }
                awaitAsleep(carrier[0]);
                word[0] = Preempt.state(carrier[0].thread);
            } catch (Throwable t) {
                failure.compareAndSet(null, t);
            } finally {
                sema.release();
                waker.close(); // after the wake-up: closing first, checkdead would see a deadlock
            }
        });
        outside.setDaemon(true);
        outside.start();
        s.run(main);
        outside.join();
        assertNull(failure.get(), () -> "the outside thread failed: " + failure.get());
        return word[0];
    }

    /**
     * The request sysmon raises for the slice running on the calling goroutine's carrier (sysmon
     * itself may have raised it already: the first slice includes loading classes).
     */
    private static M raiseOnOwnCarrier(Scheduler s) {
        M mp = Scheduler.getg().m;
        s.preempt.raiseForTest(mp, mp.p.schedtickOpaque());
        assertTrue(Preempt.requestPendingOpaque(mp.thread), "no request pending");
        return mp;
    }

    private static void assertAccounted(Scheduler s, long unhonouredBefore) {
        PreemptStats p = s.preempt.snapshot();
        assertTrue(p.unhonoured() > unhonouredBefore, () -> "the dropped request was not counted: " + p);
        assertEquals(
                p.requested(),
                p.honoured() + p.unhonoured() + p.refused() + p.stale(),
                () -> "requests = honoured + never reached + refused + stale: " + p);
    }

    /**
     * The goroutine parks and its M, with nothing else to run, stops (stopm): the request for the
     * slice that ended is dropped before the M sleeps.
     */
    @Test
    @Timeout(60)
    void anIdleMLeavesNoRequestArmed() throws Exception {
        Scheduler s = new Scheduler(TestSupport.config(1));
        GoSema sema = new GoSema(0);
        M[] carrier = new M[1];
        long[] unhonoured = new long[1];
        long word = wordWhileAsleep(s, sema, carrier, () -> {
            unhonoured[0] = s.preempt.unhonoured.get();
            M mp = raiseOnOwnCarrier(s);
            carrier[0] = mp;
            sema.acquire(); // no other goroutine: this M stops until the outside thread's release
        });
        assertEquals(0, word & (Preempt.ARMED | Preempt.PARKED), "an idle M kept a request: " + Long.toHexString(word));
        assertAccounted(s, unhonoured[0]);
    }

    /**
     * The goroutine holds a Java monitor (as the agent counts it) and parks: it parks in place, its
     * carrier sleeps with the goroutine mounted, and the request it never reached is dropped first.
     */
    @Test
    @Timeout(60)
    void aCarrierParkedInPlaceLeavesNoRequestArmed() throws Exception {
        Scheduler s = new Scheduler(TestSupport.config(1));
        GoSema sema = new GoSema(0);
        M[] carrier = new M[1];
        long[] unhonoured = new long[1];
        long word = wordWhileAsleep(s, sema, carrier, () -> {
            unhonoured[0] = s.preempt.unhonoured.get();
            Poll.monitorEnter(); // what the agent runs after MONITORENTER
            try {
                M mp = raiseOnOwnCarrier(s);
                carrier[0] = mp;
                long parksBefore = s.syscallStats.pinnedParks.get();
                sema.acquire(); // a park with a monitor held: in place
                assertEquals(parksBefore + 1, s.syscallStats.pinnedParks.get(), "the park was not in place");
            } finally {
                Poll.monitorExit();
            }
        });
        assertEquals(
                0,
                word & (Preempt.ARMED | Preempt.PARKED),
                "a carrier parked in place kept a request: " + Long.toHexString(word));
        assertAccounted(s, unhonoured[0]);
    }
}
