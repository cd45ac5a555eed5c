package dev.gort.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The layers point one way (issue 13): the core ({@code dev.gort.runtime} and the recording half
 * of the tracer: Tracer, TraceBuf, Ev, Trace, JfrEvents, GoDebugProps) never names the consumers
 * (the validator, the Perfetto and HTML writers, the trace files, the debug server, metrics,
 * pprof, the observers) nor any module above the runtime; those find the core, and the core finds
 * them only through {@link RuntimeObserver}'s ServiceLoader. A source scan, comments excluded
 * (a Javadoc mention is not a dependency), except for the modules above: their names appear
 * nowhere in the runtime's sources.
 */
class LayersTest {
    private static final Path MAIN = Path.of("src/main/java/dev/gort/runtime");

    /** The recording half of the tracer: what the M loop calls. */
    private static final List<String> TRACE_CORE = List.of(
            "Tracer.java",
            "TraceBuf.java",
            "Ev.java",
            "Trace.java",
            "TraceFormat.java",
            "JfrEvents.java",
            "GoDebugProps.java");

    private static final Pattern CONSUMER = Pattern.compile(
            "\\b(TraceValidator|ChromeTraceWriter|HtmlTimeline|TraceFiles|DebugServer|StandardObserver)\\b"
                    + "|dev\\.gort\\.runtime\\.(metrics|pprof|observe)\\b"
                    + "|\\bimport\\s+(static\\s+)?dev\\.gort\\.(?!runtime\\b)");

    private static String code(Path p) throws IOException {
        String s = Files.readString(p);
        // Comments out, string literals kept (a class name in a string is a dependency too).
        return s.replaceAll("(?s)/\\*.*?\\*/", " ").replaceAll("(?m)^\\s*//.*$", " ");
    }

    private static List<Path> coreSources() throws IOException {
        List<Path> core = new ArrayList<>();
        try (Stream<Path> top = Files.list(MAIN)) {
            top.filter(p -> p.toString().endsWith(".java")).forEach(core::add);
        }
        for (String f : TRACE_CORE) {
            core.add(MAIN.resolve("trace").resolve(f));
        }
        return core;
    }

    @Test
    void theCoreNamesNoConsumer() throws IOException {
        List<String> bad = new ArrayList<>();
        List<Path> core = coreSources();
        assertTrue(core.size() > 40, "scanned " + core.size() + " files: wrong directory? " + MAIN.toAbsolutePath());
        for (Path p : core) {
            var m = CONSUMER.matcher(code(p));
            while (m.find()) {
                bad.add(MAIN.relativize(p) + ": " + m.group());
            }
        }
        assertEquals(List.of(), bad, "the core depends on a layer above it");
    }

    @Test
    void theRuntimeNamesNoModuleAboveIt() throws IOException {
        List<String> bad = new ArrayList<>();
        try (Stream<Path> all = Files.walk(MAIN)) {
            for (Path p : all.filter(f -> f.toString().endsWith(".java")).toList()) {
                String s = Files.readString(p);
                for (String above : List.of("dev.gort.examples", "dev.gort.bench")) {
                    if (s.contains(above)) {
                        bad.add(MAIN.relativize(p) + ": " + above);
                    }
                }
            }
        }
        assertEquals(List.of(), bad);
    }
}
