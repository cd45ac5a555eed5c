package dev.gort.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Crash tests in a child JVM (Go's runTestProg): go-tests-to-port.md §C TestBigGOMAXPROCS and §D
 * TestThreadExhaustion.
 */
@Timeout(120)
class GoCrashSyscallTest {
    static ChildJvm.Result runTestProg(String name, Map<String, String> env) throws IOException, InterruptedException {
        return ChildJvm.run(TestProg.class.getName(), name, null, env);
    }

    /** Go: crash_test.go TestThreadExhaustion. Every M counts (sysmon too, when running). */
    @Test
    void TestThreadExhaustion() throws Exception {
        ChildJvm.Result r = runTestProg("ThreadExhaustion", Map.of());
        String want = "runtime: program exceeds 10-thread limit\nfatal error: thread exhaustion";
        assertTrue(r.output().startsWith(want), "output does not start with:\n" + want + "\ngot:\n" + r.output());
        assertEquals(2, r.status(), r.output());
    }

    /** Go: proc_test.go TestBigGOMAXPROCS: start-up with 1024 Ps must not crash (issue 38474). */
    @Test
    void TestBigGOMAXPROCS() throws Exception {
        ChildJvm.Result r = runTestProg("NonexistentTest", Map.of("GOMAXPROCS", "1024"));
        assertTrue(r.output().contains("unknown function: NonexistentTest"), r.output());
        assertFalse(r.output().contains("fatal error"), r.output());
        assertFalse(r.output().contains("Exception"), r.output());
        assertEquals(0, r.status(), r.output());
        // And 1024 Ps really run goroutines, with Ms created lazily.
        ChildJvm.Result r2 = runTestProg("ManyGoroutines", Map.of("GOMAXPROCS", "1024"));
        assertTrue(r2.output().contains("ran 1024 goroutines on 1024 Ps"), r2.output());
        assertEquals(0, r2.status(), r2.output());
    }

    /** Locked Ms waiting for their Gs count as idle (nmidlelocked): the deadlock is reported. */
    @Test
    void lockedGoroutinesDeadlock() throws Exception {
        ChildJvm.Result r = runTestProg("LockedDeadlock", Map.of("GOMAXPROCS", "2"));
        assertTrue(r.output().startsWith("fatal error: all goroutines are asleep - deadlock!"), r.output());
        assertEquals(2, r.status(), r.output());
    }
}
