package dev.gort.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Go's crash tests (crash_test.go with testdata/testprog): run a program in a child JVM, the way a
 * user runs gort (no -Dgort.fatal=throw, so fatal errors halt with status 2), and check its output
 * and exit status.
 */
class CrashTest {
    /** Go: crash_test.go runTestProg. */
    static ChildJvm.Result runTestProg(String name, String gomaxprocs) throws IOException, InterruptedException {
        return ChildJvm.run("dev.gort.runtime.testprog.TestProg", name, gomaxprocs, java.util.Map.of());
    }

    /** Go: TestSimpleDeadlock. */
    @ParameterizedTest(name = "GOMAXPROCS={0}")
    @ValueSource(strings = {"1", "2"})
    void simpleDeadlock(String procs) throws Exception {
        ChildJvm.Result r = runTestProg("SimpleDeadlock", procs);
        String want = "fatal error: all goroutines are asleep - deadlock!\n";
        assertTrue(r.output().startsWith(want), "output does not start with " + want + ":\n" + r.output());
        assertEquals(2, r.status(), r.output());
    }

    /** Go: TestGoexitDeadlock. */
    @ParameterizedTest(name = "GOMAXPROCS={0}")
    @ValueSource(strings = {"1", "2"})
    void goexitDeadlock(String procs) throws Exception {
        ChildJvm.Result r = runTestProg("GoexitDeadlock", procs);
        String want = "no goroutines (main called runtime.Goexit) - deadlock!";
        assertTrue(r.output().contains(want), "output does not contain " + want + ":\n" + r.output());
        assertTrue(r.output().contains("fatal error: " + want), r.output());
        assertEquals(2, r.status(), r.output());
    }

    /** An unrecovered panic: Go's text on stderr, exit status 2, even with main blocked. */
    @Test
    void panicExitsWithStatus2() throws Exception {
        ChildJvm.Result r = runTestProg("Panic", "2");
        assertTrue(
                r.output()
                        .startsWith(
                                "panic: java.lang.IllegalStateException: child exploded\n\ngoroutine 2 [running]:\n"),
                r.output());
        assertTrue(r.output().contains("created by ") && r.output().contains(" in goroutine 1\n"), r.output());
        assertEquals(2, r.status(), r.output());
    }

    /** Control: a program whose main returns exits 0 with its output, and no fatal error. */
    @Test
    void normalExit() throws Exception {
        ChildJvm.Result r = runTestProg("Exit", "2");
        assertEquals("main done\n", r.output());
        assertEquals(0, r.status());
    }
}
