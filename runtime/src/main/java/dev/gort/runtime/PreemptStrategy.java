package dev.gort.runtime;

import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Where the java agent puts yield points (preemption-strategies.md §7), chosen with
 * {@code -Dgort.preempt=none|entry|backedge|budget} or the {@code GORT_PREEMPT} environment
 * variable (the property wins); default {@link #BACKEDGE}.
 *
 * <p>These four are the runtime's <em>families</em>. The agent's strategies ({@code dev.gort.agent.Strategy})
 * are registered by name ({@link #register}): {@code -Dgort.preempt=<name>} may name any of them,
 * and the runtime reports the family the strategy registered with ({@link #fromEnvironment()}) and
 * its name ({@link #nameFromEnvironment()}). Where polls go is the agent's business only: the
 * scheduler does not change with the strategy.
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
     * (the plain back-edge strategy, for research). JVM-wide, hence not in {@link Config.Settings}:
     * the agent transforms each class once per JVM, for every runtime in it.
     */
    public static int strideFromEnvironment() {
        return Config.intSetting("gort.preempt.stride", "GORT_PREEMPT_STRIDE", DEFAULT_STRIDE, 0, Integer.MAX_VALUE);
    }

    /**
     * {@link #BACKEDGE} also polls at the entry of every method that calls another, so recursion
     * without loops is preemptible ({@code -Dgort.preempt.callers} / {@code GORT_PREEMPT_CALLERS},
     * default true; false leaves back-edges only, the classic loop-preemption experiment).
     * JVM-wide, as {@link #strideFromEnvironment()}.
     */
    public static boolean callerEntriesFromEnvironment() {
        return Config.boolSetting("gort.preempt.callers", "GORT_PREEMPT_CALLERS", true);
    }

    /**
     * Strategies registered by the agent beyond the four families: name (as given) to family.
     * Written by {@link #register} (the agent's premain, the lab; any thread), read by
     * {@link #nameFromEnvironment()}: a concurrent map.
     */
    private static final Map<String, PreemptStrategy> REGISTERED = new ConcurrentHashMap<>();

    /**
     * Makes {@code name} a valid {@code gort.preempt} value that the runtime reports as
     * {@code family}; called by the agent ({@code dev.gort.agent.Strategies}) for every strategy it
     * knows. Re-registering a name with another family, or a family's own name, is refused.
     */
    public static void register(String name, PreemptStrategy family) {
        if (name == null || name.isBlank() || name.chars().anyMatch(Character::isWhitespace)) {
            throw new IllegalArgumentException("gort: bad preemption strategy name '" + name + "'");
        }
        PreemptStrategy builtin = builtin(name);
        if (builtin != null) {
            if (builtin != family) {
                throw new IllegalArgumentException(
                        "gort: strategy name '" + name + "' is the " + builtin.id() + " family's");
            }
            return;
        }
        PreemptStrategy prev = REGISTERED.putIfAbsent(name, family);
        if (prev != null && prev != family) {
            throw new IllegalArgumentException(
                    "gort: strategy '" + name + "' already registered as " + prev.id() + ", not " + family.id());
        }
    }

    private static PreemptStrategy builtin(String name) {
        for (PreemptStrategy s : values()) {
            if (s.id().equalsIgnoreCase(name.trim())) {
                return s;
            }
        }
        return null;
    }

    /** The family of a built-in or registered strategy name; null if unknown. */
    public static PreemptStrategy familyOf(String name) {
        PreemptStrategy b = builtin(name);
        return b != null ? b : REGISTERED.get(name.trim());
    }

    /**
     * The strategy named by {@code gort.preempt} / {@code GORT_PREEMPT} (default {@code backedge}):
     * a family's name (returned lower-case) or a registered one (returned as given); anything else is
     * a malformed setting.
     */
    public static String nameFromEnvironment() {
        String v = Config.setting("gort.preempt", "GORT_PREEMPT");
        if (v == null) {
            return BACKEDGE.id();
        }
        PreemptStrategy b = builtin(v);
        if (b != null) {
            return b.id();
        }
        if (REGISTERED.containsKey(v.trim())) {
            return v.trim();
        }
        java.util.TreeSet<String> known = new java.util.TreeSet<>(REGISTERED.keySet());
        throw Config.malformed(
                "gort.preempt",
                "GORT_PREEMPT",
                "one of none, entry, backedge, budget" + (known.isEmpty() ? "" : ", " + String.join(", ", known))
                        + " (other strategies are registered by the agent)");
    }

    /** The family of the strategy named by {@code gort.preempt} / {@code GORT_PREEMPT}, default {@link #BACKEDGE}. */
    public static PreemptStrategy fromEnvironment() {
        return familyOf(nameFromEnvironment());
    }

    /** Parses a family name (case-insensitive); throws IllegalArgumentException on an unknown one. */
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
