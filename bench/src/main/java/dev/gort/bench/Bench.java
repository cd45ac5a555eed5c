package dev.gort.bench;

import dev.gort.Go;
import dev.gort.runtime.Config;

/** Shared constants and helpers of the suite. */
public final class Bench {
    private Bench() {}

    /**
     * JVM flags every fork gets: G1 pinned (so {@code LoopStripMiningIter} is 1000 whatever the
     * machine's ergonomics pick) and the export of {@code jdk.internal.vm} gort needs.
     */
    public static final String[] JVM_ARGS = {"-XX:+UseG1GC", "--add-exports", "java.base/jdk.internal.vm=ALL-UNNAMED"};

    /** Implementation names used by {@code @Param impl}. */
    public static final String GORT = "gort";

    public static final String VTHREAD = "vthread";
    public static final String PLATFORM = "platform";

    /** A gort configuration: the environment's defaults with {@code gomaxprocs} Ps. */
    public static Config config(int gomaxprocs) {
        return Config.fromEnvironment().withGomaxprocs(gomaxprocs).withName("bench");
    }

    /**
     * Runs {@code main} as goroutine 1 of a fresh runtime with {@code gomaxprocs} Ps and returns when
     * it returns. Boots and stops carriers: use {@link GortHost} to keep one runtime per trial.
     */
    public static void gort(int gomaxprocs, Runnable main) {
        Go.run(config(gomaxprocs), main);
    }

    /** Fails unless {@code impl} is one of {@code allowed}. */
    public static void checkImpl(String impl, String... allowed) {
        for (String a : allowed) {
            if (a.equals(impl)) {
                return;
            }
        }
        throw new IllegalArgumentException(
                "unknown impl '" + impl + "' (expected one of " + String.join(", ", allowed) + ")");
    }
}
