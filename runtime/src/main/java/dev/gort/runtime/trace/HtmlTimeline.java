package dev.gort.runtime.trace;

import dev.gort.runtime.WaitReason;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.util.Map;

/**
 * The self-contained HTML timeline of one run (observability.md §7): the trace's events embedded as
 * compact JSON tuples {@code [ts, code, small, p, m, g, a, x]} in a {@code <script
 * type="application/json">}, and inline JS/CSS (no network) that replays them to draw what the
 * simulator of reference 004 draws: a card per P (running G, runnext, local queue), the global queue,
 * the goroutines blocked in syscalls each with its M, the per-P timeline (one slice per run, runs
 * that inherited a slice drawn hatched, preempted ends marked), counters for the global queue and
 * threads, and a time scrubber. The cursor time is in the URL hash ({@code #t=<ns>} or
 * {@code #e=<event index>}), so a link (or a headless browser) can open the page at any moment.
 *
 * <p>Traces above {@link #MAX_EVENTS} events keep their last {@code MAX_EVENTS}, as a flight
 * recorder keeps the end of a run (the page says so and replays them as a trace that starts
 * mid-run); use a flight-recorder window for long runs.
 */
public final class HtmlTimeline {
    private HtmlTimeline() {}

    /** About 35 bytes per event in the page: ~10 MB. */
    public static final int MAX_EVENTS = 300_000;

    public static void write(Trace t, Writer w) throws IOException {
        write(t, w, MAX_EVENTS);
    }

    /** {@link #write(Trace, Writer)} keeping at most the last {@code maxEvents} events. */
    static void write(Trace t, Writer w, int maxEvents) throws IOException {
        String tpl = template();
        int at = tpl.indexOf("/*GORT-DATA*/");
        w.write(tpl, 0, at);
        writeData(t, w, maxEvents);
        w.write(tpl, at + "/*GORT-DATA*/".length(), tpl.length() - at - "/*GORT-DATA*/".length());
        w.flush();
    }

    private static String template() {
        try (InputStream in = HtmlTimeline.class.getResourceAsStream("timeline.html")) {
            if (in == null) {
                throw new IllegalStateException("gort: timeline.html resource missing");
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static void writeData(Trace t, Writer w, int maxEvents) throws IOException {
        int n = t.size();
        int from = Math.max(0, n - maxEvents); // the first event kept
        int procs = t.procs(from);
        StringBuilder sb = new StringBuilder(1 << 16);
        sb.append("{\"meta\":{\"workload\":")
                .append(ChromeTraceWriter.str(t.workload))
                .append(",\"procs\":")
                .append(procs)
                .append(",\"config\":")
                .append(ChromeTraceWriter.str(t.config))
                .append(",\"jdk\":")
                .append(ChromeTraceWriter.str(System.getProperty("java.version", "")))
                .append(",\"end\":")
                .append(n == 0 ? 0 : t.ts(n - 1))
                .append(",\"complete\":")
                .append(t.complete && from == 0)
                .append(",\"truncated\":")
                .append(from > 0)
                .append(",\"totalEvents\":")
                .append(t.size())
                .append(",\"threads0\":")
                .append(t.initialThreads)
                .append(",\"wallStart\":")
                .append(t.wallStartMillis)
                .append("},\n\"waitReasons\":[");
        WaitReason[] wr = WaitReason.values();
        for (int i = 0; i < wr.length; i++) {
            sb.append(i == 0 ? "" : ",").append(ChromeTraceWriter.str(wr[i].go()));
        }
        sb.append("],\n\"gs\":{");
        boolean first = true;
        for (Map.Entry<Long, Trace.GInfo> e : t.goroutines.entrySet()) {
            Trace.GInfo gi = e.getValue();
            sb.append(first ? "" : ",")
                    .append('"')
                    .append(e.getKey())
                    .append("\":[")
                    .append(ChromeTraceWriter.str(gi.name()))
                    .append(',')
                    .append(gi.parent())
                    .append(',')
                    .append(ChromeTraceWriter.str(gi.createdAt()))
                    .append(']');
            first = false;
        }
        sb.append("},\n\"objs\":{");
        first = true;
        for (Map.Entry<Long, String> e : t.objects.entrySet()) {
            sb.append(first ? "" : ",")
                    .append('"')
                    .append(e.getKey())
                    .append("\":")
                    .append(ChromeTraceWriter.str(e.getValue()));
            first = false;
        }
        sb.append("},\n\"ev\":[");
        w.write(sb.toString());
        sb.setLength(0);
        for (int i = from; i < n; i++) {
            sb.append(i == from ? "" : ",")
                    .append('[')
                    .append(t.ts(i))
                    .append(',')
                    .append(t.code(i))
                    .append(',')
                    .append(t.small(i))
                    .append(',')
                    .append(t.p(i))
                    .append(',')
                    .append(t.m(i))
                    .append(',')
                    .append(t.g(i))
                    .append(',')
                    .append(t.a(i))
                    .append(',')
                    .append(t.x(i))
                    .append(']');
            if ((i & 1023) == 1023) {
                sb.append('\n');
                w.write(sb.toString());
                sb.setLength(0);
            }
        }
        sb.append("]}");
        w.write(sb.toString());
    }
}
