package dev.gort.bench.report;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The table's figures and stability mark: issue 19 asks for figures stable to ±10 %, and the table
 * says which are not; each figure is the median of its iterations with a distribution-free 95 %
 * interval (as Go's benchstat), or JMH's mean where only a mean was recorded.
 */
class ReportTest {
    static Report.Row row(String label, double score, double err) {
        return new Report.Row(
                "pingpong", label, label.substring(0, label.indexOf(' ')), 1, score, err, "ns/op", 5, Report.MEAN);
    }

    @Test
    void aFigureWhoseIntervalIsWiderThanTenPercentIsMarkedAndOnlyThen() {
        assertEquals("500 ± 50.0", Report.cell(row("gort P=1", 500, 50)), "exactly 10 %: stable");
        assertEquals("500 ± 51.0 †", Report.cell(row("gort P=1", 500, 51)));
        assertEquals("500", Report.cell(row("gort P=1", 500, Double.NaN)), "no interval, no verdict");
        assertTrue(Report.unstable(row("go P=1", 10, 1.5)));
        assertFalse(Report.unstable(row("go P=1", 10, 0.5)));
        Report.Row alloc = new Report.Row("pingpong alloc", "gort P=1", "gort", 1, 0.05, 0.02, "B/op", 5, Report.MEAN);
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

    static Report.Row fig(String workload, String label, double score, String unit) {
        return new Report.Row(
                workload, label, label.substring(0, label.indexOf(' ')), 1, score, 0, unit, 25, Report.MEDIAN);
    }

    /** The row of the issue-19 table for {@code what} at {@code p}, split into its cells. */
    static String[] targetRow(String md, String what, int p) {
        for (String line : md.split("\n")) {
            if (line.startsWith("| " + what + " | " + p + " |")) {
                return line.split(" \\| ");
            }
        }
        throw new AssertionError("no row for " + what + " P=" + p + " in\n" + md);
    }

    @Test
    void aSwitchBoundTargetWhoseLimitIsBelowTheJdksSwitchFloorIsSaidToBeOutOfReach() {
        List<Report.Row> rows = List.of(
                fig("switchfloor frames=1", "gort P=1", 80, "ns/op"),
                fig("gosched goroutines=2", "go P=1", 52, "ns/op"),
                fig("gosched goroutines=2", "gort P=1", 127, "ns/op"),
                fig("pingpong", "go P=1", 210, "ns/op"),
                fig("pingpong", "gort P=1", 287, "ns/op"),
                fig("pingpong", "go P=2", 225, "ns/op"),
                fig("pingpong", "gort P=2", 334, "ns/op"),
                fig("gosched goroutines=2", "go P=2", 54, "ns/op"),
                fig("gosched goroutines=2", "gort P=2", 132, "ns/op"),
                fig("createchain", "go P=1", 124, "ns/op"),
                fig("createchain", "gort P=1", 94, "ns/op"),
                fig("manypairs", "go P=2", 64, "ns/op"),
                fig("manypairs", "gort P=2", 81, "ns/op"),
                fig("sieve", "go P=1", 244, "ms/op"),
                fig("sieve", "gort P=1", 306, "ms/op"),
                fig("parked", "gort-chan P=2", 426, "bytes/task"));
        String md = Report.markdown(rows, new LinkedHashMap<>(), "x.svg");
        assertTrue(md.contains("the least a switch freezes: 80.0 ± 0.000 ns/op"), md);
        // Gosched at P=1: 1.5 x 52 = 78 is below one switch (80): out of reach.
        String[] gosched = targetRow(md, "Gosched, 2 goroutines, ns", 1);
        assertEquals("78.0", gosched[6]);
        assertEquals("80.0", gosched[7]);
        assertEquals("out of reach: the limit is below the floor bound |", gosched[8]);
        // Ping-pong at P=1: two switches (160) fit under Go's 210: missed, not out of reach.
        String[] pp1 = targetRow(md, "ping-pong, ns/round trip", 1);
        assertEquals("160", pp1[7]);
        assertEquals("no (1.37 x the limit) |", pp1[8]);
        // At P=2 the limit is the smaller of 1.2 x Go P=2 (270) and 1.2 x gort P=1 (344.4).
        String[] pp2 = targetRow(md, "ping-pong, ns/round trip", 2);
        assertEquals("<= 1.2 x Go P=2 and <= 1.2 x gort P=1", pp2[2]);
        assertEquals("270", pp2[6]);
        assertEquals("160", pp2[7], "a round trip's two switches are one after the other at any P");
        assertEquals("no (1.24 x the limit) |", pp2[8]);
        // Two goroutines' Gosched calls may run on both Ps at once: 80 / 2. The limit 1.2 x 54 = 64.8
        // is above that bound: missed, not out of reach.
        String[] gosched2 = targetRow(md, "Gosched, 2 goroutines, ns", 2);
        assertEquals("64.8", gosched2[6]);
        assertEquals("40.0", gosched2[7]);
        assertEquals("no (2.04 x the limit) |", gosched2[8]);
        // Parallel switches share the floor among the Ps: 1.02 x 80 / 2.
        assertEquals("40.8", targetRow(md, "10,000 pairs, ns/message", 2)[7]);
        // A sieve's floor is in its unit: 2,046,628 x 80 ns = 163.7 ms.
        assertEquals("164", targetRow(md, "sieve 2000, ms", 1)[7]);
        assertEquals("yes |", targetRow(md, "create chain, ns/goroutine", 1)[8]);
        assertEquals("no figure |", targetRow(md, "create chain, ns/goroutine", 2)[8]);
        assertTrue(
                md.contains(
                        "| parked in a channel receive, bytes/goroutine | – | <= 450 | – | 426 ± 0.000 | – | 450 | – | yes |"),
                md);
    }

    @Test
    void theIssue19TableComparesOnlyFiguresInOneUnitAndIsLeftOutOfRunsWithoutItsWorkloads() {
        String none = Report.markdown(List.of(fig("spawn", "gort P=1", 500, "ns/op")), new LinkedHashMap<>(), "x.svg");
        assertFalse(none.contains("Targets (issue 19)"), none);
        // A floor and a sieve in microseconds (JMH's -tu us): the bound converts both units.
        String md = Report.markdown(
                List.of(
                        fig("switchfloor frames=1", "gort P=2", 0.1, "us/op"),
                        fig("sieve", "gort P=1", 306_000, "us/op"),
                        fig("sieve", "go P=1", 244, "ms/op")),
                new LinkedHashMap<>(),
                "x.svg");
        String[] sieve = targetRow(md, "sieve 2000, ms", 1);
        assertEquals("204,663", sieve[7], "2,046,628 x 100 ns in us, the floor found at P=2");
        assertEquals("–", sieve[3], "Go's figure in another unit is not compared");
        assertEquals("no figure |", sieve[8]);
    }

    @Test
    void aNewerGoTwinGetsATableOfItsOwnBesideTheTargetsAndTheTargetsStayOnTheBaseline() {
        List<Report.Row> base = List.of(
                fig("gosched goroutines=2", "go P=2", 75, "ns/op"),
                fig("gosched goroutines=2", "gort P=2", 240, "ns/op"),
                fig("gosched goroutines=2", "gort P=1", 243, "ns/op"),
                fig("tightloop", "go-nopreempt P=1", 9, "ms/op"),
                fig("tightloop", "gort P=1", 1, "ms/op"));
        String without = Report.markdown(base, new LinkedHashMap<>(), "x.svg");
        assertFalse(without.contains("newer Go twin"), "no table for a twin of other workloads only: " + without);
        List<Report.Row> rows = new java.util.ArrayList<>(base);
        rows.add(fig("gosched goroutines=2", "go1.23 P=2", 239, "ns/op"));
        rows.add(fig("sieve", "go1.23 P=1", 400, "ms/op"));
        rows.add(fig("sieve", "gort P=1", 300_000, "us/op"));
        String md = Report.markdown(rows, new LinkedHashMap<>(), "x.svg");
        assertTrue(md.contains("| target | P | go1.23 here | gort here | gort / go1.23 |"), md);
        assertTrue(md.contains("| Gosched, 2 goroutines, ns | 2 | 239 ± 0.000 | 240 ± 0.000 | 1.00 |"), md);
        assertFalse(md.contains("| sieve 2000, ms | 1 | 400"), "figures in two units are not compared: " + md);
        // The verdict still reads the baseline twin: 240 against 1.2 x 75.
        assertEquals("no (2.67 x the limit) |", targetRow(md, "Gosched, 2 goroutines, ns", 2)[8]);
    }

    /** 1, 2, ..., n in a shuffled order (the statistic must sort). */
    static double[] ranks(int n) {
        return IntStream.range(0, n)
                .map(i -> (i * 7 + 3) % n + 1)
                .asDoubleStream()
                .toArray();
    }

    @Test
    void theIntervalOfTheMedianIsTheOrderStatisticsWhoseBinomialTailsHoldAtMostFivePercent() {
        // n = 25: P(Bin(25, 1/2) <= 7) = 0.0216 <= 0.025 < P(<= 8) = 0.0539, so [x(8), x(18)].
        MedianCi m = MedianCi.of(ranks(25));
        assertEquals(13, m.median());
        assertEquals(8, m.lo());
        assertEquals(18, m.hi());
        assertEquals(1 - 2 * 0.021643, m.level(), 1e-5);
        // n = 15 (the Go twin's long budget): P(<= 3) = 0.0176, P(<= 4) = 0.0592: [x(4), x(12)].
        MedianCi g = MedianCi.of(ranks(15));
        assertEquals(8, g.median());
        assertEquals(4, g.lo());
        assertEquals(12, g.hi());
        // Even n: the mean of the two middle values.
        assertEquals(3.5, MedianCi.of(new double[] {6, 1, 4, 3, 2, 5}).median());
    }

    @Test
    void withTooFewIterationsForNinetyFivePercentTheIntervalIsTheRangeAndSaysWhatItCovers() {
        MedianCi five = MedianCi.of(new double[] {5, 1, 3, 2, 4});
        assertEquals(1, five.lo());
        assertEquals(5, five.hi());
        assertEquals(0.9375, five.level(), 1e-12);
        MedianCi three = MedianCi.of(new double[] {10, 30, 20});
        assertEquals(20, three.median());
        assertEquals(10, three.halfWidth(), "the farther end");
        assertEquals(0.75, three.level(), 1e-12);
        assertEquals(null, MedianCi.of(new double[] {Double.NaN}));
    }

    @Test
    void aSlowForkMovesTheMedianLittleWhereItWidensTheMeansInterval() {
        double[] xs = new double[25];
        for (int i = 0; i < 25; i++) {
            xs[i] = i < 20 ? 100 + i % 5 : 300; // four forks of 100..104, one at 300
        }
        // Sorted: 100 x4, 101 x4, 102 x4, 103 x4, 104 x4, 300 x5; x(13) = 103, [x(8), x(18)] = [101, 104].
        MedianCi m = MedianCi.of(xs);
        assertEquals(103, m.median());
        assertEquals(101, m.lo());
        assertEquals(104, m.hi());
        assertTrue(m.halfWidth() <= 2, "the interval stays inside the four forks: " + m);
        Report.Row r = row("gort P=1", 142, 70).withSamples(xs);
        assertEquals(Report.MEDIAN, r.stat());
        assertEquals("103 ± 2.00", Report.cell(r), "the mean, 142 ± 70, would be marked");
    }

    @Test
    void jmhJsonGivesTheMedianOfEveryIterationOfEveryForkAndItsSecondaryResults(@TempDir Path dir) throws IOException {
        String json = """
                [ { "benchmark" : "dev.gort.bench.PingPong.gort", "mode" : "avgt",
                    "params" : { "procs" : "2" },
                    "primaryMetric" : { "score" : 150.0, "scoreError" : 90.0, "scoreUnit" : "ns/op",
                      "rawData" : [ [ 100.0, 101.0, 102.0 ], [ 103.0, 104.0, 400.0 ] ] },
                    "secondaryMetrics" : {
                      "gc.alloc.rate.norm" : { "score" : 0.5, "scoreError" : 0.1, "scoreUnit" : "B/op",
                        "rawData" : [ [ 0.5, 0.5, 0.5 ], [ 0.5, 0.5, 0.5 ] ] },
                      "gc.count" : { "score" : 1, "scoreError" : "NaN", "scoreUnit" : "counts",
                        "rawData" : [ [ 1, 0, 0 ], [ 0, 0, 0 ] ] } } },
                  { "benchmark" : "dev.gort.bench.PingPong.vthread", "mode" : "avgt",
                    "params" : { "procs" : "2" },
                    "primaryMetric" : { "score" : 300.0, "scoreError" : 5.0, "scoreUnit" : "ns/op",
                      "rawData" : [ [ 300.0, 300.0, 300.0 ] ] } } ]
                """;
        Path f = dir.resolve("jmh-p2.json");
        Files.writeString(f, json);
        List<Report.Row> rows = Report.readJmh(f);
        assertEquals(3, rows.size(), rows.toString()); // gc.count is not reported
        Report.Row gort = Report.find(rows, "pingpong", "gort P=2");
        assertEquals(102.5, gort.score());
        assertEquals(6, gort.samples());
        assertEquals(297.5, gort.err(), "six iterations: the range, 100 to 400");
        assertEquals(0.5, Report.find(rows, "pingpong alloc", "gort P=2").score());
        assertEquals(300, Report.find(rows, "pingpong", "vthread C=2").score());
    }

    @Test
    void theGoTwinsRepetitionsGiveItsMedianAndAnOldCsvStaysAMean(@TempDir Path dir) throws IOException {
        Path f = dir.resolve("go.csv");
        Files.writeString(
                f,
                "workload,impl,gomaxprocs,score,error,unit,samples,raw\n"
                        + "pingpong,go,1,234.261,84.7,ns/op,7,249.316;290.404;205.799;209.188;203.042;204.957;277.121\n"
                        + "sieve,go,1,382,59.3,ms/op,15\n");
        List<Report.Row> rows = Report.readGo(f);
        Report.Row pp = Report.find(rows, "pingpong", "go P=1");
        assertEquals(209.188, pp.score());
        assertEquals(Report.MEDIAN, pp.stat());
        Report.Row sieve = Report.find(rows, "sieve", "go P=1");
        assertEquals(382, sieve.score());
        assertEquals(Report.MEAN, sieve.stat());
        String md = Report.markdown(rows, new LinkedHashMap<>(), "x.svg");
        assertTrue(md.contains("Figures read from files without per-iteration figures (n marked *)"), md);
        assertTrue(md.contains("| go P=1 | 382 ± 59.3 † | 15* |"), md);
    }

    static String pingPongJson(String procs, String gortForks) {
        return "[ { \"benchmark\" : \"dev.gort.bench.PingPong.gort\", \"mode\" : \"avgt\", \"params\" : { \"procs\" : \""
                + procs + "\" }, \"primaryMetric\" : { \"score\" : 1, \"scoreError\" : 1, \"scoreUnit\" : \"ns/op\","
                + " \"rawData\" : " + gortForks + " } } ]";
    }

    /**
     * BENCH_ROUNDS: the rounds of one pass are one figure, whose iterations are every round's; a
     * slow stretch of the host that holds three forks of one benchmark when they run one after the
     * other holds one fork of each when they run in rounds, and the median stays with the others.
     */
    @Test
    void theRoundsOfOnePassAreOneFigureOverEveryRoundsIterations(@TempDir Path dir) throws IOException {
        Files.writeString(dir.resolve("jmh-p1.r1.json"), pingPongJson("1", "[ [ 100.0, 101.0, 102.0 ] ]"));
        Files.writeString(dir.resolve("jmh-p1.r2.json"), pingPongJson("1", "[ [ 140.0, 141.0, 142.0 ] ]"));
        Files.writeString(dir.resolve("jmh-p1.r10.json"), pingPongJson("1", "[ [ 103.0, 104.0, 105.0 ] ]"));
        Files.writeString(dir.resolve("jmh-p2.r1.json"), pingPongJson("2", "[ [ 200.0, 201.0, 202.0 ] ]"));
        Files.writeString(
                dir.resolve("go.r1.csv"),
                "workload,impl,gomaxprocs,score,error,unit,samples,raw\n"
                        + "pingpong,go,1,230,1,ns/op,3,229;230;231\n");
        Files.writeString(
                dir.resolve("go.r2.csv"),
                "workload,impl,gomaxprocs,score,error,unit,samples,raw\n"
                        + "pingpong,go,1,300,1,ns/op,3,299;300;301\n"
                        + "sieve,go,1,300,1,ms/op,3,299;300;301\n"
                        + "26;101.189;106.835\n"); // a damaged line (a twin killed mid-write) is left out
        Path out = dir.resolve("out/latest");
        Report.main(new String[] {dir.toString(), out.toString()});
        String md = Files.readString(dir.resolve("out/latest.md"));
        // gort P=1: 100..105 and 140..142, nine iterations: median 104, interval [x(2), x(8)] = [101, 141]
        assertTrue(md.contains("| pingpong | ns/op | 104 ± 37.0 † | 201 ± 1.00 | 265 ± 36.0 † |"), md);
        assertTrue(md.contains("| sieve | ms/op | – | – | 300 ± 1.00 |"), md);

        List<Report.Row> rows = Report.readJmh(List.of(dir.resolve("jmh-p1.r1.json"), dir.resolve("jmh-p1.r10.json")));
        Report.Row gort = Report.find(rows, "pingpong", "gort P=1");
        assertEquals(6, gort.samples());
        assertEquals(102.5, gort.score());
        assertEquals(
                List.of("jmh-p1.r1.json", "jmh-p1.r2.json", "jmh-p1.r10.json"),
                Stream.of("jmh-p1.r10.json", "jmh-p1.r2.json", "jmh-p1.r1.json")
                        .map(Path::of)
                        .sorted(Comparator.comparing(Report::roundOrder))
                        .map(Path::toString)
                        .toList(),
                "round 10 after round 9");
    }

    static Report.Row fanout(String impl, int procs, double ms) {
        return new Report.Row(
                "fanout",
                Report.label(impl, procs, null),
                Report.family(impl),
                procs,
                ms,
                0.5,
                "ms/op",
                25,
                Report.MEDIAN);
    }

    @Test
    void efficiencyDividesTheSerialTimeOfTheSamePassByPTimesTheElapsedTimeWithPTheParallelismUsed() {
        int cores = Runtime.getRuntime().availableProcessors();
        List<Report.Row> rows = List.of(
                fanout("serial", 1, 48),
                fanout("serial", 2, 50),
                fanout("gort", 1, 48),
                fanout("gort", 2, 25),
                fanout("threads", 1, 24),
                fanout("threads", 2, 20),
                fanout("platform", 2, 40));
        List<Report.Row> eff = Report.efficiency(rows);
        assertEquals(1.0, Report.find(eff, "fanout-efficiency", "gort P=1").score(), 1e-9);
        // P=2: the serial of the P=2 pass (50), not of the P=1 pass (48)
        assertEquals(1.0, Report.find(eff, "fanout-efficiency", "gort P=2").score(), 1e-9);
        assertEquals(1.25, Report.find(eff, "fanout-efficiency", "threads P=2").score(), 1e-9);
        // threads: P is the pass's P, not the machine's cores (2.0 is impossible, and tells them apart)
        assertEquals(2.0, Report.find(eff, "fanout-efficiency", "threads P=1").score(), 1e-9);
        // platform threads use every core, whatever the pass's P
        assertEquals(
                50.0 / (cores * 40),
                Report.findPrefix(eff, "fanout-efficiency", "platform").score(),
                1e-9);
        assertFalse(eff.stream().anyMatch(r -> r.family().equals("serial")), "no efficiency for the serial rows");
        assertTrue(Report.mainColumns(rows).contains("threads P=2"), "threads has a column of its own");
    }

    /**
     * A second Go twin (bench/go/run.sh builds it with the newest installed Go) gets columns of its
     * own after the baseline's, and its fan-out efficiency uses its own serial time.
     */
    @Test
    void aSecondGoTwinHasItsOwnColumnsAndItsOwnSerialTime(@TempDir Path dir) throws IOException {
        Path f = dir.resolve("go.csv");
        Files.writeString(
                f,
                "workload,impl,gomaxprocs,score,error,unit,samples,raw\n"
                        + "pingpong,go,1,230,1,ns/op,3,229;230;231\n"
                        + "pingpong,go,2,240,1,ns/op,3,239;240;241\n"
                        + "fanout,go,2,25,1,ms/op,3,25;25;25\n"
                        + "fanout-serial,go,2,50,1,ms/op,3,50;50;50\n"
                        + "pingpong,go1.23,1,310,1,ns/op,3,309;310;311\n"
                        + "pingpong,go1.23,2,260,1,ns/op,3,259;260;261\n"
                        + "fanout,go1.23,2,30,1,ms/op,3,30;30;30\n"
                        + "fanout-serial,go1.23,2,48,1,ms/op,3,48;48;48\n");
        List<Report.Row> rows = Report.readGo(f);
        List<Report.Row> pingpong =
                rows.stream().filter(r -> r.workload().equals("pingpong")).toList();
        assertEquals(List.of("go P=1", "go P=2", "go1.23 P=1", "go1.23 P=2"), Report.mainColumns(pingpong));
        assertEquals(310, Report.find(rows, "pingpong", "go1.23 P=1").score());
        List<Report.Row> eff = Report.efficiency(rows);
        assertEquals(1.0, Report.find(eff, "fanout-efficiency", "go P=2").score(), 1e-9);
        assertEquals(
                48.0 / 60, Report.find(eff, "fanout-efficiency", "go1.23 P=2").score(), 1e-9);
        String md = Report.markdown(rows, new LinkedHashMap<>(), "x.svg");
        assertTrue(md.contains("| pingpong | ns/op | 230 ± 1.00 | 240 ± 1.00 | 310 ± 1.00 | 260 ± 1.00 |"), md);
    }
}
