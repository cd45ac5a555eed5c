package dev.gort.runtime;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The simulator's "blocking syscalls" workload: GOMAXPROCS=2, 8 goroutines each blocked ~50 ms in
 * a syscall, plus CPU-bound goroutines. sysmon hands each syscall's P to a new carrier, so the
 * thread count climbs past GOMAXPROCS, the blocks overlap (wall time about one block, not four),
 * and the CPU-bound goroutines keep running meanwhile.
 */
@Timeout(60)
class SyscallWorkloadTest {
    static final int PROCS = 2;
    static final int BLOCKERS = 8;
    static final long BLOCK_MS = 50;

    @Test
    void blockingSyscallsHandTheirPsOff() throws Exception {
        Scheduler s = new Scheduler(TestSupport.config(PROCS));
        AtomicInteger inSyscall = new AtomicInteger();
        AtomicInteger maxInSyscall = new AtomicInteger();
        AtomicLong maxThreads = new AtomicLong();
        AtomicLong cpuWork = new AtomicLong();
        AtomicLong cpuWorkWhenAllBlocked = new AtomicLong(-1);
        AtomicLong cpuWorkAtLastExit = new AtomicLong();
        AtomicLong firstEnter = new AtomicLong();
        AtomicLong lastExit = new AtomicLong();
        s.run(() -> {
            GoSema blockersDone = new GoSema(0);
            GoSema cpuDone = new GoSema(0);
            boolean[] stop = new boolean[1];
            for (int i = 0; i < BLOCKERS; i++) {
                s.newproc(() -> {
                    Syscalls.entersyscall();
                    try {
                        firstEnter.compareAndSet(0, System.nanoTime());
                        int n = inSyscall.incrementAndGet();
                        maxInSyscall.accumulateAndGet(n, Math::max);
                        maxThreads.accumulateAndGet(s.mcountPublic(), Math::max);
                        if (n == PROCS) { // every P's goroutine is blocked (without handoff: all stuck)
                            cpuWorkWhenAllBlocked.compareAndSet(-1, cpuWork.get());
                        }
                        Thread.sleep(BLOCK_MS);
                        int left = inSyscall.decrementAndGet();
                        if (left == PROCS - 1) {
                            cpuWorkAtLastExit.set(cpuWork.get());
                        }
                        if (left == 0) {
                            lastExit.set(System.nanoTime());
                        }
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
                    while (!readStop(stop)) {
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
            for (int i = 0; i < BLOCKERS; i++) {
                blockersDone.acquire();
            }
            writeStop(stop);
            for (int i = 0; i < PROCS; i++) {
                cpuDone.acquire();
            }
        });
        long wallMs = (lastExit.get() - firstEnter.get()) / 1_000_000;
        SyscallStats.Snapshot st = s.syscallStats.snapshot(s);
        System.out.printf(
                "syscall workload: wall %d ms, max in syscall %d, max threads %d, cpu work %d -> %d, %s%n",
                wallMs, maxInSyscall.get(), maxThreads.get(), cpuWorkWhenAllBlocked.get(), cpuWorkAtLastExit.get(), st);
        // Normally all 8 overlap; on a loaded machine the ramp-up may be slower than one block.
        assertTrue(maxInSyscall.get() > PROCS, "more blocks overlapped than there are Ps: " + maxInSyscall.get());
        assertTrue(maxThreads.get() > PROCS, "threads exceed GOMAXPROCS while they block: " + maxThreads.get());
        assertTrue(
                cpuWorkWhenAllBlocked.get() >= 0 && cpuWorkAtLastExit.get() > cpuWorkWhenAllBlocked.get(),
                "the CPU-bound goroutines kept running while at least GOMAXPROCS goroutines were blocked");
        // The blocks overlapped: more goroutines were in a syscall at once than there are Ps (checked
        // above, counted, not timed: a wall-time bound failed on a machine with load 14), and each
        // blocked P went to another thread.
        assertTrue(st.retakes() + st.handoffAtEntry() > 0, "blocked Ps were handed off: " + st);
        assertTrue(st.retakes() >= BLOCKERS - PROCS, "sysmon retook the syscall Ps: " + st);
    }

    private static boolean readStop(boolean[] stop) {
        synchronized (stop) {
            return stop[0];
        }
    }

    private static void writeStop(boolean[] stop) {
        synchronized (stop) {
            stop[0] = true;
        }
    }
}
