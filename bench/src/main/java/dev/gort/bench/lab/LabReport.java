package dev.gort.bench.lab;

import dev.gort.bench.lab.PreemptLab.Result;
import dev.gort.bench.lab.PreemptLab.Settings;
import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.Rectangle;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.jfree.chart.JFreeChart;
import org.jfree.chart.annotations.XYTextAnnotation;
import org.jfree.chart.axis.LogAxis;
import org.jfree.chart.axis.NumberAxis;
import org.jfree.chart.plot.IntervalMarker;
import org.jfree.chart.plot.ValueMarker;
import org.jfree.chart.plot.XYPlot;
import org.jfree.chart.renderer.xy.XYLineAndShapeRenderer;
import org.jfree.chart.ui.Layer;
import org.jfree.chart.ui.RectangleAnchor;
import org.jfree.chart.ui.TextAnchor;
import org.jfree.data.xy.XYSeries;
import org.jfree.data.xy.XYSeriesCollection;
import org.jfree.svg.SVGGraphics2D;

/**
 * Writes the lab's report: {@code latest.csv} (every cell, raw), {@code latest.md} (the matrix, the
 * per-strategy summary, the Pareto front, the machine and the command) and {@code latest.svg} (a
 * Pareto plot of geometric-mean overhead against worst p99 time-to-yield, with the literature's
 * anchors where they map), drawn by JFreeChart on JFreeSVG.
 */
public final class LabReport {
    private LabReport() {}

    static final String CSV_HEADER =
            "workload,strategy,same_result,steady_us,overhead_pct,overhead_error_pct,inproc_overhead_pct,inproc_steady_us,"
                    + "first_us,"
                    + "warmup_ms,warmup_iteration,requested,honoured,"
                    + "unhonoured,refused_monitor,refused_lock,refused_jdklock,refused_clinit,refused_pinned,budget_yields,"
                    + "yields,p50_us,p99_us,max_us,sites_hit,workload_site_yields,backedge_polls,entry_polls,methods_changed,bytes_per_method";

    /**
     * One strategy's point: geomean overhead, worst p99 over the workloads (a workload that never
     * yielded counts as the window; one preempted by its budget only counts 0).
     */
    public record Point(
            String strategy, double overheadPct, double worstP99Us, String worstWorkload, int neverYielded) {}

    static String csv(List<Result> rs) {
        StringBuilder b = new StringBuilder(CSV_HEADER).append('\n');
        for (Result r : rs) {
            b.append(String.format(
                    Locale.ROOT,
                    "%s,%s,%b,%.2f,%.2f,%.2f,%.2f,%.2f,%.2f,%.0f,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%.1f,%.1f,%.1f,%d,%d,%d,%d,%d,%.1f%n",
                    r.workload(),
                    r.strategy(),
                    r.sameResult(),
                    r.steadyUs(),
                    r.overheadPct(),
                    r.overheadErrorPct(),
                    r.inprocOverheadPct(),
                    r.inprocSteadyUs(),
                    r.firstUs(),
                    r.warmupMs(),
                    r.warmupIteration(),
                    r.requested(),
                    r.honoured(),
                    r.unhonoured(),
                    r.refusedMonitor(),
                    r.refusedLock(),
                    r.refusedJdkLock(),
                    r.refusedClinit(),
                    r.refusedPinned(),
                    r.budgetYields(),
                    r.yields(),
                    r.p50Us(),
                    r.p99Us(),
                    r.maxUs(),
                    r.sitesHit(),
                    r.workloadSiteYields(),
                    r.backedgePolls(),
                    r.entryPolls(),
                    r.methodsChanged(),
                    r.bytesPerMethod()));
        }
        return b.toString();
    }

    /** Per strategy (in column order): the Pareto point. */
    public static List<Point> points(List<Result> rs, int windowMs) {
        Map<String, List<Result>> by = new LinkedHashMap<>();
        for (Result r : rs) {
            by.computeIfAbsent(r.strategy(), x -> new ArrayList<>()).add(r);
        }
        List<Point> out = new ArrayList<>();
        for (Map.Entry<String, List<Result>> e : by.entrySet()) {
            double logSum = 0;
            double worst = 0;
            String worstW = "";
            int never = 0;
            for (Result r : e.getValue()) {
                logSum += Math.log(Math.max(1e-3, 1 + r.overheadPct() / 100));
                // Never preempted in the window: count the whole window. Preempted by its budget
                // only (before sysmon asked): no request waited, count 0.
                double p99 = r.yields() == 0 ? windowMs * 1000.0 : r.honoured() == 0 ? 0 : r.p99Us();
                if (r.yields() == 0) {
                    never++;
                }
                if (p99 > worst) {
                    worst = p99;
                    worstW = r.workload();
                }
            }
            double gm = (Math.exp(logSum / e.getValue().size()) - 1) * 100;
            out.add(new Point(e.getKey(), gm, worst, worstW, never));
        }
        return out;
    }

    /** The points not dominated (lower-or-equal overhead and p99, one strictly lower) by another. */
    public static List<String> front(List<Point> ps) {
        List<String> f = new ArrayList<>();
        for (Point p : ps) {
            boolean dominated = false;
            for (Point q : ps) {
                if (q != p
                        && q.overheadPct() <= p.overheadPct()
                        && q.worstP99Us() <= p.worstP99Us()
                        && (q.overheadPct() < p.overheadPct() || q.worstP99Us() < p.worstP99Us())) {
                    dominated = true;
                }
            }
            if (!dominated) {
                f.add(p.strategy());
            }
        }
        return f;
    }

    static void write(Path dir, Settings s, List<Result> rs, double seconds) throws IOException {
        PreemptLab.writeString(dir.resolve("latest.csv"), csv(rs));
        List<Point> ps = points(rs, s.windowMs());
        PreemptLab.writeString(dir.resolve("latest.svg"), svg(ps, s.windowMs()));
        PreemptLab.writeString(dir.resolve("latest.md"), markdown(s, rs, ps, seconds));
    }

    static String markdown(Settings s, List<Result> rs, List<Point> ps, double seconds) {
        StringBuilder b = new StringBuilder();
        b.append("# Preemption lab: overhead against time-to-yield\n\n");
        boolean jmh = s.jmh() != null;
        b.append(String.format(
                Locale.ROOT,
                "Machine: %s; load average %s. Mode: %s (%s; in-process: rounds %d, %d warm-up + %d measured units per"
                        + " round; time-to-yield window %d ms per cell), %.0f s. Command: `%s`.%n%n",
                PreemptLab.machine(),
                loadAverage(),
                s.shortMode() ? "short" : s.longMode() ? "long" : "default",
                jmh
                        ? String.format(
                                Locale.ROOT,
                                "overhead by JMH: %d fork%s per cell, %d warm-up + %d measured iterations of %d ms",
                                s.jmh().forks(),
                                s.jmh().forks() == 1 ? "" : "s",
                                s.jmh().warmupIterations(),
                                s.jmh().measurementIterations(),
                                s.jmh().iterationMs())
                        : "overhead in-process, no JMH",
                s.rounds(),
                s.warm(),
                s.reps(),
                s.windowMs(),
                seconds,
                s.command()));
        if (jmh) {
            b.append(
                    "Overhead: JMH's average time per unit of the workload (`LabBench`, on goroutine 1 of a 1-P runtime,"
                            + " 5 units per hand-off) in a fork whose JVM carries the setting's agent (`-javaagent:gort-agent.jar="
                            + "<strategy>` and its `-Dgort.preempt.*`), against the fork without the agent; `±` is JMH's 99.9 %"
                            + " error in overhead points (wide with few iterations). Warm-up: real time from the fork's first"
                            + " iteration to the first whose time is within 10 % of the final score. The in-process harness's"
                            + " overhead (one JVM, a class-loader copy per cell) is in latest.csv beside it.");
        } else {
            b.append(
                    "Overhead: median unit time of each cell's own copy of the workload against the uninstrumented copy,"
                            + " on one goroutine of a 1-P runtime (in-process harness, not JMH: `--short`/`--no-jmh`).");
        }
        b.append(" Time to yield: sysmon's request to the yield, two goroutines sharing one P. A load from other"
                + " processes on the machine shows up in both figures: compare cells of one run, and rerun on a quiet"
                + " machine for figures to quote.\n\n");
        List<String> strategies = new ArrayList<>();
        for (Point p : ps) {
            strategies.add(p.strategy());
        }
        b.append(
                "## Matrix: overhead % / p99 time-to-yield (ms); `-` = never yielded; `budget` = only budget yields (before sysmon asked)\n\n| workload |");
        for (String st : strategies) {
            b.append(' ').append(st).append(" |");
        }
        b.append("\n|---|");
        b.append("---|".repeat(strategies.size()));
        b.append('\n');
        Map<String, Map<String, Result>> grid = new LinkedHashMap<>();
        for (Result r : rs) {
            grid.computeIfAbsent(r.workload(), x -> new LinkedHashMap<>()).put(r.strategy(), r);
        }
        for (Map.Entry<String, Map<String, Result>> row : grid.entrySet()) {
            b.append("| ").append(row.getKey()).append(" |");
            for (String st : strategies) {
                Result r = row.getValue().get(st);
                if (r == null) {
                    b.append(" (missing) |");
                    continue;
                }
                b.append(String.format(
                        Locale.ROOT,
                        " %+.1f%s / %s%s |",
                        r.overheadPct(),
                        Double.isNaN(r.overheadErrorPct())
                                ? ""
                                : String.format(Locale.ROOT, " ±%.0f", r.overheadErrorPct()),
                        r.yields() == 0
                                ? "-"
                                : r.honoured() == 0 ? "budget" : String.format(Locale.ROOT, "%.2f", r.p99Us() / 1e3),
                        r.sameResult() ? "" : " **DIFFERS**"));
            }
            b.append('\n');
        }
        b.append(
                jmh
                        ? "\n## Warm-up: time to steady state (ms; JMH iteration in brackets; `-` = never within 10 %)\n\n"
                        : "\n## Warm-up: first (cold) unit / steady unit (in-process)\n\n");
        b.append("| workload |");
        for (String st : strategies) {
            b.append(' ').append(st).append(" |");
        }
        b.append("\n|---|").append("---|".repeat(strategies.size())).append('\n');
        for (Map.Entry<String, Map<String, Result>> row : grid.entrySet()) {
            b.append("| ").append(row.getKey()).append(" |");
            for (String st : strategies) {
                Result r = row.getValue().get(st);
                if (r == null) {
                    b.append(" (missing) |");
                } else if (jmh) {
                    b.append(
                            Double.isNaN(r.warmupMs())
                                    ? " - |"
                                    : String.format(Locale.ROOT, " %.0f (%d) |", r.warmupMs(), r.warmupIteration()));
                } else {
                    b.append(String.format(
                            Locale.ROOT, " %.1fx |", r.inprocSteadyUs() > 0 ? r.firstUs() / r.inprocSteadyUs() : 0));
                }
            }
            b.append('\n');
        }
        b.append("\n## Per strategy (the Pareto plot's points)\n\n");
        b.append("| strategy | geomean overhead % | worst p99 (ms) | on workload | workloads never yielded |\n");
        b.append("|---|---|---|---|---|\n");
        for (Point p : ps) {
            b.append(String.format(
                    Locale.ROOT,
                    "| %s | %+.1f | %.2f | %s | %d |%n",
                    p.strategy(),
                    p.overheadPct(),
                    p.worstP99Us() / 1e3,
                    p.worstWorkload(),
                    p.neverYielded()));
        }
        b.append("\nPareto front (no other strategy is at least as good on both axes): ")
                .append(String.join(", ", front(ps)))
                .append(".\n\n![Pareto plot](latest.svg)\n\n");
        b.append("## Anchors (the plot's markers)\n\n"
                + "- Go's loop-preemption experiment (proposal 24543): fault-based back-edge polls cost 7.8 % geomean on"
                + " the go1 benchmarks (a horizontal line: it gives no time-to-yield).\n"
                + "- Lin et al., \"Stop and Go\" (ISMM 2015): untaken yieldpoints cost 0-2.5 % depending on design"
                + " (a horizontal band).\n"
                + "- Go 1.14 asynchronous preemption: about 0 % overhead (a horizontal line), 10 ms quantum (a vertical"
                + " one: sysmon asks a goroutine that has run 10 ms; a p99 left of it yields before the next quantum);"
                + " its time-to-yield is a signal's delivery, which this JVM port cannot do (ADR 0002), so it has no"
                + " point.\n"
                + "- HotSpot loop strip mining (JDK-8186027): `LoopStripMiningIter=1000` kept time-to-safepoint while"
                + " removing most of `UseCountedLoopSafepoints`' cost; our analogue is `backedge/s1024` (the bug"
                + " gives no figure in these units, so it is not drawn).\n\n");
        b.append("## Refusals, sites, code size (full figures in latest.csv)\n\n");
        b.append(
                "| workload | strategy | requested | yields | unhonoured | refused monitor/lock/jdk/clinit/pinned |"
                        + " sites hit | polls (backedge+entry) | bytes/method | in-process overhead % | first unit / steady |\n");
        b.append("|---|---|---|---|---|---|---|---|---|---|---|\n");
        for (Result r : rs) {
            b.append(String.format(
                    Locale.ROOT,
                    "| %s | %s | %d | %d | %d | %d/%d/%d/%d/%d | %d | %d+%d | %.1f | %+.1f | %.1fx |%n",
                    r.workload(),
                    r.strategy(),
                    r.requested(),
                    r.yields(),
                    r.unhonoured(),
                    r.refusedMonitor(),
                    r.refusedLock(),
                    r.refusedJdkLock(),
                    r.refusedClinit(),
                    r.refusedPinned(),
                    r.sitesHit(),
                    r.backedgePolls(),
                    r.entryPolls(),
                    r.bytesPerMethod(),
                    r.inprocOverheadPct(),
                    r.inprocSteadyUs() > 0 ? r.firstUs() / r.inprocSteadyUs() : 0));
        }
        return b.toString();
    }

    /**
     * The Pareto plot, drawn by JFreeChart on JFreeSVG's Graphics2D: one point per strategy
     * (geomean overhead against worst p99 time-to-yield, log x), the front in red, each point
     * labelled; the anchors that map onto these axes: Lin et al.'s 0-2.5 % band, Go's 7.8 % (24543)
     * and Go 1.14's ~0 % as horizontal markers, Go's 10 ms preemption quantum as a vertical one.
     */
    /** The 1-, 5- and 15-minute load averages (Linux), or "unknown". */
    static String loadAverage() {
        try {
            String[] f = java.nio.file.Files.readString(Path.of("/proc/loadavg"))
                    .trim()
                    .split("\\s+");
            return f[0] + " " + f[1] + " " + f[2];
        } catch (IOException | RuntimeException e) {
            return "unknown";
        }
    }

    static String svg(List<Point> ps, int windowMs) {
        System.setProperty("java.awt.headless", "true");
        List<String> front = front(ps);
        XYSeries on = new XYSeries("on the Pareto front");
        XYSeries off = new XYSeries("dominated");
        // A budget-only worst p99 is 0 (no request waited): drawn at 1 us on the log axis.
        java.util.function.ToDoubleFunction<Point> x = p -> Math.max(1, p.worstP99Us());
        for (Point p : ps) {
            (front.contains(p.strategy()) ? on : off).add(x.applyAsDouble(p), p.overheadPct());
        }
        XYSeriesCollection data = new XYSeriesCollection();
        data.addSeries(on);
        data.addSeries(off);
        LogAxis xAxis = new LogAxis("worst p99 request-to-yield over the workloads (log; never yielded: at the "
                + windowMs + " ms window; budget yields only: at 1 us)");
        xAxis.setSmallestValue(1);
        xAxis.setBase(10);
        xAxis.setTickUnit(new org.jfree.chart.axis.NumberTickUnit(1)); // a tick per decade
        xAxis.setNumberFormatOverride(new java.text.NumberFormat() {
            @Override
            public StringBuffer format(double us, StringBuffer to, java.text.FieldPosition pos) {
                long v = Math.round(us);
                return to.append(v < 1000 ? v + " us" : v < 1_000_000 ? v / 1000 + " ms" : v / 1_000_000 + " s");
            }

            @Override
            public StringBuffer format(long us, StringBuffer to, java.text.FieldPosition pos) {
                return format((double) us, to, pos);
            }

            @Override
            public Number parse(String source, java.text.ParsePosition pos) {
                throw new UnsupportedOperationException();
            }
        });
        // Room right of the never-yielded points (at the window) for their labels.
        double xmax = Math.max(20_000, windowMs * 1000.0 * 20);
        xAxis.setRange(0.5, xmax);
        NumberAxis yAxis = new NumberAxis("geomean overhead vs uninstrumented, %");
        double ymin = -5;
        double ymax = 10;
        for (Point p : ps) {
            ymax = Math.max(ymax, p.overheadPct() * 1.1 + 2);
            ymin = Math.min(ymin, p.overheadPct() - 2);
        }
        yAxis.setRange(ymin, ymax);
        XYLineAndShapeRenderer r = new XYLineAndShapeRenderer(false, true);
        r.setSeriesPaint(0, new Color(0xcc, 0, 0));
        r.setSeriesPaint(1, new Color(0x55, 0x55, 0x55));
        java.awt.Shape dot = new java.awt.geom.Ellipse2D.Double(-4, -4, 8, 8);
        r.setSeriesShape(0, dot);
        r.setSeriesShape(1, dot);
        XYPlot plot = new XYPlot(data, xAxis, yAxis, r);
        plot.setBackgroundPaint(Color.WHITE);
        plot.setDomainGridlinePaint(new Color(0xdd, 0xdd, 0xdd));
        plot.setRangeGridlinePaint(new Color(0xdd, 0xdd, 0xdd));
        Font small = new Font(Font.SANS_SERIF, Font.PLAIN, 11);
        IntervalMarker lin = new IntervalMarker(0, 2.5, new Color(0x88, 0x88, 0xff, 0x40));
        lin.setLabel("Lin et al. 2015, untaken yieldpoints: 0-2.5 %");
        anchorLabel(lin, small, new Color(0x44, 0x44, 0xaa), TextAnchor.BOTTOM_LEFT);
        plot.addRangeMarker(lin, Layer.BACKGROUND);
        ValueMarker go24543 = new ValueMarker(7.8, new Color(0xcc, 0x66, 0), dashed(5, 3));
        go24543.setLabel("Go loop preemption (24543), fault-based back-edge polls: 7.8 %");
        go24543.setLabelFont(small);
        go24543.setLabelBackgroundColor(new Color(255, 255, 255, 0));
        go24543.setLabelPaint(new Color(0xcc, 0x66, 0));
        go24543.setLabelAnchor(RectangleAnchor.TOP_RIGHT);
        go24543.setLabelTextAnchor(TextAnchor.BOTTOM_RIGHT);
        go24543.setLabelOffset(new org.jfree.chart.ui.RectangleInsets(2, 4, 2, 4));
        plot.addRangeMarker(go24543, Layer.FOREGROUND);
        ValueMarker async = new ValueMarker(0, new Color(0x33, 0x99, 0x33), dashed(2, 2));
        async.setLabel("Go 1.14 async preemption: ~0 %");
        anchorLabel(async, small, new Color(0x33, 0x99, 0x33), TextAnchor.TOP_LEFT);
        plot.addRangeMarker(async, Layer.FOREGROUND);
        ValueMarker quantum = new ValueMarker(10_000, new Color(0x33, 0x99, 0x33), dashed(2, 2));
        quantum.setLabel("Go's 10 ms quantum");
        quantum.setLabelFont(small);
        quantum.setLabelBackgroundColor(new Color(255, 255, 255, 0));
        quantum.setLabelPaint(new Color(0x33, 0x99, 0x33));
        quantum.setLabelAnchor(RectangleAnchor.TOP_LEFT);
        quantum.setLabelTextAnchor(TextAnchor.TOP_RIGHT);
        plot.addDomainMarker(quantum, Layer.FOREGROUND);
        for (Point p : ps) {
            XYTextAnnotation a = new XYTextAnnotation(p.strategy(), x.applyAsDouble(p), p.overheadPct());
            a.setFont(small);
            a.setTextAnchor(TextAnchor.BOTTOM_LEFT);
            a.setPaint(front.contains(p.strategy()) ? new Color(0xcc, 0, 0) : Color.DARK_GRAY);
            plot.addAnnotation(a);
        }
        JFreeChart chart = new JFreeChart(
                "Preemption strategies: geomean overhead vs worst p99 time-to-yield",
                new Font(Font.SANS_SERIF, Font.BOLD, 14),
                plot,
                true);
        chart.setBackgroundPaint(Color.WHITE);
        int w = 900;
        int h = 560;
        SVGGraphics2D g = new SVGGraphics2D(w, h);
        chart.draw(g, new Rectangle(0, 0, w, h));
        return g.getSVGDocument() + "\n";
    }

    private static BasicStroke dashed(float on, float off) {
        return new BasicStroke(1.2f, BasicStroke.CAP_BUTT, BasicStroke.JOIN_MITER, 10, new float[] {on, off}, 0);
    }

    private static void anchorLabel(org.jfree.chart.plot.Marker m, Font f, Color c, TextAnchor text) {
        m.setLabelFont(f);
        m.setLabelBackgroundColor(new Color(255, 255, 255, 0));
        m.setLabelPaint(c);
        m.setLabelAnchor(text == TextAnchor.TOP_LEFT ? RectangleAnchor.BOTTOM_LEFT : RectangleAnchor.TOP_LEFT);
        m.setLabelTextAnchor(text);
        m.setLabelOffset(new org.jfree.chart.ui.RectangleInsets(2, 4, 2, 4));
    }
}
