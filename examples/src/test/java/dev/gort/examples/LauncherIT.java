package dev.gort.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code ./gort example} and {@code ./gort env} as a user types them (after package, so the jar is
 * up to date and the launcher builds nothing): arguments that start with {@code -D}, {@code -X} or
 * {@code -XX:} reach the JVM, the others the program.
 */
class LauncherIT {
    static String gort(String... args) throws Exception {
        List<String> cmd =
                new ArrayList<>(List.of("bash", ReadmeTest.ROOT.resolve("gort").toString()));
        cmd.addAll(List.of(args));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        p.getOutputStream().close();
        byte[] out = p.getInputStream().readAllBytes();
        if (!p.waitFor(2, TimeUnit.MINUTES)) {
            p.destroyForcibly();
            fail("did not exit: " + cmd);
        }
        String s = new String(out, StandardCharsets.UTF_8);
        assertEquals(0, p.exitValue(), cmd + ":\n" + s);
        assertTrue(!s.contains("gort: building"), "the launcher rebuilt the jar inside the build:\n" + s);
        return s;
    }

    @Test
    void jvmOptionsAfterTheProgramReachTheJvm(@TempDir Path dir) throws Exception {
        Path trace = dir.resolve("x.json");
        String out = gort("example", "PrimeSieve", "10", "-Dgort.trace=" + trace, "-Xss2m");
        assertTrue(out.contains("(10 primes"), out); // "10" went to the program
        assertTrue(out.contains("trace written to"), out);
        assertTrue(Files.size(trace) > 0, "no trace: -Dgort.trace did not reach the JVM");
    }

    /** The launcher's default collector (G1) gives way to the user's: two would stop the JVM. */
    @Test
    void aCollectorChosenOnTheCommandLineReplacesTheDefault() throws Exception {
        String out = gort("example", "PrimeSieve", "5", "-XX:+UseSerialGC");
        assertTrue(out.contains("(5 primes"), out);
    }

    @Test
    void envPrintsTheSettingGivenOnTheCommandLine() throws Exception {
        String out = gort("env", "-Dgort.preempt.stride=0", "-Dgort.gomaxprocs=3");
        assertTrue(out.contains("gort.preempt.stride=0\n"), out);
        assertTrue(out.contains("gort.gomaxprocs=3\n"), out);
    }
}
