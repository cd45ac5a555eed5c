package dev.gort.bench.lab;

import dev.gort.agent.LoopLength;
import dev.gort.agent.Strategies;
import dev.gort.agent.Strategy;
import dev.gort.bench.lab.PreemptLab.Cell;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.openjdk.jmh.infra.BenchmarkParams;
import org.openjdk.jmh.infra.IterationParams;
import org.openjdk.jmh.results.BenchmarkResult;
import org.openjdk.jmh.results.IterationResult;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.IterationType;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.RunnerException;
import org.openjdk.jmh.runner.format.OutputFormat;
import org.openjdk.jmh.runner.format.OutputFormatFactory;
import org.openjdk.jmh.runner.options.ChainedOptionsBuilder;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;
import org.openjdk.jmh.runner.options.VerboseMode;

/**
 * The lab's overhead figure measured by JMH ({@link LabBench}), run programmatically: one
 * {@link Runner} per cell (setting), over every workload, one fork per workload and setting whose
 * JVM arguments carry the setting's agent ({@link #jvmArgs}). The uninstrumented baseline is a fork
 * without the agent. Besides JMH's score (µs per unit, with its 99.9 % error), every iteration's
 * score is recorded as it arrives (warm-up ones too, through an {@link OutputFormat}), which gives
 * the <b>time to steady state</b>: the real time from the start of the fork's first warm-up
 * iteration to the end of the first iteration whose score is within {@link #STEADY_WITHIN} of
 * the final (measured) score.
 */
public final class LabJmh {
    private LabJmh() {}

    /** An iteration is "steady" when its time per unit is at most this fraction above the final score. */
    public static final double STEADY_WITHIN = 0.10;

    /**
     * JMH's settings for the lab: {@code forks} forks per workload and cell, each with warm-up and
     * measured iterations of {@code iterationMs} each. With one fork, JMH's error is the spread
     * within that fork only: fork-to-fork differences (C2's inlining decisions on recursive or
     * megamorphic code differ between JVMs) are not in it, and the {@code none} column, which
     * changes no code that runs, shows how large they are. Two or more forks put them in the error.
     */
    public record Options(int warmupIterations, int measurementIterations, int iterationMs, int forks) {
        public Options(int warmupIterations, int measurementIterations, int iterationMs) {
            this(warmupIterations, measurementIterations, iterationMs, 1);
        }

        /** The default mode: a few short iterations (the whole matrix in a few minutes on 2 cores). */
        public static Options quick() {
            return new Options(3, 3, 100);
        }

        /** {@code --long}: enough iterations to see C2's last tier, three forks per cell. */
        public static Options longer() {
            return new Options(5, 5, 500, 3);
        }

        /** "W,M,MS" or "W,M,MS,FORKS" (the {@code --jmh} argument). */
        public static Options parse(String s) {
            String[] p = s.split(",");
            if (p.length != 3 && p.length != 4) {
                throw new IllegalArgumentException(
                        "--jmh wants WARMUP,MEASURED,MS[,FORKS] (e.g. 4,3,100 or 5,5,200,3), not " + s);
            }
            Options o;
            try {
                o = new Options(
                        Integer.parseInt(p[0].trim()),
                        Integer.parseInt(p[1].trim()),
                        Integer.parseInt(p[2].trim()),
                        p.length == 4 ? Integer.parseInt(p[3].trim()) : 1);
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException(
                        "--jmh wants WARMUP,MEASURED,MS[,FORKS] (e.g. 4,3,100 or 5,5,200,3), not " + s);
            }
            if (o.warmupIterations < 0 || o.measurementIterations < 1 || o.iterationMs < 1 || o.forks < 1) {
                throw new IllegalArgumentException("--jmh: warm-up >= 0, measured >= 1, ms >= 1, forks >= 1: " + s);
            }
            return o;
        }

        /** The {@code --jmh} argument that gives these options. */
        String argument() {
            return warmupIterations + "," + measurementIterations + "," + iterationMs + (forks == 1 ? "" : "," + forks);
        }
    }

    /**
     * One cell's JMH figures: {@code us} ± {@code errorUs} per unit (JMH's score and its 99.9 %
     * half-width; NaN with one measured iteration), the iterations' scores in order (warm-up then
     * measured), and the time to steady state ({@code steadyMs}, NaN if no iteration got there;
     * {@code steadyIteration} its 1-based index among all iterations).
     */
    public record Figure(double us, double errorUs, double steadyMs, int steadyIteration, double firstIterationUs) {}

    /** The JVM arguments of a cell's fork: the agent and its settings, or none for the baseline. */
    public static List<String> jvmArgs(Cell c, Path agentJar) {
        List<String> a = new ArrayList<>(List.of(
                "-XX:+UseG1GC",
                "--add-exports",
                "java.base/jdk.internal.vm=ALL-UNNAMED",
                "--sun-misc-unsafe-memory-access=allow",
                "-Xmx2g"));
        if (c.budget() > 0) {
            a.add("-Dgort.preempt.budget=" + c.budget());
        }
        Strategy s = c.strategy();
        if (s == null) {
            return a; // uninstrumented: no agent
        }
        String name;
        if (s == Strategies.NONE || s == Strategies.ENTRY || s == Strategies.BUDGET) {
            name = s.name();
        } else if (s instanceof Strategies.Backedge b) {
            name = "backedge";
            a.add("-Dgort.preempt.stride=" + b.stride());
            a.add("-Dgort.preempt.callers=" + b.callers());
        } else if (s instanceof LoopLength l) {
            name = LoopLength.NAME;
            a.add("-Dgort.preempt.looplen=" + l.threshold());
            a.add("-Dgort.preempt.callers=" + l.callers());
        } else {
            name = s.getClass().getName(); // a researcher's strategy: its class, by name (Strategies.named)
        }
        a.add("-javaagent:" + agentJar.toAbsolutePath() + "=" + name);
        // The agent skips dev/gort/ (gort itself): force the workloads in; JMH's own code stays out.
        a.add("-Dgort.agent.include=dev/gort/bench/lab/work/");
        a.add("-Dgort.agent.exclude=org/openjdk/jmh/,joptsimple/,org/apache/commons/math3/");
        return a;
    }

    /** The agent jar: {@code -Dgort.lab.agent}, else {@code agent/target/gort-agent-*.jar} under the working directory. */
    public static Path agentJar() throws IOException {
        String p = System.getProperty("gort.lab.agent");
        if (p != null && !p.isBlank()) {
            return Path.of(p);
        }
        Path dir = Path.of("agent", "target");
        if (Files.isDirectory(dir)) {
            try (Stream<Path> s = Files.list(dir)) {
                var jar = s.filter(f -> {
                            String n = f.getFileName().toString();
                            return n.startsWith("gort-agent-") && n.endsWith(".jar") && !n.contains("-tests");
                        })
                        .findFirst();
                if (jar.isPresent()) {
                    return jar.get();
                }
            }
        }
        throw new IOException(
                "the lab's JMH mode needs the agent jar (agent/target/gort-agent-*.jar: ./gort lab builds it,"
                        + " or -Dgort.lab.agent=PATH); --no-jmh measures overhead in-process instead");
    }

    /**
     * Runs every workload under every cell. Returns "workload/cell label" to its figures; one line
     * per cell on {@code log}, JMH's own output on {@code jmhLog}.
     */
    public static Map<String, Figure> run(
            List<Cell> cells,
            List<String> workloads,
            double scale,
            Options o,
            Path agentJar,
            PrintStream log,
            PrintStream jmhLog)
            throws RunnerException {
        Map<String, Figure> out = new HashMap<>();
        for (Cell c : cells) {
            Recorder rec = new Recorder(OutputFormatFactory.createFormatInstance(jmhLog, VerboseMode.NORMAL));
            ChainedOptionsBuilder b = new OptionsBuilder()
                    .include("^" + Pattern.quote(LabBench.class.getName()) + "\\.unit$")
                    .param("workload", workloads.toArray(new String[0]))
                    .param("scale", Double.toString(scale))
                    .forks(o.forks())
                    .warmupIterations(o.warmupIterations())
                    .warmupTime(TimeValue.milliseconds(o.iterationMs()))
                    .measurementIterations(o.measurementIterations())
                    .measurementTime(TimeValue.milliseconds(o.iterationMs()))
                    .jvmArgs(jvmArgs(c, agentJar).toArray(new String[0]))
                    .shouldFailOnError(true)
                    .timeout(TimeValue.seconds(60));
            jmhLog.println("# lab cell " + c.label() + ": " + String.join(" ", jvmArgs(c, agentJar)));
            Collection<RunResult> rs = new Runner(b.build(), rec).run();
            for (RunResult r : rs) {
                String w = r.getParams().getParam("workload");
                double final_ = r.getPrimaryResult().getScore();
                Figure f = rec.figure(w, final_, r.getPrimaryResult().getScoreError());
                out.put(w + "/" + c.label(), f);
                log.printf(
                        Locale.ROOT,
                        "lab jmh: %-12s %-26s %10.1f us/unit +- %-8.1f steady after %s%n",
                        w,
                        c.label(),
                        f.us(),
                        f.errorUs(),
                        Double.isNaN(f.steadyMs())
                                ? "(never within " + Math.round(STEADY_WITHIN * 100) + " %)"
                                : String.format(
                                        Locale.ROOT, "%.0f ms (iteration %d)", f.steadyMs(), f.steadyIteration()));
            }
            for (String w : workloads) {
                if (!out.containsKey(w + "/" + c.label())) {
                    throw new IllegalStateException("lab jmh: no result for " + w + " under " + c.label());
                }
            }
        }
        return out;
    }

    /** Time to steady state from iteration scores (warm-up then measured) and their end times. */
    static Figure steady(List<Double> scores, List<Long> endNanos, long startNanos, double finalUs, double errorUs) {
        double steadyMs = Double.NaN;
        int at = 0;
        for (int i = 0; i < scores.size(); i++) {
            if (scores.get(i) <= finalUs * (1 + STEADY_WITHIN)) {
                steadyMs = (endNanos.get(i) - startNanos) / 1e6;
                at = i + 1;
                break;
            }
        }
        return new Figure(finalUs, errorUs, steadyMs, at, scores.isEmpty() ? Double.NaN : scores.get(0));
    }

    /**
     * Passes JMH's output on and records, per workload, when its first iteration started and each
     * iteration's score and arrival time (the forked VM reports each iteration as it ends).
     */
    private static final class Recorder implements OutputFormat {
        private final OutputFormat out;
        private final Map<String, Long> start = new HashMap<>();
        private final Map<String, List<Double>> scores = new HashMap<>();
        private final Map<String, List<Long>> ends = new HashMap<>();

        Recorder(OutputFormat out) {
            this.out = out;
        }

        Figure figure(String workload, double finalUs, double errorUs) {
            return steady(
                    scores.getOrDefault(workload, List.of()),
                    ends.getOrDefault(workload, List.of()),
                    start.getOrDefault(workload, 0L),
                    finalUs,
                    errorUs);
        }

        @Override
        public void iteration(BenchmarkParams bp, IterationParams ip, int i) {
            start.putIfAbsent(bp.getParam("workload"), System.nanoTime());
            out.iteration(bp, ip, i);
        }

        @Override
        public void iterationResult(BenchmarkParams bp, IterationParams ip, int i, IterationResult r) {
            long now = System.nanoTime();
            String w = bp.getParam("workload");
            if (ip.getType() == IterationType.WARMUP || ip.getType() == IterationType.MEASUREMENT) {
                scores.computeIfAbsent(w, x -> new ArrayList<>())
                        .add(r.getPrimaryResult().getScore());
                ends.computeIfAbsent(w, x -> new ArrayList<>()).add(now);
            }
            out.iterationResult(bp, ip, i, r);
        }

        @Override
        public void startBenchmark(BenchmarkParams bp) {
            out.startBenchmark(bp);
        }

        @Override
        public void endBenchmark(BenchmarkResult r) {
            out.endBenchmark(r);
        }

        @Override
        public void startRun() {
            out.startRun();
        }

        @Override
        public void endRun(Collection<RunResult> rs) {
            out.endRun(rs);
        }

        @Override
        public void print(String s) {
            out.print(s);
        }

        @Override
        public void println(String s) {
            out.println(s);
        }

        @Override
        public void flush() {
            out.flush();
        }

        @Override
        public void close() {
            out.flush(); // the stream is the lab's
        }

        @Override
        public void verbosePrintln(String s) {
            out.verbosePrintln(s);
        }

        @Override
        public void write(int b) {
            out.write(b);
        }

        @Override
        public void write(byte[] b) throws IOException {
            out.write(b);
        }
    }
}
