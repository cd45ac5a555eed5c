package dev.gort.bench.lab;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gort.bench.lab.PreemptLab.Cell;
import dev.gort.bench.lab.PreemptLab.Result;
import dev.gort.bench.lab.PreemptLab.Settings;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The lab's short mode, as CI runs it: every cell of the matrix is measured and reported, the
 * instrumented copies compute what the uninstrumented one does, and {@code none} never yields in a
 * call-free loop. No figure is asserted (they are timings).
 */
class PreemptLabShortTest {
    @Test
    void shortModeReportsEveryCellSameResultsAndNoneNeverYieldsInACallFreeLoop() throws Exception {
        Settings s = Settings.quick();
        List<Result> rs = PreemptLab.run(s, PreemptLab.WORKLOADS, new PrintStream(PrintStream.nullOutputStream()));
        Path dir = Path.of("target", "lab-short");
        LabReport.write(dir, s, rs, 0);

        List<Cell> cells = PreemptLab.cells();
        assertEquals(PreemptLab.WORKLOADS.size() * cells.size(), rs.size());
        Set<String> seen = new HashSet<>();
        for (Result r : rs) {
            assertTrue(seen.add(r.workload() + "/" + r.strategy()), "duplicate cell " + r);
            assertTrue(r.sameResult(), "instrumented result differs from uninstrumented: " + r);
        }
        for (String w : PreemptLab.WORKLOADS) {
            for (Cell c : cells) {
                assertTrue(seen.contains(w + "/" + c.label()), "missing cell " + w + "/" + c.label());
            }
        }

        Result none = rs.stream()
                .filter(r -> r.workload().equals("Spin") && r.strategy().equals("none"))
                .findFirst()
                .orElseThrow();
        // Not none.honoured(): the harness's own newproc polls (as Go's newproc prologue does), and a
        // loaded machine can make sysmon ask the goroutine that spawns the hogs.
        assertEquals(0, none.workloadSiteYields(), "none yielded in a call-free loop: " + none);
        assertEquals(0, none.budgetYields(), "none yielded in a call-free loop: " + none);
        assertEquals(0, none.backedgePolls() + none.entryPolls(), "none placed polls: " + none);

        List<String> csv = Files.readAllLines(dir.resolve("latest.csv"));
        assertEquals(LabReport.CSV_HEADER, csv.get(0));
        assertEquals(rs.size() + 1, csv.size());
        String md = Files.readString(dir.resolve("latest.md"));
        String svg = Files.readString(dir.resolve("latest.svg"));
        for (String w : PreemptLab.WORKLOADS) {
            assertTrue(md.contains("| " + w + " |"), "matrix row " + w);
        }
        for (Cell c : cells) {
            assertTrue(md.contains(" " + c.label() + " |"), "matrix column " + c.label());
            assertTrue(svg.contains(">" + c.label() + "</text>"), "plot point " + c.label());
        }
        assertTrue(!md.contains("(missing)") && !md.contains("DIFFERS"), md);
    }
}
