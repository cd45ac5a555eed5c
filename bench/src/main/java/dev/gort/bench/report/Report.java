package dev.gort.bench.report;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * Turns one run of {@code bench/report.sh} into a Markdown table and an SVG plot. Inputs, in the raw
 * directory: every {@code jmh-*.json} (JMH's {@code -rf json}, with every iteration's figure) or,
 * from runs before 2026-12-03, {@code jmh-*.csv} (JMH's {@code -rf csv}: means only);
 * {@code go.csv} (the Go twin: the columns of {@link Row}, then each repetition's figure) and
 * {@code machine.txt} ({@code key: value} lines). Outputs: {@code <out>.md} and {@code <out>.svg}.
 *
 * <p>Each figure is the median of its iterations (every measurement iteration of every fork, or
 * every repetition of the Go twin) with a distribution-free 95 % interval ({@link MedianCi}, as Go's
 * benchstat); only where the input has no per-iteration figures (old CSVs) it is JMH's mean and
 * 99.9 % interval, and the table says so.
 *
 * <p>Usage: {@code java -cp benchmarks.jar dev.gort.bench.report.Report <rawDir> <outPrefix>}
 */
public final class Report {
    /**
     * One figure: workload x implementation label. {@code stat} says what {@code score} and
     * {@code err} are: {@link #MEDIAN}, the median and the larger distance from it to an end of its
     * 95 % interval ({@link MedianCi#halfWidth}); or {@link #MEAN}, the mean and the half-width of
     * its 99.9 % interval (JMH's "Score Error"). {@code err} is NaN when unknown.
     */
    record Row(
            String workload,
            String label,
            String family,
            int procs,
            double score,
            double err,
            String unit,
            int samples,
            String stat) {
        /** The same figure, from the per-iteration figures {@code xs} when there are any. */
        Row withSamples(double[] xs) {
            MedianCi m = xs == null ? null : MedianCi.of(xs);
            if (m == null) {
                return this;
            }
            return new Row(workload, label, family, procs, m.median(), m.halfWidth(), unit, m.n(), MEDIAN);
        }
    }

    /** {@link Row#stat}: median and 95 % distribution-free interval. */
    static final String MEDIAN = "median";

    /** {@link Row#stat}: mean and 99.9 % Student's t interval. */
    static final String MEAN = "mean";

    /** A target of issue 7: the Go and VT figures quoted there and the rule for gort. */
    record Target(String workload, String what, double goIssue, double vtIssue, String rule, int procs) {}

    static final List<Target> TARGETS = List.of(
            new Target("spawn", "spawn, ns/task", 208, 460, "<= Go", 0),
            new Target("pingpong", "ping-pong, ns/round trip (P=1)", 216, 551, "<= Go", 1),
            new Target("prodcons", "buffered cap 128, ns/op", 39, 92, "<= 1.3 x Go", 0),
            new Target("sieve", "sieve 2000, ms", 215, 776, "<= Go", 0),
            new Target("fanout-efficiency", "fan-out efficiency, 2 Ps", 0.99, 0.61, ">= 0.95", 2),
            new Target("parked", "parked bytes/task", 2730, 789, "<= 500", 0));

    /**
     * A switch-bound target of issue 19, checked against the run's own figures: gort at {@code procs}
     * must be at most {@code goFactor} x Go at {@code procs} and, where {@code ownFactor} is not 0, at
     * most {@code ownFactor} x gort's own P=1 figure. {@code switches} is how many goroutine switches
     * (continuation runs, each ended by a yield) one op needs by Go's rules, counted with
     * {@code SwitchCounts} ({@code contRuns} per op; bench/README.md, "Counting instead of timing"):
     * a ping-pong round trip 2, a Gosched 1, a message of the 10,000 pairs 1.02 (1, plus each
     * goroutine's first run and exit over its 100 messages), a sieve of 2,000 primes 2,046,628.
     * {@code parallel}: the op's switches may run on every P at once (independent goroutines), so at
     * P=2 the floor is shared by two carriers; a ping-pong's two switches are one after the other at
     * any P. NaN: no bound given.
     */
    record SwitchTarget(
            String workload,
            String what,
            int procs,
            double goFactor,
            double ownFactor,
            double switches,
            boolean parallel) {
        String rule() {
            String go = (goFactor == 1 ? "" : goFactor + " x ") + "Go P=" + procs;
            return "<= " + go + (ownFactor == 0 ? "" : " and <= " + ownFactor + " x gort P=1");
        }
    }

    static final List<SwitchTarget> SWITCH_TARGETS = List.of(
            new SwitchTarget("pingpong", "ping-pong, ns/round trip", 1, 1, 0, 2, false),
            new SwitchTarget("pingpong", "ping-pong, ns/round trip", 2, 1.2, 1.2, 2, false),
            new SwitchTarget("gosched goroutines=2", "Gosched, 2 goroutines, ns", 1, 1.5, 0, 1, false),
            new SwitchTarget("gosched goroutines=2", "Gosched, 2 goroutines, ns", 2, 1.2, 1.2, 1, true),
            new SwitchTarget("createchain", "create chain, ns/goroutine", 1, 1, 0, Double.NaN, false),
            new SwitchTarget("createchain", "create chain, ns/goroutine", 2, 1, 0, Double.NaN, false),
            new SwitchTarget("manypairs", "10,000 pairs, ns/message", 1, 1, 0, 1.02, true),
            new SwitchTarget("manypairs", "10,000 pairs, ns/message", 2, 1, 0, 1.02, true),
            new SwitchTarget("sieve", "sieve 2000, ms", 1, 1, 0, 2_046_628, true),
            new SwitchTarget("sieve", "sieve 2000, ms", 2, 1, 0, 2_046_628, true));

    /** The JDK's own cost of one switch in this run: {@code SwitchFloor}'s least (one frame). */
    static final String FLOOR_WORKLOAD = "switchfloor frames=1";

    public static void main(String[] args) throws IOException {
        if (args.length != 2) {
            System.err.println("usage: Report <rawDir> <outPrefix>");
            System.exit(2);
        }
        Path raw = Path.of(args[0]);
        Path out = Path.of(args[1]);
        Map<String, String> machine = readMachine(raw.resolve("machine.txt"));
        List<Row> rows = new ArrayList<>();
        // One pass's files, its rounds in order: jmh-p1.json, or jmh-p1.r1.json, jmh-p1.r2.json, ...
        Map<String, List<Path>> passes = new TreeMap<>();
        List<Path> goFiles = new ArrayList<>();
        try (Stream<Path> files = Files.list(raw)) {
            for (Path f : files.sorted(Comparator.comparing(Report::roundOrder)).toList()) {
                String n = f.getFileName().toString();
                // JSON, or a CSV with no JSON of the same pass beside it (a run before 2026-12-03)
                if (n.startsWith("jmh-")
                        && (n.endsWith(".json")
                                || n.endsWith(".csv")
                                        && !Files.exists(f.resolveSibling(n.replaceAll("\\.csv$", ".json"))))) {
                    passes.computeIfAbsent(passName(n), k -> new ArrayList<>()).add(f);
                } else if (passName(n).equals("go.csv")) {
                    goFiles.add(f);
                }
            }
        }
        for (List<Path> pass : passes.values()) {
            rows.addAll(readJmh(pass));
        }
        if (!goFiles.isEmpty()) {
            rows.addAll(readGo(goFiles));
        }
        rows.addAll(efficiency(rows));
        Path log = raw.resolve("run.log");
        if (Files.exists(log)) {
            printed = Files.readAllLines(log).stream()
                    .filter(l -> l.startsWith("# ") && l.contains(" TOTAL "))
                    .toList();
        }
        rows = dedupe(rows);
        Files.createDirectories(out.toAbsolutePath().getParent());
        Files.writeString(
                Path.of(out + ".md"), markdown(rows, machine, out.getFileName() + ".svg"), StandardCharsets.UTF_8);
        Files.writeString(Path.of(out + ".svg"), svg(rows, machine), StandardCharsets.UTF_8);
        System.out.println("wrote " + out + ".md and " + out + ".svg (" + rows.size() + " figures)");
    }

    // ---------------------------------------------------------------------------------------------
    // Reading.

    static Map<String, String> readMachine(Path p) throws IOException {
        Map<String, String> m = new LinkedHashMap<>();
        if (Files.exists(p)) {
            for (String line : Files.readAllLines(p)) {
                int i = line.indexOf(':');
                if (i > 0) {
                    m.put(line.substring(0, i).trim(), line.substring(i + 1).trim());
                }
            }
        }
        return m;
    }

    static List<String> csv(String line) {
        List<String> out = new ArrayList<>();
        StringBuilder cur = new StringBuilder();
        boolean q = false;
        for (int i = 0; i < line.length(); i++) {
            char c = line.charAt(i);
            if (q) {
                if (c == '"' && i + 1 < line.length() && line.charAt(i + 1) == '"') {
                    cur.append('"');
                    i++;
                } else if (c == '"') {
                    q = false;
                } else {
                    cur.append(c);
                }
            } else if (c == '"') {
                q = true;
            } else if (c == ',') {
                out.add(cur.toString());
                cur.setLength(0);
            } else {
                cur.append(c);
            }
        }
        out.add(cur.toString());
        return out;
    }

    static double num(String s) {
        if (s == null || s.isBlank() || s.equalsIgnoreCase("NaN")) {
            return Double.NaN;
        }
        return Double.parseDouble(s.trim());
    }

    /** Secondary results worth a row of their own (others, e.g. -prof gc's, are left out). */
    static final Set<String> SECONDARY = Set.of("bytesPerTask");

    /** Secondary results shown as workloads of their own ("spawn alloc"), e.g. from {@code -prof gc}. */
    static final Map<String, String> EXTRA = Map.of("gc.alloc.rate.norm", "alloc");

    /** A benchmark method's implementation suffix (or whole name). */
    static final String IMPL_SUFFIX = "(?i)(gort|vthread|platform)$";

    /** Parameters that label the implementation rather than the workload. */
    static final Set<String> PARAMS = Set.of("impl", "gomaxprocs", "procs", "preempt", "strategy", "tasks");

    /**
     * One result of a JMH file: the columns of JMH's CSV by name ("Benchmark", with
     * ":secondary" for a secondary result, "Mode", "Samples", "Score", "Score Error (99.9%)",
     * "Unit", "Param: name") and every measurement iteration's figure, fork after fork (null when
     * the file has none: a CSV).
     */
    record JmhResult(Map<String, String> col, double[] raw) {}

    /**
     * A round's mark in a raw file's name ({@code jmh-p1.r2.json}, {@code go.r2.csv}): with
     * {@code BENCH_ROUNDS} above 1, {@code bench/report.sh} runs the per-P passes and the Go twin that
     * many times in turn, and each round writes files of its own.
     */
    static final Pattern ROUND = Pattern.compile("\\.r[0-9]+(?=\\.(json|csv)$)");

    /** A raw file's name without its round's mark: the pass (or the Go twin) it belongs to. */
    static String passName(String fileName) {
        return ROUND.matcher(fileName).replaceAll("");
    }

    /** Sorts a pass's rounds by number (r10 after r9); files without one keep their name's order. */
    static String roundOrder(Path f) {
        String n = f.getFileName().toString();
        Matcher m = ROUND.matcher(n);
        return m.find()
                ? passName(n)
                        + String.format(" %06d", Integer.parseInt(m.group().substring(2)))
                : n;
    }

    /** Reads {@code f}, JMH's {@code -rf json} or {@code -rf csv} output, into rows. */
    static List<Row> readJmh(Path f) throws IOException {
        return readJmh(List.of(f));
    }

    /**
     * Reads the rounds of one JMH pass: the same benchmark and parameters in several files are one
     * figure, whose iterations are those of every round (fork after fork, round after round).
     */
    static List<Row> readJmh(List<Path> rounds) throws IOException {
        Map<String, JmhResult> merged = new LinkedHashMap<>();
        for (Path f : rounds) {
            List<JmhResult> rs =
                    f.toString().endsWith(".json") ? jmhJson(Files.readString(f)) : jmhCsv(Files.readAllLines(f));
            for (JmhResult r : rs) {
                merged.merge(resultKey(r), r, Report::mergeRounds);
            }
        }
        return jmhRows(new ArrayList<>(merged.values()));
    }

    /** A result's benchmark, mode and parameters: what names the same figure in every round. */
    static String resultKey(JmhResult r) {
        StringBuilder k = new StringBuilder();
        r.col().forEach((c, v) -> {
            if (c.equals("Benchmark") || c.equals("Mode") || c.startsWith("Param: ")) {
                k.append(c).append('=').append(v).append('\u0000');
            }
        });
        return k.toString();
    }

    /**
     * One figure from two rounds: every iteration of both; where a round has no per-iteration
     * figures (an old CSV), the first round's mean stands alone.
     */
    static JmhResult mergeRounds(JmhResult a, JmhResult b) {
        if (a.raw() == null || b.raw() == null) {
            return a;
        }
        double[] xs = new double[a.raw().length + b.raw().length];
        System.arraycopy(a.raw(), 0, xs, 0, a.raw().length);
        System.arraycopy(b.raw(), 0, xs, a.raw().length, b.raw().length);
        Map<String, String> col = new LinkedHashMap<>(a.col());
        col.put("Samples", String.valueOf(xs.length));
        col.put("Score", String.valueOf(Arrays.stream(xs).average().orElse(Double.NaN)));
        col.put("Score Error (99.9%)", "NaN"); // the median's interval replaces it (Row.withSamples)
        return new JmhResult(col, xs);
    }

    static List<JmhResult> jmhCsv(List<String> lines) {
        List<JmhResult> out = new ArrayList<>();
        if (lines.isEmpty()) {
            return out;
        }
        List<String> head = csv(lines.get(0));
        for (String line : lines.subList(1, lines.size())) {
            List<String> c = csv(line);
            Map<String, String> col = new LinkedHashMap<>();
            for (int i = 0; i < head.size() && i < c.size(); i++) {
                col.put(head.get(i), c.get(i));
            }
            out.add(new JmhResult(col, null));
        }
        return out;
    }

    /** JMH's JSON: one object per benchmark x parameters, with its secondary results inside. */
    static List<JmhResult> jmhJson(String text) throws IOException {
        List<JmhResult> out = new ArrayList<>();
        JsonNode all = new ObjectMapper().readTree(text);
        if (all == null || !all.isArray()) {
            return out;
        }
        for (JsonNode b : all) {
            Map<String, String> common = new LinkedHashMap<>();
            common.put("Mode", b.path("mode").asText());
            b.path("params")
                    .fields()
                    .forEachRemaining(
                            e -> common.put("Param: " + e.getKey(), e.getValue().asText()));
            out.add(jsonResult(b.path("benchmark").asText(), common, b.path("primaryMetric")));
            b.path("secondaryMetrics")
                    .fields()
                    .forEachRemaining(e ->
                            out.add(jsonResult(b.path("benchmark").asText() + ":" + e.getKey(), common, e.getValue())));
        }
        return out;
    }

    private static JmhResult jsonResult(String benchmark, Map<String, String> common, JsonNode metric) {
        Map<String, String> col = new LinkedHashMap<>();
        col.put("Benchmark", benchmark);
        col.putAll(common);
        List<Double> raw = new ArrayList<>();
        for (JsonNode fork : metric.path("rawData")) {
            for (JsonNode x : fork) {
                raw.add(x.asDouble());
            }
        }
        col.put("Samples", String.valueOf(raw.size()));
        col.put("Score", metric.path("score").asText());
        col.put("Score Error (99.9%)", metric.path("scoreError").asText());
        col.put("Unit", metric.path("scoreUnit").asText());
        return new JmhResult(col, raw.stream().mapToDouble(Double::doubleValue).toArray());
    }

    static List<Row> jmhRows(List<JmhResult> results) {
        List<Row> rows = new ArrayList<>();
        // Count @Benchmark methods per class, to name workloads by class alone when it has one.
        Map<String, Set<String>> methods = new TreeMap<>();
        Set<String> withSecondary = new LinkedHashSet<>();
        for (JmhResult r : results) {
            String b = r.col().get("Benchmark");
            if (b.contains(":") && SECONDARY.contains(b.substring(b.indexOf(':') + 1))) {
                withSecondary.add(b.substring(0, b.indexOf(':')));
            }
            String base = b.contains(":") ? b.substring(0, b.indexOf(':')) : b;
            int dot = base.lastIndexOf('.');
            methods.computeIfAbsent(base.substring(0, dot), k -> new LinkedHashSet<>())
                    .add(base.substring(dot + 1));
        }
        for (JmhResult r : results) {
            Map<String, String> col = r.col();
            String b = col.get("Benchmark");
            String secondary = null;
            if (b.contains(":")) {
                secondary = b.substring(b.indexOf(':') + 1);
                b = b.substring(0, b.indexOf(':'));
                if (!SECONDARY.contains(secondary) && !EXTRA.containsKey(secondary)) {
                    continue;
                }
            }
            int dot = b.lastIndexOf('.');
            String cls = b.substring(0, dot);
            String method = b.substring(dot + 1);
            String simple = cls.substring(cls.lastIndexOf('.') + 1).toLowerCase(Locale.ROOT);
            String impl = col.getOrDefault("Param: impl", "");
            if (impl.isEmpty()) {
                // No impl parameter: one @Benchmark method per implementation (gort()/vthread(),
                // sleep1000()/sleep1000VThread()).
                String lm = method.toLowerCase(Locale.ROOT);
                impl = lm.contains("vthread") ? "vthread" : lm.contains("platform") ? "platform" : "gort";
                method = method.replaceAll(IMPL_SUFFIX, "");
            }
            long variants = methods.get(cls).stream()
                    .map(m -> m.replaceAll(IMPL_SUFFIX, ""))
                    .distinct()
                    .count();
            String workload = variants > 1 ? simple + "." + method : simple;
            // Parameters other than the implementation, P and strategy make separate workloads.
            for (Map.Entry<String, String> e : col.entrySet()) {
                String k = e.getKey();
                if (k.startsWith("Param: ")
                        && !PARAMS.contains(k.substring(7))
                        && !e.getValue().isEmpty()) {
                    workload += " " + k.substring(7) + "=" + e.getValue();
                }
            }
            if (secondary == null && withSecondary.contains(b)) {
                workload += "-time"; // the secondary result is the figure; the time is a by-product
            }
            if (secondary != null && EXTRA.containsKey(secondary)) {
                workload += " " + EXTRA.get(secondary);
            }
            String pv = col.getOrDefault("Param: gomaxprocs", "");
            if (pv.isEmpty()) {
                pv = col.getOrDefault("Param: procs", "");
            }
            int procs = pv.isEmpty() ? 0 : (int) num(pv);
            String preempt = col.get("Param: preempt");
            if (preempt == null || preempt.isEmpty()) {
                preempt = col.get("Param: strategy");
            }
            String unit = secondary != null ? unitOf(secondary) : col.get("Unit");
            double score = num(col.get("Score"));
            int samples = (int) num(col.get("Samples"));
            if (secondary != null && "ss".equals(col.get("Mode")) && samples > 0) {
                // JMH 1.37 totals an EVENTS counter over single-shot iterations in its table and CSV
                // (the log's "Secondary result" block shows the mean): report the mean.
                score /= samples;
            }
            // Every iteration's figure, when the file has them: the median and its interval.
            rows.add(new Row(
                            workload,
                            label(impl, procs, preempt),
                            family(impl),
                            procs,
                            score,
                            num(col.get("Score Error (99.9%)")),
                            unit,
                            samples,
                            MEAN)
                    .withSamples(r.raw()));
        }
        return rows;
    }

    static String unitOf(String secondary) {
        return secondary.equals("bytesPerTask")
                ? "bytes/task"
                : secondary.equals("gc.alloc.rate.norm") ? "B/op" : secondary;
    }

    static String family(String impl) {
        if (impl.startsWith("gort")) {
            return "gort";
        }
        if (impl.startsWith("vthread")) {
            return "vthread";
        }
        if (impl.startsWith("go")) {
            return "go";
        }
        return impl.isEmpty() ? "other" : impl;
    }

    static String label(String impl, int procs, String preempt) {
        String f = family(impl);
        String p = procs > 0 ? String.valueOf(procs) : "?";
        String s = switch (f) {
            case "gort", "go", "threads" -> procs > 0 ? impl + " P=" + p : impl;
            case "vthread" -> procs > 0 ? impl + " C=" + p : impl;
            case "serial" -> "serial (P=" + p + " fork)";
            default -> impl.isEmpty() ? "-" : impl;
        };
        if (preempt != null && !preempt.isEmpty() && !preempt.equals("N/A") && f.equals("gort")) {
            s = impl + " preempt=" + preempt; // strategy workloads run on one P (or need none)
        }
        return s;
    }

    static List<Row> readGo(Path f) throws IOException {
        return readGo(List.of(f));
    }

    /**
     * Reads the Go twin's CSVs, one per round: the same workload, twin and GOMAXPROCS in several
     * rounds are one figure, whose repetitions are those of every round.
     */
    static List<Row> readGo(List<Path> rounds) throws IOException {
        Map<String, List<String>> merged = new LinkedHashMap<>();
        for (Path f : rounds) {
            List<String> lines = Files.readAllLines(f);
            for (int i = 0; i < lines.size(); i++) {
                String line = lines.get(i);
                if (line.isBlank() || line.startsWith("workload,")) {
                    continue;
                }
                List<String> c = new ArrayList<>(csv(line));
                if (c.size() < 7 || !c.get(2).matches("[0-9]+") || !c.get(6).matches("[0-9]+")) {
                    // A damaged line (a twin killed mid-write): the others still make the report.
                    System.err.println("Report: " + f.getFileName() + " line " + (i + 1)
                            + " is not a Go twin row (workload,impl,gomaxprocs,score,error,unit,samples[,raw]),"
                            + " left out: " + line);
                    continue;
                }
                merged.merge(c.get(0) + "\u0000" + c.get(1) + "\u0000" + c.get(2), c, Report::mergeGoRounds);
            }
        }
        List<Row> rows = new ArrayList<>();
        for (List<String> c : merged.values()) {
            String impl = c.get(1);
            int procs = Integer.parseInt(c.get(2));
            String workload = c.get(0).equals("fanout-serial") ? "fanout" : c.get(0);
            String label = c.get(0).equals("fanout-serial") ? impl + " serial (P=" + procs + ")" : impl + " P=" + procs;
            String family = c.get(0).equals("fanout-serial") ? "serial" : "go";
            // The eighth column, when there is one: each repetition's figure, ';'-separated.
            double[] raw = c.size() > 7 && !c.get(7).isBlank()
                    ? Stream.of(c.get(7).split(";")).mapToDouble(Report::num).toArray()
                    : null;
            rows.add(new Row(
                            workload,
                            label,
                            family,
                            procs,
                            num(c.get(3)),
                            num(c.get(4)),
                            c.get(5),
                            Integer.parseInt(c.get(6)),
                            MEAN)
                    .withSamples(raw));
        }
        return rows;
    }

    /**
     * One Go figure from two rounds' CSV lines: every repetition of both (the eighth column); a
     * line without repetitions (an old CSV) leaves the first round's mean alone.
     */
    static List<String> mergeGoRounds(List<String> a, List<String> b) {
        if (a.size() <= 7 || b.size() <= 7 || a.get(7).isBlank() || b.get(7).isBlank()) {
            return a;
        }
        List<String> c = new ArrayList<>(a);
        c.set(6, String.valueOf(Integer.parseInt(a.get(6)) + Integer.parseInt(b.get(6))));
        c.set(7, a.get(7) + ";" + b.get(7));
        return c;
    }

    /**
     * Fan-out efficiency = ideal / elapsed = serial / (P x elapsed), with the serial time of the same
     * fork (JMH) or process (Go) and P the parallelism: gomaxprocs, carriers, or every core (platform).
     */
    static List<Row> efficiency(List<Row> rows) {
        List<Row> out = new ArrayList<>();
        int cores = Runtime.getRuntime().availableProcessors();
        for (Row r : rows) {
            if (!r.workload().equals("fanout") || r.family().equals("serial")) {
                continue;
            }
            // A Go twin's serial time comes from the same twin (its label's first word: go, go1.23).
            String goImpl = r.family().equals("go") ? implOf(r.label()) + " " : null;
            int p = r.family().equals("platform") ? cores : r.procs();
            Row serial = rows.stream()
                    .filter(s -> s.workload().equals("fanout")
                            && s.family().equals("serial")
                            && s.procs() == (r.family().equals("platform") ? r.procs() : p)
                            && (goImpl != null
                                    ? s.label().startsWith(goImpl)
                                    : !s.label().startsWith("go")))
                    .findFirst()
                    .orElse(null);
            if (serial == null || p <= 0) {
                continue;
            }
            double e = serial.score() / (p * r.score());
            double rel = Math.hypot(r.err() / r.score(), nz(serial.err()) / serial.score()); // NaN if unknown
            String label = r.family().equals("platform") ? "platform (" + cores + " cores)" : r.label();
            out.add(new Row(
                    "fanout-efficiency", label, r.family(), p, e, e * rel, "ideal/elapsed", r.samples(), r.stat()));
        }
        return out;
    }

    static double nz(double d) {
        return Double.isNaN(d) ? 0 : d;
    }

    /** Keeps the first figure of each workload x label (e.g. platform rows repeated in several passes). */
    static List<Row> dedupe(List<Row> rows) {
        Map<String, Row> m = new LinkedHashMap<>();
        for (Row r : rows) {
            m.putIfAbsent(r.workload() + "\u0000" + r.label(), r);
        }
        return new ArrayList<>(m.values());
    }

    // ---------------------------------------------------------------------------------------------
    // Markdown.

    static final List<String> ORDER = List.of(
            "spawn",
            "createchain",
            "pingpong",
            "prodcons",
            "manypairs",
            "sieve",
            "fanout",
            "fanout-efficiency",
            "tightloop",
            "parked",
            "gosched goroutines=2",
            "gosched goroutines=16",
            "switchfloor frames=1",
            "switchfloor frames=3");

    static List<String> workloads(List<Row> rows) {
        List<String> ws =
                new ArrayList<>(rows.stream().map(Row::workload).distinct().toList());
        ws.sort(Comparator.comparingInt((String w) -> {
                    String base = w.endsWith(" alloc") ? w.substring(0, w.length() - 6) : w;
                    return ORDER.contains(base) ? ORDER.indexOf(base) : ORDER.size();
                })
                .thenComparing(w -> w));
        return ws;
    }

    static int familyRank(String f) {
        return switch (f) {
            case "gort" -> 0;
            case "vthread" -> 1;
            case "platform" -> 2;
            case "threads" -> 3;
            case "go" -> 4;
            case "serial" -> 5;
            default -> 6;
        };
    }

    /** Column order of the preemption strategies ({@code backedge:0}: a poll at every back-edge). */
    static final List<String> STRATEGIES = List.of("none", "default", "entry", "backedge", "backedge:0", "budget");

    static int strategyRank(String label) {
        int i = label.indexOf("preempt=");
        return i < 0 ? 0 : STRATEGIES.indexOf(label.substring(i + 8));
    }

    /** A label's first word: the implementation (gort, vthread, go, go1.23, ...). */
    static String implOf(String label) {
        int sp = label.indexOf(' ');
        return sp < 0 ? label : label.substring(0, sp);
    }

    static List<Row> sorted(List<Row> rs) {
        List<Row> l = new ArrayList<>(rs);
        l.sort(Comparator.comparingInt((Row r) -> familyRank(r.family()))
                .thenComparing(r -> r.family().equals("go") ? implOf(r.label()) : "")
                .thenComparingInt(Row::procs)
                .thenComparingInt(r -> strategyRank(r.label()))
                .thenComparing(Row::label));
        return l;
    }

    static String fmt(double v) {
        if (Double.isNaN(v)) {
            return "?";
        }
        double a = Math.abs(v);
        if (a >= 1000) {
            return String.format(Locale.ROOT, "%,.0f", v);
        }
        if (a >= 100) {
            return String.format(Locale.ROOT, "%.0f", v);
        }
        if (a >= 10) {
            return String.format(Locale.ROOT, "%.1f", v);
        }
        if (a >= 1) {
            return String.format(Locale.ROOT, "%.2f", v);
        }
        return String.format(Locale.ROOT, "%.3f", v);
    }

    /**
     * A figure is stable when its interval reaches at most this share of the figure from it (its
     * {@code err}: see {@link Row}).
     */
    static final double STABLE = 0.10;

    /**
     * Whether {@code r} has an interval the stability rule applies to: every figure but the
     * allocation rows ({@code B/op}, where a few hundredths of a byte per operation vary by half
     * and mean nothing).
     */
    static boolean judged(Row r) {
        return !Double.isNaN(r.err()) && !r.unit().equals("B/op");
    }

    /** Whether {@code r}'s interval reaches further than ±{@link #STABLE} of it (false when not {@link #judged}). */
    static boolean unstable(Row r) {
        return judged(r) && r.score() != 0 && Math.abs(r.err() / r.score()) > STABLE;
    }

    /** The mark after a figure whose interval is wider than ±10 % (see {@link #unstable}). */
    static final String UNSTABLE_MARK = " †";

    static String cell(Row r) {
        if (r == null) {
            return "–";
        }
        if (Double.isNaN(r.err())) {
            return fmt(r.score());
        }
        return fmt(r.score()) + " ± " + fmt(r.err()) + (unstable(r) ? UNSTABLE_MARK : "");
    }

    /** The columns of the overview table: one per family x P present in the standard workloads. */
    static List<String> mainColumns(List<Row> rows) {
        Set<String> cols = new LinkedHashSet<>();
        for (Row r : sorted(rows)) {
            if (!r.workload().equals("tightloop")
                    && !r.workload().startsWith("parked")
                    && !r.family().equals("serial")
                    && (r.label().matches("(gort|go|go1\\.\\d+|vthread|threads) [PC]=\\d+")
                            || r.label().startsWith("platform"))) {
                cols.add(r.label().startsWith("platform") ? "platform" : r.label());
            }
        }
        return new ArrayList<>(cols);
    }

    static Row find(List<Row> rows, String w, String label) {
        for (Row r : rows) {
            if (r.workload().equals(w)
                    && (r.label().equals(label)
                            || (label.equals("platform") && r.label().startsWith("platform")))) {
                return r;
            }
        }
        return null;
    }

    static Row findPrefix(List<Row> rows, String w, String prefix) {
        return rows.stream()
                .filter(r -> r.workload().equals(w) && r.label().startsWith(prefix))
                .findFirst()
                .orElse(null);
    }

    /** Summary lines benchmarks print themselves (e.g. PreemptLatency's "# backedge TOTAL ..."). */
    static List<String> printed = List.of();

    static String markdown(List<Row> rows, Map<String, String> machine, String svgName) {
        StringBuilder sb = new StringBuilder();
        sb.append("# gort benchmarks: gort vs virtual threads vs Go\n\n");
        sb.append("Produced by `")
                .append(machine.getOrDefault("command", "./gort bench"))
                .append("` on ")
                .append(machine.getOrDefault("date", "?"))
                .append(" (commit ")
                .append(machine.getOrDefault("commit", "?"))
                .append("). How to read it: bench/README.md. Plot: [")
                .append(svgName)
                .append("](")
                .append(svgName)
                .append(").\n\n");
        sb.append("## Machine\n\n| | |\n|---|---|\n");
        for (Map.Entry<String, String> e : machine.entrySet()) {
            if (!e.getKey().equals("command")
                    && !e.getKey().equals("date")
                    && !e.getKey().equals("commit")) {
                sb.append("| ")
                        .append(e.getKey())
                        .append(" | ")
                        .append(e.getValue().replace("|", "\\|"))
                        .append(" |\n");
            }
        }
        String load = machine.getOrDefault("load average before", "");
        int cores = (int) num(machine.getOrDefault("cores", "0"));
        if (!load.isEmpty() && cores > 0 && num(load.split(" ")[0]) > cores) {
            sb.append("\n**Warning: the machine was busy** (load average ")
                    .append(load)
                    .append(" before, ")
                    .append(machine.getOrDefault("load average after", "?"))
                    .append(" after, on ")
                    .append(cores)
                    .append(
                            " cores): other processes competed for the CPUs, so absolute figures are inflated and noisy, "
                                    + "and comparisons are only indicative.\n");
        }
        sb.append("\nScores: ")
                .append(statistic(rows))
                .append(" `P` = GOMAXPROCS; `C` = virtual-thread carriers "
                        + "(`jdk.virtualThreadScheduler.parallelism`); platform threads use every core; `threads P=n` (fan-out"
                        + " only) is n platform threads with a fixed share of the work each, no scheduler."
                        + " Lower is better except for efficiency.\n\n");

        List<String> cols = mainColumns(rows);
        long timed = rows.stream().filter(Report::judged).count();
        long loose = rows.stream().filter(Report::unstable).count();
        sb.append("†: the interval reaches further than ±10 % from the figure (")
                .append(loose)
                .append(" of the ")
                .append(timed)
                .append(" figures with an interval, allocation rows aside")
                .append(
                        machine.getOrDefault("command", "").contains("--long")
                                ? ""
                                : "; `./gort bench --long` narrows them")
                .append(").\n\n");
        sb.append("## Overview\n\n| workload | unit |");
        cols.forEach(c -> sb.append(' ').append(c).append(" |"));
        sb.append("\n|---|---|");
        cols.forEach(c -> sb.append("---:|"));
        sb.append('\n');
        for (String w : workloads(rows)) {
            if (w.equals("tightloop")
                    || w.equals("parked")
                    || w.endsWith("-time")
                    || cols.stream().noneMatch(c -> find(rows, w, c) != null)) {
                continue;
            }
            Row any = rows.stream()
                    .filter(r -> r.workload().equals(w))
                    .findFirst()
                    .orElseThrow();
            sb.append("| ").append(w).append(" | ").append(any.unit()).append(" |");
            for (String c : cols) {
                sb.append(' ').append(cell(find(rows, w, c))).append(" |");
            }
            sb.append('\n');
        }

        // Workloads measured per preemption strategy: one column per strategy (and VT / Go).
        List<String> pws = workloads(rows).stream()
                .filter(w -> rows.stream()
                        .anyMatch(r -> r.workload().equals(w) && r.label().contains("preempt=")))
                .toList();
        if (!pws.isEmpty()) {
            List<String> pcols = new ArrayList<>();
            for (Row r : sorted(rows)) {
                if (pws.contains(r.workload()) && !pcols.contains(r.label())) {
                    pcols.add(r.label());
                }
            }
            pcols.sort(Comparator.comparingInt((String c) -> c.startsWith("gort") ? 0 : c.startsWith("vthread") ? 1 : 2)
                    .thenComparingInt(c ->
                            c.contains("preempt=") ? STRATEGIES.indexOf(c.substring(c.indexOf("preempt=") + 8)) : 0)
                    .thenComparing(c -> c));
            sb.append(
                    "\n## Preemption strategies\n\ntightloop: latency of a short task behind a 40 ms call-free loop on one P "
                            + "(one carrier); Go with and without async preemption. preemptoverhead: the preempt work's kernels per "
                            + "strategy (cost of the polls when nobody asks to yield).\n\n| workload | unit |");
            pcols.forEach(c -> sb.append(' ').append(c).append(" |"));
            sb.append("\n|---|---|");
            pcols.forEach(c -> sb.append("---:|"));
            sb.append('\n');
            for (String w : pws) {
                Row any = rows.stream()
                        .filter(r -> r.workload().equals(w))
                        .findFirst()
                        .orElseThrow();
                sb.append("| ").append(w).append(" | ").append(any.unit()).append(" |");
                for (String c : pcols) {
                    sb.append(' ').append(cell(find(rows, w, c))).append(" |");
                }
                sb.append('\n');
            }
        }

        sb.append("\n## Targets (issue 7)\n\n");
        sb.append(
                "\"Go (issue)\" and \"VT (issue)\" are the figures quoted in the issue (another run, same kind of machine); "
                        + "the other columns are this run. The rule is checked at P=1 and at P=2 (or at the P the target names).\n\n");
        sb.append(
                "| target | Go (issue) | VT (issue) | rule | Go here | VT here (C=2, or the target's P) | gort here | met? |\n|---|---:|---:|---|---|---:|---|---|\n");
        for (Target t : TARGETS) {
            sb.append("| ")
                    .append(t.what())
                    .append(" | ")
                    .append(fmt(t.goIssue()))
                    .append(" | ")
                    .append(fmt(t.vtIssue()))
                    .append(" | ")
                    .append(t.rule())
                    .append(" | ");
            List<Integer> ps =
                    t.procs() != 0 ? List.of(t.procs()) : t.workload().equals("parked") ? List.of(1) : List.of(1, 2);
            // parked: one figure per implementation (it does not depend on P)
            List<String> goCells = new ArrayList<>();
            List<String> gortCells = new ArrayList<>();
            List<String> verdicts = new ArrayList<>();
            for (int p : ps) {
                Row go = find(rows, t.workload(), "go P=" + p);
                Row gort = t.workload().equals("parked")
                        ? findPrefix(rows, "parked", "gort")
                        : find(rows, t.workload(), "gort P=" + p);
                goCells.add("P=" + p + ": " + cell(go));
                if (t.workload().equals("parked")) {
                    // one figure per way of parking; the target applies to each
                    for (Row r : rows) {
                        if (r.workload().equals("parked") && r.family().equals("gort")) {
                            String impl = r.label().substring(0, r.label().indexOf(' '));
                            gortCells.add(impl + ": " + cell(r));
                            verdicts.add(impl + ": " + verdict(t, r, go));
                        }
                    }
                    continue;
                }
                gortCells.add("P=" + p + ": " + cell(gort));
                verdicts.add("P=" + p + ": " + verdict(t, gort, go));
            }
            Row vt = t.workload().equals("parked")
                    ? findPrefix(rows, "parked", "vthread-park")
                    : find(rows, t.workload(), "vthread C=" + (t.procs() != 0 ? t.procs() : 2));
            sb.append(String.join("<br>", goCells))
                    .append(" | ")
                    .append(cell(vt))
                    .append(" | ")
                    .append(String.join("<br>", gortCells))
                    .append(" | ")
                    .append(String.join("<br>", verdicts))
                    .append(" |\n");
        }

        switchTargets(sb, rows);

        if (!printed.isEmpty()) {
            sb.append("\n## Figures printed by benchmarks (from run.log)\n\n```\n");
            printed.forEach(l -> sb.append(l).append('\n'));
            sb.append("```\n");
        }

        sb.append("\n## Every figure\n");
        // In a table of medians, a mean (read from an old CSV) is marked * after its n.
        boolean anyMedian = rows.stream().anyMatch(x -> x.stat().equals(MEDIAN));
        for (String w : workloads(rows)) {
            List<Row> rs =
                    sorted(rows.stream().filter(r -> r.workload().equals(w)).toList());
            sb.append("\n### ")
                    .append(w)
                    .append(" (")
                    .append(rs.get(0).unit())
                    .append(")\n\n| implementation | score | n |\n|---|---:|---:|\n");
            for (Row r : rs) {
                sb.append("| ")
                        .append(r.label())
                        .append(" | ")
                        .append(cell(r))
                        .append(" | ")
                        .append(r.samples())
                        .append(anyMedian && r.stat().equals(MEAN) ? "*" : "")
                        .append(" |\n");
            }
        }
        return sb.toString();
    }

    /** What the table's figures are, in words: the statistics its rows carry ({@link Row#stat}). */
    static String statistic(List<Row> rows) {
        boolean median = rows.stream().anyMatch(r -> r.stat().equals(MEDIAN));
        boolean mean = rows.stream().anyMatch(r -> r.stat().equals(MEAN));
        String m = "median ± the larger distance from it to an end of its 95 % confidence interval, over every "
                + "measurement iteration of every fork (JMH) or every repetition (the Go twin): a distribution-free "
                + "interval from the order statistics, as Go's benchstat computes (with fewer than 6 iterations, the "
                + "range of all of them, which covers less: 93.75 % with 5, 75 % with 3).";
        String a = "mean ± half-width of the 99.9 % confidence interval (JMH's \"Score Error\"; the Go twin computes "
                + "the same statistic over its repetitions).";
        if (median && mean) {
            return m + " Figures read from files without per-iteration figures (n marked *): " + a;
        }
        return mean ? a : m;
    }

    /**
     * Issue 19's switch-bound targets against this run's figures and against what the switches
     * alone cost on this JDK: {@code switches} x the run's {@code SwitchFloor} median (a raw
     * continuation run and yield, nothing of gort's), shared by the Ps where the switches may run in
     * parallel. A limit below that bound cannot be met, by the run's medians, by a scheduler that
     * makes Go's switches on this JDK's continuations; the table says so rather than a ratio. No
     * table in a run without any of these workloads.
     */
    static void switchTargets(StringBuilder sb, List<Row> rows) {
        Row chan = findPrefix(rows, "parked", "gort-chan");
        boolean any =
                chan != null || SWITCH_TARGETS.stream().anyMatch(t -> findPrefix(rows, t.workload(), "gort ") != null);
        if (!any) {
            return;
        }
        Row floor = find(rows, FLOOR_WORKLOAD, "gort P=1");
        if (floor == null) {
            floor = findPrefix(rows, FLOOR_WORKLOAD, "gort "); // one carrier whatever the pass's P
        }
        sb.append("\n## Targets (issue 19): switch-bound work against Go and the JDK's switch floor\n\n");
        sb.append("Every figure is this run's. \"floor bound\" is what the switches alone cost on this JDK, by this "
                + "run's medians: the continuation switches the op needs by Go's rules (`SwitchCounts` on gort: 2 per "
                + "ping-pong round trip, 1 per Gosched, 1.02 per message of the 10,000 pairs, 2,046,628 per sieve) times "
                + "`SwitchFloor`'s figure (one continuation run and yield, one frame, the least a switch freezes: "
                + (floor == null ? "not in this run" : cell(floor) + " " + floor.unit())
                + "), divided by P where the switches can run on every P at once. Where the rule's limit is below it, "
                + "the target is out of reach on this JDK (by the medians: see the intervals); above it, what "
                + "separates gort from the limit is the rest of its time per op (its own work, the extra frames its "
                + "switches freeze, wake-ups).\n\n");
        sb.append("| target | P | rule | Go here | gort here | gort / Go | limit | floor bound | met? |\n"
                + "|---|---:|---|---|---|---:|---:|---:|---|\n");
        for (SwitchTarget t : SWITCH_TARGETS) {
            Row go = find(rows, t.workload(), "go P=" + t.procs());
            Row gort = find(rows, t.workload(), "gort P=" + t.procs());
            Row own = find(rows, t.workload(), "gort P=1");
            if (go != null && gort != null && !go.unit().equals(gort.unit())) {
                go = null; // another unit (JMH's -tu): not comparable
            }
            double limit = go == null ? Double.NaN : t.goFactor() * go.score();
            if (t.ownFactor() != 0 && own != null) {
                double ownLimit = t.ownFactor() * own.score();
                limit = Double.isNaN(limit) ? ownLimit : Math.min(limit, ownLimit);
            }
            double bound = floorBound(t, floor, gort == null ? null : gort.unit());
            sb.append(tableRow(
                    t.what(),
                    String.valueOf(t.procs()),
                    t.rule(),
                    cell(go),
                    cell(gort),
                    ratio(gort, go),
                    Double.isNaN(limit) ? "–" : fmt(limit),
                    Double.isNaN(bound) ? "–" : fmt(bound),
                    switchVerdict(gort, limit, bound)));
        }
        sb.append("| parked in a channel receive, bytes/goroutine | – | <= 450 | – | ")
                .append(cell(chan))
                .append(" | – | 450 | – | ")
                .append(chan == null ? "no figure" : chan.score() <= 450 ? "yes" : "no")
                .append(" |\n");
        newerGoTwins(sb, rows);
    }

    /**
     * The issue-19 workloads against each newer Go twin of the run (rows labelled {@code go1.NN}:
     * bench/go/run.sh's second twin), for reading only: the targets name the baseline twin, Go 1.19
     * on Debian bookworm, whose {@code goschedImpl} wakes no idle P; since Go 1.21 it does, as gort's
     * port of today's rules does, so a Gosched at P=2 is compared with the same rule here. Nothing
     * when the run has no newer twin.
     */
    static void newerGoTwins(StringBuilder sb, List<Row> rows) {
        Set<String> twins = new TreeSet<>();
        for (Row r : rows) {
            String impl = implOf(r.label());
            if (family(impl).equals("go") && !impl.equals("go")) {
                twins.add(impl);
            }
        }
        for (String twin : twins) {
            StringBuilder t = new StringBuilder();
            for (SwitchTarget st : SWITCH_TARGETS) {
                Row go = find(rows, st.workload(), twin + " P=" + st.procs());
                Row gort = find(rows, st.workload(), "gort P=" + st.procs());
                if (go == null || gort == null || !go.unit().equals(gort.unit())) {
                    continue;
                }
                t.append(tableRow(st.what(), String.valueOf(st.procs()), cell(go), cell(gort), ratio(gort, go)));
            }
            if (t.isEmpty()) {
                continue;
            }
            sb.append("\nThe same workloads against the newer Go twin, ")
                    .append(twin)
                    .append(
                            " (read only: the targets above name the baseline twin; since Go 1.21 `goschedImpl` wakes an "
                                    + "idle P, as gort does, which Go 1.19 does not):\n\n")
                    .append("| target | P | ")
                    .append(twin)
                    .append(" here | gort here | gort / ")
                    .append(twin)
                    .append(" |\n|---|---:|---|---|---:|\n")
                    .append(t);
        }
    }

    /** One markdown table row of these cells. */
    static String tableRow(String... cells) {
        return "| " + String.join(" | ", cells) + " |\n";
    }

    /** gort's figure over Go's, two decimals; a dash without both. */
    static String ratio(Row gort, Row go) {
        return go == null || gort == null ? "–" : String.format(Locale.ROOT, "%.2f", gort.score() / go.score());
    }

    /** Nanoseconds per unit of a time-per-op unit, NaN for any other. */
    static double nanosPer(String unit) {
        return switch (unit) {
            case "ns/op" -> 1;
            case "us/op" -> 1e3;
            case "ms/op" -> 1e6;
            case "s/op" -> 1e9;
            default -> Double.NaN;
        };
    }

    /**
     * {@code switches} x the floor, in {@code unit} (the workload's), over P where they run in
     * parallel; NaN without a floor, a switch count or a time unit.
     */
    static double floorBound(SwitchTarget t, Row floor, String unit) {
        if (floor == null || unit == null || Double.isNaN(t.switches())) {
            return Double.NaN;
        }
        double floorNanos = floor.score() * nanosPer(floor.unit());
        return t.switches() * floorNanos / nanosPer(unit) / (t.parallel() ? t.procs() : 1);
    }

    static String switchVerdict(Row gort, double limit, double bound) {
        if (gort == null || Double.isNaN(limit)) {
            return "no figure";
        }
        if (gort.score() <= limit) {
            return "yes";
        }
        if (!Double.isNaN(bound) && limit < bound) {
            return "out of reach: the limit is below the floor bound";
        }
        return String.format(Locale.ROOT, "no (%.2f x the limit)", gort.score() / limit);
    }

    static String verdict(Target t, Row gort, Row go) {
        if (gort == null) {
            return "no figure";
        }
        double g = gort.score();
        return switch (t.rule()) {
            case ">= 0.95" -> g >= 0.95 ? "yes" : String.format(Locale.ROOT, "no (%.3f short)", 0.95 - g);
            case "<= 500" -> g <= 500 ? "yes" : String.format(Locale.ROOT, "no (%.1f x)", g / 500);
            default -> {
                if (go == null) {
                    yield "no Go figure";
                }
                double limit = t.rule().contains("1.3") ? 1.3 * go.score() : go.score();
                yield g <= limit
                        ? String.format(Locale.ROOT, "yes (%.2f x Go)", g / go.score())
                        : String.format(Locale.ROOT, "no (%.2f x Go)", g / go.score());
            }
        };
    }

    // ---------------------------------------------------------------------------------------------
    // SVG: one panel per workload, horizontal bars with CI whiskers.

    static String color(String family) {
        return switch (family) {
            case "gort" -> "#2b6cb0";
            case "vthread" -> "#dd6b20";
            case "platform" -> "#718096";
            case "threads" -> "#b7791f";
            case "go" -> "#2f855a";
            case "serial" -> "#a0aec0";
            default -> "#805ad5";
        };
    }

    static String esc(String s) {
        return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;");
    }

    static String svg(List<Row> rows, Map<String, String> machine) {
        List<String> ws =
                workloads(rows).stream().filter(w -> !w.endsWith("-time")).toList();
        int colsN = 2;
        int panelW = 560;
        int barH = 16;
        int labelW = 200;
        int plotW = panelW - labelW - 90;
        List<Integer> heights = new ArrayList<>();
        for (String w : ws) {
            heights.add(36
                    + barH
                            * (int) rows.stream()
                                    .filter(r -> r.workload().equals(w))
                                    .count()
                    + 12);
        }
        int rowsN = (ws.size() + colsN - 1) / colsN;
        int[] rowH = new int[rowsN];
        for (int i = 0; i < ws.size(); i++) {
            rowH[i / colsN] = Math.max(rowH[i / colsN], heights.get(i));
        }
        int top = 66;
        int total = top + java.util.Arrays.stream(rowH).sum() + 20;
        int width = colsN * panelW + 20;
        StringBuilder sb = new StringBuilder();
        sb.append("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"")
                .append(width)
                .append("\" height=\"")
                .append(total)
                .append(
                        "\" font-family=\"sans-serif\" font-size=\"11\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n");
        sb.append(
                "<text x=\"10\" y=\"22\" font-size=\"16\" font-weight=\"bold\">gort vs virtual threads vs Go</text>\n");
        sb.append("<text x=\"10\" y=\"38\" fill=\"#444\">")
                .append(esc(machine.getOrDefault("CPU", "?") + ", "
                        + machine.getOrDefault("cores", "?") + " cores; " + machine.getOrDefault("JDK", "?") + "; "
                        + machine.getOrDefault("Go", "no Go") + "; " + machine.getOrDefault("date", "")))
                .append("</text>\n<text x=\"10\" y=\"52\" fill=\"#444\">")
                .append(
                        rows.stream().allMatch(r -> r.stat().equals(MEAN))
                                ? "bars: mean; whiskers: 99.9 % CI"
                                : "bars: median; whiskers: median ± the farther end of its 95 % CI")
                .append(" (clipped at the panel edge); lower is better except efficiency (dashed line: 1.0);"
                        + " load average before: ")
                .append(esc(machine.getOrDefault("load average before", "?")))
                .append("</text>\n");
        String[] fams = {"gort", "vthread", "platform", "threads", "go", "serial"};
        for (int i = 0; i < fams.length; i++) {
            int x = width - fams.length * 90 + i * 90 - 10;
            sb.append("<rect x=\"")
                    .append(x)
                    .append("\" y=\"12\" width=\"10\" height=\"10\" fill=\"")
                    .append(color(fams[i]))
                    .append("\"/><text x=\"")
                    .append(x + 14)
                    .append("\" y=\"21\">")
                    .append(fams[i])
                    .append("</text>\n");
        }
        int y0 = top;
        for (int i = 0; i < ws.size(); i++) {
            if (i > 0 && i % colsN == 0) {
                y0 += rowH[i / colsN - 1];
            }
            String w = ws.get(i);
            int x0 = 10 + (i % colsN) * panelW;
            List<Row> rs =
                    sorted(rows.stream().filter(r -> r.workload().equals(w)).toList());
            double max = 1.25
                    * rs.stream()
                            .mapToDouble(Row::score)
                            .filter(d -> !Double.isNaN(d))
                            .max()
                            .orElse(1);
            if (w.equals("fanout-efficiency")) {
                max = Math.max(max, 1.0);
            }
            sb.append("<text x=\"")
                    .append(x0)
                    .append("\" y=\"")
                    .append(y0 + 14)
                    .append("\" font-weight=\"bold\" font-size=\"13\">")
                    .append(esc(w + " (" + rs.get(0).unit() + ")"))
                    .append("</text>\n");
            int y = y0 + 26;
            for (Row r : rs) {
                double len = Double.isNaN(r.score()) ? 0 : plotW * r.score() / max;
                sb.append("<text x=\"")
                        .append(x0 + labelW - 6)
                        .append("\" y=\"")
                        .append(y + barH - 5)
                        .append("\" text-anchor=\"end\">")
                        .append(esc(r.label()))
                        .append("</text>\n");
                sb.append("<rect x=\"")
                        .append(x0 + labelW)
                        .append("\" y=\"")
                        .append(y + 2)
                        .append("\" width=\"")
                        .append(String.format(Locale.ROOT, "%.1f", len))
                        .append("\" height=\"")
                        .append(barH - 4)
                        .append("\" fill=\"")
                        .append(color(r.family()))
                        .append("\"/>\n");
                if (!Double.isNaN(r.err()) && r.err() > 0) {
                    double lo = plotW * Math.max(0, r.score() - r.err()) / max;
                    double hi = Math.min(plotW, plotW * (r.score() + r.err()) / max);
                    int cy = y + barH / 2;
                    sb.append(String.format(
                            Locale.ROOT,
                            "<path d=\"M%.1f %d H%.1f M%.1f %d V%d M%.1f %d V%d\" stroke=\"black\" stroke-width=\"1\"/>\n",
                            x0 + labelW + lo,
                            cy,
                            x0 + labelW + hi,
                            x0 + labelW + lo,
                            cy - 4,
                            cy + 4,
                            x0 + labelW + hi,
                            cy - 4,
                            cy + 4));
                }
                double tx = x0
                        + labelW
                        + Math.min(
                                plotW, Math.max(len, Double.isNaN(r.err()) ? len : plotW * (r.score() + r.err()) / max))
                        + 4;
                sb.append(String.format(
                        Locale.ROOT,
                        "<text x=\"%.1f\" y=\"%d\" fill=\"#333\">%s</text>\n",
                        tx,
                        y + barH - 5,
                        esc(fmt(r.score()))));
                y += barH;
            }
            if (w.equals("fanout-efficiency")) {
                double x1 = x0 + labelW + plotW * 1.0 / max;
                sb.append(String.format(
                        Locale.ROOT,
                        "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#c53030\" stroke-dasharray=\"3,2\"/>\n",
                        x1,
                        y0 + 20,
                        x1,
                        y));
            }
        }
        sb.append("</svg>\n");
        return sb.toString();
    }

    private Report() {}
}
