package dev.gort.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The simulator's "blocking syscalls" workload: GOMAXPROCS=2, 8 goroutines blocked in a syscall,
 * plus CPU-bound goroutines. sysmon hands each syscall's P to a new carrier, so every blocker gets
 * into its syscall while the others are still blocked, the thread count climbs past GOMAXPROCS,
 * and the CPU-bound goroutines keep running meanwhile.
 *
 * <p>The blockers stay in their syscalls until all 8 are in (a latch, not a sleep): only sysmon's
 * retakes can free their Ps (plain {@code entersyscall}; main waits under {@code entersyscallblock},
 * which hands its P off at once), so with 2 Ps, 8 blockers in at once need at least 6 retakes, and
 * without a retake the test fails at the latch's bound instead of by a slow machine's timing.
 */
@Timeout(120)
class SyscallWorkloadTest {
    static final int PROCS = 2;
    static final int BLOCKERS = 8;

    @Test
    void blockingSyscallsHandTheirPsOff() throws Exception {
        Scheduler s = new Scheduler(TestSupport.config(PROCS));
        AtomicInteger inSyscall = new AtomicInteger();
        AtomicInteger maxInSyscall = new AtomicInteger();
        AtomicLong maxThreads = new AtomicLong();
        AtomicLong cpuWork = new AtomicLong();
        AtomicLong cpuWhenAllBlocked = new AtomicLong(-1);
        AtomicLong cpuBeforeRelease = new AtomicLong(-1);
        AtomicBoolean stop = new AtomicBoolean();
        CountDownLatch allIn = new CountDownLatch(BLOCKERS);
        CountDownLatch release = new CountDownLatch(1);
        AtomicBoolean mainHeldP = new AtomicBoolean(true);
        s.run(() -> {
            GoSema blockersDone = new GoSema(0);
            GoSema cpuDone = new GoSema(0);
            for (int i = 0; i < BLOCKERS; i++) {
                s.newproc(() -> {
                    Syscalls.entersyscall();
                    try {
                        int n = inSyscall.incrementAndGet();
                        maxInSyscall.accumulateAndGet(n, Math::max);
                        maxThreads.accumulateAndGet(s.mcountPublic(), Math::max);
                        allIn.countDown();
                        // bounded: a missing retake fails below instead of hanging
                        release.await(60, TimeUnit.SECONDS);
                        inSyscall.decrementAndGet();
                    } catch (InterruptedException e) {
                        throw new AssertionError(e);
                    } finally {
                        Syscalls.exitsyscall();
                    }
                    blockersDone.release();
                });
            }
            for (int i = 0; i < PROCS; i++) {
                s.newproc(() -> {
                    long x = 1;
                    while (!stop.get()) {
                        for (int k = 0; k < 10_000; k++) {
                            x = x * 6364136223846793005L + 1442695040888963407L;
                        }
                        cpuWork.incrementAndGet();
                        Scheduler.gosched(); // cooperative: this test does not rely on preemption
                    }
                    assertTrue(x != 0);
                    cpuDone.release();
                });
            }
            boolean in;
            Syscalls.entersyscallblock();
            mainHeldP.set(M.current().p != null);
            try {
                in = allIn.await(60, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            } finally {
                Syscalls.exitsyscall();
            }
            if (in) {
                // every blocker holds its carrier; the CPU-bound goroutines must still get the Ps
                long c0 = cpuWork.get();
                cpuWhenAllBlocked.set(c0);
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60); // a bound, not a timing
                while (cpuWork.get() <= c0 + 2 && System.nanoTime() < deadline) {
                    Scheduler.gosched();
                }
                cpuBeforeRelease.set(cpuWork.get());
            }
            release.countDown();
            for (int i = 0; i < BLOCKERS; i++) {
                blockersDone.acquire();
            }
            stop.set(true);
            for (int i = 0; i < PROCS; i++) {
                cpuDone.acquire();
            }
        });
        SyscallStats.Snapshot st = s.syscallStats.snapshot(s);
        System.out.printf(
                "syscall workload: max in syscall %d, max threads %d, cpu work %d -> %d while all blocked, %s%n",
                maxInSyscall.get(), maxThreads.get(), cpuWhenAllBlocked.get(), cpuBeforeRelease.get(), st);
        assertEquals(BLOCKERS, maxInSyscall.get(), "every blocker was in its syscall at once (each handed its P off)");
        assertTrue(maxThreads.get() > PROCS, "threads exceed GOMAXPROCS while they block: " + maxThreads.get());
        assertTrue(
                cpuWhenAllBlocked.get() >= 0 && cpuBeforeRelease.get() > cpuWhenAllBlocked.get() + 2,
                "the CPU-bound goroutines kept running while every blocker was blocked: " + cpuWhenAllBlocked.get()
                        + " -> " + cpuBeforeRelease.get());
        // With 2 Ps, 8 blockers in their syscalls at once: at most 2 still hold a P, the other 6
        // lost theirs to sysmon (nothing else takes a syscall's P here).
        assertTrue(st.retakes() >= BLOCKERS - PROCS, "sysmon retook the syscall Ps: " + st);
        assertFalse(mainHeldP.get(), "main's carrier held no P in its entersyscallblock");
        // Handed off at entry, unless sysmon had already retaken main's P while its carrier was
        // blocked (class loading on a loaded machine): then the syscall is main's own with no P.
        assertTrue(
                st.handoffAtEntry() >= 1 || st.blockedRetakes() >= 1,
                "main's entersyscallblock handed its P off: " + st);
    }
}
