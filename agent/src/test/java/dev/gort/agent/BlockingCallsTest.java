package dev.gort.agent;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gort.runtime.Bubble;
import dev.gort.runtime.G;
import dev.gort.runtime.GoSema;
import dev.gort.runtime.M;
import dev.gort.runtime.PreemptStats;
import dev.gort.runtime.PreemptStrategy;
import dev.gort.runtime.Scheduler;
import dev.gort.runtime.SyscallStats;
import java.lang.reflect.Method;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * JDK calls that block their thread, in instrumented code ({@code dev.gort.agent.work.Blockers},
 * loaded by {@link InstrumentingLoader}): a known blocking call is a syscall for its goroutine
 * ({@code Poll.blockingEnter}/{@code blockingExit}), as Go's syscall wrappers enter one, so sysmon
 * retakes its P at its next tick instead of finding the carrier blocked two ticks in a row;
 * {@code Thread.sleep} parks the goroutine where it may yield; {@code Thread.yield} holding a
 * monitor yields in place.
 */
class BlockingCallsTest {
    private static Method method(String name, Class<?>... params) throws Exception {
        return AgentPreemptionTest.method(PreemptStrategy.BACKEDGE, "Blockers", name, params);
    }

    private static Object call(Method m, Object... args) {
        return AgentPreemptionTest.call(m, null, args);
    }

    /**
     * Runs {@code bodies} as goroutines on a fresh one-P scheduler, in that order of creation; what
     * a body throws, or the run itself (a fatal error), goes to {@code failure}.
     */
    static Scheduler runAll(AtomicReference<Throwable> failure, Runnable... bodies) {
        Scheduler s = AgentPreemptionTest.newScheduler(1);
        try {
            s.run(() -> {
                Scheduler rt = Scheduler.current();
                GoSema done = new GoSema(0);
                for (Runnable b : bodies) {
                    rt.newproc(() -> {
                        try {
                            b.run();
                        } catch (Throwable t) {
                            failure.compareAndSet(null, t);
                        } finally {
                            done.release();
                        }
                    });
                }
                for (int i = 0; i < bodies.length; i++) {
                    done.acquire();
                }
            });
        } catch (Throwable t) {
            failure.compareAndSet(null, t);
        }
        return s;
    }

    /**
     * At GOMAXPROCS=1 a goroutine takes from an empty {@code SynchronousQueue}: its carrier blocks
     * in the JDK. The call is a syscall: sysmon retakes the P through its syscall branch (Go's
     * retake of a P whose G is in a syscall), and the goroutine queued behind it gets the P and
     * puts. Unhooked, sysmon had to find the carrier blocked at two ticks in a row
     * ({@code blockedRetakes}).
     */
    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void aJdkBlockingCallIsASyscallThatSysmonRetakes() throws Exception {
        Method take = method("takeSynchronous", SynchronousQueue.class);
        Method put = method("putSynchronous", SynchronousQueue.class, Object.class);
        SynchronousQueue<Object> q = new SynchronousQueue<>();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        AtomicReference<Object> got = new AtomicReference<>();
        // Created last, the taker is in runnext and runs first; the putter waits in the run queue.
        Scheduler s = runAll(failure, () -> call(put, q, "x"), () -> got.set(call(take, q)));
        SyscallStats.Snapshot st = s.syscallStats.snapshot(s);
        assertNull(failure.get(), () -> "a goroutine failed: " + failure.get());
        assertEquals("x", got.get());
        assertTrue(st.retakes() >= 1, () -> "no syscall retake: " + st);
        assertEquals(0, st.blockedRetakes(), () -> "sysmon had to find the carrier blocked: " + st);
    }

    /**
     * A read of a {@code Socket}'s stream (typed {@code InputStream} at the call site, as libraries
     * hold it) waits in native code, which the JVM reports as RUNNABLE: sysmon used to find such a
     * carrier only past the goroutine's time slice and only by asking the kernel. The read is a
     * syscall now: at GOMAXPROCS=1 the goroutine queued behind the reader gets the P through
     * sysmon's syscall branch and writes what the reader waits for.
     */
    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void aSocketStreamsReadIsASyscall() throws Exception {
        Method read = method("read", java.io.InputStream.class, byte[].class);
        try (java.net.ServerSocket ss = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress());
                java.net.Socket client = new java.net.Socket(ss.getInetAddress(), ss.getLocalPort());
                java.net.Socket server = ss.accept()) {
            byte[] buf = new byte[16];
            java.io.InputStream in = client.getInputStream();
            AtomicInteger n = new AtomicInteger();
            AtomicReference<Throwable> failure = new AtomicReference<>();
            Scheduler s = runAll(
                    failure,
                    () -> {
                        try {
                            server.getOutputStream().write(new byte[] {'h', 'i'});
                        } catch (java.io.IOException e) {
                            throw new java.io.UncheckedIOException(e);
                        }
                    },
                    () -> n.set((int) call(read, in, buf)));
            SyscallStats.Snapshot st = s.syscallStats.snapshot(s);
            assertNull(failure.get(), () -> "a goroutine failed: " + failure.get());
            assertEquals(2, n.get());
            assertEquals('h', buf[0]);
            assertTrue(st.retakes() >= 1, () -> "no syscall retake: " + st);
            assertEquals(0, st.blockedRetakes(), () -> "sysmon had to find the carrier blocked: " + st);
        }
        // Any other stream goes through the same call, unchanged.
        assertEquals(3, (int) call(read, new java.io.ByteArrayInputStream(new byte[] {1, 2, 3}), new byte[8]));
    }

    /**
     * A blocking call that throws (a timed {@code Future.get}'s {@code TimeoutException}) leaves
     * its syscall in the hook's handler: the goroutine is running again where it catches the
     * exception, not in a syscall until its next gort call.
     */
    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void aBlockingCallThatThrowsLeavesItsSyscall() throws Exception {
        Method m = method("statusAfterTimeout", CompletableFuture.class);
        AtomicInteger status = new AtomicInteger(-3);
        AtomicReference<Throwable> failure = new AtomicReference<>();
        runAll(failure, () -> status.set((int) call(m, new CompletableFuture<>())));
        assertNull(failure.get(), () -> "the goroutine failed: " + failure.get());
        assertEquals(G._Grunning, status.get(), "status after the catch (3: _Gsyscall)");
        assertEquals(-1, (int) call(m, new CompletableFuture<>()), "outside a goroutine: the plain call");
    }

    /**
     * {@code Thread.sleep} in a goroutine that may yield parks the goroutine: at GOMAXPROCS=1 the
     * goroutine queued behind it runs on the same carrier meanwhile, and no P is retaken (the
     * carrier never blocked).
     */
    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void threadSleepParksTheGoroutineNotItsCarrier() throws Exception {
        Method sleep = method("sleep", long.class);
        AtomicReference<Throwable> failure = new AtomicReference<>();
        AtomicReference<Thread> sleeperCarrier = new AtomicReference<>();
        AtomicReference<Thread> otherCarrier = new AtomicReference<>();
        AtomicLong slept = new AtomicLong();
        Scheduler s = runAll(failure, () -> otherCarrier.set(M.current().thread()), () -> {
            sleeperCarrier.set(M.current().thread());
            long t0 = System.nanoTime();
            call(sleep, 30L);
            slept.set(System.nanoTime() - t0);
        });
        SyscallStats.Snapshot st = s.syscallStats.snapshot(s);
        assertNull(failure.get(), () -> "a goroutine failed: " + failure.get());
        assertTrue(slept.get() >= 30_000_000L, () -> "slept " + slept.get() + " ns");
        assertEquals(sleeperCarrier.get(), otherCarrier.get(), "the other goroutine ran on another carrier");
        assertEquals(0, st.retakes() + st.blockedRetakes(), () -> "a P was retaken from a sleeping carrier: " + st);
    }

    /** The JDK's contract: argument checks, the interrupt status, a sleep of 0, negative durations. */
    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void threadSleepKeepsTheJdksContract() throws Exception {
        Method ms = method("sleep", long.class);
        Method msNs = method("sleep", long.class, int.class);
        Method dur = method("sleep", Duration.class);
        Method unit = method("sleep", TimeUnit.class, long.class);
        AtomicReference<Throwable> failure = new AtomicReference<>();
        runAll(failure, () -> {
            RuntimeException neg = assertThrows(RuntimeException.class, () -> call(ms, -1L));
            assertEquals("timeout value is negative", neg.getMessage());
            RuntimeException range = assertThrows(RuntimeException.class, () -> call(msNs, 0L, 1_000_000));
            assertEquals("nanosecond timeout value out of range", range.getMessage());
            Thread.currentThread().interrupt();
            RuntimeException wrapped = assertThrows(RuntimeException.class, () -> call(ms, 10L));
            assertTrue(wrapped.getCause() instanceof InterruptedException, () -> "not interrupted: " + wrapped);
            assertEquals("sleep interrupted", wrapped.getCause().getMessage());
            assertFalse(Thread.currentThread().isInterrupted(), "the interrupt status was not cleared");
            call(ms, 0L); // a yield
            call(dur, Duration.ofSeconds(-5)); // returns at once
            Thread.currentThread().interrupt();
            call(unit, TimeUnit.SECONDS, 0L); // TimeUnit.sleep(0) does not look at the status
            assertTrue(Thread.interrupted(), "TimeUnit.sleep(0) cleared the interrupt status");
            long t0 = System.nanoTime();
            call(unit, TimeUnit.MILLISECONDS, 5L);
            call(msNs, 0L, 500_000);
            call(dur, Duration.ofMillis(5));
            assertTrue(System.nanoTime() - t0 >= 10_500_000L, "the sleeps were short");
        });
        assertNull(failure.get(), () -> "the goroutine failed: " + failure.get());
    }

    /** Inside a synctest bubble a goroutine's {@code Thread.sleep} counts on the bubble's clock. */
    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void threadSleepInABubbleSleepsOnTheBubblesClock() throws Exception {
        Method sleep = method("sleep", long.class);
        AtomicLong fake = new AtomicLong();
        AtomicReference<String> err = new AtomicReference<>();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        long t0 = System.nanoTime();
        runAll(
                failure,
                () -> err.set(Bubble.run(() -> {
                    long start = Bubble.current().now();
                    call(sleep, 3_600_000L); // an hour
                    fake.set(Bubble.current().now() - start);
                })));
        long real = System.nanoTime() - t0;
        assertNull(failure.get(), () -> "the goroutine failed: " + failure.get());
        assertNull(err.get());
        assertEquals(3_600_000_000_000L, fake.get(), "the bubble's clock did not move by the sleep");
        assertTrue(real < 60_000_000_000L, "slept in real time");
    }

    /**
     * Holding a monitor, a goroutine cannot leave its carrier: its {@code Thread.sleep} sleeps the
     * carrier, as a syscall (sysmon retakes the P through its syscall branch, and the goroutine
     * queued behind it runs), and it wakes on the same carrier still holding the monitor.
     */
    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void threadSleepHoldingAMonitorIsASyscallOnItsCarrier() throws Exception {
        Method m = method("sleepLockedUntil", Object.class, AtomicBoolean.class);
        AtomicBoolean go = new AtomicBoolean();
        AtomicBoolean kept = new AtomicBoolean();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        Scheduler s = runAll(failure, () -> go.set(true), () -> kept.set((boolean) call(m, new Object(), go)));
        SyscallStats.Snapshot st = s.syscallStats.snapshot(s);
        assertNull(failure.get(), () -> "a goroutine failed: " + failure.get());
        assertTrue(kept.get(), "it left its carrier or the monitor");
        assertTrue(st.retakes() >= 1, () -> "no syscall retake: " + st);
    }

    /**
     * Holding a monitor, a goroutine that waits with {@code Thread.yield()} for a goroutine queued
     * behind it yields in place: its P goes to that goroutine at once and it stays on its carrier.
     * Before, the carrier's own yield let nothing run on the P until sysmon preempted the holder
     * in place, a slice (20 ms) later.
     */
    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void threadYieldHoldingAMonitorYieldsInPlace() throws Exception {
        Method m = method("yieldLockedUntil", Object.class, AtomicBoolean.class);
        AtomicBoolean go = new AtomicBoolean();
        AtomicInteger yields = new AtomicInteger();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        Scheduler s = runAll(failure, () -> go.set(true), () -> yields.set((int) call(m, new Object(), go)));
        PreemptStats ps = s.preempt.snapshot();
        assertNull(failure.get(), () -> "a goroutine failed: " + failure.get());
        assertTrue(yields.get() >= 1, () -> "it left the monitor's carrier, or never yielded: " + yields.get());
        assertTrue(ps.threadYieldsInPlace() >= 1, () -> "no yield in place: " + ps);
    }
}
