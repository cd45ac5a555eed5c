package dev.gort.compat;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The rule behind {@link Lang3SuiteStressTest}'s soft-reference flag: a suite JVM clears no soft
 * reference because of its age, so a run that is slower than another (gort2 against plain, on a
 * loaded machine) does not see other JDK caches than the other run. Issue 12: 21 extra
 * aborts of {@code FastDateParser_TimeZoneStrategyTest.testTimeZoneStrategy_DateFormatSymbols} in the
 * gort2 run of 2026-12-01 only, which were wrong parses caused by that alone ({@link
 * ZoneNamesAfterSoftClear} replays them without gort). Child JVMs; fast (seconds).
 */
class SuiteJvmSoftReferencesTest {
    /**
     * HotSpot keeps a softly reachable object while its age since its last {@code get()} is under
     * {@code SoftRefLRUPolicyMSPerMB} times the free heap in MB at the last GC (JDK default: 1000 ms a
     * MB, so some minutes: less than the suite's slow runs last). The suite's flags must keep one
     * for the whole run limit even when only 1 MB is free.
     */
    @Test
    void theSuiteJvmsClearNoSoftReferenceByAgeWithinTheRunLimit() throws Exception {
        List<String> cmd = new ArrayList<>();
        cmd.add(java());
        cmd.addAll(Lang3SuiteStressTest.JVM_FLAGS);
        cmd.add("-XX:+PrintFlagsFinal");
        cmd.add("-version");
        String out = run(cmd);
        Matcher m = Pattern.compile("SoftRefLRUPolicyMSPerMB\\s*=\\s*(\\d+)").matcher(out);
        assertTrue(m.find(), "SoftRefLRUPolicyMSPerMB in -XX:+PrintFlagsFinal's output:\n" + out);
        long msPerMb = Long.parseLong(m.group(1));
        long limitMs = TimeUnit.MINUTES.toMillis(Lang3SuiteStressTest.RUN_LIMIT_MIN);
        assertTrue(
                msPerMb >= limitMs,
                "SoftRefLRUPolicyMSPerMB=" + msPerMb + ": a soft reference unused for " + msPerMb
                        + " ms is cleared at a GC that leaves 1 MB free, within the run limit of " + limitMs + " ms");
    }

    /**
     * Why the flag matters: commons-lang3 caches each locale's zone strategy for the JVM's life,
     * while the JDK recomputes a locale's zone names once its soft caches are cleared, and gets other
     * names when a parent locale's were derived in the meantime. Same JVM flags as the suite, on one
     * plain thread (no agent, no goroutine): the strategy parses every name of en_CA until the soft
     * caches are cleared, and not all of them after.
     */
    @Test
    void fastDateParsersCachedZoneNamesGoStaleOnceTheJdksSoftCachesAreCleared() throws Exception {
        assertEquals("unparseable=0 first=-", replay("keep"), "no clear: the strategy's names are today's");
        String cleared = replay("clear");
        assertTrue(
                cleared.matches("unparseable=[1-9]\\d* first=.+ Daylight Time"),
                "after the clear, en_CA's names copy en's derived DST names, which its strategy lacks: " + cleared);
    }

    private static String replay(String mode) throws Exception {
        List<String> cmd = new ArrayList<>();
        cmd.add(java());
        cmd.addAll(Lang3SuiteStressTest.JVM_FLAGS);
        cmd.add("-Xmx64m"); // after the suite's -Xmx1g: the last one counts; a small heap fills fast
        cmd.add("-cp");
        cmd.add(System.getProperty("java.class.path"));
        cmd.add(ZoneNamesAfterSoftClear.class.getName());
        cmd.add(mode);
        String out = run(cmd).strip();
        return out.substring(out.lastIndexOf('\n') + 1);
    }

    private static String java() {
        return Path.of(System.getProperty("java.home"), "bin", "java").toString();
    }

    /** Runs {@code cmd} (bounded: a hang fails) and returns its standard output; stderr is dropped. */
    private static String run(List<String> cmd) throws IOException, InterruptedException {
        Path out = Files.createTempFile("gort-compat-child", ".out");
        try {
            Process p = new ProcessBuilder(cmd)
                    .redirectError(ProcessBuilder.Redirect.DISCARD)
                    .redirectOutput(out.toFile())
                    .start();
            if (!p.waitFor(120, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                fail("child JVM did not end in 120 s: " + cmd);
            }
            assertEquals(0, p.exitValue(), "child JVM's exit status: " + cmd);
            return Files.readString(out);
        } finally {
            Files.deleteIfExists(out);
        }
    }
}
