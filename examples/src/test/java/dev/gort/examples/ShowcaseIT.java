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
    static final Path JAVA =
            Path.of(System.getProperty("gort.java.home", System.getProperty("java.home")), "bin", "java");

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
        return run(java.util.Map.of(), args);
    }

    /** {@link #run(String...)} in a process that may open at most {@code fds} file descriptors (ulimit -n). */
    static Result runWithFds(int fds, String... args) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of(
                "bash", "-c", "ulimit -n " + fds + " && exec \"$0\" \"$@\"", JAVA.toString(), "-jar", JAR.toString()));
        cmd.addAll(List.of(args));
        return exec(new ProcessBuilder(cmd), cmd);
    }

    /** {@link #run(String...)} with these environment variables added. */
    static Result run(java.util.Map<String, String> env, String... args) throws IOException, InterruptedException {
        assertTrue(Files.isRegularFile(JAR), JAR + " is missing: the end-to-end tests run after package");
        List<String> cmd = new ArrayList<>(List.of(JAVA.toString(), "-jar", JAR.toString()));
        cmd.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(cmd);
        pb.environment().remove("GODEBUG");
        pb.environment().putAll(env);
        return exec(pb, cmd);
    }

    /** Runs {@code pb} (output and errors merged) to its end, at most 5 minutes. */
    private static Result exec(ProcessBuilder pb, List<String> cmd) throws IOException, InterruptedException {
        Process p = pb.redirectErrorStream(true).start();
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
        for (String s : List.of(
                "fan-out",
                "syscalls",
                "tight-loop",
                "ping-pong",
                "network",
                "--server M",
                "--conns N",
                "--gomaxprocs",
                "--stealing on|off",
                "--spinning on|off",
                "--preempt S",
                "none | entry | backedge | budget",
                "--schedtrace N",
                "--scheddetail",
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

    /**
     * An {@code --out} that is a file is a usage error before anything runs (the scenario used to run
     * to its end, then fail with FileAlreadyExistsException and a stack trace).
     */
    @Test
    void outThatIsAFileIsRefusedBeforeAnyRun(@TempDir Path dir) throws Exception {
        Path file = Files.writeString(dir.resolve("file"), "x");
        for (String[] args : List.of(
                new String[] {"showcase", "tight-loop", "--out", file.toString()},
                new String[] {"showcase", "tight-loop", "--out=" + file.resolve("sub")})) {
            Result r = run(args);
            assertEquals(2, r.status(), r.out());
            assertTrue(r.out().startsWith("showcase: --out: "), r.out());
            assertFalse(r.out().contains("==="), "a scenario ran:\n" + r.out());
            assertFalse(r.out().contains("\tat "), r.out());
        }
        assertTrue(run("showcase", "tight-loop", "--out", file.toString())
                .out()
                .startsWith("showcase: --out: " + file + " is not a directory\n"));
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
        // the rule: an idle P that looks while P0's queue holds goroutines takes some
        assertEquals(0, intAfter(on, "looks: .*, (\\d+) of them came back empty"), on);
        // and on a machine that runs the woken Ms at all, that spreads the work; only when none of
        // their threads ran before P0 had picked its last goroutine may P0 run all 48
        assertTrue(
                ranOn.values().stream().filter(n -> n > 0).count() >= 2
                        || on.contains("=> no P stole anything this time: no idle P's M ran while P0's queue held"),
                "only one P ran goroutines with stealing on, though idle Ps looked:\n" + on);
        if (intAfter(on, "preemptions: (\\d+)") == 0) {
            // main spawned all 48 on P0 without being preempted: the other Ps got theirs by stealing
            assertTrue(intAfter(on, "steals: (\\d+) goroutines moved") > 0, on);
            assertTrue(intAfter(on, "runnext: (\\d+) goroutines kicked") >= 40, on);
            assertTrue(on.contains("=> the idle Ps stole P0's goroutines"), on);
        }

        String off = r.section("fan-out", "stealing-off");
        assertTrue(off.contains("GOMAXPROCS=4, stealing off"), off);
        assertTrue(schedLines(off, 4) >= 1, off);
        assertEquals(0, intAfter(off, "steals: (\\d+) goroutines moved"), off);
        assertEquals(48, ran(off).values().stream().mapToInt(Integer::intValue).sum(), off);
        if (intAfter(off, "preemptions: (\\d+)") == 0) {
            assertEquals(java.util.Map.of(0, 48, 1, 0, 2, 0, 3, 0), ran(off), off);
            assertTrue(off.contains("=> no stealing: P0 ran all 48 goroutines alone"), off);
        } else {
            // a machine so busy that 1 ms of work took 10 ms: preempted goroutines (and main) went to
            // the global queue, the one way to another P when stealing is off
            assertTrue(off.contains("=> no stealing"), off);
        }

        for (String f : List.of("fan-out-stealing-on.html", "fan-out-stealing-off.html")) {
            Path html = dir.resolve(f);
            assertTrue(Files.size(html) > 10_000, html + " is too small");
            String page = Files.readString(html);
            assertTrue(
                    page.startsWith("<!DOCTYPE html>") || page.startsWith("<!doctype html>"), "not an HTML page: " + f);
            assertFalse(page.contains("src=\"http"), "the timeline must not load anything from the network");
            assertTrue(
                    r.out().contains("  " + html.toAbsolutePath()),
                    "the summary does not list " + html + ":\n" + r.out());
        }
        assertTrue(r.out().contains("=== HTML timelines"), r.out());
    }

    @Test
    void oneVariantWithItsTogglesFromTheCommandLine() throws Exception {
        Result r =
                run("showcase", "fan-out", "--stealing", "off", "--gomaxprocs", "3", "--goroutines", "12", "--no-html");
        assertEquals(0, r.status(), r.out());
        String s = r.section("fan-out", "backedge-nosteal");
        assertTrue(s.contains("GOMAXPROCS=3, stealing off"), s);
        assertEquals(0, intAfter(s, "steals: (\\d+) goroutines moved"), s);
        if (intAfter(s, "preemptions: (\\d+)") == 0) {
            assertEquals(java.util.Map.of(0, 12, 1, 0, 2, 0), ran(s), s);
        }
        assertEquals(1, r.out().split("\n--- ", -1).length - 1, "one variant only:\n" + r.out());
        assertFalse(r.out().contains("timeline:"), r.out());
        assertTrue(schedLines(s, 3) >= 1, s);
    }

    static double msAfter(String text, String regex) {
        Matcher m = Pattern.compile(regex).matcher(text);
        assertTrue(m.find(), "no /" + regex + "/ in:\n" + text);
        return Double.parseDouble(m.group(1));
    }

    /** The short goroutines' latencies (ms) printed by a tight-loop section. */
    static List<Double> shortLatencies(String section) {
        Matcher m = Pattern.compile("short goroutines started (.*) after the loop began")
                .matcher(section);
        assertTrue(m.find(), section);
        List<Double> r = new ArrayList<>();
        for (String p : m.group(1).split(", ")) {
            r.add(Double.parseDouble(p.replace(" ms", "")));
        }
        return r;
    }

    @Test
    void blockingSyscallsMakeTheThreadCountClimbPastGomaxprocs(@TempDir Path dir) throws Exception {
        Result r = run("showcase", "syscalls", "--out", dir.toString());
        assertEquals(0, r.status(), r.out());
        for (String mode : List.of("wrapped", "unwrapped")) {
            String s = r.section("syscalls", mode);
            assertTrue(s.contains("GOMAXPROCS=2"), s);
            assertTrue(schedLines(s, 2) >= 1, s);
            int threads = intAfter(s, "threads: (\\d+) at most");
            // 6 goroutines blocked at once, each holding its thread, plus sysmon: well past 2 Ps
            assertTrue(threads > 2 + 1, "threads did not climb past GOMAXPROCS:\n" + s);
            assertTrue(intAfter(s, "handoffs: (\\d+) Ps taken") >= 1, s);
            assertTrue(s.contains("=> the thread count climbed past GOMAXPROCS=2 to " + threads), s);
            assertTrue(Files.size(dir.resolve("syscalls-" + mode + ".html")) > 10_000, mode);
        }
        assertTrue(
                r.section("syscalls", "wrapped").contains("syscall exits (which P the goroutine came back on): "),
                r.out());
        // the default model is Go 1.26's: no _Psyscall (the explanation once said the P waits there)
        assertTrue(r.out().contains("its P stays _Prunning with the thread until sysmon takes it"), r.out());
        assertFalse(r.out().contains("_Psyscall"), r.out());
    }

    /** Under {@code GODEBUG=psyscall=1} the explanation describes Go 1.25's model, the one that runs. */
    @Test
    void syscallsExplainGo125sModelUnderPsyscall() throws Exception {
        Result r = run(
                java.util.Map.of("GODEBUG", "psyscall=1"),
                "showcase",
                "syscalls",
                "--syscall",
                "wrapped",
                "--syscalls",
                "2",
                "--syscall-ms",
                "5",
                "--no-html");
        assertEquals(0, r.status(), r.out());
        assertTrue(
                r.out()
                        .contains("with GODEBUG=psyscall=1, Go 1.25's model,\nthe P leaves its thread and waits in"
                                + " _Psyscall"),
                r.out());
        assertFalse(r.out().contains("_Prunning"), r.out());
    }

    @Test
    void tightLoopIsPreemptedWithBackEdgePollsAndNotWithout(@TempDir Path dir) throws Exception {
        // A 100 ms loop rather than 40: sysmon sleeps up to 10 ms between looks and a loaded CI
        // machine delays it further; the claim (preempted, the short goroutines ran before the
        // loop ended) does not depend on the length.
        Result r = run("showcase", "tight-loop", "--loop-ms", "100", "--out", dir.toString());
        assertEquals(0, r.status(), r.out());
        assertTrue(r.out().contains("the preemption agent is active"), r.out());

        String be = r.section("tight-loop", "backedge");
        assertTrue(be.contains("GOMAXPROCS=1, stealing on, preemption backedge"), be);
        assertTrue(schedLines(be, 1) >= 1, be);
        double loop = msAfter(be, "loop: ([0-9.]+) ms of spinning");
        assertTrue(loop >= 99.5, be);
        assertTrue(intAfter(be, "preempted (\\d+) time") >= 1, "the loop was not preempted:\n" + be);
        List<Double> lat = shortLatencies(be);
        assertEquals(3, lat.size(), be);
        // the loop inherited main's slice through runnext (the trace's stamps: main's fresh start,
        // the loop's first run and its first preemption), and was stopped after one whole 10 ms slice
        double began = msAfter(be, "the slice began ([0-9.]+) ms before the loop");
        double slice = msAfter(be, "the slice ran ([0-9.]+) ms before sysmon's request stopped the loop");
        assertTrue(began < slice, "the loop was stopped before it started in the slice:\n" + be);
        assertTrue(slice >= 9.5, "the loop was preempted before its slice was used up:\n" + be);
        for (double l : lat) {
            // preempted: the short goroutines ran before the loop ended
            assertTrue(l < loop, "latency " + l + " ms with a " + loop + " ms loop:\n" + be);
        }
        assertTrue(be.contains("=> sysmon preempted the loop after"), be);
        // the figures are read once the carriers ended, the trace's requests against its window
        assertTrue(be.contains("preemption figures adds up: "), be);
        assertTrue(be.contains(", one per request raised while it recorded"), be);

        String none = r.section("tight-loop", "none");
        assertTrue(none.contains("preemption none (in a child JVM started with -Dgort.preempt=none)"), none);
        assertEquals(0, intAfter(none, "preempted (\\d+) time"), none);
        double loopNone = msAfter(none, "loop: ([0-9.]+) ms of spinning");
        for (double l : shortLatencies(none)) {
            assertTrue(l >= loopNone - 0.2, "a short goroutine ran before the loop ended without preemption:\n" + none);
        }
        assertTrue(none.contains("=> no yield points"), none);
        for (String f : List.of("tight-loop-backedge.html", "tight-loop-none.html")) {
            assertTrue(Files.size(dir.resolve(f)) > 10_000, f);
            assertTrue(r.out().contains("  " + dir.resolve(f).toAbsolutePath()), r.out());
        }
    }

    /**
     * {@code --preempt entry}: the loop's body calls no instrumented method, so it reaches no yield
     * point and the verdict says so (it used to blame sysmon's timing: "sysmon did not get to it in time").
     */
    @Test
    void tightLoopWithEntryPollsIsNotPreemptedAndSaysWhy(@TempDir Path dir) throws Exception {
        Result r = run("showcase", "tight-loop", "--preempt", "entry", "--loop-ms", "60", "--out", dir.toString());
        assertEquals(0, r.status(), r.out());
        String en = r.section("tight-loop", "entry");
        assertEquals(0, intAfter(en, "preempted (\\d+) time"), en);
        assertTrue(en.contains("=> entry yield points only: the loop's body calls no instrumented method"), en);
        assertFalse(en.contains("did not get to it in time"), en);
    }

    @Test
    void pingPongPairSharesOneSliceAndIsPreemptedTogether(@TempDir Path dir) throws Exception {
        Result r = run("showcase", "ping-pong", "--pair-ms", "60", "--out", dir.toString());
        assertEquals(0, r.status(), r.out());

        String be = r.section("ping-pong", "backedge");
        assertTrue(schedLines(be, 1) >= 1, be);
        assertTrue(intAfter(be, "preempted (\\d+) time") >= 1, "the pair was not preempted:\n" + be);
        double game = msAfter(be, "hops in ([0-9.]+) ms");
        double waited = msAfter(be, "bystander started ([0-9.]+) ms after the game began");
        assertTrue(waited < game, "the bystander waited " + waited + " ms of a " + game + " ms game:\n" + be);
        // it waited for a whole slice: sysmon preempts one that has run 10 ms (counted in the
        // scheduler's stamps, not from the game's first clock read, which a descheduled carrier delays)
        double afterSlice =
                msAfter(be, "bystander started ([0-9.]+) ms after the time slice that was preempted for it");
        assertTrue(afterSlice >= 9.5, "the bystander ran before a slice was used up:\n" + be);
        Matcher m = Pattern.compile(
                        "=> the pair shared one slice of ([0-9.]+) ms \\((\\d+) runs inherited it through runnext\\)")
                .matcher(be);
        assertTrue(m.find(), be);
        assertTrue(Double.parseDouble(m.group(1)) >= 9.0, be);
        assertTrue(Integer.parseInt(m.group(2)) >= 2, "the slice was not handed on through runnext:\n" + be);

        String none = r.section("ping-pong", "none");
        assertEquals(0, intAfter(none, "preempted (\\d+) time"), none);
        double gameNone = msAfter(none, "hops in ([0-9.]+) ms");
        assertTrue(msAfter(none, "bystander started ([0-9.]+) ms after the game began") >= gameNone - 0.2, none);
        assertTrue(none.contains("=> no yield points: the pair was never preempted"), none);
        for (String sec : List.of(be, none)) {
            assertTrue(sec.contains("preemption figures adds up: "), sec);
            assertFalse(sec.contains("but the trace has"), sec);
        }
    }

    @Test
    void networkServesThousandConnectionsOnFewThreadsAndBlockingSocketsOnOneEach(@TempDir Path dir) throws Exception {
        Result r = run("showcase", "network", "--out", dir.toString());
        assertEquals(0, r.status(), r.out());
        assertTrue(r.out().contains("=== 1. Network"), r.out());

        String poller = r.section("network", "poller");
        assertTrue(poller.contains("GOMAXPROCS=2"), poller);
        assertTrue(schedLines(poller, 2) >= 1, poller);
        assertEquals(1000, intAfter(poller, "connections: (\\d+) open at once"), poller);
        // every server goroutine waited on the poller at once, not on a thread
        int parked = intAfter(poller, "(\\d+) goroutines parked on the poller");
        assertTrue(parked >= 1000 && parked <= 1001, poller); // and the accept loop, once it has parked
        int waitingThreads = intAfter(poller, "threads: \\d+ at most .*, (\\d+) while the 1000 connections waited");
        // near GOMAXPROCS (2 Ps, sysmon, an idle M in the poll); slack for a P that sysmon retakes from a
        // carrier it sees blocked on a loaded machine, still two orders of magnitude below a thread each
        assertTrue(waitingThreads <= 2 + 8, "the poller's run used " + waitingThreads + " threads:\n" + poller);
        assertEquals(5000, intAfter(poller, "echoed: (\\d+) messages"), poller);
        assertEquals(5000 * 64, intAfter(poller, "messages, (\\d+) bytes, every one checked"), poller);
        assertEquals(1000, intAfter(poller, "(\\d+) server goroutines saw their connection's end"), poller);
        assertTrue(poller.contains("=> 1000 connections served on "), poller);

        String blocking = r.section("network", "blocking");
        assertTrue(blocking.contains("every blocking call wrapped in Syscall.block"), blocking);
        // 1000 server goroutines blocked in a read at once: each holds its thread
        int blockingThreads = intAfter(blocking, "threads: \\d+ at most .*, (\\d+) while the 1000 connections waited");
        assertTrue(blockingThreads >= 1000, blocking);
        // the JVM's count is three per carrier: what the other two are is said beside it
        assertTrue(
                blocking.contains(
                        "; each carrier thread starts 2 parked spacer threads beside it, -Dgort.carrier.spacers)"),
                blocking);
        assertEquals(5000 * 64, intAfter(blocking, "messages, (\\d+) bytes, every one checked"), blocking);
        assertEquals(1000, intAfter(blocking, "(\\d+) server goroutines saw their connection's end"), blocking);
        assertTrue(blocking.contains("=> the thread count climbed to "), blocking);
        assertFalse(r.out().contains("FAILED"), r.out());
        for (String f : List.of("network-poller.html", "network-blocking.html")) {
            assertTrue(Files.size(dir.resolve(f)) > 10_000, f);
            assertTrue(r.out().contains("  " + dir.resolve(f).toAbsolutePath()), r.out());
        }
    }

    /**
     * The network scenario's heading gives the connections asked for (it said 1,000 whatever
     * --conns was); --conns beyond the file descriptors this process may open is a usage error
     * before any run; and running out of descriptors during a run (the up-front count cannot see
     * the run's own: the listener, the poller's) fails that run with a FAILED line and a hint, not
     * a panic of the whole showcase (java.net.SocketException: Too many open files).
     */
    @Test
    void networkHeadingCountsAndRunningOutOfDescriptorsIsAFailedRun() throws Exception {
        Result small = run("showcase", "network", "--server", "poller", "--conns", "30", "--rounds", "1", "--no-html");
        assertEquals(0, small.status(), small.out());
        assertTrue(small.out().contains("=== 1. Network: 30 connections on a few threads"), small.out());

        Result tooMany = runWithFds(300, "showcase", "network", "--server", "poller", "--conns", "1000", "--no-html");
        assertEquals(2, tooMany.status(), tooMany.out());
        assertTrue(tooMany.out().startsWith("showcase: --conns 1000 needs 2000 file descriptors"), tooMany.out());
        assertTrue(tooMany.out().contains("(ulimit -n: 300, "), tooMany.out());
        assertFalse(tooMany.out().contains("==="), "a scenario ran:\n" + tooMany.out());

        // the most the up-front count allows: the run's own descriptors come on top
        int most = intAfter(tooMany.out(), "lower --conns to (\\d+) or less");
        Result out = runWithFds(
                300, "showcase", "network", "--server", "poller", "--conns", "" + most, "--rounds", "1", "--no-html");
        assertEquals(1, out.status(), out.out());
        assertTrue(out.out().contains("=== 1. Network: " + most + " connections"), out.out());
        assertTrue(out.out().contains("  FAILED: ran out of file descriptors with "), out.out());
        assertTrue(
                out.out().contains("this process may open 300 (ulimit -n); lower --conns or raise the limit"),
                out.out());
        assertFalse(out.out().contains("panic:"), out.out());
        assertFalse(out.out().contains("\tat "), out.out());
    }

    @Test
    void examplesRunFromTheJar() throws Exception {
        Result r = run("PrimeSieve", "10");
        assertEquals(0, r.status(), r.out());
        assertEquals(
                List.of("2", "3", "5", "7", "11", "13", "17", "19", "23", "29"),
                r.lines().subList(0, 10));
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
