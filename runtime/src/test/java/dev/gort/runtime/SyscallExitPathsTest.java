package dev.gort.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import jdk.internal.vm.Continuation;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Every way out of a syscall (go-scheduler-rules.md §3), each forced deterministically: the old P
 * (slice kept), another idle P, and no P at all (the G goes to the global queue and its M parks;
 * or, for a G that cannot leave its carrier, it waits there for a P), in both syscall models
 * ({@code psyscall}: Go 1.25's {@code _Psyscall}; else Go 1.26+'s).
 */
@Timeout(30)
class SyscallExitPathsTest {

    /** Go: entersyscall + the call + exitsyscall. */
    static void syscall(Runnable call) {
        Syscalls.entersyscall();
        try {
            call.run();
        } finally {
            Syscalls.exitsyscall();
        }
    }

    static void await(CountDownLatch l) {
        try {
            assertTrue(l.await(10, TimeUnit.SECONDS), "latch timed out");
        } catch (InterruptedException e) {
            throw new AssertionError(e);
        }
    }

    /** Spins (the P stays busy) until the counter reaches n; fails after 10 s. */
    static void spinUntil(AtomicLong counter, long n) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (counter.get() < n) {
            assertTrue(System.nanoTime() < deadline, "timed out waiting for a counter");
            Thread.onSpinWait();
        }
    }

    /**
     * Waits (inside the syscall) for sysmon to retake the P, by Go's rule: at its second sighting
     * of the same syscall if there is other work or no idle capacity, else after 10 ms. Either
     * model counts a retake in {@code syscallStats.retakes} before it hands the P off.
     */
    static void awaitRetake(Scheduler s, long retakesBefore) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (s.syscallStats.retakes.get() == retakesBefore) {
            assertTrue(System.nanoTime() < deadline, "sysmon never retook the syscall P");
            java.util.concurrent.locks.LockSupport.parkNanos(100_000);
        }
    }

    /**
     * sysmon runs meanwhile; with a second, idle P and an empty queue Go's rule leaves a syscall P
     * alone for 10 ms, so only a carrier descheduled that long could lose it.
     */
    @ParameterizedTest(name = "psyscall={0}")
    @ValueSource(booleans = {false, true})
    void shortSyscallKeepsItsPAndItsSlice(boolean psyscall) {
        Scheduler s = new Scheduler(TestSupport.config(2, psyscall));
        int[] kept = new int[1];
        s.run(() -> {
            G gp = Scheduler.currentG();
            for (int i = 0; i < 1000; i++) {
                M mp = M.current();
                P pp = mp.p;
                int tick = pp.schedtickOpaque();
                int sysTick = pp.syscalltickOpaque();
                long preemptions = s.stats.preemptions.get();
                long retakes = s.syscallStats.retakes.get();
                Syscalls.entersyscall();
                assertEquals(G._Gsyscall, gp.readgstatus());
                if (psyscall) {
                    assertSame(null, mp.p); // Go 1.25: the P in _Psyscall, without its M
                } else if (mp.p != pp) {
                    // Go 1.26+: the P stays the M's until someone takes it, and sysmon already did
                    // (the carrier descheduled on a loaded machine: seen once in CI): inconclusive
                    assertSame(pp, mp.oldp);
                    Syscalls.exitsyscall();
                    continue;
                }
                assertSame(pp, mp.oldp);
                Syscalls.exitsyscall();
                assertEquals(G._Grunning, gp.readgstatus());
                if (s.stats.preemptions.get() != preemptions || M.current().p != pp) {
                    continue; // sysmon preempted us (a 10 ms slice on a loaded machine): a new slice
                }
                if (s.syscallStats.retakes.get() != retakes) {
                    // The carrier was descheduled past 10 ms (a loaded machine): sysmon retook the
                    // P (its own syscalltick bump) and the exit found the same P idle again.
                    continue;
                }
                assertEquals(P._Prunning, pp.status());
                assertEquals(tick, pp.schedtickOpaque(), "the fast path must not start a new slice");
                assertEquals(sysTick + 1, pp.syscalltickOpaque(), "each exit bumps syscalltick");
                kept[0]++;
            }
        });
        SyscallStats.Snapshot st = s.syscallStats.snapshot(s);
        assertTrue(kept[0] >= 990, "kept P and slice in only " + kept[0] + " of 1000 syscalls");
        assertTrue(st.fastOldP() >= 990, "" + st);
        assertEquals(1000, st.fastOldP() + st.fastIdleP() + st.slowGlobal() + st.slowIdleP());
    }

    @ParameterizedTest(name = "psyscall={0}")
    @ValueSource(booleans = {false, true})
    void retakenPExitTakesAnIdleP(boolean psyscall) {
        Scheduler s = new Scheduler(TestSupport.config(2, psyscall));
        s.run(() -> {
            M mp = M.current();
            P old = mp.p;
            long retakes = s.syscallStats.retakes.get();
            Syscalls.entersyscall();
            // Nothing to run and a P idle: sysmon takes the P after 10 ms, and it goes idle.
            awaitRetake(s, retakes);
            // handoffp may lend it to an M for a moment (Go's "last running P" rule starts one to
            // watch the timers); that M finds nothing and puts it back on the idle list.
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (old.status() != P._Pidle) {
                assertTrue(System.nanoTime() < deadline, "the retaken P never went idle: " + old.status());
                java.util.concurrent.locks.LockSupport.parkNanos(100_000);
            }
            Syscalls.exitsyscall();
            assertEquals(P._Prunning, M.current().p.status());
        });
        SyscallStats.Snapshot st = s.syscallStats.snapshot(s);
        assertEquals(1, st.retakes());
        assertEquals(1, st.fastIdleP());
        assertEquals(0, st.fastOldP());
    }

    /**
     * G1 blocks in a syscall; its only P is retaken and runs G2; G1's call returns while G2 holds
     * the P: G1 goes to the global queue and its M parks; G2 ends and G1 runs on G2's M.
     */
    @ParameterizedTest(name = "psyscall={0}")
    @ValueSource(booleans = {false, true})
    void noPExitQueuesGlobalAndParksTheM(boolean psyscall) {
        Thread[] carriers = exitWithoutP(false, false, psyscall);
        assertNotSame(carriers[0], carriers[1], "G1 resumes on another M: its own parked");
    }

    /** As above, but G1 is pinned: it cannot yield, so it waits for a P on its own carrier. */
    @ParameterizedTest(name = "psyscall={0}")
    @ValueSource(booleans = {false, true})
    void pinnedNoPExitWaitsOnItsCarrier(boolean psyscall) {
        Thread[] carriers = exitWithoutP(true, false, psyscall);
        assertSame(carriers[0], carriers[1], "a pinned G never leaves its carrier");
    }

    /** As above, for a G locked to its thread. */
    @ParameterizedTest(name = "psyscall={0}")
    @ValueSource(booleans = {false, true})
    void lockedNoPExitWaitsOnItsCarrier(boolean psyscall) {
        Thread[] carriers = exitWithoutP(false, true, psyscall);
        assertSame(carriers[0], carriers[1], "a locked G never leaves its carrier");
    }

    private Thread[] exitWithoutP(boolean pinned, boolean locked, boolean psyscall) {
        Scheduler s = new Scheduler(TestSupport.config(1, psyscall));
        CountDownLatch inSyscall = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        AtomicReference<Thread> before = new AtomicReference<>();
        AtomicReference<Thread> after = new AtomicReference<>();
        AtomicLong threadsSeen = new AtomicLong();
        AtomicLong counter =
                pinned ? s.syscallStats.slowInPlace : locked ? s.syscallStats.slowLocked : s.syscallStats.slowGlobal;
        Thread driver = new Thread(() -> {
            await(inSyscall);
            // G1's P sits in its syscall and no other P exists: sysmon retakes it within two ticks
            // (nothing is queued, so it goes idle)...
            awaitRetake(s, 0);
            // ...then start G2, which takes it, lets G1's call return and holds the P until G1 has
            // taken the no-P path.
            s.newproc(() -> {
                release.countDown();
                spinUntil(counter, 1);
                threadsSeen.set(s.mcountPublic());
            });
        });
        s.run(() -> {
            GoSema done = new GoSema(0);
            s.newproc(() -> {
                if (locked) {
                    ThreadLock.LockOSThread();
                }
                if (pinned) {
                    Continuation.pin();
                }
                before.set(Thread.currentThread());
                syscall(() -> {
                    inSyscall.countDown();
                    await(release);
                });
                after.set(Thread.currentThread());
                if (pinned) {
                    Continuation.unpin();
                }
                if (locked) {
                    ThreadLock.UnlockOSThread();
                }
                done.release();
            });
            driver.start();
            done.acquire();
        });
        SyscallStats.Snapshot st = s.syscallStats.snapshot(s);
        assertEquals(1, counter.get());
        assertEquals(0, st.fastOldP() + st.fastIdleP());
        assertTrue(threadsSeen.get() >= 2, "a second M ran G2 while G1's M was in the syscall");
        return new Thread[] {before.get(), after.get()};
    }

    /** entersyscallblock hands the P off at entry: G2 runs on 1 P without any sysmon. */
    @ParameterizedTest(name = "psyscall={0}")
    @ValueSource(booleans = {false, true})
    void blockingSyscallHandsOffAtEntry(boolean psyscall) {
        Scheduler s = new Scheduler(TestSupport.config(1, psyscall));
        CountDownLatch release = new CountDownLatch(1);
        s.run(() -> {
            GoSema done = new GoSema(0);
            s.newproc(() -> {
                Syscalls.entersyscallblock();
                try {
                    await(release); // only G2 can open it
                } finally {
                    Syscalls.exitsyscall();
                }
                done.release();
            });
            s.newproc(() -> {
                release.countDown();
                done.release();
            });
            done.acquire();
            done.acquire();
        });
        assertEquals(1, s.syscallStats.snapshot(s).handoffAtEntry());
    }
}
