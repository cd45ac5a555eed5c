package dev.gort.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import jdk.internal.vm.Continuation;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A goroutine's Java interrupt status is its own, as a virtual thread's is: the status a goroutine
 * sets on itself ({@code Thread.currentThread().interrupt()}, the idiom that restores an
 * {@code InterruptedException}'s status, which names the carrier) leaves the carrier with it when
 * it parks and comes back when it runs again, so that the next goroutine on that carrier is not
 * interrupted; and a carrier that sleeps with the goroutine mounted (a park in place, a wait for
 * a P) gives the status back instead of clearing it. GOMAXPROCS=1: the two goroutines share the
 * carrier.
 */
@Timeout(30)
class GoroutineInterruptTest {
    /** The carrier, read afresh (an inlined {@code Thread.currentThread()} may be kept across a yield). */
    private static Thread carrier() {
        return M.current().thread();
    }

    @Test
    void anInterruptStatusStaysWithTheGoroutineThatSetIt() {
        Scheduler s = new Scheduler(TestSupport.config(1));
        AtomicReference<Thread> carrierA = new AtomicReference<>();
        AtomicReference<Thread> carrierB = new AtomicReference<>();
        AtomicBoolean bSawInterrupt = new AtomicBoolean();
        AtomicBoolean bSleepInterrupted = new AtomicBoolean();
        AtomicBoolean aKeptItsStatus = new AtomicBoolean();
        s.run(() -> {
            GoSema turn = new GoSema(0);
            GoSema done = new GoSema(0);
            s.newproc(() -> {
                carrierA.set(carrier());
                carrier().interrupt(); // the goroutine's own status
                s.newproc(
                        () -> { // runs on this carrier once A parks (the only P)
                            carrierB.set(carrier());
                            bSawInterrupt.set(carrier().isInterrupted());
                            try {
                                Thread.sleep(1);
                            } catch (InterruptedException e) {
                                bSleepInterrupted.set(true);
                            }
                            turn.release();
                        });
                turn.acquire(); // parks: B runs here
                aKeptItsStatus.set(Thread.interrupted());
                done.release();
            });
            done.acquire();
        });
        assertSame(carrierA.get(), carrierB.get(), "the two goroutines did not share a carrier: nothing was tested");
        assertFalse(bSawInterrupt.get(), "the next goroutine on the carrier saw the first one's interrupt status");
        assertFalse(
                bSleepInterrupted.get(), "Thread.sleep threw InterruptedException in a goroutine nobody interrupted");
        assertTrue(aKeptItsStatus.get(), "the goroutine lost the interrupt status it set on itself when it parked");
    }

    /**
     * A pinned goroutine with its status set parks in place (its carrier sleeps with it mounted,
     * where an interrupt is no wake-up and is cleared), then waits there for the P that its waker
     * still holds (the waker keeps it until it sees that carrier asleep again): it runs on with its
     * status set, and the waker, which ran meanwhile on another carrier, was not interrupted.
     */
    @Test
    void aCarrierSleepingWithItsGoroutineMountedGivesTheStatusBack() {
        Scheduler s = new Scheduler(TestSupport.config(1));
        AtomicBoolean kept = new AtomicBoolean();
        AtomicBoolean wakerInterrupted = new AtomicBoolean();
        AtomicBoolean sleptTwice = new AtomicBoolean();
        AtomicReference<G> pinned = new AtomicReference<>();
        s.run(() -> {
            GoSema sema = new GoSema(0);
            GoSema done = new GoSema(0);
            s.newproc(
                    () -> { // the waker: runs second, on another carrier (the P was handed off)
                        wakerInterrupted.set(carrier().isInterrupted());
                        G gp = pinned.get();
                        M mp = gp.m;
                        long deadline = System.nanoTime() + 10_000_000_000L; // a bound, not a timing
                        while (!(mp.blocked && gp.parkedOn() != null) && System.nanoTime() < deadline) {
                            Thread.onSpinWait(); // until its carrier sleeps in the park in place
                        }
                        sema.release();
                        while (!(mp.blocked && gp.parkedOn() == null) && System.nanoTime() < deadline) {
                            Thread.onSpinWait(); // until it sleeps again, waiting for this P
                        }
                        sleptTwice.set(System.nanoTime() < deadline);
                        done.release();
                    });
            s.newproc(
                    () -> { // runs first
                        pinned.set(Scheduler.getg());
                        Continuation.pin();
                        try {
                            carrier().interrupt();
                            sema.acquire(); // the yield is refused: parks in place
                            kept.set(Thread.interrupted());
                        } finally {
                            Continuation.unpin();
                        }
                        done.release();
                    });
            done.acquire();
            done.acquire();
        });
        assertTrue(sleptTwice.get(), "the pinned goroutine's carrier did not sleep twice: nothing was tested");
        assertEquals(
                1, s.syscallStats.snapshot(s).pinnedParks(), "the goroutine did not park in place: nothing was tested");
        assertTrue(kept.get(), "the park in place or the wait for a P cleared the goroutine's interrupt status");
        assertFalse(wakerInterrupted.get(), "the waker was interrupted");
    }
}
