package dev.gort.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * JVM exit around a gort program run by the (non-daemon) main thread, in a child JVM (Go's
 * runTestProg): a thread that a goroutine started finishes its work before the JVM exits, and
 * carriers, non-daemon like their caller, do not keep the JVM alive once main has returned.
 */
class CarrierExitTest {
    static ChildJvm.Result run(String name, String procs) throws Exception {
        return ChildJvm.run("dev.gort.runtime.CarrierExitProg", name, procs, java.util.Map.of());
    }

    @ParameterizedTest(name = "GOMAXPROCS={0}")
    @ValueSource(strings = {"1", "2"})
    void threadStartedByAGoroutineFinishesBeforeTheJvmExits(String procs) throws Exception {
        ChildJvm.Result r = run("ThreadStartedByGoroutine", procs);
        String out = r.output();
        assertTrue(out.startsWith("user thread daemon=false\n"), out);
        assertTrue(out.contains("main returned\n"), out);
        assertTrue(out.endsWith("work 0\nwork 1\nwork 2\nthread finished\n"), out);
        assertEquals(0, r.status(), out);
    }

    @ParameterizedTest(name = "GOMAXPROCS={0}")
    @ValueSource(strings = {"1", "2"})
    void blockedGoroutinesDoNotKeepTheJvmAliveAfterMainReturns(String procs) throws Exception {
        ChildJvm.Result r = run("MainReturnsWithBlockedGoroutines", procs);
        assertEquals("main returned\n", r.output());
        assertEquals(0, r.status(), r.output());
    }
}
