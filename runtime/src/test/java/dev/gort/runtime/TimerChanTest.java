package dev.gort.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayDeque;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * Go 1.23 timer-channel mechanics of {@link Timer}, with a fake one-slot channel, inside a
 * GOMAXPROCS=1 runtime whose goroutine never yields (so only the test touches the heap).
 */
class TimerChanTest {
    /** A cap-1 channel as the timer sees it: a non-blocking send and a drain. */
    static final class FakeChan implements Timer.TimerChan {
        final ArrayDeque<Long> buf = new ArrayDeque<>();

        synchronized void trySend(long v) {
            if (buf.isEmpty()) {
                buf.add(v);
            }
        }

        synchronized Long tryRecv() {
            return buf.poll();
        }

        @Override
        public synchronized boolean timerchandrain() {
            boolean any = !buf.isEmpty();
            buf.clear();
            return any;
        }
    }

    private static Timer chanTimer(FakeChan c) {
        return new Timer(Scheduler.current(), (arg, seq, delay) -> ((FakeChan) arg).trySend(seq), c, c);
    }

    private static void inRuntime(Runnable body) {
        AtomicReference<Throwable> err = new AtomicReference<>();
        new Scheduler(TestSupport.config(1)).run(() -> {
            try {
                body.run();
            } catch (Throwable t) {
                err.set(t);
            }
        });
        if (err.get() != null) {
            throw new AssertionError(err.get());
        }
    }

    @Test
    void heapedOnlyWhileSomeoneWaits() {
        inRuntime(() -> {
            TimerHeap heap = M.current().p.timers;
            FakeChan c = new FakeChan();
            Timer t = chanTimer(c);
            long when = Scheduler.nanotime() + 3_600_000_000_000L;
            assertFalse(t.reset(when, 0));
            assertEquals(0, heap.len(), "nobody waits: not in a heap");
            t.blockTimerChan();
            assertEquals(1, heap.len(), "a receiver blocks: heaped");
            assertEquals(when, heap.wakeTime());
            t.unblockTimerChan();
            assertEquals(1, heap.zombies.get(), "last receiver left: marked for removal, when kept");
            t.blockTimerChan();
            assertEquals(0, heap.zombies.get(), "blocked again before the sweep: unmarked");
            t.unblockTimerChan();
            assertTrue(t.stop(), "still pending");
        });
    }

    @Test
    void overdueValueIsSentLazilyOnReceive() {
        inRuntime(() -> {
            FakeChan c = new FakeChan();
            Timer t = chanTimer(c);
            t.reset(Scheduler.nanotime() + 1, 0);
            long until = Scheduler.nanotime() + 1_000_000;
            while (Scheduler.nanotime() < until) {
                Thread.onSpinWait();
            }
            assertEquals(null, c.tryRecv(), "not heaped: nothing sent eagerly");
            t.maybeRunChan(); // what a receive does first
            assertTrue(c.tryRecv() != null, "the overdue value is there for the receiver");
            assertFalse(t.stop(), "fired");
        });
    }

    @Test
    void stopAndResetDrainAStaleValue() {
        inRuntime(() -> {
            FakeChan c = new FakeChan();
            Timer t = chanTimer(c);
            t.reset(Scheduler.nanotime() + 1, 0);
            t.maybeRunChan();
            assertTrue(t.stop(), "fired but not received: Stop drains it and reports the timer stopped");
            assertEquals(null, c.tryRecv(), "Stop drained the value sent for the old configuration");
            t.reset(Scheduler.nanotime() + 1, 0);
            t.maybeRunChan();
            assertTrue(
                    t.reset(Scheduler.nanotime() + 3_600_000_000_000L, 0),
                    "a drained value counts as stopped before it was received");
            assertEquals(null, c.tryRecv(), "Reset drained it too");
            assertTrue(t.stop());
        });
    }

    /**
     * The race Go's isSending and seq close: a timer claimed to run (its send about to happen) and
     * then stopped before the send. Stop must report true and the send must not happen.
     */
    @Test
    void sendInFlightWhenStoppedIsSquelched() {
        inRuntime(() -> {
            FakeChan c = new FakeChan();
            Timer t = chanTimer(c);
            t.reset(Scheduler.nanotime() + 1, 0);
            Timer.Firing fr = new Timer.Firing();
            synchronized (t) {
                t.prepareRun(Scheduler.nanotime() + 10, fr); // claimed: when = 0, isSending = 1
            }
            assertTrue(t.stop(), "the send had not happened: Stop stopped it");
            Timer.runUnlocked(fr); // the delayed send: seq changed, so it is dropped
            assertEquals(null, c.tryRecv(), "stale send after Stop returned");
        });
    }

    /**
     * A stale firing still waiting for sendLock (claimed, then the timer stopped) does not count as
     * a send in progress for the timer's later configurations: Reset after that Stop, and Stop after
     * the next firing's value was received, report false. Both reported true while the stale firing
     * waited (Go's isSending counts it; a helper's lockstep program saw +2 to +142 per 20,000 rounds
     * at GOMAXPROCS=2, the firing carrier slow to wake from the sendLock monitor).
     */
    @Test
    void aStaleFiringInFlightDoesNotMakeLaterStopsPending() {
        inRuntime(() -> {
            FakeChan c = new FakeChan();
            Timer t = chanTimer(c);
            t.reset(Scheduler.nanotime() + 1, 0);
            Timer.Firing stale = new Timer.Firing();
            synchronized (t) {
                t.prepareRun(Scheduler.nanotime() + 10, stale); // claimed; its carrier waits for sendLock
            }
            assertTrue(t.stop(), "the claimed send had not happened: Stop stopped it");
            assertFalse(t.reset(Scheduler.nanotime() + 1, 0), "a stopped timer was not active: Reset reports false");
            t.maybeRunChan(); // the new configuration fires and sends
            assertTrue(c.tryRecv() != null, "the new configuration's value");
            assertFalse(t.stop(), "fired and received: Stop reports false");
            Timer.runUnlocked(stale); // the stale firing gets sendLock at last: dropped
            assertEquals(null, c.tryRecv(), "stale send");
            assertFalse(t.reset(Scheduler.nanotime() + 3_600_000_000_000L, 0), "stopped: not active");
            assertTrue(t.stop(), "armed: active");
        });
    }

    @Test
    void tickerSkipsMissedPeriods() {
        inRuntime(() -> {
            FakeChan c = new FakeChan();
            Timer t = chanTimer(c);
            long base = Scheduler.nanotime() + 3_600_000_000_000L;
            t.reset(base + 100, 100);
            t.blockTimerChan();
            TimerHeap heap = M.current().p.timers;
            heap.check(base + 350, true);
            assertTrue(c.tryRecv() != null);
            assertEquals(base + 400, heap.wakeTime(), "next tick on the period grid after the missed ones");
            t.unblockTimerChan();
            t.stop();
        });
    }
}
