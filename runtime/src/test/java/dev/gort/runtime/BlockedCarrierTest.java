package dev.gort.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.Pipe;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Blocking calls nobody wrapped in a syscall: with GOMAXPROCS=1, a goroutine that blocks its
 * carrier in the JVM must not stop the other goroutines, because sysmon sees the carrier blocked
 * (thread state + schedtick) and retakes the P. Each test lets G2 prove it ran while G1 was still
 * blocked, by timestamps taken on both sides.
 */
@Timeout(30)
class BlockedCarrierTest {

    /** Runs blocker as G1 and a probe G2 on 1 P; returns {G2 ran at, G1 woke at}. */
    private long[] race(Runnable blocker, Runnable afterProbe) throws Exception {
        Scheduler s = new Scheduler(TestSupport.config(1));
        AtomicLong probeAt = new AtomicLong();
        AtomicLong wokeAt = new AtomicLong();
        s.run(() -> {
            GoSema done = new GoSema(0);
            // The last go'd G runs first (runnext): G2 is created first so that G1 blocks first.
            // Unpreemptible: a preemption honoured at the second newproc's poll would queue main
            // and let G2 run before G1 exists (then nothing blocks, and G2 has nobody to wake).
            Unpreemptible.run(() -> {
                s.newproc(() -> {
                    probeAt.set(System.nanoTime());
                    afterProbe.run();
                    done.release();
                });
                s.newproc(() -> {
                    blocker.run();
                    wokeAt.set(System.nanoTime());
                    done.release(); // a gort call: the G notices it lost its P and gets one back
                    done.release();
                });
            });
            done.acquire();
            done.acquire();
            done.acquire();
        });
        SyscallStats.Snapshot st = s.syscallStats.snapshot(s);
        assertTrue(st.blockedRetakes() >= 1, "sysmon retook the blocked carrier's P: " + st);
        return new long[] {probeAt.get(), wokeAt.get()};
    }

    private static void assertProbeFirst(long[] t) {
        assertTrue(t[0] != 0 && t[1] != 0);
        assertTrue(t[0] < t[1], "G2 ran while G1 was blocked (G2 at " + t[0] + ", G1 woke at " + t[1] + ")");
    }

    @Test
    void threadSleepDoesNotStallTheP() throws Exception {
        // G1 sleeps (TIMED_WAITING) until G2 interrupts its carrier: the order comes from G2 having
        // run, not from a sleep being long enough for sysmon, a handoff and a new carrier.
        AtomicReference<Thread> sleeper = new AtomicReference<>();
        long[] t = race(
                () -> {
                    sleeper.set(Thread.currentThread()); // the carrier: G1 is not a virtual thread
                    try {
                        Thread.sleep(TimeUnit.SECONDS.toMillis(20)); // under the class's 30 s timeout
                        throw new AssertionError("G1 slept 20 s: G2 never ran to wake it");
                    } catch (InterruptedException e) {
                        // G2's wake-up
                    }
                },
                () -> sleeper.get().interrupt());
        assertProbeFirst(t);
    }

    @Test
    void lockSupportParkDoesNotStallTheP() throws Exception {
        CountDownLatch g2ran = new CountDownLatch(1);
        long[] t = race(
                () -> {
                    try {
                        assertTrue(g2ran.await(10, TimeUnit.SECONDS)); // WAITING, opened only by G2
                    } catch (InterruptedException e) {
                        throw new AssertionError(e);
                    }
                },
                g2ran::countDown);
        assertProbeFirst(t);
    }

    @Test
    void contendedMonitorDoesNotStallTheP() throws Exception {
        Object monitor = new Object();
        CountDownLatch held = new CountDownLatch(1);
        CountDownLatch g2ran = new CountDownLatch(1);
        // An outside thread holds the monitor until G2 has run: G1 is BLOCKED on it meanwhile.
        Thread holder = new Thread(() -> {
            synchronized (monitor) {
                held.countDown();
                try {
                    g2ran.await(10, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    throw new AssertionError(e);
                }
            }
        });
        holder.start();
        held.await();
        long[] t = race(
                () -> {
                    synchronized (monitor) {
                        LockSupport.parkNanos(1); // something inside
                    }
                },
                g2ran::countDown);
        holder.join();
        assertProbeFirst(t);
    }

    @Test
    void blockingQueueTakeDoesNotStallTheP() throws Exception {
        BlockingQueue<Integer> q = new ArrayBlockingQueue<>(1);
        long[] t = race(
                () -> {
                    try {
                        assertEquals(42, q.take()); // fed by G2 only
                    } catch (InterruptedException e) {
                        throw new AssertionError(e);
                    }
                },
                () -> assertTrue(q.offer(42)));
        assertProbeFirst(t);
    }

    /**
     * A blocking pipe read in native code leaves the carrier RUNNABLE; on Linux sysmon asks the
     * kernel, which has it asleep, once G1 has outlived its time slice, and retakes the P: G2, the
     * only one that writes to the pipe, runs.
     */
    @Test
    void aNativeReadThatLooksRunnableDoesNotStallThePOnLinux() throws Exception {
        assumeTrue(KernelThreads.currentTid() != 0, "the kernel cannot be asked here (no /proc)");
        assumeTrue(KernelThreads.cpuTime(Thread.currentThread()) >= 0, "no thread CPU time here");
        Pipe pipe = Pipe.open(); // blocking: the read waits in read(2), the JVM says RUNNABLE
        try {
            long[] t = race(
                    () -> {
                        try {
                            ByteBuffer b = ByteBuffer.allocate(1);
                            assertEquals(1, pipe.source().read(b)); // fed by G2 only
                        } catch (IOException e) {
                            throw new UncheckedIOException(e);
                        }
                    },
                    () -> {
                        try {
                            assertEquals(1, pipe.sink().write(ByteBuffer.wrap(new byte[] {42})));
                        } catch (IOException e) {
                            throw new UncheckedIOException(e);
                        }
                    });
            assertProbeFirst(t);
        } finally {
            pipe.source().close();
            pipe.sink().close();
        }
    }

    /**
     * Its initialiser parks (a sleep) where the goroutine cannot yield: in place. It sleeps again
     * until a goroutine has come to wait for the class ({@link #oneWaiterComing}), so that it never
     * ends before the wait the test is about has begun.
     */
    static final class SleepyInitAtOneP {
        static final String VALUE;

        static {
            oneInitStarted = true;
            do {
                Timer.timeSleep(TimeUnit.MILLISECONDS.toNanos(10));
            } while (!oneWaiterComing);
            VALUE = "loaded";
        }
    }

    /** SleepyInitAtOneP's initialiser has begun; a goroutine is about to wait for it. */
    private static volatile boolean oneInitStarted, oneWaiterComing;

    /** The same for the GOMAXPROCS=2 test (a class is initialised once per JVM). */
    static final class SleepyInitAtTwoPs {
        static final String VALUE;

        static {
            Timer.timeSleep(TimeUnit.MILLISECONDS.toNanos(10));
            VALUE = "loaded";
        }
    }

    /**
     * The first goroutine to touch a class runs its initialiser, which sleeps: the goroutine
     * parks in place (a yield inside an initialiser is refused) and hands its P off. The others
     * touch the class meanwhile and wait for the initialiser in the JVM, a wait it reports as
     * RUNNABLE, each holding a P; with every P held that way nobody ran the sleep's timer, and the
     * program hung. On Linux sysmon sees those carriers asleep in the kernel after their time
     * slice and retakes their Ps.
     *
     * <p>The waiter touches the class only once the initialiser has begun, and the initialiser
     * ends only once it has seen the waiter come: a single sleep's timer could fire before anybody
     * waited (on a loaded host the handed-off P's new M came after the deadline, ran the timer
     * first and, its schedtick still 0, took the initialiser's goroutine from the global queue
     * before the waiter), and the class was ready before the waiter touched it: no retake.
     */
    @Test
    void goroutinesWaitingForAnInitialiserThatSleepsDoNotHoldTheOnlyP() {
        assumeTrue(KernelThreads.currentTid() != 0, "the kernel cannot be asked here (no /proc)");
        assumeTrue(KernelThreads.cpuTime(Thread.currentThread()) >= 0, "no thread CPU time here");
        Scheduler s = new Scheduler(TestSupport.config(1));
        String[] got = new String[2];
        s.run(() -> {
            GoSema done = new GoSema(0);
            s.newproc(() -> {
                while (!oneInitStarted) { // wait-for-condition: the other goroutine initialises
                    Scheduler.gosched();
                }
                // No gort call from here to the wait for the class: the only P stays with this
                // carrier, and the initialiser, which needs it to see the flag, ends only after a
                // retake.
                oneWaiterComing = true;
                got[1] = SleepyInitAtOneP.VALUE;
                done.release();
            });
            s.newproc(
                    () -> { // runnext: usually the first to run
                        got[0] = SleepyInitAtOneP.VALUE;
                        done.release();
                    });
            done.acquire();
            done.acquire();
        });
        assertEquals(List.of("loaded", "loaded"), List.of(got));
        // One P: the waiter's carrier held it, and only a retake let the initialiser's timer run.
        SyscallStats.Snapshot st = s.syscallStats.snapshot(s);
        assertTrue(st.blockedRetakes() >= 1, "sysmon retook the P from the carrier waiting for the class: " + st);
    }

    /**
     * Two Ps, three goroutines: the two that wait usually hold both Ps (no retake count is asserted:
     * on a loaded host the second P's M may come late enough to run the expired timer itself).
     */
    @Test
    void goroutinesWaitingForAnInitialiserThatSleepsDoNotHoldEveryP() {
        assumeTrue(KernelThreads.currentTid() != 0, "the kernel cannot be asked here (no /proc)");
        assumeTrue(KernelThreads.cpuTime(Thread.currentThread()) >= 0, "no thread CPU time here");
        Scheduler s = new Scheduler(TestSupport.config(2));
        assertEquals(List.of("loaded", "loaded", "loaded"), touchAll(s, 3, () -> SleepyInitAtTwoPs.VALUE));
    }

    /** n goroutines on s each read value once; what they read, in goroutine order. */
    private static List<String> touchAll(Scheduler s, int n, java.util.function.Supplier<String> value) {
        String[] got = new String[n];
        s.run(() -> {
            GoSema done = new GoSema(0);
            for (int i = 0; i < n; i++) {
                int ii = i;
                s.newproc(() -> {
                    got[ii] = value.get();
                    done.release();
                });
            }
            for (int i = 0; i < n; i++) {
                done.acquire();
            }
        });
        return List.of(got);
    }

    /**
     * A GOMAXPROCS change stops the world, which waits for every P, and a P whose carrier is
     * blocked in user code stops only when sysmon retakes it. Sysmon used to deep-sleep whenever
     * the world was being stopped (Go's rule: Go preempts everything), up to a minute, and the
     * change waited that long; the class's 30 s timeout fails that. Now it keeps watching while a
     * P still runs.
     */
    @Test
    void aGomaxprocsChangeWaitsForABlockedCarrierOnlyUntilSysmonRetakesIt() {
        Scheduler s = new Scheduler(TestSupport.config(2));
        CountDownLatch release = new CountDownLatch(1);
        AtomicReference<M> blocked = new AtomicReference<>();
        AtomicLong procsBefore = new AtomicLong();
        s.run(() -> {
            GoSema done = new GoSema(0);
            s.newproc(() -> {
                blocked.set(M.current());
                try {
                    assertTrue(release.await(60, TimeUnit.SECONDS)); // WAITING, opened after the change
                } catch (InterruptedException e) {
                    throw new AssertionError(e);
                }
                done.release();
            });
            // Wait for the condition: G1's carrier blocked in the JVM, holding its P.
            while (blocked.get() == null || !Retake.carrierBlocked(blocked.get())) {
                Scheduler.gosched();
            }
            procsBefore.set(s.gomaxprocs(3));
            release.countDown();
            done.acquire();
        });
        assertEquals(2, procsBefore.get());
        assertEquals(3, s.gomaxprocs);
    }

    /**
     * The carrier blocked twice in a row: the G noticed the first retake at its gort call (a
     * gosched), got a P back, blocked again and was retaken again; the G never ran on two Ms.
     */
    @Test
    void aGNoticesTheRetakeAndCanBeRetakenAgain() throws Exception {
        Scheduler s = new Scheduler(TestSupport.config(1));
        AtomicLong probes = new AtomicLong();
        s.run(() -> {
            GoSema done = new GoSema(0);
            CountDownLatch first = new CountDownLatch(1);
            CountDownLatch second = new CountDownLatch(1);
            s.newproc(() -> {
                probes.incrementAndGet();
                first.countDown();
                done.release();
            });
            s.newproc(() -> {
                try {
                    assertTrue(first.await(10, TimeUnit.SECONDS));
                    Scheduler.gosched(); // notices: exitsyscall, then yields
                    assertEquals(G._Grunning, Scheduler.currentG().readgstatus());
                    done.release();
                    // Blocks again: main can only start G3 once the P is retaken a second time.
                    assertTrue(second.await(10, TimeUnit.SECONDS));
                } catch (InterruptedException e) {
                    throw new AssertionError(e);
                }
                done.release();
            });
            done.acquire();
            done.acquire();
            s.newproc(() -> {
                probes.incrementAndGet();
                second.countDown();
                done.release();
            });
            done.acquire();
            done.acquire();
        });
        assertEquals(2, probes.get());
        assertTrue(s.syscallStats.snapshot(s).blockedRetakes() >= 2);
    }

    /**
     * Issue 12 (commons-lang3's FastDateFormatTest.testParseSync timed out under gort): a carrier
     * whose P sysmon retook while it was blocked (here in a CountDownLatch, as in
     * {@code ExecutorService.awaitTermination}) must not leave its preemption word armed while it
     * stays blocked: Poll's armed count is JVM-wide, so every poll on every thread (the executor's
     * plain threads too) took the out-of-line slow path for as long as it blocked. Once the carrier
     * runs again, a poll (no gort call) must still make its G leave the "syscall".
     */
    @Test
    void aBlockedRetakenCarrierArmsNoPollUntilItRunsAgain() throws Exception {
        Scheduler s = new Scheduler(TestSupport.config(1));
        CountDownLatch release = new CountDownLatch(1);
        AtomicReference<M.MThread> carrier = new AtomicReference<>();
        AtomicLong wordWhileBlocked = new AtomicLong(-1);
        AtomicBoolean leftBySyscallPoll = new AtomicBoolean();
        s.run(() -> {
            GoSema done = new GoSema(0);
            // G2 (created first, runs second): it runs only once sysmon retook the P from G1.
            s.newproc(() -> {
                wordWhileBlocked.set(Preempt.state(carrier.get()));
                release.countDown();
                done.release();
            });
            s.newproc(() -> {
                M mp = M.current();
                carrier.set(mp.thread);
                G me = mp.curg;
                while (true) {
                    try {
                        release.await(); // unwrapped: the carrier blocks (WAITING)
                        break;
                    } catch (InterruptedException e) {
                        // not expected; wait again
                    }
                }
                // Polls only: the re-armed NOTICE makes one of them leave the "syscall".
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20); // wait-for-condition
                while (me.readgstatus() == G._Gsyscall && System.nanoTime() < deadline) {
                    Poll.poll();
                }
                leftBySyscallPoll.set(me.readgstatus() == G._Grunning);
                done.release();
            });
            done.acquire();
            done.acquire();
        });
        long w = wordWhileBlocked.get();
        assertEquals(0, w & Preempt.ARMED, "the blocked carrier's word was armed: " + Long.toHexString(w));
        assertTrue(leftBySyscallPoll.get(), "once running again, no poll made G1 leave its syscall");
    }
}
