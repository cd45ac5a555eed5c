package dev.gort.runtime;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A bubble goroutine parked in place (it holds a Java monitor, so it sleeps on its carrier) must
 * not run again before its waker's casgstatus has counted it running in the bubble. Go's ready
 * cannot race so (the G runs only once runqput has queued it, after casgstatus); a carrier that
 * left its park loop on seeing the status CAS alone could run the G, which parked again and
 * uncounted itself before the waker's count landed: for a moment no goroutine of the bubble
 * counted as running, the root was woken, and synctest reported {@code deadlock: all goroutines in
 * bubble are blocked} while the waker ran (SynctestParkInPlaceTest's repeats, about 3 rounds in
 * 1,100 beside a CPU hog).
 */
@Timeout(30)
class BubbleParkInPlaceTest {

    /** Parks the calling goroutine durably (a bubble channel receive's reason) until slot's G is readied. */
    private static void parkDurably(AtomicReference<G> slot) {
        Scheduler.gopark(
                (G gp, AtomicReference<G> sl) -> {
                    sl.set(gp);
                    return true;
                },
                slot,
                WaitReason.SYNCTEST_CHAN_RECEIVE,
                null);
    }

    /**
     * The waker is held between its status CAS and the bubble's count (a test hook standing for a
     * descheduled waker) while the parked carrier gets a wake-up of its own (LockSupport allows
     * spurious ones): the goroutine must stay parked until the waker has counted it.
     */
    @Test
    void aGoroutineParkedInPlaceRunsOnlyOnceItsWakeIsCounted() {
        Scheduler s = new Scheduler(TestSupport.config(2));
        AtomicReference<String> result = new AtomicReference<>("not run");
        AtomicBoolean ranBeforeCounted = new AtomicBoolean();
        s.run(() -> result.set(Bubble.run(() -> {
            AtomicReference<G> slot = new AtomicReference<>();
            AtomicReference<Thread> carrier = new AtomicReference<>();
            AtomicBoolean woke = new AtomicBoolean();
            s.newproc(() -> {
                Object mon = new Object();
                synchronized (mon) {
                    Poll.monitorEnter(); // as the agent counts it: a park here parks in place
                    try {
                        carrier.set(Thread.currentThread());
                        parkDurably(slot);
                        woke.set(true);
                        parkDurably(slot);
                    } finally {
                        Poll.monitorExit();
                    }
                }
            });
            Bubble.synctestWait(); // returns once the goroutine is durably parked in place
            G r = slot.getAndSet(null);
            G.bubbleCasForTest = (gp, newval) -> {
                if (gp != r || newval != G._Grunnable) {
                    return;
                }
                LockSupport.unpark(carrier.get()); // a spurious wake-up of the parked carrier
                // A negative check needs a bound: had the carrier left its park, the goroutine
                // would set woke within microseconds (a P is idle: the root is parked).
                long end = System.nanoTime() + 200_000_000L;
                while (!woke.get() && System.nanoTime() < end) {
                    Thread.onSpinWait();
                }
                ranBeforeCounted.set(woke.get());
            };
            try {
                s.goready(r);
            } finally {
                G.bubbleCasForTest = null;
            }
            Bubble.synctestWait(); // parked in place again
            s.goready(slot.getAndSet(null));
        })));
        assertFalse(ranBeforeCounted.get(), "the goroutine ran before its waker counted it running");
        assertNull(result.get(), "synctest's verdict");
    }
}
