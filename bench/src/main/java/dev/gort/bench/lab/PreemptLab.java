package dev.gort.bench.lab;

import dev.gort.agent.LoopLength;
import dev.gort.agent.Strategies;
import dev.gort.agent.Strategy;
import dev.gort.bench.GLatch;
import dev.gort.bench.GortHost;
import dev.gort.runtime.PreemptStats;
import dev.gort.runtime.Scheduler;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The preemption lab ({@code ./gort lab preempt}): every workload of {@code lab.work.Workloads}
 * under every strategy and setting, two figures per cell.
 *
 * <ul>
 *   <li><b>Overhead</b> when nobody asks: an in-process harness, not JMH (JMH forks per benchmark
 *       and would need hours for the matrix on 2 cores). Each cell is its own copy of the
 *       workload's classes (and Jackson's), loaded by {@link LabLoader}; it runs on a goroutine of
 *       a 1-P runtime alone, so polls take their real fast paths (the budget decrements its
 *       carrier's counter) and sysmon's 10 ms requests are honoured at once. Per round, the cells
 *       run in a rotated order, {@code warm} timed units then {@code reps} measured units; the
 *       figure is the median unit over all rounds, against the uninstrumented copy's median.
 *       Warm-up: the first (cold) unit's time over the steady median.
 *   <li><b>Time to yield</b> when sysmon asks: two goroutines run the workload on one P for
 *       {@code window} ms; every slice end is a request; request-to-yield from sysmon's request to
 *       the yield (HdrHistogram in {@code PreemptStats}), p50/p99/max, with the refusals by reason,
 *       the requests never honoured, and the distinct poll sites where a yield happened.
 *   <li><b>Code size</b>: bytes added to the workload's own classes per changed method, and the
 *       polls placed there; <b>results</b>: each cell's result equals the uninstrumented one.
 * </ul>
 * Output: {@code <out>/latest.md}, {@code latest.csv}, {@code latest.svg} ({@link LabReport}).
 *
 * <p>Usage: {@code PreemptLab preempt [--short] [--out DIR] [--rounds N] [--window MS]}.
 */
public final class PreemptLab {
    private PreemptLab() {}

    /** The rows: workload name to its class in {@code lab.work.Workloads}. */
    public static final List<String> WORKLOADS = List.of(
            "ArraySum",
            "Spin",
            "Json",
            "Regex",
            "Sort",
            "Stream",
            "Fib",
            "TreeWalk",
            "HashMapLoop",
            "Iface",
            "LongMethod",
            "Monitor");

    /** One column: a label, the strategy (null: uninstrumented), the budget (budget only, else 0). */
    public record Cell(String label, Strategy strategy, int budget) {}

    /** The columns. */
    public static List<Cell> cells() {
        return List.of(
                new Cell("uninstrumented", null, 0),
                new Cell("none", Strategies.NONE, 0),
                new Cell("entry", Strategies.ENTRY, 0),
                new Cell("backedge/s0", Strategies.backedge(0, true), 0),
                new Cell("backedge/s64", Strategies.backedge(64, true), 0),
                new Cell("backedge/s1024", Strategies.backedge(1024, true), 0),
                new Cell("backedge/s16384", Strategies.backedge(16384, true), 0),
                new Cell("backedge/s1024-nocallers", Strategies.backedge(1024, false), 0),
                new Cell("budget/b64k", Strategies.BUDGET, 1 << 16),
                new Cell("budget/b4M", Strategies.BUDGET, 1 << 22),
                new Cell(
                        "looplen/t" + LoopLength.DEFAULT_THRESHOLD,
                        new LoopLength(LoopLength.DEFAULT_THRESHOLD, true),
                        0));
    }

    /** The settings of one lab run. */
    public record Settings(boolean shortMode, int rounds, int warm, int reps, int windowMs, double unitScale) {
        public static Settings full() {
            return new Settings(false, 5, 10, 10, 400, 1.0);
        }

        public static Settings quick() {
            return new Settings(true, 1, 2, 2, 30, 0.2);
        }
    }

    /**
     * One measured cell (a CSV row). {@code p50Us}/{@code p99Us}/{@code maxUs}: request-to-yield of
     * sysmon's honoured requests ({@code honoured} of them; 0 when none was honoured).
     */
    public record Result(
            String workload,
            String strategy,
            boolean sameResult,
            double steadyUs,
            double overheadPct,
            double firstUs,
            long requested,
            long honoured,
            long unhonoured,
            long refusedMonitor,
            long refusedLock,
            long refusedJdkLock,
            long refusedClinit,
            long refusedPinned,
            long budgetYields,
            /** honoured requests plus budget yields: every preemption of the window */
            long yields,
            double p50Us,
            double p99Us,
            double maxUs,
            int sitesHit,
            /** honoured preemptions at a poll inside the workload's own classes (not the harness's gort calls) */
            long workloadSiteYields,
            int backedgePolls,
            int entryPolls,
            int methodsChanged,
            double bytesPerMethod) {}

    public static void main(String[] args) throws Exception {
        Settings s = Settings.full();
        Path out = Path.of("bench/results/lab");
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "preempt" -> {}
                case "--short" -> s = Settings.quick();
                case "--out" -> out = Path.of(args[++i]);
                case "--rounds" ->
                    s = new Settings(
                            s.shortMode(),
                            Integer.parseInt(args[++i]),
                            s.warm(),
                            s.reps(),
                            s.windowMs(),
                            s.unitScale());
                case "--window" ->
                    s = new Settings(
                            s.shortMode(), s.rounds(), s.warm(), s.reps(), Integer.parseInt(args[++i]), s.unitScale());
                default -> {
                    System.err.println("usage: lab preempt [--short] [--out DIR] [--rounds N] [--window MS]");
                    System.exit(2);
                }
            }
        }
        long t0 = System.nanoTime();
        List<Result> rs = run(s, WORKLOADS, System.err);
        LabReport.write(out, s, rs, (System.nanoTime() - t0) / 1e9);
        System.err.printf(
                Locale.ROOT,
                "lab: %d cells in %.1f s; wrote %s/latest.{md,csv,svg}%n",
                rs.size(),
                (System.nanoTime() - t0) / 1e9,
                out);
    }

    /** Runs the matrix for {@code workloads}; progress lines go to {@code log}. */
    public static List<Result> run(Settings s, List<String> workloads, java.io.PrintStream log) throws Exception {
        List<Cell> cells = cells();
        List<Result> out = new ArrayList<>();
        for (String w : workloads) {
            out.addAll(runWorkload(s, w, cells, log));
        }
        return out;
    }

    private static final String PKG = "dev.gort.bench.lab.work.Workloads$";
    /** The prefix of a poll site in the workloads ("class.method"). */
    static final String WORK_SITE = "dev.gort.bench.lab.work.";

    private static LabWorkload load(LabLoader l, String w) throws ReflectiveOperationException {
        return (LabWorkload)
                Class.forName(PKG + w, true, l).getDeclaredConstructor().newInstance();
    }

    private static List<Result> runWorkload(Settings s, String w, List<Cell> cells, java.io.PrintStream log)
            throws Exception {
        int k = cells.size();
        LabLoader[] loaders = new LabLoader[k];
        LabWorkload[] work = new LabWorkload[k];
        for (int c = 0; c < k; c++) {
            loaders[c] = new LabLoader(cells.get(c).label(), cells.get(c).strategy());
            work[c] = load(loaders[c], w);
        }
        int n = Math.max(1, (int) Math.round(work[0].unit() * s.unitScale()));
        if (w.equals("Fib")) {
            n = s.shortMode() ? 20 : work[0].unit(); // exponential: scale the argument, not the size
        }
        final int unit = n;
        long[] result = new long[k];
        double[] firstUs = new double[k];
        List<List<Long>> times = new ArrayList<>();
        for (int c = 0; c < k; c++) {
            times.add(new ArrayList<>());
        }
        // Overhead: one 1-P runtime per budget setting, one goroutine at a time.
        Map<Integer, GortHost> hosts = new LinkedHashMap<>();
        try {
            for (int c = 0; c < k; c++) {
                int cc = c;
                host(hosts, cells.get(c).budget()).run(() -> {
                    long a = System.nanoTime();
                    result[cc] = work[cc].run(unit);
                    firstUs[cc] = (System.nanoTime() - a) / 1e3;
                });
            }
            // A warm-up round first, not measured: the JDK code the copies share (regex, sort,
            // HashMap) is compiled before any cell is timed, whichever cell comes first.
            for (int c = 0; c < k; c++) {
                LabWorkload wk = work[c];
                host(hosts, cells.get(c).budget()).run(() -> {
                    for (int j = 0; j < s.warm(); j++) {
                        wk.run(unit);
                    }
                });
            }
            for (int r = 0; r < s.rounds(); r++) {
                for (int i = 0; i < k; i++) {
                    int c = (i + r) % k;
                    List<Long> ts = times.get(c);
                    LabWorkload wk = work[c];
                    host(hosts, cells.get(c).budget()).run(() -> {
                        for (int j = 0; j < 2; j++) {
                            wk.run(unit);
                        }
                        for (int j = 0; j < s.reps(); j++) {
                            long a = System.nanoTime();
                            wk.run(unit);
                            ts.add(System.nanoTime() - a);
                        }
                    });
                }
            }
        } finally {
            hosts.values().forEach(GortHost::close);
        }
        double base = median(times.get(0));
        List<Result> out = new ArrayList<>();
        for (int c = 0; c < k; c++) {
            Cell cell = cells.get(c);
            PreemptStats st = timeToYield(s, work[c], unit, cell.budget());
            LabLoader.ClassStats cs = loaders[c].statsOf(PKG + w);
            double steady = median(times.get(c));
            PreemptStats.Percentiles p = st.requestToYield();
            Result res = new Result(
                    w,
                    cell.label(),
                    result[c] == result[0],
                    steady / 1e3,
                    (steady / base - 1) * 100,
                    firstUs[c],
                    st.requested(),
                    st.honoured(),
                    st.unhonoured(),
                    st.refusedMonitor(),
                    st.refusedLock(),
                    st.refusedJdkLock(),
                    st.refusedClinit(),
                    st.refusedPinned(),
                    st.budgetYields(),
                    st.honoured() + st.budgetYields(),
                    p.p50() / 1e3,
                    p.p99() / 1e3,
                    p.max() / 1e3,
                    st.sites().size(),
                    st.sites().entrySet().stream()
                            .filter(e -> e.getKey().startsWith(WORK_SITE))
                            .mapToLong(Map.Entry::getValue)
                            .sum(),
                    cs.backedgePolls(),
                    cs.entryPolls(),
                    cs.methodsChanged(),
                    cs.methodsChanged() == 0 ? 0 : (double) (cs.bytesAfter() - cs.bytesBefore()) / cs.methodsChanged());
            out.add(res);
            log.printf(
                    Locale.ROOT,
                    "lab: %-12s %-26s ovh %+7.1f%%  yields %4d  p99 %9.1f us  max %9.1f us%s%n",
                    w,
                    cell.label(),
                    res.overheadPct(),
                    res.yields(),
                    res.p99Us(),
                    res.maxUs(),
                    res.sameResult() ? "" : "  RESULT DIFFERS");
        }
        return out;
    }

    private static GortHost host(Map<Integer, GortHost> hosts, int budget) {
        return hosts.computeIfAbsent(budget, b -> withBudget(b, () -> new GortHost(1)));
    }

    /** Boots a runtime with {@code gort.preempt.budget} = budget (0: the default), read at its start. */
    private static <T> T withBudget(int budget, java.util.function.Supplier<T> f) {
        String old = System.getProperty("gort.preempt.budget");
        try {
            if (budget > 0) {
                System.setProperty("gort.preempt.budget", Integer.toString(budget));
            } else {
                System.clearProperty("gort.preempt.budget");
            }
            return f.get();
        } finally {
            if (old == null) {
                System.clearProperty("gort.preempt.budget");
            } else {
                System.setProperty("gort.preempt.budget", old);
            }
        }
    }

    /** Two goroutines running {@code w} on one P for the window; the runtime's preemption figures. */
    static PreemptStats timeToYield(Settings s, LabWorkload w, int unit, int budget) {
        GortHost host = withBudget(budget, () -> new GortHost(1));
        try {
            host.run(() -> {
                Scheduler rt = Scheduler.current();
                long deadline = System.nanoTime() + s.windowMs() * 1_000_000L;
                GLatch done = new GLatch(2);
                long[] sink = new long[2];
                for (int h = 0; h < 2; h++) {
                    int hh = h;
                    rt.newproc(() -> {
                        while (System.nanoTime() < deadline) {
                            sink[hh] += w.run(unit);
                        }
                        done.countDown();
                    });
                }
                done.await();
            });
            return host.scheduler().preempt.snapshot();
        } finally {
            host.close();
        }
    }

    static double median(List<Long> xs) {
        if (xs.isEmpty()) {
            return Double.NaN;
        }
        long[] a = xs.stream().mapToLong(Long::longValue).toArray();
        Arrays.sort(a);
        return a.length % 2 == 1 ? a[a.length / 2] : (a[a.length / 2 - 1] + a[a.length / 2]) / 2.0;
    }

    /** The machine, for the report. */
    static String machine() {
        return System.getProperty("os.name") + " " + System.getProperty("os.arch") + ", "
                + Runtime.getRuntime().availableProcessors() + " CPUs, JDK " + System.getProperty("java.version")
                + " (" + System.getProperty("java.vm.name") + ")";
    }

    static void writeString(Path p, String s) throws IOException {
        Files.createDirectories(p.getParent());
        Files.writeString(p, s);
    }
}
