package dev.gort;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gort.runtime.Scheduler;
import dev.gort.runtime.SyscallStats;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The user-facing syscall and thread-locking API, with Go's own test shapes where they exist
 * (go-tests-to-port.md §C: TestBlockLocked, TestYieldLocked).
 */
@ParameterizedClass(name = "psyscall={0}")
@ValueSource(booleans = {false, true})
class GoSyscallTest {
    /** The syscall model: Go 1.25's {@code _Psyscall} (true) or Go 1.26+'s. */
    @Parameter
    boolean psyscall;

    @Test
    void blockReturnsTheValueAndRethrowsTheException(@TempDir Path dir) throws Exception {
        Path f = dir.resolve("hello.txt");
        Files.writeString(f, "hello");
        AtomicReference<byte[]> got = new AtomicReference<>();
        AtomicReference<Throwable> thrown = new AtomicReference<>();
        GortTesting.run(1, psyscall, () -> {
            try {
                got.set(Syscall.block(() -> Files.readAllBytes(f)));
                Syscall.block(() -> Files.readAllBytes(dir.resolve("missing")));
            } catch (IOException e) {
                thrown.set(e);
            }
        });
        assertArrayEquals("hello".getBytes(StandardCharsets.UTF_8), got.get());
        assertTrue(
                thrown.get() instanceof java.nio.file.NoSuchFileException, "the call's own exception: " + thrown.get());
    }

    @Test
    void blockOutsideAGoroutineJustRuns() throws Exception {
        assertEquals(42, Syscall.block(() -> 42));
        assertThrows(
                IOException.class,
                () -> Syscall.blockHandoff(() -> {
                    throw new IOException("x");
                }));
    }

    /** Go: proc_test.go TestBlockLocked. */
    @ParameterizedTest(name = "GOMAXPROCS={0}")
    @ValueSource(ints = {1, 2, 4})
    void TestBlockLocked(int procs) {
        final int n = 10;
        Set<Thread> carriers = ConcurrentHashMap.newKeySet();
        GortTesting.run(procs, psyscall, () -> {
            Chan<Boolean> c = Chan.make();
            Go.go(() -> {
                Go.lockOSThread();
                for (int i = 0; i < n; i++) {
                    carriers.add(Thread.currentThread());
                    c.send(true);
                }
                Go.unlockOSThread();
            });
            for (int i = 0; i < n; i++) {
                c.recv();
            }
        });
        assertEquals(1, carriers.size(), "a locked goroutine runs on its own thread only: " + carriers);
    }

    /** Go: proc_test.go TestYieldLocked (the goroutine exits still locked: its thread ends). */
    @Test
    void TestYieldLocked() {
        final int n = 10;
        Set<Thread> carriers = ConcurrentHashMap.newKeySet();
        AtomicLong lockedExits = new AtomicLong();
        GortTesting.run(2, psyscall, () -> {
            Chan<Boolean> c = Chan.make();
            Go.go(() -> {
                Go.lockOSThread();
                for (int i = 0; i < n; i++) {
                    carriers.add(Thread.currentThread());
                    Go.gosched();
                    carriers.add(Thread.currentThread());
                    Time.sleep(Duration.ofMillis(1));
                }
                carriers.add(Thread.currentThread());
                c.send(true);
                // runtime.UnlockOSThread() is deliberately omitted
            });
            c.recv();
            Scheduler s = Scheduler.current();
            long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
            while (s.syscallStats.snapshot(s).lockedExits() == 0 && System.nanoTime() < deadline) {
                Time.sleep(Duration.ofMillis(1));
            }
            lockedExits.set(s.syscallStats.snapshot(s).lockedExits());
        });
        assertEquals(1, carriers.size(), "the locked goroutine never left its thread: " + carriers);
        assertEquals(1, lockedExits.get(), "its thread ended with it");
        assertTrue(!carriers.iterator().next().isAlive()
                || waitDead(carriers.iterator().next()));
    }

    private static boolean waitDead(Thread t) {
        try {
            t.join(10_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return !t.isAlive();
    }

    /**
     * GOMAXPROCS=1: a goroutine blocking its carrier in a plain JDK wait (nobody wrapped it in
     * {@code Syscall.block}) does not stop another goroutine from running meanwhile: sysmon sees
     * the carrier TIMED_WAITING and hands its P to another thread. The wait ends only when the
     * other goroutine releases it, so without the hand-off it would time out (60 s).
     */
    @Test
    void plainThreadSleepDoesNotStopTheOnlyP() {
        java.util.concurrent.CountDownLatch otherRan = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.atomic.AtomicBoolean released = new java.util.concurrent.atomic.AtomicBoolean();
        GortTesting.run(1, psyscall, () -> {
            Chan<Boolean> done = Chan.make(2);
            Go.go(
                    () -> { // runs second, while the sleeper's carrier is blocked
                        otherRan.countDown();
                        done.send(true);
                    });
            Go.go(
                    () -> { // runs first (runnext)
                        try {
                            released.set(otherRan.await(60, java.util.concurrent.TimeUnit.SECONDS));
                        } catch (InterruptedException e) {
                            throw new AssertionError(e);
                        }
                        done.send(true);
                    });
            done.recv();
            done.recv();
        });
        assertTrue(released.get(), "the other goroutine ran while the sleeper's carrier was blocked");
    }

    /**
     * The simulator's workload through the public API (see SyscallWorkloadTest for the details):
     * 8 goroutines block in {@code Syscall.block} at once on 2 Ps, because each hands its P off
     * (without hand-off the third could never enter), their carriers exceed GOMAXPROCS, and the
     * CPU-bound goroutines keep running while all 8 are blocked. Ordered by latches, not by time:
     * the blocked calls end only once all 8 are in and the CPU work was seen to advance.
     */
    @Test
    void blockingSyscallsWorkload() {
        final int procs = 2;
        final int blockers = 8;
        AtomicInteger inSyscall = new AtomicInteger();
        AtomicInteger maxInSyscall = new AtomicInteger();
        AtomicLong maxThreads = new AtomicLong();
        AtomicLong cpuWork = new AtomicLong();
        AtomicLong cpuWhenAllBlocked = new AtomicLong(-1);
        AtomicLong cpuBeforeRelease = new AtomicLong(-1);
        java.util.concurrent.atomic.AtomicBoolean stop = new java.util.concurrent.atomic.AtomicBoolean();
        java.util.concurrent.CountDownLatch allIn = new java.util.concurrent.CountDownLatch(blockers);
        java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
        AtomicReference<SyscallStats.Snapshot> stats = new AtomicReference<>();
        GortTesting.run(procs, psyscall, () -> {
            Scheduler s = Scheduler.current();
            Chan<Boolean> blockersDone = Chan.make(blockers);
            Chan<Boolean> cpuDone = Chan.make(procs);
            for (int i = 0; i < procs; i++) {
                Go.go(() -> {
                    long x = 1;
                    while (!stop.get()) {
                        for (int k = 0; k < 10_000; k++) {
                            x = x * 6364136223846793005L + 1442695040888963407L;
                        }
                        cpuWork.incrementAndGet();
                        Go.gosched(); // cooperative: this test does not rely on preemption
                    }
                    assertTrue(x != 0);
                    cpuDone.send(true);
                });
            }
            for (int i = 0; i < blockers; i++) {
                Go.go(() -> {
                    Syscall.block(() -> {
                        int k = inSyscall.incrementAndGet();
                        maxInSyscall.accumulateAndGet(k, Math::max);
                        maxThreads.accumulateAndGet(s.mcountPublic(), Math::max);
                        allIn.countDown();
                        try {
                            // bounded: a missing hand-off fails below instead of hanging
                            release.await(60, java.util.concurrent.TimeUnit.SECONDS);
                        } catch (InterruptedException e) {
                            throw new AssertionError(e);
                        }
                        inSyscall.decrementAndGet();
                    });
                    blockersDone.send(true);
                });
            }
            boolean in = Syscall.block(() -> {
                try {
                    return allIn.await(60, java.util.concurrent.TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    throw new AssertionError(e);
                }
            });
            if (in) {
                // every blocker holds its carrier; the CPU-bound goroutines must still get the Ps
                long c0 = cpuWork.get();
                cpuWhenAllBlocked.set(c0);
                long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
                while (cpuWork.get() <= c0 + 2 && System.nanoTime() < deadline) {
                    Go.gosched();
                }
                cpuBeforeRelease.set(cpuWork.get());
            }
            release.countDown();
            for (int i = 0; i < blockers; i++) {
                blockersDone.recv();
            }
            stop.set(true);
            for (int i = 0; i < procs; i++) {
                cpuDone.recv();
            }
            stats.set(s.syscallStats.snapshot(s));
        });
        System.out.printf(
                "api syscall workload: max in syscall %d, max threads %d, cpu %d -> %d while all blocked, %s%n",
                maxInSyscall.get(), maxThreads.get(), cpuWhenAllBlocked.get(), cpuBeforeRelease.get(), stats.get());
        assertEquals(blockers, maxInSyscall.get(), "every blocker was in its syscall at once (each handed its P off)");
        assertTrue(maxThreads.get() > procs, "threads exceed GOMAXPROCS: " + maxThreads.get());
        assertTrue(
                cpuWhenAllBlocked.get() >= 0 && cpuBeforeRelease.get() > cpuWhenAllBlocked.get() + 2,
                "CPU-bound goroutines kept running while all blockers were blocked: " + cpuWhenAllBlocked.get() + " -> "
                        + cpuBeforeRelease.get());
    }
}
