package dev.gort.bench.lab;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gort.bench.lab.PreemptLab.Cell;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The JMH mode's pieces that need no fork: each cell's fork gets its setting's agent arguments (and
 * the baseline none), and the time to steady state is the end of the first iteration within 10 %
 * of the final score.
 */
class LabJmhTest {
    private static final Path AGENT = Path.of("/x/gort-agent.jar");

    private static List<String> args(String label) {
        Cell c = PreemptLab.cells().stream()
                .filter(x -> x.label().equals(label))
                .findFirst()
                .orElseThrow();
        return LabJmh.jvmArgs(c, AGENT);
    }

    @Test
    void everyCellsForkCarriesItsSettingsAgentAndTheBaselineNone() {
        assertTrue(args("uninstrumented").stream().noneMatch(a -> a.startsWith("-javaagent")), "baseline: no agent");
        assertTrue(args("none").contains("-javaagent:" + AGENT.toAbsolutePath() + "=none"));
        assertTrue(args("entry").contains("-javaagent:" + AGENT.toAbsolutePath() + "=entry"));
        List<String> s64 = args("backedge/s64");
        assertTrue(s64.contains("-javaagent:" + AGENT.toAbsolutePath() + "=backedge"));
        assertTrue(
                s64.contains("-Dgort.preempt.stride=64") && s64.contains("-Dgort.preempt.callers=true"),
                s64.toString());
        assertTrue(args("backedge/s1024-nocallers").contains("-Dgort.preempt.callers=false"));
        List<String> b = args("budget/b64k");
        assertTrue(b.contains("-javaagent:" + AGENT.toAbsolutePath() + "=budget")
                && b.contains("-Dgort.preempt.budget=65536"));
        assertTrue(args("looplen/t24").contains("-Dgort.preempt.looplen=24"));
        for (Cell c : PreemptLab.cells()) {
            List<String> a = LabJmh.jvmArgs(c, AGENT);
            assertTrue(a.contains("java.base/jdk.internal.vm=ALL-UNNAMED"), c.label());
            if (c.strategy() != null) {
                // the agent skips dev/gort/: the workloads must be forced in
                assertTrue(a.contains("-Dgort.agent.include=dev/gort/bench/lab/work/"), c.label());
            }
        }
    }

    @Test
    void timeToSteadyStateIsTheFirstIterationWithinTenPercentOfTheFinalScore() {
        long ms = 1_000_000L;
        // scores (us/unit) of 5 iterations ending at 100, 200, ... ms after the start at 0
        LabJmh.Figure f = LabJmh.steady(
                List.of(300.0, 150.0, 109.0, 101.0, 100.0),
                List.of(100 * ms, 200 * ms, 300 * ms, 400 * ms, 500 * ms),
                0,
                100.0,
                2.0);
        assertEquals(3, f.steadyIteration());
        assertEquals(300.0, f.steadyMs(), 1e-9);
        assertEquals(300.0, f.firstIterationUs(), 1e-9);
        LabJmh.Figure never = LabJmh.steady(List.of(300.0, 200.0), List.of(ms, 2 * ms), 0, 100.0, 2.0);
        assertTrue(Double.isNaN(never.steadyMs()));
        assertEquals(0, never.steadyIteration());
        assertFalse(
                Double.isNaN(
                        LabJmh.steady(List.of(90.0), List.of(ms), 0, 100.0, 0).steadyMs()),
                "faster is steady");
    }

    @Test
    void jmhOptionsParse() {
        assertEquals(new LabJmh.Options(4, 3, 100), LabJmh.Options.parse("4,3,100"));
        assertThrows(IllegalArgumentException.class, () -> LabJmh.Options.parse("4,0,100"));
        assertThrows(IllegalArgumentException.class, () -> LabJmh.Options.parse("4,3"));
        assertEquals(1, LabJmh.Options.parse("4,3,100").forks(), "one fork unless told");
        assertEquals(new LabJmh.Options(5, 5, 200, 3), LabJmh.Options.parse("5,5,200,3"));
        assertThrows(IllegalArgumentException.class, () -> LabJmh.Options.parse("5,5,200,0"));
        assertEquals("5,5,200,3", LabJmh.Options.parse("5,5,200,3").argument(), "the command line reproduces it");
        assertEquals("4,3,100", LabJmh.Options.parse("4,3,100").argument());
    }
}
