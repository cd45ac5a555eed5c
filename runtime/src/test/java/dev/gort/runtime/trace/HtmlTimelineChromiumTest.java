package dev.gort.runtime.trace;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The HTML timeline of a real run, loaded in headless Chromium (Debian's {@code chromium} package;
 * CI installs it with {@code .ci/install-chromium.sh}). The page is opened at a scrubbed time through
 * the URL hash, and the DOM Chromium rendered is compared with the Java replay of the same trace at
 * that time: the P rows and their slices, and each P card's running G, runnext and local queue, the
 * global queue. A screenshot is kept in {@code runtime/target/gort-timeline/}.
 *
 * <p>Skips (with the reason) when no Chromium is installed.
 */
class HtmlTimelineChromiumTest {
    static final Path OUT = Path.of("target", "gort-timeline");
    static Path chromium;

    @BeforeAll
    static void findChromium() {
        for (String c : new String[] {
            System.getenv("GORT_CHROMIUM"), "/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"
        }) {
            if (c != null && Files.isExecutable(Path.of(c))) {
                chromium = Path.of(c);
                return;
            }
        }
    }

    static List<String> chromiumCmd(Path profile) {
        List<String> cmd = new ArrayList<>(List.of(
                chromium.toString(),
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--disable-dev-shm-usage",
                "--user-data-dir=" + profile.toAbsolutePath(),
                "--virtual-time-budget=10000"));
        return cmd;
    }

    static String run(List<String> cmd, Path log) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(cmd).redirectError(log.toFile()).start();
        byte[] out = p.getInputStream().readAllBytes();
        if (!p.waitFor(120, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError("chromium did not finish: " + cmd);
        }
        return new String(out, StandardCharsets.UTF_8);
    }

    @Test
    void fanOutPageRendersCardsAndLanesAtAScrubbedTime() throws Exception {
        Assumptions.assumeTrue(
                chromium != null,
                "Chromium not installed (apt-get install chromium, or .ci/install-chromium.sh): HTML test skipped");
        Workloads.Run r = Workloads.fanOut(Workloads.config(4, true), 48, 1_000_000);
        Trace t = r.trace();
        assertTrue(TraceValidator.validate(t, true, r.work()).ok());
        Files.createDirectories(OUT);
        Path html = OUT.resolve("fan-out.html");
        TraceFiles.writeHtml(t, html);
        TraceFiles.writeJson(t, OUT.resolve("fan-out.json"));

        // a moment in the middle of the run where some G is runnable in a queue
        long when = -1;
        for (int i = t.size() / 3; i < t.size(); i++) {
            if (t.code(i) == Ev.GO_START && t.p(i) > 0) {
                when = t.ts(i);
                break;
            }
        }
        assertTrue(when >= 0, "no G ran on P1..P3");
        TraceValidator.Result state = TraceValidator.stateAt(t, when);

        Path profile = Files.createTempDirectory("gort-chromium");
        List<String> cmd = chromiumCmd(profile);
        cmd.add("--dump-dom");
        cmd.add(html.toAbsolutePath().toUri() + "#t=" + when);
        String dom = run(cmd, OUT.resolve("chromium-dump.log"));
        Files.writeString(OUT.resolve("fan-out.dom.html"), dom);
        assertTrue(
                dom.contains("data-ready=\"1\""),
                "the page's script did not finish; see " + OUT.resolve("chromium-dump.log"));

        int procs = t.initialProcs;
        // P rows: one lane label per P, one card per P
        for (int p = 0; p < procs; p++) {
            assertTrue(dom.contains("id=\"p" + p + "\""), "no card for P" + p);
            assertTrue(dom.contains(">P" + p + "</text>"), "no timeline lane for P" + p);
        }
        // slices: one rect per run of a G; count them against the trace
        int runs = 0;
        for (int i = 0; i < t.size(); i++) {
            if (t.code(i) == Ev.GO_START) {
                runs++;
            }
        }
        Matcher sm = Pattern.compile("<rect class=\"slice[^\"]*\"").matcher(dom);
        int rects = 0;
        while (sm.find()) {
            rects++;
        }
        assertEquals(runs, rects, "slices drawn vs runs in the trace");

        // cards at the scrubbed time vs the Java replay
        for (int p = 0; p < procs; p++) {
            long running = 0;
            long runnext = 0;
            int local = 0;
            for (Map.Entry<Long, TraceValidator.GState> e : state.goroutines.entrySet()) {
                TraceValidator.GState s = e.getValue();
                if (TraceValidator.p(s) != p) {
                    continue;
                }
                switch (TraceValidator.loc(s)) {
                    case "running" -> running = e.getKey();
                    case "runnext" -> runnext = e.getKey();
                    case "local" -> local++;
                    default -> {}
                }
            }
            String card = card(dom, p);
            assertTrue(
                    card.contains(
                            "class=\"slot running" + (running != 0 ? " busy" : "") + "\" data-g=\"" + running + "\""),
                    "P" + p + " running should be G" + running + ": " + card);
            assertTrue(
                    card.contains(
                            "class=\"slot runnext" + (runnext != 0 ? " busy" : "") + "\" data-g=\"" + runnext + "\""),
                    "P" + p + " runnext should be G" + runnext + ": " + card);
            assertTrue(
                    card.contains("class=\"queue local\" data-n=\"" + local + "\""),
                    "P" + p + " local queue should hold " + local + ": " + card);
        }
        long global = state.count(TraceValidator.GLOBAL);
        assertTrue(dom.contains("id=\"global\" data-n=\"" + global + "\""), "global queue should hold " + global);

        // and a screenshot, kept as a test artefact
        Path png = OUT.resolve("fan-out.png");
        Files.deleteIfExists(png);
        List<String> shot = chromiumCmd(Files.createTempDirectory("gort-chromium"));
        shot.add("--window-size=1300,1000");
        shot.add("--screenshot=" + png.toAbsolutePath());
        shot.add(html.toAbsolutePath().toUri() + "#t=" + when);
        run(shot, OUT.resolve("chromium-shot.log"));
        assertTrue(Files.size(png) > 10_000, "screenshot too small");
    }

    /** A page of >100k events still loads and scrubs (no argument-spreading of big arrays, checkpoints). */
    @Test
    void largeTraceLoadsAndScrubs() throws Exception {
        Assumptions.assumeTrue(
                chromium != null,
                "Chromium not installed (apt-get install chromium, or .ci/install-chromium.sh): HTML test skipped");
        Workloads.Run r = Workloads.pingPong(Workloads.config(2, true), 20_000);
        Trace t = r.trace();
        assertTrue(t.size() > 100_000, "events: " + t.size());
        Files.createDirectories(OUT);
        Path html = OUT.resolve("ping-pong.html");
        TraceFiles.writeHtml(t, html);
        int idx = t.size() / 2;
        List<String> cmd = chromiumCmd(Files.createTempDirectory("gort-chromium"));
        cmd.add("--dump-dom");
        cmd.add(html.toAbsolutePath().toUri() + "#e=" + idx);
        String dom = run(cmd, OUT.resolve("chromium-big.log"));
        assertTrue(dom.contains("data-ready=\"1\""), "the page's script did not finish on " + t.size() + " events");
        // the cursor sits on the last event with the same timestamp as event idx
        int last = idx;
        while (last + 1 < t.size() && t.ts(last + 1) == t.ts(idx)) {
            last++;
        }
        assertTrue(dom.contains("data-idx=\"" + last + "\""), "scrubbed to event " + last);
    }

    private static String card(String dom, int p) {
        int at = dom.indexOf("id=\"p" + p + "\"");
        int end = dom.indexOf("class=\"pcard", at + 1);
        if (end < 0) {
            end = dom.indexOf("id=\"global\"", at);
        }
        return dom.substring(at, end);
    }
}
