package dev.gort.runtime.trace;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gort.runtime.ChildJvm;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code -Dgort.trace=<file>} is written on the way out of a panic and of a fatal error (the JVM
 * halts with status 2), as a flight recorder is flushed on a crash, and what it holds replays
 * cleanly: the program runs in a child JVM the way a user runs it (Go's runTestProg), writes the
 * HTML timeline, and this test reads the events back out of the page and validates them.
 */
class TraceOnCrashTest {
    /** Deleted by JUnit after each test (a temporary directory per run would pile up in /tmp). */
    @TempDir
    Path tmp;

    private static final Pattern EVENT =
            Pattern.compile("\\[(-?\\d+),(\\d+),(\\d+),(-?\\d+),(-?\\d+),(\\d+),(-?\\d+),(-?\\d+)\\]");

    private static ChildJvm.Result runTraced(String prog, Path file) throws Exception {
        return ChildJvm.run("dev.gort.runtime.testprog.TestProg", prog, "2", Map.of(), List.of("-Dgort.trace=" + file));
    }

    /** The events of an HTML timeline page, rebuilt into a Trace (the page embeds every event as a tuple). */
    static Trace readHtml(Path file) throws Exception {
        String html = Files.readString(file, StandardCharsets.UTF_8);
        assertTrue(html.contains("\"complete\":true,\"truncated\":false"), "a whole trace in the page");
        int at = html.indexOf("\"ev\":[");
        assertTrue(at > 0, "events in the page");
        int end = html.indexOf("]}", at);
        Tracer.Session s = new Tracer.Session(null, 0, true, "file");
        TraceBuf b = s.newBuf(-1, "file");
        Matcher m = EVENT.matcher(html.substring(at + 6, end + 1));
        while (m.find()) {
            long hdr = (Long.parseLong(m.group(2)) & 0xFFL)
                    | ((Long.parseLong(m.group(3)) & 0xFFFFL) << 8)
                    | (((Long.parseLong(m.group(4)) + 1) & 0xFFFFL) << 24)
                    | ((Long.parseLong(m.group(5)) + 1) << 40);
            b.emit(
                    s.t0 + Long.parseLong(m.group(1)),
                    hdr,
                    Long.parseLong(m.group(6)),
                    Long.parseLong(m.group(7)),
                    Long.parseLong(m.group(8)));
        }
        return Trace.decode(s, null, false);
    }

    private static void checkTrace(Path file, ChildJvm.Result r) throws Exception {
        assertTrue(r.output().contains("gort: trace written to " + file), r.output());
        assertTrue(Files.exists(file), "trace file written before the halt:\n" + r.output());
        Trace t = readHtml(file);
        TraceValidator.Result res = TraceValidator.validate(t);
        assertTrue(res.ok(), () -> "trace of\n" + r.output() + "\n" + res);
        // everything up to the crash: main, the 4 workers, the resizes
        assertTrue(t.count(Ev.GO_CREATE) >= 5, () -> "creates: " + t.count(Ev.GO_CREATE));
        assertTrue(t.count(Ev.GOMAXPROCS) >= 3, () -> "gomaxprocs events: " + t.count(Ev.GOMAXPROCS));
        assertTrue(res.count(TraceValidator.DEAD) >= 4, () -> "the workers finished: " + res.goroutines);
    }

    /** A panic in a goroutine: Go's panic text, status 2, and the trace up to the panicking G's exit. */
    @Test
    void panicWritesAValidTrace() throws Exception {
        Path file = tmp.resolve("panic.html");
        ChildJvm.Result r = runTraced("TracedPanic", file);
        assertTrue(r.output().startsWith("panic: java.lang.IllegalStateException: child exploded\n"), r.output());
        assertEquals(2, r.status(), r.output());
        checkTrace(file, r);
        // the goroutine that panicked is in it, up to its exit
        Trace t = readHtml(file);
        long panicked = -1;
        for (int i = 0; i < t.size(); i++) {
            if (t.code(i) == Ev.GO_CREATE) {
                panicked = t.g(i); // the last one created
            }
        }
        TraceValidator.Result res = TraceValidator.validate(t);
        assertEquals("dead", TraceValidator.loc(res.goroutines.get(panicked)), () -> res.goroutines.toString());
    }

    /**
     * A fatal error raised by a goroutine, whose carrier the shutdown interrupts (here: already
     * interrupted when it raises it). The carrier used to give up its wait for the exit lock at
     * once and halt the JVM, often while the main thread was writing the file: no file, no
     * message, in 3 to 5 runs of 8.
     */
    @Test
    void aFatalErrorOnAnInterruptedCarrierStillWritesTheTrace() throws Exception {
        Path file = tmp.resolve("fatal-g.html");
        ChildJvm.Result r = runTraced("TracedFatalInterrupted", file);
        assertTrue(r.output().startsWith("fatal error: test: fatal error in a goroutine\n"), r.output());
        assertEquals(2, r.status(), r.output());
        checkTrace(file, r);
    }

    /** A fatal error (all goroutines are asleep): status 2, and the trace with main parked forever. */
    @Test
    void fatalErrorWritesAValidTrace() throws Exception {
        Path file = tmp.resolve("fatal.html");
        ChildJvm.Result r = runTraced("TracedDeadlock", file);
        assertTrue(r.output().startsWith("fatal error: all goroutines are asleep - deadlock!\n"), r.output());
        assertEquals(2, r.status(), r.output());
        checkTrace(file, r);
        TraceValidator.Result res = TraceValidator.validate(readHtml(file));
        assertEquals("waiting", TraceValidator.loc(res.goroutines.get(1L)), "main blocked in select {}");
    }
}
