package dev.gort.examples.showcase;

import dev.gort.runtime.InstrumentationStats;
import dev.gort.runtime.PreemptStrategy;
import dev.gort.runtime.trace.Trace;
import dev.gort.runtime.trace.TraceFiles;
import java.io.File;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * {@code ./gort showcase}: the four scenarios of the Go scheduler simulator (reference 004), and a
 * network scenario (issue 14), run on gort for real. Each prints what it shows, the {@code GODEBUG=schedtrace} lines of its run, the
 * figures read from the execution trace, and writes the run's HTML timeline. See
 * {@link Options#USAGE} for the command line.
 *
 * <p>The preemption strategy is fixed when the JVM starts (the java agent decides where yield points
 * go as classes load), so a variant that wants another strategy than this JVM's runs in a child JVM
 * started with {@code -Dgort.preempt=<strategy>}.
 */
public final class Showcase {
    private Showcase() {}

    static final List<Scenario> ALL =
            List.of(new FanOut(), new Syscalls(), new TightLoop(), new PingPong(), new Network());

    public static void main(String[] args) {
        System.exit(main0(args));
    }

    /** Runs the showcase; returns the exit status (0 ok, 2 bad usage, 1 a run failed). */
    public static int main0(String[] args) {
        PrintStream out = System.out;
        Options o;
        try {
            o = Options.parse(args);
        } catch (IllegalArgumentException e) {
            System.err.println("showcase: " + e.getMessage());
            System.err.println("(./gort showcase --help lists the scenarios and options)");
            return 2;
        }
        if (o.help) {
            out.print(Options.USAGE);
            return 0;
        }
        if (!o.child && System.getProperty("gort.trace") != null) {
            // every run of the showcase is a runtime of its own, each would overwrite that one file
            System.err.println("showcase: -Dgort.trace is not for the showcase: each of its runs writes its own trace,"
                    + " an HTML timeline in --out DIR (default examples/target/showcase/); for one program's"
                    + " trace use ./gort example <Name> -Dgort.trace=FILE");
            return 2;
        }
        for (Scenario sc : ALL) {
            String bad = o.scenarios.contains(sc.id) ? sc.problem(o) : null;
            if (bad != null) {
                System.err.println("showcase: " + bad);
                return 2;
            }
        }
        if (o.out == null) {
            o.out = defaultOut();
        }
        if (o.html) {
            // before any run: a file there would fail the first timeline after its run
            String bad = outProblem(o.out);
            if (bad != null) {
                System.err.println("showcase: --out: " + bad);
                System.err.println("(./gort showcase --help lists the scenarios and options)");
                return 2;
            }
        }
        if (!o.child) {
            banner(out);
        }
        List<Path> written = new ArrayList<>();
        java.util.Set<String> warmed = new java.util.HashSet<>();
        int status = 0;
        int n = 0;
        for (String id : o.scenarios) {
            Scenario sc = ALL.stream().filter(s -> s.id.equals(id)).findFirst().orElse(null);
            n++;
            if (sc == null) {
                out.println();
                out.printf("=== %d. %s: not in this build yet ===%n", n, id);
                continue;
            }
            if (!o.child) {
                out.println();
                out.printf("=== %d. %s ===%n", n, sc.title(o));
                out.println(sc.explanation(o));
            }
            for (Scenario.Variant v : sc.variants(o)) {
                out.flush();
                try {
                    if (!v.preempt().equals(jvmPreempt())) {
                        // the child prints the variant's header and everything else itself
                        int rc = runInChild(v, o);
                        Path f = o.out.resolve(v.file());
                        if (rc != 0) {
                            out.printf("  (the child JVM for %s %s failed with status %d)%n", sc.id, v.id(), rc);
                            status = 1;
                        } else if (o.html && Files.exists(f)) {
                            written.add(f);
                        }
                    } else {
                        out.println();
                        out.printf("--- %s: %s ---%n", sc.id, v.id());
                        out.printf(
                                "  %s%s%n",
                                v.label(),
                                o.child ? " (in a child JVM started with -Dgort.preempt=" + v.preempt() + ")" : "");
                        // which runs had the agent, and whether the Ps had a CPU each
                        out.printf("  %s%n", agentLine());
                        int cpus = Runtime.getRuntime().availableProcessors();
                        if (v.gomaxprocs() > cpus) {
                            out.printf(
                                    "  warning: GOMAXPROCS=%d exceeds this machine's %d CPUs: the Ps' threads take turns"
                                            + " on the CPUs, so the wall times below include waiting for one%n",
                                    v.gomaxprocs(), cpus);
                        }
                        if (warmed.add(sc.id + "/" + v.gomaxprocs())) {
                            sc.warmUp(o, v);
                        }
                        Path f = sc.run(v, o, out);
                        if (f != null) {
                            written.add(f);
                        }
                    }
                } catch (Scenario.Failed e) {
                    out.printf("  FAILED: %s%n", e.getMessage());
                    status = 1;
                } catch (Exception | LinkageError e) {
                    out.printf("  FAILED: %s%n", e);
                    e.printStackTrace();
                    status = 1;
                }
                out.flush();
            }
        }
        if (!o.child && o.html && !written.isEmpty()) {
            out.println();
            out.println("=== HTML timelines (self-contained: open them in a browser, no network needed) ===");
            for (Path f : written) {
                out.println("  " + f.toAbsolutePath());
            }
            out.println("Each shows a card per P (running goroutine, runnext, local queue), the global queue, the");
            out.println("goroutines in syscalls, and a timeline per P; drag the scrubber or put #t=<ns> in the URL.");
        }
        return status;
    }

    private static void banner(PrintStream out) {
        out.println("gort showcase: Go's scheduler (G/M/P, runtime/proc.go) on JDK continuations, for real.");
        out.printf(
                "JDK %s, %d CPUs; this JVM's preemption strategy: %s;%n",
                System.getProperty("java.version"), Runtime.getRuntime().availableProcessors(), jvmPreempt());
        out.println(agentLine() + ".");
        out.println("SCHED lines: gomaxprocs, idle Ps, threads (Ms, sysmon included), spinning Ms, idle Ms, global");
        out.println("queue length, [ each P's local queue length ] and schedticks=[ each P's scheduling count ].");
    }

    /** The preemption strategy of this JVM: -Dgort.preempt, else GORT_PREEMPT, else backedge. */
    static String jvmPreempt() {
        return PreemptStrategy.fromEnvironment().id();
    }

    /** Whether the java agent has put yield points into this JVM's classes (the showcase's own loops among them). */
    static boolean agentActive() {
        return InstrumentationStats.classesTransformed.get() > 0;
    }

    /** One line on the agent, for the banner. */
    static String agentLine() {
        if (jvmPreempt().equals("none")) {
            return "with strategy none the agent puts no yield points: a loop runs to its end (Go before 1.14)";
        }
        if (!agentActive()) {
            return "the preemption agent is NOT active in this JVM (no class was instrumented): loops cannot be"
                    + " preempted; run the showcase through the jar (./gort showcase or java -jar gort-examples.jar)";
        }
        return "the preemption agent is active: " + InstrumentationStats.classesTransformed.get()
                + " classes instrumented, "
                + InstrumentationStats.backedgePolls.get() + " back-edge polls, "
                + InstrumentationStats.entryPolls.get()
                + " entry polls so far";
    }

    /** Prints the captured SCHED lines (at most 12: the first 6 and the last 6). */
    static void printSched(PrintStream out, List<String> lines, Options o, int periodMs) {
        List<String> heads = new ArrayList<>();
        for (String l : lines) {
            if (l.startsWith("SCHED ")) {
                heads.add(l);
            }
        }
        out.printf(
                "  schedtrace (GODEBUG=schedtrace=%d%s), %d lines:%n",
                periodMs, o.scheddetail ? ",scheddetail=1" : "", heads.size());
        if (o.scheddetail) {
            for (String l : lines) {
                out.println("    " + l);
            }
            return;
        }
        for (int i = 0; i < heads.size(); i++) {
            if (heads.size() > 12 && i == 6) {
                out.printf("    ... %d more ...%n", heads.size() - 12);
                i = heads.size() - 6;
            }
            out.println("    " + heads.get(i));
        }
    }

    private static final Pattern FIELD = Pattern.compile("\\b(\\w+)=(\\d+)");

    /** The largest value of {@code field=N} over the SCHED lines, or 0. */
    static long maxField(List<String> lines, String field) {
        long max = 0;
        for (String l : lines) {
            if (!l.startsWith("SCHED ")) {
                continue;
            }
            Matcher m = FIELD.matcher(l);
            while (m.find()) {
                if (m.group(1).equals(field)) {
                    max = Math.max(max, Long.parseLong(m.group(2)));
                }
            }
        }
        return max;
    }

    /** Writes the run's HTML timeline (unless --no-html) and prints where. */
    static Path writeTimeline(Trace t, Scenario.Variant v, Options o, PrintStream out) throws java.io.IOException {
        if (t == null) {
            return null;
        }
        if (o.events) {
            for (int i = 0; i < t.size(); i++) {
                out.println("    " + t.describe(i));
            }
        }
        if (!o.html) {
            return null;
        }
        Path f = o.out.resolve(v.file());
        TraceFiles.write(t, f);
        out.printf("  timeline: %s (%d events)%n", f.toAbsolutePath(), t.size());
        return f;
    }

    /**
     * Why the timelines cannot go to {@code dir}, or null when they can: it is a directory, or one
     * is created there now.
     */
    static String outProblem(Path dir) {
        if (Files.exists(dir) && !Files.isDirectory(dir)) {
            return dir + " is not a directory";
        }
        try {
            Files.createDirectories(dir);
            return null;
        } catch (java.io.IOException | RuntimeException e) {
            return "cannot create the directory " + dir + " (" + e + ")";
        }
    }

    /** showcase/ beside the jar (examples/target/showcase), or beside the classes directory. */
    static Path defaultOut() {
        try {
            Path here = Path.of(Showcase.class
                    .getProtectionDomain()
                    .getCodeSource()
                    .getLocation()
                    .toURI());
            return here.toAbsolutePath().getParent().resolve("showcase");
        } catch (URISyntaxException | RuntimeException e) {
            return Path.of("gort-showcase").toAbsolutePath();
        }
    }

    /**
     * Runs one variant in a child JVM with {@code -Dgort.preempt=<strategy>}: the same java, the same
     * JVM flags, the same jar (or class path); its output goes straight to ours.
     */
    static int runInChild(Scenario.Variant v, Options o) throws Exception {
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        for (String a : ManagementFactory.getRuntimeMXBean().getInputArguments()) {
            if (!a.startsWith("-Dgort.preempt=")) {
                cmd.add(a);
            }
        }
        cmd.add("-Dgort.preempt=" + v.preempt());
        Path self = Path.of(Showcase.class
                .getProtectionDomain()
                .getCodeSource()
                .getLocation()
                .toURI());
        if (Files.isRegularFile(self) && self.toString().endsWith(".jar")) {
            cmd.add("-jar");
            cmd.add(self.toString());
        } else {
            cmd.add("-cp");
            cmd.add(System.getProperty("java.class.path") + File.pathSeparator + self);
            cmd.add("dev.gort.examples.Main");
        }
        cmd.add("showcase");
        cmd.addAll(o.childArgs(v.scenario(), v.preempt()));
        Process p = new ProcessBuilder(cmd).inheritIO().start();
        return p.waitFor();
    }
}
