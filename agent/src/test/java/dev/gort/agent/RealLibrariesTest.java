package dev.gort.agent;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
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
import org.junit.jupiter.api.RepeatedTest;
import org.junit.jupiter.api.RepetitionInfo;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Issue 12's standing test: Jackson, Guava and commons-lang (from Maven Central, test scope) run
 * their own logic in 150 goroutines, rewritten by the agent's transformer ({@code backedge}, the
 * default) together with the workload, while a CPU hog goroutine and a preemption storm make
 * preemptions land inside the libraries; every result must equal the same work done by the
 * uninstrumented classes on a plain thread. Bounded: a few seconds; a hang fails after 100 s with
 * gort's state and every thread's stack ({@link StallReport}).
 */
class RealLibrariesTest {
    private static final int GOROUTINES = 150;
    private static final int ROUNDS = 2;
    private static final List<String> LIBS = List.of(
            "dev.gort.agent.work.RealLibs",
            "com.fasterxml.jackson.",
            "com.google.common.",
            "com.google.thirdparty.",
            "org.apache.commons.lang3.");

    @ParameterizedTest
    @ValueSource(ints = {1, 2})
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void realLibrariesGiveTheSameResultsUnderTheAgent(int procs) throws Exception {
        sameResults(procs, 100);
    }

    /**
     * The same, 150 times, GOMAXPROCS 1 and 2 alternating: how the hang of a Guava future's waiter
     * moved off the carrier its completer unparks was found (once in 150 beside a CPU hog, before
     * {@code Poll.parkerEnter}; ADR 0004). About 7 minutes; run with {@code -Dgort.groups.excluded=}.
     */
    @RepeatedTest(150)
    @Tag("stress")
    void realLibrariesGiveTheSameResultsRepeatedly(RepetitionInfo r) throws Exception {
        sameResults(1 + r.getCurrentRepetition() % 2, 40);
    }

    private static void sameResults(int procs, long stallSeconds) throws Exception {
        long[] expected = new long[GOROUTINES];
        dev.gort.agent.work.RealLibs plain = new dev.gort.agent.work.RealLibs();
        for (int i = 0; i < GOROUTINES; i++) {
            expected[i] = plain.work(i, ROUNDS);
        }

        Class<?> c = Class.forName(
                "dev.gort.agent.work.RealLibs", true, new InstrumentingLoader(LIBS, PreemptStrategy.BACKEDGE));
        Object libs = c.getConstructor().newInstance();
        Method work = c.getMethod("work", int.class, int.class);
        Method spin = AgentPreemptionTest.method(
                PreemptStrategy.BACKEDGE, "Spinners", "spinCpu", long.class, AtomicLong.class);

        Scheduler s = AgentPreemptionTest.newScheduler(procs);
        long[] got = new long[GOROUTINES];
        AtomicReference<Throwable> failure = new AtomicReference<>();
        AtomicInteger stop = new AtomicInteger();
        StallReport.run(s, stallSeconds, () -> {
            AgentPreemptionTest.startPreemptionStorm(s, stop, 200_000);
            GoSema done = new GoSema(0);
            Scheduler rt = Scheduler.current();
            rt.newproc(() -> {
                while (stop.get() == 0) {
                    AgentPreemptionTest.call(spin, null, 1_000_000L, new AtomicLong()); // the CPU hog
                }
                done.release();
            });
            for (int i = 0; i < GOROUTINES; i++) {
                int ii = i;
                rt.newproc(() -> {
                    try {
                        got[ii] = (long) AgentPreemptionTest.call(work, libs, ii, ROUNDS);
                    } catch (Throwable t) {
                        failure.compareAndSet(null, t);
                    } finally {
                        done.release();
                    }
                });
            }
            try {
                for (int i = 0; i < GOROUTINES; i++) {
                    done.acquire();
                }
            } finally {
                stop.set(1);
            }
            done.acquire();
        });
        PreemptStats ps = s.preempt.snapshot();
        System.out.println("real libraries, GOMAXPROCS=" + procs + ": " + ps);
        assertNull(failure.get(), () -> "a goroutine failed: " + failure.get());
        assertArrayEquals(expected, got, "results differ from the uninstrumented run");
        assertTrue(ps.honoured() >= 10, "too few preemptions to mean anything: " + ps);
    }
}
