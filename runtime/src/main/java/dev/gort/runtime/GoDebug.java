package dev.gort.runtime;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Go's {@code GODEBUG} settings: {@code key=value} pairs separated by commas, read from the
 * environment variable {@code GODEBUG} and from the system properties {@code -Dgort.godebug=...} or
 * {@code -Dgort.debug=...} (a property's keys win over the environment's). The keys a runtime reads
 * (README.md, "Configuration"): Go's {@code schedtrace=N} (print the SCHED line every N ms),
 * {@code scheddetail=1} (with P, M and G lines), {@code updatemaxprocs=0} and
 * {@code containermaxprocs=0} ({@link Config}); gort's own {@code psyscall=1} (Go 1.25's syscall
 * model), {@code sigtrap=1} and {@code sigdump=NAME} (dump goroutines on SIGTRAP, {@code kill -5},
 * or on the named signal: {@link DumpSignal}) and {@code midlecpu=0} (startm wakes the idle M that
 * stopped last, as Go's, even when it stopped on the waker's CPU: {@link Idle#mget(int)}). Any other
 * key is kept and ignored, as Go ignores the keys it does not know: Go's {@code asyncpreemptoff}
 * has no effect here (the preemption strategy is {@code -Dgort.preempt}).
 *
 * <p>Go: runtime1.go parsedebugvars, dbgvars
 */
public final class GoDebug {
    private final Map<String, String> vars;

    private GoDebug(Map<String, String> vars) {
        this.vars = vars;
    }

    /** These settings with {@code more} ({@code GODEBUG}-style text) on top: its keys win. */
    public GoDebug with(String more) {
        Map<String, String> m = new LinkedHashMap<>(vars);
        m.putAll(parse(more).vars);
        return new GoDebug(m);
    }

    /** Parses {@code GODEBUG}-style text. */
    public static GoDebug parse(String... sources) {
        Map<String, String> m = new LinkedHashMap<>();
        for (String src : sources) {
            if (src == null) {
                continue;
            }
            for (String kv : src.split(",")) {
                int eq = kv.indexOf('=');
                if (eq > 0) {
                    m.put(kv.substring(0, eq).trim(), kv.substring(eq + 1).trim());
                }
            }
        }
        return new GoDebug(m);
    }

    /**
     * The environment, then -Dgort.godebug, then -Dgort.debug (later ones win per key). Read by
     * {@link Config.Settings#fromEnvironment()}; a runtime uses its Config's ({@code settings().godebug()}).
     */
    public static GoDebug fromEnvironment() {
        return parse(System.getenv("GODEBUG"), System.getProperty("gort.godebug"), System.getProperty("gort.debug"));
    }

    public int get(String key, int dflt) {
        String v = vars.get(key);
        if (v == null || v.isEmpty()) {
            return dflt;
        }
        try {
            return Integer.parseInt(v);
        } catch (NumberFormatException e) {
            return dflt;
        }
    }

    /** The raw value of {@code key}, or null. */
    String getString(String key) {
        return vars.get(key);
    }

    public int schedtrace() {
        return get("schedtrace", 0);
    }

    public boolean scheddetail() {
        return get("scheddetail", 0) > 0;
    }

    @Override
    public String toString() {
        return vars.toString();
    }
}
