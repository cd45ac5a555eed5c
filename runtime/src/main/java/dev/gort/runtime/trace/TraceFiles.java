package dev.gort.runtime.trace;

import java.io.BufferedWriter;
import java.io.IOException;
import java.io.OutputStream;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.zip.GZIPOutputStream;

/**
 * Writes a trace to a file chosen by extension, case ignored ({@link TraceFormat}): {@code .json},
 * {@code .json.gz} (Chrome/Perfetto JSON), {@code .pftrace} or {@code .pftrace.gz} (Perfetto's
 * protobuf format, ~10x smaller), {@code .html}, or {@code .trace} / {@code .trace.out} / {@code trace.out}
 * (Go 1.19's binary format, for {@code go tool trace}).
 */
public final class TraceFiles {
    private TraceFiles() {}

    /** Writes {@code t} to {@code file} in its extension's format; another extension is an IllegalArgumentException. */
    public static void write(Trace t, Path file) throws IOException {
        String name = file.getFileName().toString();
        TraceFormat format = TraceFormat.of(name);
        if (format == null) {
            throw new IllegalArgumentException("trace file " + file + ": want " + TraceFormat.WANTED);
        }
        Path parent = file.toAbsolutePath().getParent();
        if (parent != null) {
            Files.createDirectories(parent);
        }
        switch (format) {
            case HTML -> writeHtml(t, file);
            case PFTRACE -> {
                try (OutputStream os = new java.io.BufferedOutputStream(Files.newOutputStream(file), 1 << 16)) {
                    PerfettoProtoWriter.write(t, os);
                }
            }
            case PFTRACE_GZ -> {
                try (OutputStream os = new GZIPOutputStream(Files.newOutputStream(file), 1 << 16)) {
                    PerfettoProtoWriter.write(t, os);
                }
            }
            case JSON_GZ -> {
                try (OutputStream os = new GZIPOutputStream(Files.newOutputStream(file));
                        Writer w = new BufferedWriter(new OutputStreamWriter(os, StandardCharsets.UTF_8), 1 << 16)) {
                    ChromeTraceWriter.write(t, w);
                }
            }
            case JSON -> writeJson(t, file);
            case GO -> {
                try (OutputStream os = new java.io.BufferedOutputStream(Files.newOutputStream(file), 1 << 16)) {
                    GoTraceWriter.write(t, os);
                }
            }
        }
    }

    public static void writeJson(Trace t, Path file) throws IOException {
        try (Writer w = Files.newBufferedWriter(file, StandardCharsets.UTF_8)) {
            ChromeTraceWriter.write(t, w);
        }
    }

    public static void writeHtml(Trace t, Path file) throws IOException {
        try (Writer w = Files.newBufferedWriter(file, StandardCharsets.UTF_8)) {
            HtmlTimeline.write(t, w);
        }
    }
}
