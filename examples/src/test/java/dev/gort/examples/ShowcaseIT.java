package dev.gort.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * End-to-end: runs {@code java -jar examples/target/gort-examples.jar ...} in a child JVM exactly as
 * {@code ./gort showcase} and {@code ./gort example} do (no JVM flags: the jar's manifest exports
 * what gort needs), and asserts what it prints. Runs after {@code package} (the jar must exist).
 */
class ShowcaseIT {
    static final Path JAR = Path.of(System.getProperty("gort.examples.jar", "target/gort-examples.jar"));
    static final Path JAVA = Path.of(System.getProperty("gort.java.home", System.getProperty("java.home")), "bin", "java");

    /** A finished child JVM. */
    record Result(int status, String out) {
        List<String> lines() {
            return List.of(out.split("\n"));
        }

        /** The lines of one variant's section: from its "--- scenario: id ---" header to the next header. */
        String section(String scenario, String id) {
            String head = "--- " + scenario + ": " + id + " ---";
            int i = out.indexOf(head);
            assertTrue(i >= 0, "no section " + head + " in:\n" + out);
            int j = out.indexOf("\n--- ", i + head.length());
            int k = out.indexOf("\n=== ", i + head.length());
            int end = Math.min(j < 0 ? out.length() : j, k < 0 ? out.length() : k);
            return out.substring(i, end);
        }
    }

    static Result run(String... args) throws IOException, InterruptedException {
        assertTrue(Files.isRegularFile(JAR), JAR + " is missing: the end-to-end tests run after package");
        List<String> cmd = new ArrayList<>(List.of(JAVA.toString(), "-jar", JAR.toString()));
        cmd.addAll(List.of(args));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        byte[] bytes;
        try (var in = p.getInputStream()) {
            bytes = in.readAllBytes();
        }
        if (!p.waitFor(5, TimeUnit.MINUTES)) {
            p.destroyForcibly();
            fail("timed out: " + cmd);
        }
        return new Result(p.exitValue(), new String(bytes, StandardCharsets.UTF_8));
    }

    static final Pattern SCHED = Pattern.compile(
            "SCHED \\d+ms: gomaxprocs=(\\d+) idleprocs=\\d+ threads=\\d+ spinningthreads=\\d+ needspinning=[01] "
                    + "idlethreads=\\d+ runqueue=\\d+ \\[( \\d+)+ \\] schedticks=\\[ (\\d+ )+\\]");

    /** Every SCHED line of a section, checked against Go 1.25's format and the section's GOMAXPROCS. */
    static int schedLines(String section, int procs) {
        int n = 0;
        for (String l : section.split("\n")) {
            String t = l.trim();
            if (t.startsWith("SCHED ")) {
                Matcher m = SCHED.matcher(t);
                assertTrue(m.matches(), "not Go's schedtrace format: " + t);
                assertEquals(procs, Integer.parseInt(m.group(1)), t);
                n++;
            }
        }
        return n;
    }

    static final Pattern RAN = Pattern.compile("P(\\d+): ran +(\\d+) of (\\d+) goroutines");

    /** P id -> goroutines it ran, from a fan-out section. */
    static java.util.Map<Integer, Integer> ran(String section) {
        java.util.Map<Integer, Integer> r = new java.util.TreeMap<>();
        Matcher m = RAN.matcher(section);
        while (m.find()) {
            r.put(Integer.parseInt(m.group(1)), Integer.parseInt(m.group(2)));
        }
        return r;
    }

    static int intAfter(String text, String regex) {
        Matcher m = Pattern.compile(regex).matcher(text);
        assertTrue(m.find(), "no /" + regex + "/ in:\n" + text);
        return Integer.parseInt(m.group(1));
    }

    @Test
    void helpDocumentsEveryScenarioAndToggle() throws Exception {
        Result r = run("showcase", "--help");
        assertEquals(0, r.status(), r.out());
        for (String s : List.of("fan-out", "syscalls", "tight-loop", "ping-pong", "--gomaxprocs", "--stealing on|off",
                "--spinning on|off", "--preempt S", "none | entry | backedge | budget", "--schedtrace N", "--scheddetail",
                "--out DIR")) {
            assertTrue(r.out().contains(s), "--help does not mention " + s + ":\n" + r.out());
        }
    }

    @Test
    void badUsageExitsWithStatus2() throws Exception {
        Result r = run("showcase", "--stealing", "maybe");
        assertEquals(2, r.status(), r.out());
        assertTrue(r.out().contains("--stealing wants on or off, not 'maybe'"), r.out());
        assertEquals(2, run("showcase", "no-such-scenario").status());
    }

    @Test
    void fanOutIsStolenWithStealingAndStaysOnP0Without(@TempDir Path dir) throws Exception {
        Result r = run("showcase", "fan-out", "--out", dir.toString());
        assertEquals(0, r.status(), r.out());
        assertTrue(r.out().startsWith("gort showcase: Go's scheduler"), r.out());

        String on = r.section("fan-out", "stealing-on");
        assertTrue(on.contains("GOMAXPROCS=4, stealing on"), on);
        assertTrue(schedLines(on, 4) >= 1, on);
        java.util.Map<Integer, Integer> ranOn = ran(on);
        assertEquals(48, ranOn.values().stream().mapToInt(Integer::intValue).sum(), on);
        assertTrue(ranOn.values().stream().filter(n -> n > 0).count() >= 2, "only one P ran goroutines with stealing on:\n" + on);
        assertTrue(intAfter(on, "steals: (\\d+) goroutines moved") > 0, on);
        assertTrue(intAfter(on, "runnext: (\\d+) goroutines kicked") >= 40, on);
        assertTrue(on.contains("=> the idle Ps stole P0's goroutines"), on);

        String off = r.section("fan-out", "stealing-off");
        assertTrue(off.contains("GOMAXPROCS=4, stealing off"), off);
        assertTrue(schedLines(off, 4) >= 1, off);
        assertEquals(java.util.Map.of(0, 48, 1, 0, 2, 0, 3, 0), ran(off), off);
        assertEquals(0, intAfter(off, "steals: (\\d+) goroutines moved"), off);
        assertTrue(off.contains("=> no stealing: P0 ran all 48 goroutines alone"), off);

        for (String f : List.of("fan-out-stealing-on.html", "fan-out-stealing-off.html")) {
            Path html = dir.resolve(f);
            assertTrue(Files.size(html) > 10_000, html + " is too small");
            String page = Files.readString(html);
            assertTrue(page.startsWith("<!DOCTYPE html>") || page.startsWith("<!doctype html>"), "not an HTML page: " + f);
            assertFalse(page.contains("src=\"http"), "the timeline must not load anything from the network");
            assertTrue(r.out().contains("  " + html.toAbsolutePath()), "the summary does not list " + html + ":\n" + r.out());
        }
        assertTrue(r.out().contains("=== HTML timelines"), r.out());
    }

    @Test
    void oneVariantWithItsTogglesFromTheCommandLine() throws Exception {
        Result r = run("showcase", "fan-out", "--stealing", "off", "--gomaxprocs", "3", "--goroutines", "12", "--no-html");
        assertEquals(0, r.status(), r.out());
        String s = r.section("fan-out", "backedge-nosteal");
        assertTrue(s.contains("GOMAXPROCS=3, stealing off"), s);
        assertEquals(java.util.Map.of(0, 12, 1, 0, 2, 0), ran(s), s);
        assertEquals(1, r.out().split("\n--- ", -1).length - 1, "one variant only:\n" + r.out());
        assertFalse(r.out().contains("timeline:"), r.out());
        assertTrue(schedLines(s, 3) >= 1, s);
    }

    @Test
    void examplesRunFromTheJar() throws Exception {
        Result r = run("PrimeSieve", "10");
        assertEquals(0, r.status(), r.out());
        assertEquals(List.of("2", "3", "5", "7", "11", "13", "17", "19", "23", "29"), r.lines().subList(0, 10));
        Result list = run("list");
        assertEquals(0, list.status(), list.out());
        List<String> names = new ArrayList<>();
        for (Main.Example e : Main.EXAMPLES) {
            names.add(e.name());
        }
        assertEquals(names, list.lines());
        Result unknown = run("NoSuchExample");
        assertEquals(2, unknown.status(), unknown.out());
    }
}
