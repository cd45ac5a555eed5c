package dev.gort.runtime;

/**
 * How a runtime is set up. Defaults follow Go; each can be set from the environment or a system
 * property (property wins), as {@link #fromEnvironment()} documents.
 *
 * @param gomaxprocs        number of Ps ({@code GOMAXPROCS} / {@code -Dgort.gomaxprocs}); default: available processors
 * @param runqSize          slots in each P's ring (power of two; 256 in Go)
 * @param stealing          work stealing between Ps ({@code -Dgort.stealing}); off = the simulator's toggle
 * @param spinning          spinning Ms ({@code -Dgort.spinning}); off = no M spins looking for work: an M
 *                          with nothing to do drops its P at once, and wakep starts an M per idle P
 * @param maxThreads        Go's debug.SetMaxThreads default 10000 ({@code -Dgort.maxthreads})
 * @param panicExits        a goroutine panic or fatal error halts the JVM with status 2 (Go); when false
 *                          (and always under {@code -Dgort.fatal=throw}) it surfaces from {@code run}
 * @param debugChecks       O(n) invariant checks ({@code -Dgort.debug.checks})
 * @param name              prefix of the carrier threads' names
 */
public record Config(
        int gomaxprocs,
        int runqSize,
        boolean stealing,
        boolean spinning,
        int maxThreads,
        boolean panicExits,
        boolean debugChecks,
        String name) {

    public Config {
        if (gomaxprocs < 1) {
            throw new IllegalArgumentException("GOMAXPROCS must be >= 1: " + gomaxprocs);
        }
        if (runqSize < 2 || Integer.bitCount(runqSize) != 1) {
            throw new IllegalArgumentException("runqSize must be a power of two >= 2: " + runqSize);
        }
    }

    /** Go's defaults, read from the environment and system properties. */
    public static Config fromEnvironment() {
        return new Config(
                intSetting("gort.gomaxprocs", "GOMAXPROCS", Runtime.getRuntime().availableProcessors()),
                intSetting("gort.runqsize", "GORT_RUNQSIZE", 256),
                boolSetting("gort.stealing", "GORT_STEALING", true),
                boolSetting("gort.spinning", "GORT_SPINNING", true),
                intSetting("gort.maxthreads", "GORT_MAXTHREADS", 10_000),
                !Fatal.THROW,
                Boolean.getBoolean("gort.debug.checks"),
                "gort");
    }

    public Config withGomaxprocs(int n) {
        return new Config(n, runqSize, stealing, spinning, maxThreads, panicExits, debugChecks, name);
    }

    public Config withRunqSize(int n) {
        return new Config(gomaxprocs, n, stealing, spinning, maxThreads, panicExits, debugChecks, name);
    }

    public Config withStealing(boolean on) {
        return new Config(gomaxprocs, runqSize, on, spinning, maxThreads, panicExits, debugChecks, name);
    }

    public Config withSpinning(boolean on) {
        return new Config(gomaxprocs, runqSize, stealing, on, maxThreads, panicExits, debugChecks, name);
    }

    public Config withMaxThreads(int n) {
        return new Config(gomaxprocs, runqSize, stealing, spinning, n, panicExits, debugChecks, name);
    }

    public Config withPanicExits(boolean on) {
        return new Config(gomaxprocs, runqSize, stealing, spinning, maxThreads, on, debugChecks, name);
    }

    public Config withDebugChecks(boolean on) {
        return new Config(gomaxprocs, runqSize, stealing, spinning, maxThreads, panicExits, on, name);
    }

    public Config withName(String n) {
        return new Config(gomaxprocs, runqSize, stealing, spinning, maxThreads, panicExits, debugChecks, n);
    }

    static String setting(String prop, String env) {
        String v = System.getProperty(prop);
        if (v == null || v.isBlank()) {
            v = System.getenv(env);
        }
        return v == null || v.isBlank() ? null : v.trim();
    }

    static int intSetting(String prop, String env, int dflt) {
        String v = setting(prop, env);
        if (v == null) {
            return dflt;
        }
        try {
            int n = Integer.parseInt(v);
            return n > 0 ? n : dflt;
        } catch (NumberFormatException e) {
            return dflt;
        }
    }

    static boolean boolSetting(String prop, String env, boolean dflt) {
        String v = setting(prop, env);
        if (v == null) {
            return dflt;
        }
        return switch (v.toLowerCase()) {
            case "1", "true", "on", "yes" -> true;
            case "0", "false", "off", "no" -> false;
            default -> dflt;
        };
    }
}
