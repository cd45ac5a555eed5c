package dev.gort.examples.showcase;

import dev.gort.runtime.Config;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.List;

/** One of the simulator's scenarios, run for real. */
abstract class Scenario {
    /** One run of a scenario with its toggles. */
    record Variant(
            String scenario,
            String id,
            String label,
            int gomaxprocs,
            boolean stealing,
            boolean spinning,
            String preempt,
            String mode) {
        Variant(
                String scenario,
                String id,
                String label,
                int gomaxprocs,
                boolean stealing,
                boolean spinning,
                String preempt) {
            this(scenario, id, label, gomaxprocs, stealing, spinning, preempt, null);
        }

        Config config() {
            return Config.fromEnvironment()
                    .withGomaxprocs(gomaxprocs)
                    .withStealing(stealing)
                    .withSpinning(spinning);
        }

        /** The HTML timeline's file name. */
        String file() {
            return scenario + "-" + id + ".html";
        }
    }

    final String id;
    final String title;

    Scenario(String id, String title) {
        this.id = id;
        this.title = title;
    }

    /** The scenario's heading for these options. */
    String title(Options o) {
        return title;
    }

    /** What the scenario shows, a few lines (printed before its runs). */
    abstract String explanation(Options o);

    /**
     * Why the scenario cannot run with these options, for a usage error before any run (exit 2), or
     * null when it can.
     */
    String problem(Options o) {
        return null;
    }

    /**
     * A run that failed for a reason the user can act on (the machine's limits, not a bug): the
     * showcase prints {@code FAILED:} and the message, without a stack trace, and goes on.
     */
    static final class Failed extends Exception {
        Failed(String message) {
            super(message);
        }
    }

    /** Default GOMAXPROCS. */
    abstract int defaultProcs();

    /** Default schedtrace period, ms. */
    abstract int defaultSchedtrace();

    /** The runs to make for these options. */
    List<Variant> variants(Options o) {
        int procs = o.gomaxprocs > 0 ? o.gomaxprocs : defaultProcs();
        boolean steal = o.stealing == null || o.stealing;
        boolean spin = o.spinning == null || o.spinning;
        String pre = o.preempt != null ? o.preempt : Showcase.jvmPreempt();
        return List.of(
                new Variant(id, label(steal, spin, pre), describe(procs, steal, spin, pre), procs, steal, spin, pre));
    }

    static String label(boolean steal, boolean spin, String pre) {
        StringBuilder sb = new StringBuilder(pre);
        if (!steal) {
            sb.append("-nosteal");
        }
        if (!spin) {
            sb.append("-nospin");
        }
        return sb.toString();
    }

    static String describe(int procs, boolean steal, boolean spin, String pre) {
        return "GOMAXPROCS=" + procs + ", stealing " + (steal ? "on" : "off") + (spin ? "" : ", spinning off")
                + ", preemption " + pre;
    }

    /**
     * Runs a small version of the workload once, untraced, so that the measured run does not pay
     * for class loading and the interpreter (a fresh JVM takes tens of ms over its first hops).
     */
    abstract void warmUp(Options o, Variant v);

    /** Runs one variant in this JVM, prints its schedtrace and figures; returns the timeline written, or null. */
    abstract Path run(Variant v, Options o, PrintStream out) throws Exception;
}
