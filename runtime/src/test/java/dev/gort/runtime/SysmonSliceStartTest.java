package dev.gort.runtime;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.RepeatedTest;
import org.junit.jupiter.api.Timeout;

/**
 * A time slice is measured from a clock read taken after sysmon saw it begin, never from one taken
 * before: on a running runtime whose sysmon spends 3 ms of every other round between its first
 * clock read and retake (a test hook standing for a slow netpoll, a GOMAXPROCS check, or a
 * descheduled sysmon thread), a goroutine that spins on GOMAXPROCS=1 is asked to stop no sooner
 * than 10 ms ({@code forcePreemptNS}) after it started. With the round's first read as the slice's
 * start (Go's code), a slice that began during a slow round was stamped up to 3 ms early, and a
 * fast round later asked it to stop up to 3 ms too soon (ShowcaseIT's tight loop: 9.0 ms into its
 * slice in a CI run). Without the second read, 9 of 40 repetitions failed here (asked to stop
 * 8.8-9.8 ms in; 2026-12-02), so 15 repetitions all pass by chance about 2 % of the time; with it,
 * 40 of 40 passed and none can fail but by the microseconds between that read and retake's look.
 */
class SysmonSliceStartTest {
    private static final long MS = 1_000_000L;

    @RepeatedTest(15)
    @Timeout(value = 30, unit = TimeUnit.SECONDS)
    void aSliceIsAskedToStopNoSoonerThanTenMillisecondsAfterItBegan() {
        AtomicInteger rounds = new AtomicInteger();
        Sysmon.beforeRetakeForTest = () -> {
            if ((rounds.incrementAndGet() & 1) == 1) {
                LockSupport.parkNanos(3 * MS);
            }
        };
        long[] ran = new long[1];
        try {
            Scheduler s = new Scheduler(TestSupport.config(1));
            s.run(() -> {
                long start = System.nanoTime(); // main's slice began just before (its execute)
                P pp = M.current().p();
                while (!pp.preempt) { // nothing polls without the agent: sysmon only asks
                    Thread.onSpinWait();
                }
                ran[0] = System.nanoTime() - start;
            });
        } finally {
            Sysmon.beforeRetakeForTest = null;
        }
        assertTrue(ran[0] >= 9_800_000L, () -> "asked to stop " + ran[0] / 1e6 + " ms into its slice");
    }
}
