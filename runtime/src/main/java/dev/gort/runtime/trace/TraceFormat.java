package dev.gort.runtime.trace;

import java.util.Locale;

/**
 * The formats a trace file can be written in, chosen by the file's extension, case ignored
 * ({@code -Dgort.trace=<file>}, {@link TraceFiles#write}). A name with none of these extensions has
 * no format: {@code -Dgort.trace} refuses it at start as a malformed setting (a {@code .txt} once
 * got Chrome JSON, and {@code .HTML} too).
 */
public enum TraceFormat {
    /** Chrome/Perfetto JSON ({@link ChromeTraceWriter}). */
    JSON(".json"),
    /** The same, gzip'd. */
    JSON_GZ(".json.gz"),
    /** The self-contained timeline ({@link HtmlTimeline}). */
    HTML(".html", ".htm"),
    /** Perfetto's protobuf format ({@link PerfettoProtoWriter}), ~10x smaller than JSON. */
    PFTRACE(".pftrace", ".perfetto-trace"),
    /** The same, gzip'd. */
    PFTRACE_GZ(".pftrace.gz"),
    /**
     * Go 1.19's binary execution-trace format ({@link GoTraceWriter}), for {@code go tool trace}:
     * {@code .trace}, {@code .trace.out}, or a file called exactly {@code trace.out} (the name Go's
     * tests write).
     */
    GO(".trace", ".trace.out");

    /** What a trace file's name must end in, for messages: "want " + this. */
    public static final String WANTED =
            "a file ending in .json, .json.gz, .html, .pftrace, .pftrace.gz or .trace, or one called trace.out";

    private final String[] extensions;

    TraceFormat(String... extensions) {
        this.extensions = extensions;
    }

    /** The format of a file called {@code name} (a path or a name; case ignored), or null for none. */
    public static TraceFormat of(String name) {
        String n = name.trim().toLowerCase(Locale.ROOT);
        int slash = Math.max(n.lastIndexOf('/'), n.lastIndexOf(java.io.File.separatorChar));
        if (n.substring(slash + 1).equals("trace.out")) {
            return GO;
        }
        for (TraceFormat f : values()) {
            for (String e : f.extensions) {
                if (n.endsWith(e) && n.length() > e.length()) {
                    return f;
                }
            }
        }
        return null;
    }
}
