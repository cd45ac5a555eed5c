package dev.gort.bench.lab;

import dev.gort.bench.lab.PreemptLab.Result;
import dev.gort.bench.lab.PreemptLab.Settings;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Writes the lab's report: {@code latest.csv} (every cell, raw), {@code latest.md} (the matrix, the
 * per-strategy summary, the Pareto front, the machine and the command) and {@code latest.svg} (a
 * Pareto plot of geometric-mean overhead against worst p99 time-to-yield, with the literature's
 * anchors where they map). The SVG is drawn with the JDK only: no plotting library is on the
 * bench's class path, and the existing {@code bench/report} does the same.
 */
public final class LabReport {
    private LabReport() {}

    static final String CSV_HEADER = "workload,strategy,same_result,steady_us,overhead_pct,first_us,requested,honoured,"
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
                    "%s,%s,%b,%.2f,%.2f,%.2f,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%.1f,%.1f,%.1f,%d,%d,%d,%d,%d,%.1f%n",
                    r.workload(),
                    r.strategy(),
                    r.sameResult(),
                    r.steadyUs(),
                    r.overheadPct(),
                    r.firstUs(),
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
        b.append(String.format(
                Locale.ROOT,
                "Machine: %s. Mode: %s (rounds %d, %d warm-up + %d measured units per round, time-to-yield window %d ms"
                        + " per cell), %.0f s. Command: `./gort lab preempt%s`.%n%n",
                PreemptLab.machine(),
                s.shortMode() ? "short" : "full",
                s.rounds(),
                s.warm(),
                s.reps(),
                s.windowMs(),
                seconds,
                s.shortMode() ? " --short" : ""));
        b.append("Overhead: median unit time of each cell's own copy of the workload against the uninstrumented copy,"
                + " on one goroutine of a 1-P runtime (in-process harness, not JMH). Time to yield: sysmon's request"
                + " to the yield, two goroutines sharing one P. A load from other processes on the machine shows up"
                + " in both figures: compare cells of one run, and rerun on a quiet machine for figures to quote.\n\n");
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
                        " %+.1f / %s%s |",
                        r.overheadPct(),
                        r.yields() == 0
                                ? "-"
                                : r.honoured() == 0 ? "budget" : String.format(Locale.ROOT, "%.2f", r.p99Us() / 1e3),
                        r.sameResult() ? "" : " **DIFFERS**"));
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
        b.append("## Anchors (the horizontal lines of the plot)\n\n"
                + "- Go's loop-preemption experiment (proposal 24543): fault-based back-edge polls cost 7.8 % geomean on"
                + " the go1 benchmarks.\n"
                + "- Lin et al., \"Stop and Go\" (ISMM 2015): untaken yieldpoints cost 0-2.5 % depending on design.\n"
                + "- Go 1.14 asynchronous preemption: about 0 % overhead, 10 ms quantum; its time-to-yield is a signal's"
                + " delivery, which this JVM port cannot do (ADR 0002), so it has no point on the x axis.\n"
                + "- HotSpot loop strip mining (JDK-8186027): `LoopStripMiningIter=1000` kept time-to-safepoint while"
                + " removing most of `UseCountedLoopSafepoints`' cost; our analogue is `backedge/s1024` (the bug"
                + " gives no figure in these units, so it is not drawn).\n\n");
        b.append("## Refusals, sites, code size (full figures in latest.csv)\n\n");
        b.append("| workload | strategy | requested | yields | unhonoured | refused monitor/lock/jdk/clinit/pinned |"
                + " sites hit | polls (backedge+entry) | bytes/method | first unit / steady |\n");
        b.append("|---|---|---|---|---|---|---|---|---|---|\n");
        for (Result r : rs) {
            b.append(String.format(
                    Locale.ROOT,
                    "| %s | %s | %d | %d | %d | %d/%d/%d/%d/%d | %d | %d+%d | %.1f | %.1fx |%n",
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
                    r.steadyUs() > 0 ? r.firstUs() / r.steadyUs() : 0));
        }
        return b.toString();
    }

    static String svg(List<Point> ps, int windowMs) {
        int w = 760;
        int h = 480;
        int l = 70;
        int r = 200;
        int t = 30;
        int bt = 60;
        double xmin = Math.log10(1); // 1 us
        double xmax = Math.log10(Math.max(10, windowMs * 1000.0 * 1.5));
        double ymin = -5;
        double ymax = 10;
        for (Point p : ps) {
            ymax = Math.max(ymax, p.overheadPct() * 1.1 + 1);
            ymin = Math.min(ymin, p.overheadPct() - 1);
        }
        double fymin = ymin;
        double fymax = ymax;
        java.util.function.DoubleUnaryOperator X =
                us -> l + (Math.log10(Math.max(1, us)) - xmin) / (xmax - xmin) * (w - l - r);
        java.util.function.DoubleUnaryOperator Y = pct -> t + (fymax - pct) / (fymax - fymin) * (h - t - bt);
        StringBuilder b = new StringBuilder();
        b.append(String.format(
                Locale.ROOT,
                "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" font-family=\"sans-serif\""
                        + " font-size=\"11\">%n<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>%n",
                w,
                h));
        b.append(String.format(
                Locale.ROOT,
                "<text x=\"%d\" y=\"18\" font-size=\"13\">Preemption strategies: geomean overhead vs worst p99"
                        + " time-to-yield</text>%n",
                l));
        // axes
        b.append(String.format(
                Locale.ROOT,
                "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"black\"/>%n",
                l,
                h - bt,
                w - r,
                h - bt));
        b.append(String.format(
                Locale.ROOT, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"black\"/>%n", l, t, l, h - bt));
        for (int e = 0; e <= (int) Math.ceil(xmax); e++) {
            double x = X.applyAsDouble(Math.pow(10, e));
            if (x > w - r) {
                break;
            }
            String lab = e < 3 ? (int) Math.pow(10, e) + " us" : (int) Math.pow(10, e - 3) + " ms";
            b.append(String.format(
                    Locale.ROOT,
                    "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#ddd\"/>"
                            + "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s</text>%n",
                    x,
                    t,
                    x,
                    h - bt,
                    x,
                    h - bt + 15,
                    lab));
        }
        double step = (ymax - ymin) > 60 ? 20 : (ymax - ymin) > 30 ? 10 : 5;
        for (double v = Math.ceil(ymin / step) * step; v <= ymax; v += step) {
            double y = Y.applyAsDouble(v);
            b.append(String.format(
                    Locale.ROOT,
                    "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#ddd\"/>"
                            + "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%.0f %%</text>%n",
                    l,
                    y,
                    w - r,
                    y,
                    l - 5,
                    y + 4,
                    v));
        }
        b.append(String.format(
                Locale.ROOT,
                "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">worst p99 request-to-yield"
                        + " over the workloads (log; a workload that never yielded counts as the %d ms window)</text>%n",
                (l + w - r) / 2,
                h - 20,
                windowMs));
        b.append(String.format(
                Locale.ROOT,
                "<text x=\"15\" y=\"%d\" transform=\"rotate(-90 15 %d)\""
                        + " text-anchor=\"middle\">geomean overhead vs uninstrumented</text>%n",
                (t + h - bt) / 2,
                (t + h - bt) / 2));
        // anchors
        double yb0 = Y.applyAsDouble(2.5);
        double yb1 = Y.applyAsDouble(0);
        b.append(String.format(
                Locale.ROOT,
                "<rect x=\"%d\" y=\"%.1f\" width=\"%d\" height=\"%.1f\" fill=\"#88f\""
                        + " fill-opacity=\"0.15\"/><text x=\"%d\" y=\"%.1f\" fill=\"#44a\">Lin et al. 2015: 0-2.5 %%</text>%n",
                l,
                yb0,
                w - r - l,
                yb1 - yb0,
                w - r + 5,
                yb0 + 4));
        double y78 = Y.applyAsDouble(7.8);
        b.append(String.format(
                Locale.ROOT,
                "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#c60\""
                        + " stroke-dasharray=\"5,3\"/><text x=\"%d\" y=\"%.1f\" fill=\"#c60\">Go loop preemption"
                        + " 24543: 7.8 %%</text>%n",
                l,
                y78,
                w - r,
                y78,
                w - r + 5,
                y78 + 4));
        b.append(String.format(
                Locale.ROOT,
                "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#393\""
                        + " stroke-dasharray=\"2,2\"/><text x=\"%d\" y=\"%.1f\" fill=\"#393\">Go 1.14 async: ~0 %%</text>%n",
                l,
                yb1,
                w - r,
                yb1,
                w - r + 5,
                yb1 + 16));
        List<String> front = front(ps);
        for (Point p : ps) {
            double x = X.applyAsDouble(p.worstP99Us());
            double y = Y.applyAsDouble(p.overheadPct());
            boolean f = front.contains(p.strategy());
            b.append(String.format(
                    Locale.ROOT,
                    "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"%s\"/>" + "<text x=\"%.1f\" y=\"%.1f\">%s</text>%n",
                    x,
                    y,
                    f ? "#c00" : "#555",
                    x + 6,
                    y - 4,
                    esc(p.strategy())));
        }
        b.append(String.format(
                Locale.ROOT,
                "<text x=\"%d\" y=\"%d\" fill=\"#c00\">red: on the Pareto front</text>%n",
                w - r + 5,
                h - bt));
        b.append("</svg>\n");
        return b.toString();
    }

    private static String esc(String s) {
        return s.replace("&", "&amp;").replace("<", "&lt;");
    }
}
