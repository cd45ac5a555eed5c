package dev.gort;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Go's TestNumGoroutine (proc_test.go), child-process part: a fresh program's NumGoroutine is 1
 * (sysmon, the timers and the tracer's threads are not goroutines). Runs {@link Prog} in a child JVM
 * with the same flags. The in-process part (NumGoroutine equals the headers of a full dump) is
 * dev.gort.runtime.GoroutineDumpTest.
 */
class NumGoroutineTest {
    /** testprog NumGoroutine: {@code println(runtime.NumGoroutine())}. */
    public static final class Prog {
        public static void main(String[] args) {
            Go.run(() -> System.out.println(Go.numGoroutine()));
        }
    }

    @Test
    void freshProgramHasOneGoroutine() throws Exception {
        String java = ProcessHandle.current().info().command().orElse("java");
        List<String> cmd = List.of(
                java,
                "--add-exports",
                "java.base/jdk.internal.vm=ALL-UNNAMED",
                "-Dgort.godebug=schedtrace=1000", // sysmon busy printing must not count either
                "-cp",
                System.getProperty("java.class.path"),
                Prog.class.getName());
        Process p = new ProcessBuilder(cmd)
                .redirectError(ProcessBuilder.Redirect.DISCARD)
                .start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(60, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError("child did not exit");
        }
        assertEquals(0, p.exitValue());
        assertEquals("1", out.strip());
    }
}
