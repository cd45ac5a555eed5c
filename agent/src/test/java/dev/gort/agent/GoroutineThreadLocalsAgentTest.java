package dev.gort.agent;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gort.runtime.GoSema;
import dev.gort.runtime.PreemptStats;
import dev.gort.runtime.PreemptStrategy;
import dev.gort.runtime.Scheduler;
import java.lang.reflect.Method;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.ReentrantLock;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.function.IntConsumer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Issue 12c: library code that keeps state in a {@code ThreadLocal} across a preemption point the
 * agent put inside it. commons-lang3's {@code HashCodeBuilder.reflectionHashCode} and
 * {@code ToStringBuilder.reflectionToString} of object cycles (their ThreadLocal cycle registries:
 * compat/RESULTS.md, failure 1) in many goroutines at GOMAXPROCS=2, with a CPU hog and a
 * preemption storm so that preemptions land inside the builders and goroutines resume on the other
 * carrier, must give what the uninstrumented classes give on a plain thread; and
 * {@code ReentrantReadWriteLock}, whose read holds are ThreadLocal-based while its lock belongs to
 * the carrier, still counts right with goroutine-scoped maps. Bounded: a few seconds.
 */
class GoroutineThreadLocalsAgentTest {
    private static final int GOROUTINES = 50;
    private static final int ROUNDS = 10;

    /**
     * Runs {@code body(i)} for i in [0, n) in goroutines at GOMAXPROCS=2 beside a CPU hog and a
     * thread that asks both Ps to preempt every 200 µs; returns the preemption figures.
     */
    private static PreemptStats underPreemption(int n, IntConsumer body, AtomicReference<Throwable> failure)
            throws Exception {
        Method spin = AgentPreemptionTest.method(
                PreemptStrategy.BACKEDGE, "Spinners", "spinCpu", long.class, AtomicLong.class);
        Scheduler s = AgentPreemptionTest.newScheduler(2);
        assertEquals("goroutine", s.config().settings().threadLocals(), "the test forks open java.lang");
        AtomicInteger stop = new AtomicInteger();
        s.run(() -> {
            AgentPreemptionTest.startPreemptionStorm(s, stop, 200_000);
            GoSema done = new GoSema(0);
            Scheduler rt = Scheduler.current();
            rt.newproc(() -> {
                while (stop.get() == 0) {
                    AgentPreemptionTest.call(spin, null, 1_000_000L, new AtomicLong()); // the CPU hog
                }
                done.release();
            });
            for (int i = 0; i < n; i++) {
                int ii = i;
                rt.newproc(() -> {
                    try {
                        body.accept(ii);
                    } catch (Throwable t) {
                        failure.compareAndSet(null, t);
                    } finally {
                        done.release();
                    }
                });
            }
            try {
                for (int i = 0; i < n; i++) {
                    done.acquire();
                }
            } finally {
                stop.set(1);
            }
            done.acquire();
        });
        return s.preempt.snapshot();
    }

    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void reflectionBuildersOfObjectCyclesGiveTheSameResultsUnderPreemption() throws Exception {
        long[] expected = new long[GOROUTINES];
        dev.gort.agent.work.Cycles plain = new dev.gort.agent.work.Cycles();
        for (int i = 0; i < GOROUTINES; i++) {
            expected[i] = plain.work(i, ROUNDS);
        }
        Class<?> c = Class.forName(
                "dev.gort.agent.work.Cycles",
                true,
                new InstrumentingLoader(
                        List.of("dev.gort.agent.work.Cycles", "org.apache.commons.lang3."), PreemptStrategy.BACKEDGE));
        Object cycles = c.getConstructor().newInstance();
        Method work = c.getMethod("work", int.class, int.class);
        long[] got = new long[GOROUTINES];
        AtomicReference<Throwable> failure = new AtomicReference<>();
        PreemptStats ps = underPreemption(
                GOROUTINES, i -> got[i] = (long) AgentPreemptionTest.call(work, cycles, i, ROUNDS), failure);
        System.out.println("reflection builders of cycles, GOMAXPROCS=2: " + ps);
        assertNull(failure.get(), () -> "a goroutine failed: " + failure.get());
        int differ = 0;
        for (int i = 0; i < GOROUTINES; i++) {
            if (got[i] != expected[i]) {
                differ++;
            }
        }
        assertEquals(0, differ, "goroutines whose hash codes and strings differ from the uninstrumented run");
        assertArrayEquals(expected, got);
        assertTrue(ps.honoured() >= 10, "too few preemptions to mean anything: " + ps);
    }

    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void reentrantReadWriteLockReadHoldsStayRightAcrossGoroutinesAndCarriers() throws Exception {
        Method readRounds = AgentPreemptionTest.method(
                PreemptStrategy.BACKEDGE,
                "Locks",
                "readLockRounds",
                ReentrantReadWriteLock.class,
                int.class,
                AtomicInteger.class,
                AtomicInteger.class);
        Method writeRounds = AgentPreemptionTest.method(
                PreemptStrategy.BACKEDGE,
                "Locks",
                "writeLockRounds",
                ReentrantReadWriteLock.class,
                int.class,
                AtomicInteger.class);
        ReentrantReadWriteLock rw = new ReentrantReadWriteLock();
        AtomicInteger wrong = new AtomicInteger();
        AtomicInteger moves = new AtomicInteger();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        PreemptStats ps = underPreemption(
                20,
                i -> {
                    if (i == 0) {
                        AgentPreemptionTest.call(writeRounds, null, rw, 40, wrong);
                    } else {
                        AgentPreemptionTest.call(readRounds, null, rw, 40, wrong, moves);
                    }
                },
                failure);
        System.out.println("read-write lock, GOMAXPROCS=2: " + ps + ", moves " + moves);
        assertNull(failure.get(), () -> "a goroutine failed: " + failure.get());
        assertEquals(0, wrong.get(), "wrong read hold counts, or a writer beside a reader");
        assertEquals(0, rw.getReadLockCount(), "read holds left behind");
        assertTrue(moves.get() > 0, "no goroutine changed carriers between its read holds: nothing was tested");
    }

    /**
     * A {@code ReentrantLock} taken and released in an instrumented loop, in goroutines moved
     * between carriers by a preemption storm: the lock's owner is the carrier each round runs on.
     * Compiled with the lock's code inlined, the loop read the carrier once and kept it across the
     * polls' yields: an unlock threw {@code IllegalMonitorStateException}, the lock stayed held, the
     * goroutines hung (3 of 3 runs of a helper's program at GOMAXPROCS=2). {@link JitDirectives} keeps
     * that code out of the loop's compiled code.
     */
    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void aReentrantLockInAnInstrumentedLoopKeepsItsOwnerAcrossCarriers() throws Exception {
        assertNull(dev.gort.runtime.JitDirectives.install(), "the directive (the forks open jdk.management)");
        Method rounds = AgentPreemptionTest.method(
                PreemptStrategy.BACKEDGE, "Locks", "counterRounds", ReentrantLock.class, long[].class, int.class);
        ReentrantLock lock = new ReentrantLock();
        long[] counter = {0};
        int n = 300_000;
        AtomicReference<Throwable> failure = new AtomicReference<>();
        PreemptStats ps = underPreemption(8, i -> AgentPreemptionTest.call(rounds, null, lock, counter, n), failure);
        System.out.println("ReentrantLock rounds, GOMAXPROCS=2: " + ps);
        assertNull(failure.get(), () -> "a goroutine failed: " + failure.get());
        assertEquals(8L * n, counter[0]);
        assertFalse(lock.isLocked(), "the lock was left held");
        assertTrue(ps.honoured() >= 10, "too few preemptions to mean anything: " + ps);
    }

    /**
     * A ThreadLocal's {@code initialValue} preempted midway: {@code ThreadLocal.get} stores the value
     * into the map of the thread it began on, so the goroutine keeps its carrier until the get returns
     * ({@code Poll.threadLocalGet}). It resumed elsewhere and wrote into its first carrier's map, by
     * then another goroutine's: values seen by the wrong goroutine, initial values made twice.
     */
    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void aThreadLocalsInitialValuePreemptedMidwayLandsInItsOwnGoroutine() throws Exception {
        Class<?> c = Class.forName(
                "dev.gort.agent.work.Locals",
                true,
                new InstrumentingLoader(List.of("dev.gort.agent.work.Locals"), PreemptStrategy.BACKEDGE));
        Method same = c.getMethod("sameInitialValue");
        AtomicInteger sameCount = new AtomicInteger();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        PreemptStats ps =
                underPreemption(40, i -> sameCount.addAndGet((int) AgentPreemptionTest.call(same, null)), failure);
        System.out.println("ThreadLocal initial values, GOMAXPROCS=2: " + ps);
        assertNull(failure.get(), () -> "a goroutine failed: " + failure.get());
        assertEquals(40, sameCount.get(), "goroutines whose three gets agreed");
        assertEquals(40, ((AtomicInteger) c.getField("INITIALS").get(null)).get(), "initial values made");
        // No monitor is held anywhere here: a request refused inside get() is the carrier's
        // identity held, counted with the locks and parker methods, not as a monitor.
        assertEquals(0, ps.refusedMonitor(), "refusals counted as a monitor held: " + ps);
        assertTrue(ps.refusedLock() > 0, "requests refused inside get() (the initial value): " + ps);
    }
}
