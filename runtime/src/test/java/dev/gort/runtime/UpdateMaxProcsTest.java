package dev.gort.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * Go 1.25's GOMAXPROCS that follows the container: the default is the CPU count lowered to the
 * CPU limit (never below 2 for a limit), sysmon re-checks it once a second and applies a change
 * unless GOMAXPROCS was set explicitly; {@code GODEBUG=updatemaxprocs=0} / {@code
 * containermaxprocs=0} switch the two parts off. With an injected CPU source (no cgroup needed).
 *
 * <p>Go: cgroup_linux.go defaultGOMAXPROCS, adjustCgroupGOMAXPROCS; proc.go
 * sysmonUpdateGOMAXPROCS, updateMaxProcsGoroutine; debug.go GOMAXPROCS, SetDefaultGOMAXPROCS
 */
class UpdateMaxProcsTest {
    /** A CPU source the test turns: affinity {@code cpus}, JVM (cgroup) limit {@code limit}. */
    static final class Source implements Config.CpuSource {
        final AtomicInteger cpus = new AtomicInteger();
        final AtomicInteger limit = new AtomicInteger();

        Source(int cpus, int limit) {
            this.cpus.set(cpus);
            this.limit.set(limit);
        }

        @Override
        public int cpuCount() {
            return cpus.get();
        }

        @Override
        public int jvmProcessors() {
            return limit.get();
        }
    }

    static int dflt(int cpus, int limit, boolean container) {
        return new Config.MaxProcs(false, true, container, new Source(cpus, limit)).defaultGOMAXPROCS();
    }

    @Test
    void defaultIsTheCpuCountLoweredToTheLimitButNotBelowTwo() {
        assertEquals(8, dflt(8, 8, true), "no limit");
        assertEquals(3, dflt(8, 3, true), "a limit of 2.5 CPUs, which the JVM rounds up as Go does");
        assertEquals(2, dflt(8, 1, true), "a limit under 2 is raised to 2");
        assertEquals(1, dflt(1, 1, true), "never above the CPU count");
        assertEquals(8, dflt(8, 3, false), "containermaxprocs=0: the CPU count alone");
    }

    @Test
    void cpuListsCount() {
        assertEquals(7, Config.countCpuList("0-3,8,10-11"));
        assertEquals(1, Config.countCpuList("0"));
        assertEquals(0, Config.countCpuList("3-1"));
        assertEquals(0, Config.countCpuList("x"));
        // where /proc/self/status is readable, the system source agrees with it
        int n = Config.affinityCount();
        assertTrue(n == 0 || n == Config.CpuSource.SYSTEM.cpuCount(), "affinity " + n);
    }

    @Test
    void godebugSwitchesAndAnExplicitGomaxprocsAreRead() {
        String old = System.getProperty("gort.godebug");
        String oldProcs = System.getProperty("gort.gomaxprocs");
        try {
            System.setProperty("gort.godebug", "updatemaxprocs=0,containermaxprocs=0");
            System.clearProperty("gort.gomaxprocs");
            Config.MaxProcs mp = Config.fromEnvironment().maxprocs();
            if (System.getenv("GOMAXPROCS") == null) {
                assertFalse(mp.custom());
            }
            assertFalse(mp.update());
            assertFalse(mp.container());
            System.setProperty("gort.godebug", "schedtrace=0");
            System.setProperty("gort.gomaxprocs", "3");
            Config c = Config.fromEnvironment();
            assertTrue(c.maxprocs().custom());
            assertTrue(c.maxprocs().update());
            assertTrue(c.maxprocs().container());
            assertEquals(3, c.gomaxprocs());
            assertTrue(TestSupport.config(2).maxprocs().custom(), "withGomaxprocs is explicit");
        } finally {
            restore("gort.godebug", old);
            restore("gort.gomaxprocs", oldProcs);
        }
    }

    private static void restore(String k, String v) {
        if (v == null) {
            System.clearProperty(k);
        } else {
            System.setProperty(k, v);
        }
    }

    /** Waits (bounded) for sysmon to make GOMAXPROCS {@code n}, keeping this P busy meanwhile. */
    static void awaitProcs(Scheduler s, int n) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (s.gomaxprocs() != n) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("GOMAXPROCS stayed " + s.gomaxprocs() + ", want " + n);
            }
            Scheduler.gosched();
        }
    }

    /**
     * The limit drops from 4 to 2 CPUs, then rises to 3: sysmon follows both. Then an explicit
     * GOMAXPROCS(4) stops it following; SetDefaultGOMAXPROCS goes back to the default and on.
     */
    @Test
    void sysmonFollowsTheLimitUntilGomaxprocsIsSet() {
        Source src = new Source(4, 4);
        Config cfg = TestSupport.config(1).withCpuSource(src, true, true);
        assertEquals(4, cfg.gomaxprocs());
        Scheduler s = new Scheduler(cfg);
        AtomicReference<int[]> got = new AtomicReference<>();
        s.run(() -> {
            int start = s.gomaxprocs();
            src.limit.set(2);
            awaitProcs(s, 2);
            src.limit.set(3);
            awaitProcs(s, 3);
            s.gomaxprocs(4); // explicit
            src.limit.set(2);
            s.sysmonUpdateGOMAXPROCS(); // what sysmon does each second: nothing now
            int afterExplicit = s.gomaxprocs();
            int goroutines = s.numGoroutine();
            s.setDefaultGOMAXPROCS(); // the default (2), followed again
            int afterDefault = s.gomaxprocs();
            src.limit.set(4);
            awaitProcs(s, 4);
            got.set(new int[] {start, afterExplicit, goroutines, afterDefault});
        });
        int[] r = got.get();
        assertEquals(4, r[0]);
        assertEquals(4, r[1], "an explicit GOMAXPROCS is kept");
        assertEquals(1, r[2], "no update goroutine was started");
        assertEquals(2, r[3]);
    }

    /** An explicit configuration is never updated, even when its source changes. */
    @Test
    void explicitConfigurationIsNotUpdated() {
        Source src = new Source(4, 4);
        Config cfg = TestSupport.config(1).withCpuSource(src, true, true).withGomaxprocs(3);
        Scheduler s = new Scheduler(cfg);
        AtomicReference<int[]> got = new AtomicReference<>();
        s.run(() -> {
            src.limit.set(2);
            s.sysmonUpdateGOMAXPROCS();
            got.set(new int[] {s.gomaxprocs(), s.numGoroutine()});
        });
        assertEquals(3, got.get()[0]);
        assertEquals(1, got.get()[1]);
    }
}
