package dev.gort.runtime.trace;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.gort.runtime.G;
import dev.gort.runtime.GoSema;
import dev.gort.runtime.Scheduler;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * The tracer's clock ({@link TraceClock}): which one a JVM gets, that a producer's stamp on one
 * CPU is never later than its consumer's on another (the decoder's cause-before-effect order
 * rests on it), and that the decoder's conversion gives nanoseconds of the wall clock.
 */
class TraceClockSourceTest {
    private static boolean kernelUsesTsc() {
        try {
            return Files.readString(Path.of("/sys/devices/system/clocksource/clocksource0/current_clocksource"))
                    .trim()
                    .equals("tsc");
        } catch (java.io.IOException e) {
            return false;
        }
    }

    /**
     * Without {@code -Dgort.trace.clock}, the counter is the clock exactly where it is available;
     * and on x86-64 Linux whose kernel keeps time with the TSC, with native access (the test JVM's
     * flags), it is available.
     */
    @Test
    void theTimeStampCounterIsTheClockWhereTheKernelKeepsTimeWithIt() {
        assumeTrue(
                System.getProperty("gort.trace.clock") == null && System.getenv("GORT_TRACE_CLOCK") == null,
                "the clock was chosen explicitly");
        assertEquals(TraceClock.TSC_AVAILABLE ? "tsc" : "nanotime", TraceClock.name());
        String arch = System.getProperty("os.arch");
        boolean x86 = arch.equals("amd64") || arch.equals("x86_64");
        assumeTrue(
                x86 && kernelUsesTsc() && TraceClock.class.getModule().isNativeAccessEnabled(),
                "not x86-64 Linux on the TSC clocksource with native access: nanotime is the clock here");
        assertTrue(TraceClock.TSC_AVAILABLE, "the counter is not available: " + TraceClock.UNAVAILABLE);
        assertEquals("tsc", TraceClock.name());
    }

    /**
     * The counter is synchronised across CPUs, the assumption under the decoder's
     * cause-before-effect order: a producer thread reads {@link TraceClock#now()} and publishes
     * it; a consumer thread (on the other CPU, when the machine has two free) takes it and then
     * reads {@link TraceClock#nowOrdered()}; in 20,000 hand-offs the consumer's reading is never
     * the earlier. A hand-off takes ~100 ns here, so this does not show that the ordered read is
     * needed (a plain one would pass too): it fails on a counter whose CPUs disagree by more than
     * a hand-off, which is what Linux's choice of the TSC as its clocksource rules out. Under
     * {@code nanotime} it checks that clock instead.
     */
    @Test
    void theClockAgreesAcrossThreadsThatHandOffToEachOther() throws Exception {
        final int handoffs = 20_000;
        AtomicLong slot = new AtomicLong(Long.MIN_VALUE); // the producer's stamp, published
        AtomicLong ack = new AtomicLong(); // hand-offs the consumer has checked
        long[] worst = {Long.MAX_VALUE};
        int[] backwards = {0};
        Thread consumer = new Thread(() -> {
            long seen = Long.MIN_VALUE;
            for (int i = 0; i < handoffs; i++) {
                long t;
                while ((t = slot.get()) == seen) {
                    Thread.onSpinWait();
                }
                long u = TraceClock.nowOrdered();
                seen = t;
                if (u - t < 0) {
                    backwards[0]++;
                }
                worst[0] = Math.min(worst[0], u - t);
                ack.set(i + 1);
            }
        });
        consumer.start();
        for (int i = 0; i < handoffs; i++) {
            slot.set(TraceClock.now());
            while (ack.get() != i + 1) {
                Thread.onSpinWait();
            }
        }
        consumer.join();
        assertEquals(
                0,
                backwards[0],
                "consumer stamps before their producer's, of " + handoffs + " (smallest gap " + worst[0]
                        + " units, clock " + TraceClock.name() + ")");
    }

    /**
     * A goroutine that spins 20 ms by {@code System.nanoTime()} runs one slice that the decoded
     * trace draws at least 20 ms long, and no longer than the whole trace measured outside it: the
     * decoder's stamps are nanoseconds whichever clock took them (a trace in raw counter ticks
     * would draw it ~2.6 times too long on the bench machine).
     */
    @Test
    void aTwentyMillisecondSliceIsTwentyMillisecondsLongInTheTrace() {
        long spinNs = 20_000_000L;
        Scheduler s = new Scheduler(Workloads.config(1, false));
        long t0 = System.nanoTime();
        s.trace.start(new Tracer.Options().workload("slice"));
        long[] goid = {0};
        s.run(() -> {
            GoSema done = new GoSema("done", 0);
            G g = Scheduler.current().newproc(() -> {
                Workloads.spin(spinNs);
                done.release();
            });
            goid[0] = g.goid;
            done.acquire();
        });
        Trace t = s.trace.stop();
        long outer = System.nanoTime() - t0;
        long start = -1;
        long slice = -1;
        for (int i = 0; i < t.size(); i++) {
            if (t.g(i) != goid[0]) {
                continue;
            }
            if (t.code(i) == Ev.GO_START) {
                start = t.ts(i);
            } else if (t.code(i) == Ev.GO_STOP && start >= 0) {
                slice = t.ts(i) - start;
                break;
            }
        }
        assertTrue(slice >= spinNs, "the spinning slice is drawn " + slice + " ns long, for " + spinNs + " ns of work");
        assertTrue(slice <= outer, "the spinning slice is drawn " + slice + " ns long, the whole trace took " + outer);
        assertTrue(t.endTs() <= outer, "the trace ends " + t.endTs() + " ns after its start, which took " + outer);
    }

    /** Counter units to ns: exact for nanoTime's, rounded and monotonic for the counter's. */
    @Test
    void unitsBecomeNanoseconds() {
        assertEquals(123_456_789L, Trace.toNanos(123_456_789L, 1.0));
        assertEquals(1_000L, Trace.toNanos(2_600L, 1 / 2.6));
        long prev = Long.MIN_VALUE;
        for (long u = 0; u < 10_000; u += 7) {
            long ns = Trace.toNanos(u, 0.3846);
            assertTrue(ns >= prev, "not monotonic at " + u);
            prev = ns;
        }
    }
}
