package dev.gort.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * What {@code -Dgort.jmx=true} and {@code -Dgort.debug.http} start is started once the runtime is
 * fully built (when it starts), never from inside its construction: a program run with them in a
 * child JVM starts, reads its own MXBean (numbers, not NaN) and fetches its own loopback debug
 * endpoints.
 */
class ObserversStartupTest {
    private static ChildJvm.Result runObservers(List<String> options) throws Exception {
        return ChildJvm.run("dev.gort.runtime.testprog.TestProg", "Observers", "2", Map.of(), options);
    }

    /** -Dgort.jmx=true: the program runs, and its MXBean is registered and readable. */
    @Test
    void jmxRegistersAWholeRuntime() throws Exception {
        ChildJvm.Result r = runObservers(List.of("-Dgort.jmx=true"));
        assertEquals(0, r.status(), r.output());
        assertFalse(r.output().contains("Exception"), r.output());
        assertTrue(r.output().contains("mxbeans 1\n"), r.output());
        Matcher m = Pattern.compile("mxbean Gomaxprocs=(\\d+) Goroutines=(\\d+) GoroutinesCreated=(\\d+) Threads=(\\d+)"
                        + " SchedLatencyP50Seconds=(\\S+)\n")
                .matcher(r.output());
        assertTrue(m.find(), r.output());
        assertEquals("2", m.group(1));
        assertEquals("1", m.group(2), "only main is alive");
        assertEquals("9", m.group(3), "main and 8 children");
        assertTrue(Integer.parseInt(m.group(4)) >= 1, r.output());
        double p50 = Double.parseDouble(m.group(5));
        assertTrue(Double.isFinite(p50) && p50 >= 0, "scheduling latency p50: " + m.group(5));
        assertTrue(r.output().endsWith("main done\n"), r.output());
    }

    /** -Dgort.debug.http=127.0.0.1:0: a loopback server on a free port that serves while the program runs. */
    @Test
    void debugHttpServesARunningProgram() throws Exception {
        ChildJvm.Result r = runObservers(List.of("-Dgort.debug.http=127.0.0.1:0"));
        assertEquals(0, r.status(), r.output());
        assertTrue(r.output().contains("gort: debug endpoints on http://127.0.0.1:"), r.output());
        assertTrue(r.output().contains("debug port bound\n"), r.output());
        assertTrue(r.output().contains("GET /debug/sched 200 SCHED "), r.output());
        assertTrue(r.output().contains("GET /debug/metrics 200 /"), r.output());
        assertTrue(r.output().contains("mxbeans 0\n"), "no MXBean without -Dgort.jmx: " + r.output());
    }

    /** A host that is not the loopback is refused, and the program still runs. */
    @Test
    void debugHttpRefusesOtherHosts() throws Exception {
        ChildJvm.Result r = runObservers(List.of("-Dgort.debug.http=0.0.0.0:0"));
        assertEquals(0, r.status(), r.output());
        assertTrue(r.output().contains("gort: no debug endpoints (-Dgort.debug.http=0.0.0.0:0)"), r.output());
        assertTrue(r.output().contains("loopback"), r.output());
        assertTrue(r.output().contains("debug port -1\n"), r.output());
    }
}
