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
 *   <li><b>Overhead</b> when nobody asks, by JMH ({@link LabJmh}, {@link LabBench}; the default):
 *       one fork per workload and setting, the setting's agent in the fork's JVM arguments (none for
 *       the uninstrumented baseline), the unit on goroutine 1 of a 1-P runtime; the figure is JMH's
 *       score against the baseline's, with JMH's error. <b>Warm-up</b>: the real time from the
 *       fork's first iteration to the first iteration within {@link LabJmh#STEADY_WITHIN} of the
 *       final score. {@code --short} (CI) and {@code --no-jmh} use the in-process harness instead:
 *       each cell is its own copy of the workload's classes (and Jackson's), loaded by
 *       {@link LabLoader}, on a goroutine of a 1-P runtime alone, so polls take their real fast
 *       paths (the budget decrements its carrier's counter) and sysmon's 10 ms requests are
 *       honoured at once. Per round, the cells run in a rotated order, {@code warm} timed units
 *       then {@code reps} measured units; the figure is the median unit over all rounds, against
 *       the uninstrumented copy's median (reported in every mode as {@code inproc_overhead_pct}).
 *       Its warm-up figure: the first (cold) unit's time over the steady median.
 *   <li><b>Time to yield</b> when sysmon asks: two goroutines run the workload on one P for
 *       {@code window} ms; every slice end is a request; request-to-yield from sysmon's request to
 *       the yield (HdrHistogram in {@code PreemptStats}), p50/p99/max, with the refusals by reason,
 *       the requests never honoured, and the distinct poll sites where a yield happened.
 *   <li><b>Code size</b>: bytes added to the workload's own classes per changed method, and the
 *       polls placed there; <b>results</b>: each cell's result equals the uninstrumented one.
 * </ul>
 * Output: {@code <out>/latest.md}, {@code latest.csv}, {@code latest.svg} ({@link LabReport}), and in
 * the JMH mode JMH's log, {@code jmh.log}.
 *
 * <p>Usage: {@code PreemptLab preempt [--short | --long] [--no-jmh] [--jmh W,M,MS[,F]] [--out DIR]
 * [--rounds N] [--window MS] [--workloads W1,W2,...]}; {@code --help} prints {@code usage.txt}, which
 * says what each option does.
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

    /**
     * The settings of one lab run. {@code jmh}: the overhead's JMH settings, or null for the
     * in-process harness only; {@code longMode}: {@code --long}.
     */
    public record Settings(
            boolean shortMode,
            int rounds,
            int warm,
            int reps,
            int windowMs,
            double unitScale,
            LabJmh.Options jmh,
            boolean longMode) {
        /** The default: JMH's short iterations, the in-process figures beside them. */
        public static Settings full() {
            return new Settings(false, 5, 10, 10, 400, 1.0, LabJmh.Options.quick(), false);
        }

        /** {@code --long}: longer JMH iterations and time-to-yield windows (tens of minutes on 2 cores). */
        public static Settings longer() {
            return new Settings(false, 5, 10, 10, 1000, 1.0, LabJmh.Options.longer(), true);
        }

        /** {@code --short}, CI's: tiny units, in-process only. */
        public static Settings quick() {
            return new Settings(true, 1, 2, 2, 30, 0.2, null, false);
        }

        Settings with(int rounds, int windowMs, LabJmh.Options jmh) {
            return new Settings(shortMode, rounds, warm, reps, windowMs, unitScale, jmh, longMode);
        }

        /** The command line that reproduces this run. */
        String command() {
            StringBuilder b = new StringBuilder("./gort lab preempt");
            Settings d = shortMode ? quick() : longMode ? longer() : full();
            b.append(shortMode ? " --short" : longMode ? " --long" : "");
            if (jmh == null && d.jmh != null) {
                b.append(" --no-jmh");
            } else if (jmh != null && !jmh.equals(d.jmh)) {
                b.append(" --jmh ").append(jmh.argument());
            }
            if (rounds != d.rounds) {
                b.append(" --rounds ").append(rounds);
            }
            if (windowMs != d.windowMs) {
                b.append(" --window ").append(windowMs);
            }
            return b.toString();
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
            /** per unit: JMH's score when JMH ran, else the in-process median */
            double steadyUs,
            /** against uninstrumented: JMH's when JMH ran, else the in-process one */
            double overheadPct,
            /** JMH's 99.9 % error of the score, in overhead points (NaN: in-process, or one measured iteration) */
            double overheadErrorPct,
            /** the in-process harness's overhead (every mode) */
            double inprocOverheadPct,
            /** the in-process harness's median unit */
            double inprocSteadyUs,
            /** the in-process harness's first (cold) unit */
            double firstUs,
            /** JMH: real time from the first iteration to the first within 10 % of the final score (NaN: never, or no JMH) */
            double warmupMs,
            /** JMH: that iteration's 1-based index among warm-up and measured ones (0: none) */
            int warmupIteration,
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

    /**
     * The lab's help ({@code ./gort lab preempt --help}): {@code usage.txt} beside this class, which
     * the launcher prints itself, without building the lab, for {@code --help}.
     */
    static String usage() {
        try (java.io.InputStream in = PreemptLab.class.getResourceAsStream("usage.txt")) {
            if (in == null) {
                throw new IllegalStateException("lab: usage.txt is missing from the class path");
            }
            return new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    /**
     * A parsed command line: the settings, the output directory and the workloads, or {@code help}
     * (then nothing else is set).
     */
    record Args(Settings settings, Path out, List<String> workloads, boolean help) {}

    /** Where a run's report goes without {@code --out}: the committed results. */
    static final Path DEFAULT_OUT = Path.of("bench/results/lab");

    /** Where a {@code --short} run's report goes without {@code --out}: not over the committed ones. */
    static final Path SHORT_OUT = Path.of("bench/target/lab");

    /**
     * Parses the lab's arguments (a leading {@code preempt} is the lab's name). Anything the lab
     * cannot run with is an IllegalArgumentException whose message names the option and what it
     * wants, before any work: a missing value, a count or window below 1 (it would fail at the
     * report, after the whole run), an {@code --out} that is a file, an unknown workload or option.
     * Without {@code --out} the report goes to {@link #DEFAULT_OUT}, or {@link #SHORT_OUT} for
     * {@code --short}.
     */
    static Args parse(String[] args) {
        Settings s = Settings.full();
        Path out = null;
        Integer rounds = null;
        Integer window = null;
        LabJmh.Options jmh = null;
        boolean noJmh = false;
        List<String> workloads = WORKLOADS;
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            switch (a) {
                case "preempt" -> {}
                case "-h", "--help" -> {
                    return new Args(null, null, null, true);
                }
                case "--short" -> s = Settings.quick();
                case "--long" -> s = Settings.longer();
                case "--no-jmh" -> noJmh = true;
                case "--jmh" -> jmh = LabJmh.Options.parse(value(args, ++i, a));
                case "--out" -> out = Path.of(value(args, ++i, a));
                case "--rounds" -> rounds = atLeastOne(a, value(args, ++i, a));
                case "--window" -> window = atLeastOne(a, value(args, ++i, a));
                case "--workloads" -> {
                    workloads = List.of(value(args, ++i, a).split(","));
                    for (String w : workloads) {
                        if (!WORKLOADS.contains(w)) {
                            throw new IllegalArgumentException("--workloads: unknown workload '" + w
                                    + "' (want some of " + String.join(",", WORKLOADS) + ")");
                        }
                    }
                }
                default -> throw new IllegalArgumentException("unknown argument '" + a + "'");
            }
        }
        if (out == null) {
            // --short's figures are noise (tiny units, 30 ms windows): they go to the build's
            // directory, not over the committed results of a full run
            out = s.shortMode() ? SHORT_OUT : DEFAULT_OUT;
        }
        if (Files.exists(out) && !Files.isDirectory(out)) {
            throw new IllegalArgumentException("--out: " + out + " is not a directory");
        }
        s = s.with(
                rounds != null ? rounds : s.rounds(),
                window != null ? window : s.windowMs(),
                noJmh ? null : jmh != null ? jmh : s.jmh());
        return new Args(s, out, workloads, false);
    }

    private static String value(String[] args, int i, String opt) {
        if (i >= args.length) {
            throw new IllegalArgumentException(opt + " needs a value");
        }
        return args[i];
    }

    /** An option's whole number from 1 to {@code Integer.MAX_VALUE} (digits only, as ./gort checks it). */
    private static int atLeastOne(String opt, String v) {
        if (!v.matches("0*[1-9][0-9]{0,9}") || Long.parseLong(v) > Integer.MAX_VALUE) {
            throw new IllegalArgumentException(opt + " wants a whole number >= 1, not '" + v + "'");
        }
        return Integer.parseInt(v);
    }

    public static void main(String[] args) throws Exception {
        Args a;
        try {
            a = parse(args);
        } catch (IllegalArgumentException e) {
            System.err.println("lab: " + e.getMessage());
            System.err.println(usage().lines().findFirst().orElse(""));
            System.exit(2);
            return;
        }
        if (a.help()) {
            System.out.print(usage());
            return;
        }
        Settings s = a.settings();
        Path out = a.out();
        List<String> workloads = a.workloads();
        long t0 = System.nanoTime();
        List<Result> rs = run(s, workloads, System.err);
        if (s.jmh() != null) {
            Path agent = LabJmh.agentJar();
            Files.createDirectories(out);
            try (java.io.PrintStream jmhLog = new java.io.PrintStream(
                    Files.newOutputStream(out.resolve("jmh.log")), true, java.nio.charset.StandardCharsets.UTF_8)) {
                System.err.printf(
                        Locale.ROOT,
                        "lab: JMH overhead, %d forks (%d warm-up + %d measured iterations of %d ms each); JMH's log: %s%n",
                        workloads.size() * cells().size() * s.jmh().forks(),
                        s.jmh().warmupIterations(),
                        s.jmh().measurementIterations(),
                        s.jmh().iterationMs(),
                        out.resolve("jmh.log"));
                rs = withJmh(rs, LabJmh.run(cells(), workloads, s.unitScale(), s.jmh(), agent, System.err, jmhLog));
            }
        }
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

    static final String PKG = "dev.gort.bench.lab.work.Workloads$";

    /** The size of one unit of {@code w} at {@code scale} (Fib: exponential, so its argument is scaled down to 20). */
    static int unitOf(String w, LabWorkload work, double scale) {
        if (w.equals("Fib")) {
            return scale >= 1.0 ? work.unit() : 20;
        }
        return Math.max(1, (int) Math.round(work.unit() * scale));
    }

    /** {@code rs} with JMH's overhead, error and warm-up in place of the in-process overhead. */
    static List<Result> withJmh(List<Result> rs, Map<String, LabJmh.Figure> jmh) {
        List<Result> out = new ArrayList<>();
        for (Result r : rs) {
            LabJmh.Figure f = jmh.get(r.workload() + "/" + r.strategy());
            LabJmh.Figure base = jmh.get(r.workload() + "/" + cells().get(0).label());
            if (f == null || base == null) {
                throw new IllegalStateException("lab: no JMH figure for " + r.workload() + "/" + r.strategy());
            }
            out.add(new Result(
                    r.workload(),
                    r.strategy(),
                    r.sameResult(),
                    f.us(),
                    (f.us() / base.us() - 1) * 100,
                    f.errorUs() / base.us() * 100,
                    r.inprocOverheadPct(),
                    r.inprocSteadyUs(),
                    r.firstUs(),
                    f.steadyMs(),
                    f.steadyIteration(),
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
        return out;
    }
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
        final int unit = unitOf(w, work[0], s.unitScale());
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
                    Double.NaN,
                    (steady / base - 1) * 100,
                    steady / 1e3,
                    firstUs[c],
                    Double.NaN,
                    0,
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
            log.println(consoleLine(cell.label(), res));
        }
        return out;
    }

    /**
     * A cell's progress line. Request-to-yield is sysmon's honoured requests' ({@link Result}):
     * {@code -} with no yield at all and {@code budget} where every yield was a budget yield, as
     * the report's cells say, never a 0.0 that reads as a measurement.
     */
    static String consoleLine(String label, Result res) {
        String p99;
        String max;
        if (res.yields() == 0 || res.honoured() == 0) {
            p99 = max = String.format(Locale.ROOT, "%12s", res.yields() == 0 ? "-" : "budget");
        } else {
            p99 = String.format(Locale.ROOT, "%9.1f us", res.p99Us());
            max = String.format(Locale.ROOT, "%9.1f us", res.maxUs());
        }
        return String.format(
                Locale.ROOT,
                "lab: %-12s %-26s ovh %+7.1f%%  yields %4d  p99 %s  max %s%s",
                res.workload(),
                label,
                res.overheadPct(),
                res.yields(),
                p99,
                max,
                res.sameResult() ? "" : "  RESULT DIFFERS");
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
