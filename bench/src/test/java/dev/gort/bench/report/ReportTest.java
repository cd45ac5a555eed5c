package dev.gort.bench.report;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The table's stability mark: issue 19 asks for figures stable to ±10 %, and the table says which are not. */
class ReportTest {
    static Report.Row row(String label, double score, double err) {
        return new Report.Row("pingpong", label, label.substring(0, label.indexOf(' ')), 1, score, err, "ns/op", 5);
    }

    @Test
    void aFigureWhoseIntervalIsWiderThanTenPercentIsMarkedAndOnlyThen() {
        assertEquals("500 ± 50.0", Report.cell(row("gort P=1", 500, 50)), "exactly 10 %: stable");
        assertEquals("500 ± 51.0 †", Report.cell(row("gort P=1", 500, 51)));
        assertEquals("500", Report.cell(row("gort P=1", 500, Double.NaN)), "no interval, no verdict");
        assertTrue(Report.unstable(row("go P=1", 10, 1.5)));
        assertFalse(Report.unstable(row("go P=1", 10, 0.5)));
        Report.Row alloc = new Report.Row("pingpong alloc", "gort P=1", "gort", 1, 0.05, 0.02, "B/op", 5);
        assertEquals("0.050 ± 0.020", Report.cell(alloc), "allocation rows are not judged");
    }

    @Test
    void theTableCountsTheLooseFigures() {
        Map<String, String> machine = new LinkedHashMap<>();
        machine.put("cores", "2");
        List<Report.Row> rows = List.of(row("gort P=1", 500, 20), row("go P=1", 400, 90), row("vthread C=1", 600, 300));
        String md = Report.markdown(rows, machine, "x.svg");
        assertTrue(md.contains("(2 of the 3 figures with an interval"), md);
        assertTrue(md.contains("| pingpong | ns/op | 500 ± 20.0 |"), md);
    }
}
