package dev.gort.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Go's crash tests (crash_test.go with testdata/testprog): run a program in a child JVM, the way a
 * user runs gort (no -Dgort.fatal=throw, so fatal errors halt with status 2), and check its output
 * and exit status.
 */
class CrashTest {
    record Result(int status, String output) {}

    /** Go: crash_test.go runTestProg. stdout and stderr merged, as Go's CombinedOutput. */
    static Result runTestProg(String name, String gomaxprocs) throws IOException, InterruptedException {
        String java = ProcessHandle.current().info().command().orElse("java");
        List<String> cmd = new ArrayList<>(List.of(
                java,
                "--add-exports",
                "java.base/jdk.internal.vm=ALL-UNNAMED",
                "-XX:+UseSerialGC",
                "-XX:TieredStopAtLevel=1",
                "-Xshare:auto",
                "-Dgort.gomaxprocs=" + gomaxprocs,
                "-cp",
                System.getProperty("java.class.path"),
                "dev.gort.runtime.testprog.TestProg",
                name));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        p.getOutputStream().close();
        byte[] out = p.getInputStream().readAllBytes();
        if (!p.waitFor(60, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError(name + " did not exit; output:\n" + new String(out, StandardCharsets.UTF_8));
        }
        return new Result(p.exitValue(), new String(out, StandardCharsets.UTF_8));
    }

    /** Go: TestSimpleDeadlock. */
    @ParameterizedTest(name = "GOMAXPROCS={0}")
    @ValueSource(strings = {"1", "2"})
    void simpleDeadlock(String procs) throws Exception {
        Result r = runTestProg("SimpleDeadlock", procs);
        String want = "fatal error: all goroutines are asleep - deadlock!\n";
        assertTrue(r.output().startsWith(want), "output does not start with " + want + ":\n" + r.output());
        assertEquals(2, r.status(), r.output());
    }

    /** Go: TestGoexitDeadlock. */
    @ParameterizedTest(name = "GOMAXPROCS={0}")
    @ValueSource(strings = {"1", "2"})
    void goexitDeadlock(String procs) throws Exception {
        Result r = runTestProg("GoexitDeadlock", procs);
        String want = "no goroutines (main called runtime.Goexit) - deadlock!";
        assertTrue(r.output().contains(want), "output does not contain " + want + ":\n" + r.output());
        assertTrue(r.output().contains("fatal error: " + want), r.output());
        assertEquals(2, r.status(), r.output());
    }

    /** An unrecovered panic: Go's text on stderr, exit status 2, even with main blocked. */
    @Test
    void panicExitsWithStatus2() throws Exception {
        Result r = runTestProg("Panic", "2");
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
        Result r = runTestProg("Exit", "2");
        assertEquals("main done\n", r.output());
        assertEquals(0, r.status());
    }
}
