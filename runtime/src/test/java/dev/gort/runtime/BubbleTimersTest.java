package dev.gort.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The fake clock's step over a bubble's timers ({@link TimerHeap#cleanWakeTime}). */
@Timeout(30)
class BubbleTimersTest {
    static final long HOUR = 3_600_000_000_000L;

    /**
     * A step of the fake clock cleans the head of the bubble's heap, not the whole heap: a stopped
     * timer at the head is taken out (it must not move the clock), one deep in the heap stays for the
     * owner's zombie sweep. The whole heap was scanned at every step, 189 µs a step with 100,000
     * timers pending; a timer moved earlier (anywhere in the heap) still has every modification applied.
     */
    @Test
    void aClockStepCleansTheHeadNotEveryPendingTimer() {
        Scheduler s = new Scheduler(TestSupport.config(1));
        AtomicReference<String> result = new AtomicReference<>("not run");
        List<String> errors = new ArrayList<>();
        s.run(() -> result.set(Bubble.run(() -> {
            Bubble b = Bubble.current();
            long t0 = b.now();
            List<Timer> ts = new ArrayList<>();
            for (int i = 0; i < 1000; i++) {
                Timer t = new Timer(Scheduler.current(), (arg, seq, delay) -> {}, null);
                t.reset(t0 + HOUR + i, 0);
                ts.add(t);
            }
            check(errors, ts.get(0).stop(), "head stopped"); // a zombie at the head
            check(
                    errors,
                    ts.get(500).stop(),
                    "middle one stopped"); // a zombie in the middle (cleanHead takes the tail's)
            Timer.timeSleep(1); // the root steps the clock to the sleep's timer, then back here
            check(errors, b.now() == t0 + 1, "the clock moved to the sleep, not past it: " + (b.now() - t0));
            check(errors, b.timers.len() == 999, "only the head's zombie taken out: " + b.timers.len());
            // a pending timer deep in the heap moved earlier than the head: the next step must take it
            long[] firedAt = {-1};
            Timer early = new Timer(Scheduler.current(), (arg, seq, delay) -> firedAt[0] = b.now(), null);
            early.reset(t0 + 2 * HOUR, 0);
            early.reset(t0 + 10, 0);
            Timer.timeSleep(HOUR);
            check(errors, firedAt[0] == t0 + 10, "the moved timer fired at " + (firedAt[0] - t0));
            check(errors, b.now() == t0 + 1 + HOUR, "woke at the sleep's end: " + (b.now() - t0));
            for (Timer t : ts) {
                t.stop();
            }
        })));
        assertNull(result.get(), result.get());
        assertEquals(List.of(), errors);
    }

    private static void check(List<String> errors, boolean ok, String what) {
        if (!ok) {
            errors.add(what);
        }
    }
}
