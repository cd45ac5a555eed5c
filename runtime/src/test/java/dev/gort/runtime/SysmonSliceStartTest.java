package dev.gort.runtime;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.CountDownLatch;
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
 * 8.8-9.8 ms in; 2026-12-02).
 *
 * <p>sysmon's first retake waits until main has read its start: main runs from runnext with its
 * inherited slice (no schedtick bump), so the slice sysmon times begins at its first look at the
 * running P, and without the wait that look could come before main's first statement (M0
 * descheduled between its acquirep and main's clock read on a loaded machine: 1 of 60 repetitions
 * with four busy loops beside the JVM, "asked to stop 0.014 ms into its slice"), which would time
 * the slice from before {@code start}. With it the rule is exact: sysmon's look, and the clock read
 * it stamps the slice with, come after {@code start}, so a request before 10 ms is a bug. Main
 * reads {@code start} only once sysmon waits in the hook and 5 ms later, so that the round's first
 * clock read, taken before the hook, is at least 5 ms older than {@code start}: a slice stamped
 * with it (the bug above) is asked to stop at least 5 ms early, less sysmon's overshoot (14 of 15
 * repetitions failed with Sysmon's second read removed by hand, 2026-12-04). The gated round is a
 * fast one (the 3 ms stalls are on even rounds), so correct code is asked to stop about 10 ms in,
 * and a slice cut short by more than sysmon's overshoot fails too.
 */
class SysmonSliceStartTest {
    private static final long MS = 1_000_000L;

    @RepeatedTest(15)
    @Timeout(value = 30, unit = TimeUnit.SECONDS)
    void aSliceIsAskedToStopNoSoonerThanTenMillisecondsAfterItBegan() {
        AtomicInteger rounds = new AtomicInteger();
        CountDownLatch sysmonWaits = new CountDownLatch(1);
        CountDownLatch started = new CountDownLatch(1);
        Sysmon.beforeRetakeForTest = () -> {
            sysmonWaits.countDown(); // this round's first clock read is behind us
            try {
                started.await(30, TimeUnit.SECONDS); // bounded: the test's timeout reports a hang
            } catch (InterruptedException e) {
                // nobody interrupts sysmon; keeping the flag would make its sleeps return at once
            }
            if ((rounds.incrementAndGet() & 1) == 0) {
                LockSupport.parkNanos(3 * MS);
            }
        };
        long[] ran = new long[1];
        try {
            Scheduler s = new Scheduler(TestSupport.config(1));
            s.run(() -> {
                try { // blocks the carrier, not the P: sysmon, the only retaker, waits in the hook
                    sysmonWaits.await(30, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    throw new AssertionError(e);
                }
                for (long t = System.nanoTime(); System.nanoTime() - t < 5 * MS; ) {
                    Thread.onSpinWait(); // a margin for the stale read to show, not an ordering
                }
                long start = System.nanoTime(); // sysmon has not looked at main's slice yet
                started.countDown();
                P pp = M.current().p();
                while (!pp.preempt) { // nothing polls without the agent: sysmon only asks
                    Thread.onSpinWait();
                }
                ran[0] = System.nanoTime() - start;
            });
        } finally {
            Sysmon.beforeRetakeForTest = null;
            started.countDown(); // a main that failed early leaves no sysmon waiting
        }
        assertTrue(ran[0] >= Preempt.forcePreemptNS, () -> "asked to stop " + ran[0] / 1e6 + " ms into its slice");
    }
}
