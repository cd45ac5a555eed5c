package dev.gort.runtime;

import java.util.Locale;

/**
 * Where the java agent puts yield points (preemption-strategies.md §7), chosen with
 * {@code -Dgort.preempt=none|entry|backedge|budget} or the {@code GORT_PREEMPT} environment
 * variable (the property wins); default {@link #BACKEDGE}.
 *
 * <p>sysmon runs under every strategy: with {@link #NONE} it still detects slice overruns and asks
 * for preemption, and the unhonoured requests are counted ({@link PreemptStats#unhonoured()}).
 */
public enum PreemptStrategy {
    /** No yield points: a call-free loop runs to its end (Go before 1.14). */
    NONE,
    /** {@code Poll.poll()} at every method entry (Go 1.2 to 1.13: the stack-check prologue). */
    ENTRY,
    /**
     * {@code Poll.poll()} before every backward branch (Go's 2017 loop-preemption experiment), once
     * per strip of iterations in javac's counted loops, and at the entry of methods that call
     * others (recursion; see {@link #callerEntriesFromEnvironment()}).
     */
    BACKEDGE,
    /**
     * {@code Poll.budget()} at method entries and backward branches: a per-slice counter that yields
     * when spent if other work is runnable (BEAM reductions, Tokio's coop budget); sysmon's flag is
     * still honoured at the same points as a backstop.
     */
    BUDGET;

    /**
     * Default strip length for {@link #BACKEDGE}: javac's counted loops poll once per this many
     * iterations (the agent's StripMiner), other loops at every back-edge.
     */
    public static final int DEFAULT_STRIDE = 1024;

    /**
     * The {@link #BACKEDGE} strip length from {@code -Dgort.preempt.stride} /
     * {@code GORT_PREEMPT_STRIDE} (default {@link #DEFAULT_STRIDE}); 0 polls at every back-edge
     * (the plain back-edge strategy, for research).
     */
    public static int strideFromEnvironment() {
        return Config.intSetting("gort.preempt.stride", "GORT_PREEMPT_STRIDE", DEFAULT_STRIDE, 0, Integer.MAX_VALUE);
    }

    /**
     * {@link #BACKEDGE} also polls at the entry of every method that calls another, so recursion
     * without loops is preemptible ({@code -Dgort.preempt.callers} / {@code GORT_PREEMPT_CALLERS},
     * default true; false leaves back-edges only, the classic loop-preemption experiment).
     */
    public static boolean callerEntriesFromEnvironment() {
        return Config.boolSetting("gort.preempt.callers", "GORT_PREEMPT_CALLERS", true);
    }

    /** The strategy named by {@code gort.preempt} / {@code GORT_PREEMPT}, default {@link #BACKEDGE}. */
    public static PreemptStrategy fromEnvironment() {
        return parse(Config.choiceSetting(
                "gort.preempt", "GORT_PREEMPT", "backedge", "none", "entry", "backedge", "budget"));
    }

    /** Parses a strategy name (case-insensitive); throws IllegalArgumentException on an unknown one. */
    public static PreemptStrategy parse(String name) {
        try {
            return valueOf(name.trim().toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(
                    "unknown preemption strategy '" + name + "' (want none, entry, backedge or budget)", e);
        }
    }

    /** The lower-case name used on the command line. */
    public String id() {
        return name().toLowerCase(Locale.ROOT);
    }
}
