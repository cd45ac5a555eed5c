package dev.gort.runtime.trace;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
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
import org.junit.jupiter.api.io.TempDir;

/**
 * The HTML timeline of a real run, loaded in headless Chromium (Debian's {@code chromium} package;
 * CI installs it with {@code .ci/install-chromium.sh}). The page is opened at a scrubbed time through
 * the URL hash, and the DOM Chromium rendered is compared with the Java replay of the same trace at
 * that time: the P rows and their slices, and each P card's running G, runnext and local queue, the
 * global queue, the threads card against the trace's thread count; the script must run without errors
 * ({@code <body data-errors>} counts them) and draw every lane: the page lists, per lane, the runs in
 * view and a pixel it painted, and the screenshot is checked at that pixel, once more with the
 * cursor (drawn over the lanes) put on such a pixel, which the page must then leave. A zoomed view
 * ({@code #v0=..&v1=..}) must hold exactly the runs that overlap it, and the cursor steps one event
 * at a time, even through events that share a timestamp. Screenshots are kept in
 * {@code runtime/target/gort-timeline/}.
 *
 * <p>Skips (with the reason) when no Chromium is installed.
 */
class HtmlTimelineChromiumTest {
    /** Chromium's profile directories (2 MB each), deleted by JUnit after each test. */
    @TempDir
    Path tmp;

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
                "--hide-scrollbars",
                "--force-device-scale-factor=1",
                "--window-size=1300,1000",
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

        // a moment in the middle of the run where some G is runnable in a queue: a G starting on
        // P1..P3 (stolen, or taken from the global queue), or on P0 if no other P ran anything (its
        // M got no CPU before P0 had run all 48: a loaded machine, as below)
        long when = -1;
        for (int i = t.size() / 3; i < t.size() && when < 0; i++) {
            if (t.code(i) == Ev.GO_START && t.p(i) > 0) {
                when = t.ts(i);
            }
        }
        for (int i = t.size() / 3; i < t.size() && when < 0; i++) {
            if (t.code(i) == Ev.GO_START) {
                when = t.ts(i);
            }
        }
        assertTrue(when >= 0, "no G started in the last two thirds of the trace");
        TraceValidator.Result state = TraceValidator.stateAt(t, when);

        Path profile = Files.createTempDirectory(tmp, "chromium");
        List<String> cmd = chromiumCmd(profile);
        cmd.add("--dump-dom");
        cmd.add(html.toAbsolutePath().toUri() + "#t=" + when);
        String dom = run(cmd, OUT.resolve("chromium-dump.log"));
        Files.writeString(OUT.resolve("fan-out.dom.html"), dom);
        assertTrue(
                dom.contains("data-ready=\"1\""),
                "the page's script did not finish; see " + OUT.resolve("chromium-dump.log"));

        assertNoErrors(dom);

        int procs = t.initialProcs;
        // P lanes: one card per P, one lane per P holding every run of a G on that P (the whole run in view)
        List<long[]> runs = runs(t);
        for (int p = 0; p < procs; p++) {
            assertTrue(dom.contains("id=\"p" + p + "\""), "no card for P" + p);
            Map<String, String> lane = lane(dom, "P" + p);
            int pp = p;
            long want = runs.stream().filter(x -> x[0] == pp).count();
            assertEquals(String.valueOf(want), lane.get("data-inview"), "runs on P" + p + " in the lane");
            // a P may run nothing on a loaded machine (its M got no CPU before the others took the
            // work: a helper's full run at load 16 had no run on P3): then its lane draws nothing
            int drawn = Integer.parseInt(lane.get("data-drawn"));
            if (want > 0) {
                assertTrue(drawn > 0, "nothing drawn in lane P" + p + " although it holds " + want + " runs");
            } else {
                assertEquals(0, drawn, "lane P" + p + " draws runs it does not hold");
            }
        }
        // a zoomed view: the middle tenth of the run holds exactly the runs that overlap it
        long v0 = t.ts(0) + (t.endTs() - t.ts(0)) * 45 / 100;
        long v1 = t.ts(0) + (t.endTs() - t.ts(0)) * 55 / 100;
        List<String> zcmd = chromiumCmd(Files.createTempDirectory(tmp, "chromium"));
        zcmd.add("--dump-dom");
        long sel = runs.get(runs.size() / 2)[3]; // a goroutine to search for
        long selRuns = runs.stream().filter(x -> x[3] == sel).count();
        zcmd.add(html.toAbsolutePath().toUri() + "#t=" + when + "&v0=" + v0 + "&v1=" + v1 + "&g=" + sel);
        String zdom = run(zcmd, OUT.resolve("chromium-zoom.log"));
        assertNoErrors(zdom);
        assertTrue(
                zdom.contains("data-v0=\"" + v0 + "\"") && zdom.contains("data-v1=\"" + v1 + "\""), "view not applied");
        assertTrue(
                zdom.contains("<div id=\"ginfo\" data-g=\"" + sel + "\"><b>G" + sel + " "),
                "search for G" + sel + " not shown");
        assertTrue(
                zdom.contains(" · " + selRuns + (selRuns == 1 ? " run, " : " runs, ")),
                "G" + sel + " has " + selRuns + " runs");
        for (int p = 0; p < procs; p++) {
            int pp = p;
            long want = runs.stream()
                    .filter(x -> x[0] == pp && x[1] <= v1 && x[2] >= v0)
                    .count();
            assertEquals(
                    String.valueOf(want),
                    lane(zdom, "P" + p).get("data-inview"),
                    "runs on P" + p + " in the zoomed view");
        }

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
        // the threads card counts as SCHED's threads= (mcount): threads at the start plus MCreate events so far
        long threads = t.initialThreads;
        for (int i = 0; i < t.size() && t.ts(i) <= when; i++) {
            if (t.code(i) == Ev.M_CREATE) {
                threads++;
            }
        }
        assertTrue(dom.contains("id=\"threads\">" + threads + "<"), "threads card should say " + threads);

        // and a screenshot, kept as a test artefact
        assertProbesPainted(html, when, "fan-out.png", dom, t, runs);

        // the cursor is drawn over the lanes: with it on the pixel that P0's lane (or the first lane
        // with a probe) probed above, every lane must probe elsewhere and the screenshot must show
        // the probed colours (the cursor on P0's probe once failed this test: rgb 199,27,54, the run's
        // colour half covered by the cursor's red)
        String probed = null;
        for (int p = 0; p < procs && probed == null; p++) {
            probed = lane(dom, "P" + p).get("data-probe-t");
        }
        assertTrue(probed != null, "no lane probed a run");
        long onProbe = Long.parseLong(probed);
        List<String> ccmd = chromiumCmd(Files.createTempDirectory(tmp, "chromium"));
        ccmd.add("--dump-dom");
        ccmd.add(html.toAbsolutePath().toUri() + "#t=" + onProbe);
        String cdom = run(ccmd, OUT.resolve("chromium-cursor.log"));
        assertNoErrors(cdom);
        Matcher cx = Pattern.compile("data-cursor-x=\"([0-9.]+)\"").matcher(cdom);
        assertTrue(cx.find(), "the cursor is not in view at t=" + onProbe);
        double cursorX = Double.parseDouble(cx.group(1));
        for (int p = 0; p < procs; p++) {
            String x = lane(cdom, "P" + p).get("data-probe-x");
            assertTrue(
                    x == null || Math.abs(Integer.parseInt(x) - cursorX) >= 2.5,
                    "lane P" + p + " probes x=" + x + ", under the cursor at x=" + cursorX);
        }
        assertProbesPainted(html, onProbe, "fan-out-cursor.png", cdom, t, runs);
    }

    /**
     * Takes a screenshot of the page at time {@code when} (kept as {@code name}) and checks that every
     * P lane that holds a run painted its widest one where {@code dom} (the page at the same time)
     * says it did, in that goroutine's colour; a lane with none (a P that ran nothing) has no probe.
     */
    private void assertProbesPainted(Path html, long when, String name, String dom, Trace t, List<long[]> runs)
            throws Exception {
        Path png = OUT.resolve(name);
        Files.deleteIfExists(png);
        List<String> shot = chromiumCmd(Files.createTempDirectory(tmp, "chromium"));
        shot.add("--window-size=1300,1000");
        shot.add("--screenshot=" + png.toAbsolutePath());
        shot.add(html.toAbsolutePath().toUri() + "#t=" + when);
        run(shot, OUT.resolve(name.replace(".png", "") + "-shot.log"));
        assertTrue(Files.size(png) > 10_000, "screenshot too small");
        java.awt.image.BufferedImage img = javax.imageio.ImageIO.read(png.toFile());
        for (int p = 0; p < t.initialProcs; p++) {
            Map<String, String> lane = lane(dom, "P" + p);
            int pp = p;
            if (runs.stream().noneMatch(x -> x[0] == pp)) {
                assertFalse(lane.containsKey("data-probe-x"), "lane P" + p + " probes a run it does not hold: " + lane);
                continue;
            }
            // the page probes the widest run it draws in full colour (not one that inherited its slice,
            // drawn faded) that has a pixel 2 px inside its edges and 3 px or more from the cursor: one
            // lasting 1 % of the view (~12 px) always has one, so it must have a probe; a lane holding
            // only shorter or inherited runs (a P that ran little on a loaded machine) may not
            long span = t.endTs() - t.ts(0);
            boolean wide = runs.stream().anyMatch(x -> x[0] == pp && x[4] == 0 && (x[2] - x[1]) * 100 >= span);
            if (!wide && !lane.containsKey("data-probe-x")) {
                continue;
            }
            assertTrue(lane.containsKey("data-probe-x"), "lane P" + p + " painted no run: " + lane);
            int x = Integer.parseInt(lane.get("data-probe-x"));
            int y = Integer.parseInt(lane.get("data-probe-y"));
            String[] want = lane.get("data-probe-rgb").split(",");
            int px = img.getRGB(x, y);
            int[] got = {(px >> 16) & 255, (px >> 8) & 255, px & 255};
            for (int c = 0; c < 3; c++) {
                assertTrue(
                        Math.abs(got[c] - Integer.parseInt(want[c])) <= 24,
                        "lane P" + p + " at (" + x + "," + y + "): rgb " + java.util.Arrays.toString(got) + ", want "
                                + lane.get("data-probe-rgb"));
            }
        }
    }

    private static void assertNoErrors(String dom) {
        assertTrue(dom.contains("data-ready=\"1\""), "the page's script did not finish");
        Matcher e = Pattern.compile("<div id=\"errors\">([^<]*)</div>").matcher(dom);
        assertTrue(e.find(), "no errors element");
        assertEquals("", e.group(1), "script errors");
        assertFalse(dom.contains("data-errors="), "script errors counted");
    }

    /** The page's record of one lane: its data-* attributes. */
    private static Map<String, String> lane(String dom, String label) {
        int at = dom.indexOf("data-lane=\"" + label + "\"");
        assertTrue(at >= 0, "no lane " + label);
        String tag = dom.substring(at, dom.indexOf('>', at));
        Map<String, String> m = new java.util.HashMap<>();
        Matcher a = Pattern.compile("(data-[a-z-]+)=\"([^\"]*)\"").matcher(tag);
        while (a.find()) {
            m.put(a.group(1), a.group(2));
        }
        return m;
    }

    /**
     * Each run of a G on a P as the page draws it: {p, start, end, g, inherits} (GoStart to its GoStop or
     * SyscallEnter; inherits: 1 if a GoStart that inherited the time slice began it).
     */
    static List<long[]> runs(Trace t) {
        List<long[]> out = new ArrayList<>();
        Map<Integer, long[]> open = new java.util.HashMap<>();
        for (int i = 0; i < t.size(); i++) {
            int c = t.code(i);
            int p = t.p(i);
            if (p < 0) {
                continue;
            }
            if (c == Ev.GO_START
                    || (c == Ev.SYSCALL_EXIT && t.small(i) != Ev.X_NO_P)
                    || (c == Ev.GO_STATUS && t.small(i) == Ev.L_RUNNING)) {
                long inh = c == Ev.GO_START && t.x(i) == 1 ? 1 : 0;
                open.put(p, new long[] {p, t.ts(i), Long.MAX_VALUE, t.g(i), inh});
            } else if (c == Ev.GO_STOP || c == Ev.SYSCALL_ENTER) {
                long[] o = open.get(p);
                if (o != null && o[3] == t.g(i)) {
                    o[2] = t.ts(i);
                    out.add(o);
                    open.remove(p);
                }
            }
        }
        for (long[] o : open.values()) {
            o[2] = t.endTs();
            out.add(o);
        }
        return out;
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
        // an event that shares its timestamp with the next one (a start that reuses the stop's stamp)
        int idx = t.size() / 2;
        while (idx + 1 < t.size() && t.ts(idx + 1) != t.ts(idx)) {
            idx++;
        }
        assertTrue(idx + 1 < t.size(), "no two events share a timestamp");
        List<String> cmd = chromiumCmd(Files.createTempDirectory(tmp, "chromium"));
        cmd.add("--dump-dom");
        cmd.add(html.toAbsolutePath().toUri() + "#e=" + idx);
        String dom = run(cmd, OUT.resolve("chromium-big.log"));
        assertNoErrors(dom);
        // the cursor sits on event idx itself: a step is one event, not one timestamp
        assertTrue(dom.contains("data-idx=\"" + idx + "\""), "cursor on event " + idx);
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
