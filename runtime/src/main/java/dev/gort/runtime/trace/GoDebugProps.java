package dev.gort.runtime.trace;

/** The tracer's system properties (read when a runtime is created). */
final class GoDebugProps {
    private GoDebugProps() {}

    /** {@code -Dgort.trace=<file>}: trace every runtime from its start and write the file at exit. */
    static String traceFile() {
        String v = System.getProperty("gort.trace");
        return v == null || v.isBlank() ? null : v.trim();
    }

    /** {@code -Dgort.trace.window=<ms>}: flight-recorder window (0 = keep everything). */
    static long traceWindowMs() {
        try {
            return Long.parseLong(System.getProperty("gort.trace.window", "0").trim());
        } catch (NumberFormatException e) {
            return 0;
        }
    }

    /** {@code -Dgort.trace.level=1|2}: see {@link Tracer.Options#level}. */
    static int traceLevel() {
        try {
            return Integer.parseInt(System.getProperty("gort.trace.level", "2").trim());
        } catch (NumberFormatException e) {
            return 2;
        }
    }

    /** {@code -Dgort.trace.workload=<name>}: shown in the trace header. */
    static String traceWorkload() {
        return System.getProperty("gort.trace.workload", "");
    }
}
