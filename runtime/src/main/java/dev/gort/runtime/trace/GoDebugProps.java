package dev.gort.runtime.trace;

import dev.gort.runtime.Config;

/**
 * The tracer's system properties, for tools that print them ({@code ./gort env}); a runtime reads
 * its own from {@link Config.Settings} (malformed ones are fatal, see {@link Config}).
 */
public final class GoDebugProps {
    private GoDebugProps() {}

    /** {@code -Dgort.trace=<file>}: trace every runtime from its start and write the file at exit. */
    public static String traceFile() {
        return Config.traceFileSetting();
    }

    /** {@code -Dgort.trace.window=<ms>}: flight-recorder window (0 = keep everything). */
    public static long traceWindowMs() {
        return Config.longSetting("gort.trace.window", null, 0, 0, Long.MAX_VALUE);
    }

    /** {@code -Dgort.trace.level=1|2}: see {@link Tracer.Options#level}. */
    public static int traceLevel() {
        return Config.intSetting("gort.trace.level", null, 2, 1, 2);
    }

    /** {@code -Dgort.trace.workload=<name>}: shown in the trace header. */
    public static String traceWorkload() {
        return Config.traceWorkloadSetting();
    }
}
