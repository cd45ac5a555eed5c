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
        return gortExits(0, args);
    }

    /** Runs {@code ./gort args}, which must exit with {@code status} and build nothing; returns its output. */
    static String gortExits(int status, String... args) throws Exception {
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
        assertEquals(status, p.exitValue(), cmd + ":\n" + s);
        assertTrue(!s.contains("gort: building"), "the launcher rebuilt a jar inside the build:\n" + s);
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

    /**
     * {@code ./gort lab preempt --help} and malformed lab arguments answer at once, before the
     * launcher builds the benchmarks jar (--help used to build it for a minute, then say "unknown
     * argument"; --rounds 0 ran the whole lab and failed in its report).
     */
    @Test
    void labHelpAndMalformedArgumentsAnswerBeforeTheBuild(@TempDir Path dir) throws Exception {
        String help = gortExits(0, "lab", "preempt", "--help");
        assertTrue(help.startsWith("usage: ./gort lab preempt "), help);
        assertTrue(help.contains("\n  --rounds N "), help);
        Path file = Files.writeString(dir.resolve("file"), "x");
        String[][] bad = {
            {"--rounds", "lab: --rounds needs a value"},
            {"--rounds abc", "lab: --rounds wants a whole number >= 1, not 'abc'"},
            {"--rounds 0", "lab: --rounds wants a whole number >= 1, not '0'"},
            {"--window -5", "lab: --window wants a whole number >= 1, not '-5'"},
            {"--out", "lab: --out needs a value"},
            {"--out " + file, "lab: --out: " + file + " is not a directory"},
            {"--bogus", "lab: unknown argument '--bogus'"},
        };
        for (String[] b : bad) {
            List<String> args = new ArrayList<>(List.of("lab", "preempt"));
            args.addAll(List.of(b[0].split(" ")));
            String out = gortExits(2, args.toArray(String[]::new));
            assertTrue(out.startsWith(b[1] + "\nusage: ./gort lab preempt "), b[0] + ":\n" + out);
        }
    }

    /**
     * An example's usage errors are one line naming the argument, then its usage, exit status 2 and
     * no stack trace (they were NumberFormatExceptions); --help prints the usage, status 0.
     */
    @Test
    void exampleArgumentsAreCheckedWithAUsageLine() throws Exception {
        String help = gortExits(0, "example", "PrimeSieve", "--help");
        assertTrue(help.startsWith("usage: ./gort example PrimeSieve [n]\n"), help);
        String bad = gortExits(2, "example", "PrimeSieve", "abc");
        assertTrue(
                bad.startsWith("PrimeSieve: n wants a whole number from 1 to 100000, not 'abc'\n"
                        + "usage: ./gort example PrimeSieve [n]\n"),
                bad);
        assertTrue(!bad.contains("\tat "), bad);
        String extra = gortExits(2, "example", "WorkerPool", "extra");
        assertTrue(extra.startsWith("WorkerPool: workers wants a whole number"), extra);
        String none = gortExits(2, "example", "Timeouts", "5");
        assertTrue(none.startsWith("Timeouts takes no arguments, not '5'\nusage: ./gort example Timeouts\n"), none);
    }

    /**
     * A {@code .pftrace} (protobuf-java) is written without the JDK's sun.misc.Unsafe deprecation
     * warnings: the launcher gives its java --sun-misc-unsafe-memory-access=allow, as it gives Maven.
     */
    @Test
    void aProtobufTraceIsWrittenWithoutUnsafeWarnings(@TempDir Path dir) throws Exception {
        Path trace = dir.resolve("sieve.pftrace");
        String out = gort("example", "PrimeSieve", "5", "-Dgort.trace=" + trace);
        assertTrue(out.contains("trace written to"), out);
        assertTrue(Files.size(trace) > 0, "no trace");
        assertTrue(!out.contains("sun.misc.Unsafe"), out);
    }
}
