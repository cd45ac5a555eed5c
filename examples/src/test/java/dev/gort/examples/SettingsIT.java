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
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every setting of the README's configuration table, given to {@code java -jar gort-examples.jar} in
 * a child JVM as a user gives it: a good value is the value the runtime uses ({@code env} prints what
 * the runtime's own readers return), a malformed one stops the JVM with Go's kind of fatal error naming
 * it (status 2, no stack trace, no {@code -javaagent} abort), and a malformed GOMAXPROCS is ignored as
 * Go ignores it. The table itself is read from the README, so a setting added there without a case
 * here fails {@link #everySettingOfTheReadmeTableHasACase}.
 */
class SettingsIT {
    record Result(int status, String out) {
        /** The value {@code env} printed for {@code key}. */
        String value(String key) {
            Matcher m = Pattern.compile("(?m)^" + Pattern.quote(key) + "=(.*)$").matcher(out);
            assertTrue(m.find(), "no " + key + " in:\n" + out);
            return m.group(1);
        }
    }

    static Result java(List<String> jvm, Map<String, String> env, String... args)
            throws IOException, InterruptedException {
        assertTrue(Files.isRegularFile(ShowcaseIT.JAR), ShowcaseIT.JAR + " is missing: this test runs after package");
        List<String> cmd = new ArrayList<>(List.of(ShowcaseIT.JAVA.toString()));
        cmd.addAll(jvm);
        cmd.addAll(List.of("-jar", ShowcaseIT.JAR.toString()));
        cmd.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
        pb.environment().keySet().removeIf(k -> k.startsWith("GORT_") || k.equals("GOMAXPROCS") || k.equals("GODEBUG"));
        pb.environment().putAll(env);
        Path log = Files.createTempFile("gort-settings", ".log");
        pb.redirectOutput(log.toFile());
        Process p = pb.start();
        p.getOutputStream().close();
        if (!p.waitFor(2, TimeUnit.MINUTES)) {
            p.destroyForcibly();
            fail("did not exit: " + cmd + "\n" + Files.readString(log));
        }
        String out = Files.readString(log, StandardCharsets.UTF_8);
        Files.delete(log);
        return new Result(p.exitValue(), out);
    }

    static Result env(String... jvm) throws IOException, InterruptedException {
        return java(List.of(jvm), Map.of(), "env");
    }

    /** A good value of each setting, and what {@code env} must then print. */
    static final Map<String, String> GOOD = new LinkedHashMap<>();

    /** A malformed value of each setting, and the fatal error it must produce. */
    static final Map<String, String> BAD = new LinkedHashMap<>();

    static {
        GOOD.put("-Dgort.gomaxprocs=3", "gort.gomaxprocs=3");
        GOOD.put("-Dgort.runqsize=64", "gort.runqsize=64");
        GOOD.put("-Dgort.stealing=false", "gort.stealing=false");
        GOOD.put("-Dgort.spinning=off", "gort.spinning=false");
        GOOD.put("-Dgort.maxthreads=50", "gort.maxthreads=50");
        GOOD.put("-Dgort.carrier.spacers=0", "gort.carrier.spacers=0"); // its effect: CarrierSpacersTest (runtime)
        GOOD.put("-Dgort.preempt=entry", "gort.preempt=entry");
        GOOD.put("-Dgort.preempt.stride=0", "gort.preempt.stride=0"); // "0 = a poll at every back-edge"
        GOOD.put("-Dgort.preempt.callers=false", "gort.preempt.callers=false");
        GOOD.put("-Dgort.preempt.budget=1000", "gort.preempt.budget=1000");
        GOOD.put("-Dgort.preempt.sites=off", "gort.preempt.sites=false");
        // its effect: TransformCacheTest (agent); the jar's agent writes its entries there
        GOOD.put("-Dgort.agent.cache=target/settings-agent-cache", "gort.agent.cache=target/settings-agent-cache");
        GOOD.put("-Dgort.sysmon.maxdelay=500", "gort.sysmon.maxdelay=500");
        GOOD.put("-Dgort.trace=out.json", "gort.trace=out.json");
        GOOD.put("-Dgort.trace=OUT.HTML", "gort.trace=OUT.HTML"); // the extension's case is ignored
        GOOD.put("-Dgort.trace.window=5", "gort.trace.window=5");
        GOOD.put("-Dgort.trace.level=1", "gort.trace.level=1");
        GOOD.put("-Dgort.trace.workload=sieve", "gort.trace.workload=sieve");
        // the jar's manifest enables native access: tsc is readable on x86-64 Linux (TraceClockSourceTest)
        GOOD.put("-Dgort.trace.clock=NANOTIME", "gort.trace.clock=nanotime");
        GOOD.put("-Dgort.creators=stack", "gort.creators=stack");
        GOOD.put("-Dgort.debug.checks=true", "gort.debug.checks=true");
        GOOD.put("-Dgort.fatal=throw", "gort.fatal=throw");
        GOOD.put("-Dgort.seed=-42", "gort.seed=-42");
        // the jar's agent (and its Add-Opens) open java.lang: goroutine is possible, and the default
        GOOD.put("-Dgort.threadlocals=carrier", "gort.threadlocals=carrier");
        GOOD.put("-Dgort.threadlocals=GOROUTINE", "gort.threadlocals=goroutine");
        // the jar's manifest enables native access and exports sun.nio.ch: epoll is possible, and the default
        GOOD.put("-Dgort.netpoll=selector", "gort.netpoll=selector");
        GOOD.put("-Dgort.netpoll=EPOLL", "gort.netpoll=epoll");
        GOOD.put("-Dgort.jitdirective=off", "gort.jitdirective=false"); // its effect: JitDirectivesTest (runtime)
        GOOD.put("-Dgort.godebug=schedtrace=7,scheddetail=1", "GODEBUG.schedtrace=7");
        GOOD.put("-Dgort.debug=sigtrap=1", "GODEBUG.sigtrap=1");
        GOOD.put("-Dgort.godebug=updatemaxprocs=0", "GODEBUG.updatemaxprocs=0");
        GOOD.put("-Dgort.godebug=containermaxprocs=0", "GODEBUG.containermaxprocs=0");
        GOOD.put("-Dgort.godebug=midlecpu=0", "GODEBUG.midlecpu=0");
        GOOD.put("-Dgort.godebug=psyscall=1", "GODEBUG.psyscall=1");
        GOOD.put("-Dgort.jmx=true", "gort.jmx=true"); // its effect: ObserversStartupTest (runtime)
        GOOD.put("-Dgort.debug.http=127.0.0.1:0", "gort.debug.http=127.0.0.1:0"); // ObserversStartupTest too
        GOOD.put("-Dgort.jfr=true", "gort.jfr=true"); // its effect: JfrEventsTest (runtime)
        GOOD.put("-Dgort.traceback=system", "gort.traceback=system"); // GoroutineDumpLayoutTest (runtime)

        BAD.put("-Dgort.runqsize=3", "malformed -Dgort.runqsize=3: want a power of two from 2 to 65536");
        BAD.put("-Dgort.runqsize=0", "malformed -Dgort.runqsize=0: want a power of two");
        BAD.put("-Dgort.runqsize=-8", "malformed -Dgort.runqsize=-8: want a power of two");
        BAD.put("-Dgort.runqsize=1073741824", "malformed -Dgort.runqsize=1073741824: want a power of two");
        BAD.put("-Dgort.stealing=maybe", "malformed -Dgort.stealing=maybe: want true or false");
        BAD.put("-Dgort.spinning=2", "malformed -Dgort.spinning=2: want true or false");
        BAD.put("-Dgort.maxthreads=0", "malformed -Dgort.maxthreads=0: want an integer >= 1");
        BAD.put("-Dgort.carrier.spacers=9", "malformed -Dgort.carrier.spacers=9: want an integer from 0 to 8");
        BAD.put("-Dgort.preempt=bogus", "malformed -Dgort.preempt=bogus: want one of none, entry, backedge, budget");
        BAD.put("-Dgort.preempt.stride=-1", "malformed -Dgort.preempt.stride=-1: want an integer >= 0");
        BAD.put("-Dgort.preempt.callers=nope", "malformed -Dgort.preempt.callers=nope: want true or false");
        BAD.put("-Dgort.preempt.budget=0", "malformed -Dgort.preempt.budget=0: want an integer >= 1");
        BAD.put("-Dgort.preempt.sites=some", "malformed -Dgort.preempt.sites=some: want true or false");
        BAD.put("-Dgort.sysmon.maxdelay=5", "malformed -Dgort.sysmon.maxdelay=5: want an integer >= 20");
        BAD.put(
                "-Dgort.trace=sieve.txt",
                "malformed -Dgort.trace=sieve.txt: want a file ending in .json, .json.gz, .html, .pftrace, .pftrace.gz or .trace, or one called trace.out");
        BAD.put("-Dgort.trace.window=abc", "malformed -Dgort.trace.window=abc: want an integer >= 0");
        BAD.put("-Dgort.trace.level=3", "malformed -Dgort.trace.level=3: want an integer from 1 to 2");
        BAD.put("-Dgort.trace.clock=sundial", "malformed -Dgort.trace.clock=sundial: want one of tsc, nanotime");
        BAD.put("-Dgort.creators=all", "malformed -Dgort.creators=all: want one of off, stack");
        BAD.put("-Dgort.debug.checks=yes!", "malformed -Dgort.debug.checks=yes!: want true or false");
        BAD.put("-Dgort.jmx=maybe", "malformed -Dgort.jmx=maybe: want true or false");
        BAD.put("-Dgort.fatal=explode", "malformed -Dgort.fatal=explode: want one of halt, throw");
        BAD.put("-Dgort.seed=0x2a", "malformed -Dgort.seed=0x2a: want a 64-bit integer");
        // goroutine without java.lang open: GoroutineThreadLocalsStartupTest (runtime), no agent there
        BAD.put("-Dgort.threadlocals=fiber", "malformed -Dgort.threadlocals=fiber: want one of goroutine, carrier");
        BAD.put("-Dgort.netpoll=kqueue", "malformed -Dgort.netpoll=kqueue: want one of epoll, selector");
        BAD.put("-Dgort.jitdirective=maybe", "malformed -Dgort.jitdirective=maybe: want true or false");
        BAD.put("-Dgort.jfr=maybe", "malformed -Dgort.jfr=maybe: want true or false");
        BAD.put(
                "-Dgort.debug.http=abc",
                "malformed -Dgort.debug.http=abc: want [127.0.0.1:|localhost:]<port>, the port from 0 to 65535");
        BAD.put(
                "-Dgort.debug.http=99999",
                "malformed -Dgort.debug.http=99999: want [127.0.0.1:|localhost:]<port>, the port from 0 to 65535");
        BAD.put(
                "-Dgort.traceback=loud",
                "malformed -Dgort.traceback=loud: want none, single, all, system, crash or a level >= 0");
    }

    @Test
    void eachGoodValueIsTheValueTheRuntimeUses() throws Exception {
        for (var e : GOOD.entrySet()) {
            Result r = env(e.getKey());
            assertEquals(0, r.status, e.getKey() + ":\n" + r.out);
            String key = e.getValue().substring(0, e.getValue().indexOf('='));
            assertEquals(e.getValue(), key + "=" + r.value(key), e.getKey());
        }
    }

    @Test
    void eachMalformedValueIsAFatalErrorThatNamesIt() throws Exception {
        for (var e : BAD.entrySet()) {
            Result r = env(e.getKey());
            assertEquals(2, r.status, e.getKey() + ":\n" + r.out);
            assertTrue(r.out.contains("fatal error: " + e.getValue()), e.getKey() + ":\n" + r.out);
            assertFalse(r.out.contains("\tat "), "a stack trace for " + e.getKey() + ":\n" + r.out);
            assertFalse(r.out.contains("FATAL ERROR in native method"), "the agent aborted the JVM:\n" + r.out);
            assertFalse(r.out.contains("gort.gomaxprocs="), "env printed values despite " + e.getKey());
        }
    }

    @Test
    void environmentVariablesAreReadAndThePropertyWins() throws Exception {
        Result r = java(List.of(), Map.of("GORT_RUNQSIZE", "32", "GORT_PREEMPT", "budget", "GOMAXPROCS", "5"), "env");
        assertEquals(0, r.status, r.out);
        assertEquals("32", r.value("gort.runqsize"));
        assertEquals("budget", r.value("gort.preempt"));
        assertEquals("5", r.value("gort.gomaxprocs"));
        r = java(List.of("-Dgort.runqsize=16"), Map.of("GORT_RUNQSIZE", "32"), "env");
        assertEquals("16", r.value("gort.runqsize"));
        r = java(List.of(), Map.of("GORT_RUNQSIZE", "3"), "env");
        assertEquals(2, r.status, r.out);
        assertTrue(r.out.contains("fatal error: malformed GORT_RUNQSIZE=3: want a power of two"), r.out);
        r = java(List.of(), Map.of("GODEBUG", "schedtrace=3"), "env");
        assertEquals("3", r.value("GODEBUG.schedtrace"));
    }

    /** {@code java -jar} opens java.lang (the manifest's Add-Opens, the agent): ThreadLocals are the goroutine's. */
    @Test
    void threadLocalsAreTheGoroutinesByDefaultInTheJar() throws Exception {
        assertEquals("goroutine", env().value("gort.threadlocals"));
        Result r = java(List.of(), Map.of("GORT_THREADLOCALS", "carrier"), "env");
        assertEquals(0, r.status, r.out);
        assertEquals("carrier", r.value("gort.threadlocals"));
    }

    /**
     * {@code java -jar} starts the agent, which exports {@code jdk.internal.misc} to gort (the
     * manifest does not): the look at a goroutine's stack for JDK locks screens the frames' classes
     * first instead of walking every frame's method before each socket wait.
     */
    @Test
    void theAgentGivesTheLockFrameLookItsScreen() throws Exception {
        assertEquals("screen", env().value("lockframes"));
        Result r = java(List.of("-Dgort.preempt=none"), Map.of(), "env"); // no transformer, the exports all the same
        assertEquals(0, r.status, r.out);
        assertEquals("screen", r.value("lockframes"));
    }

    @Test
    void malformedGomaxprocsIsIgnoredAsGoIgnoresIt() throws Exception {
        String procs = env().value("gort.gomaxprocs");
        for (String bad : List.of("abc", "0", "-3")) {
            Result r = java(List.of(), Map.of("GOMAXPROCS", bad), "env");
            assertEquals(0, r.status, r.out);
            assertEquals(procs, r.value("gort.gomaxprocs"), "GOMAXPROCS=" + bad);
        }
    }

    @Test
    void traceAndSchedtraceSettingsTakeEffectInAProgram(@TempDir Path dir) throws Exception {
        Path trace = dir.resolve("sieve.json");
        Result r = java(List.of("-Dgort.trace=" + trace, "-Dgort.godebug=schedtrace=1"), Map.of(), "PrimeSieve", "30");
        assertEquals(0, r.status, r.out);
        assertTrue(r.out.contains("(30 primes"), r.out);
        assertTrue(r.out.contains("SCHED "), "no SCHED line under schedtrace=1:\n" + r.out);
        assertTrue(Files.size(trace) > 0, "no trace written");
        assertTrue(Files.readString(trace).contains("\"traceEvents\""), "not a Chrome/Perfetto trace");
    }

    @Test
    void theShowcaseRefusesGortTraceAndSaysWhy() throws Exception {
        Result r = java(List.of("-Dgort.trace=x.json"), Map.of(), "showcase", "tight-loop");
        assertEquals(2, r.status, r.out);
        assertTrue(r.out.contains("-Dgort.trace is not for the showcase"), r.out);
    }

    /** The settings named in the README's configuration table: every -Dgort.x and GORT_X of its rows. */
    static Set<String> readmeTableSettings() {
        String readme = ReadmeTest.README;
        int at = readme.indexOf("| setting | property / environment | default |");
        assertTrue(at >= 0, "no configuration table in the README");
        String table = readme.substring(at, readme.indexOf("\n\n", at));
        Set<String> names = new TreeSet<>();
        Matcher m =
                Pattern.compile("-D(gort\\.[a-z.]*[a-z])|\\b(GORT_[A-Z_]+)\\b").matcher(table);
        while (m.find()) {
            names.add(m.group(1) != null ? m.group(1) : m.group(2));
        }
        return names;
    }

    /**
     * {@code ./gort env} prints a row for every setting of the README's table: each {@code -Dgort.x}
     * (GODEBUG's properties, {@code gort.godebug} and {@code gort.debug}, have a row per key) and each
     * {@code GODEBUG=key=...}. It once left out updatemaxprocs, containermaxprocs and midlecpu.
     */
    @Test
    void envPrintsEverySettingOfTheReadmeTable() throws Exception {
        Result r = env();
        assertEquals(0, r.status, r.out);
        String rows = "\n" + r.out;
        List<String> missing = new ArrayList<>();
        for (String s : readmeTableSettings()) {
            if (s.startsWith("gort.")
                    && !s.equals("gort.godebug")
                    && !s.equals("gort.debug")
                    && !rows.contains("\n" + s + "=")) {
                missing.add(s);
            }
        }
        String readme = ReadmeTest.README;
        int at = readme.indexOf("| setting | property / environment | default |");
        Matcher m = Pattern.compile("GODEBUG=(?:schedtrace=N,)?([a-z]+)=")
                .matcher(readme.substring(at, readme.indexOf("\n\n", at)));
        while (m.find()) {
            if (!rows.contains("\nGODEBUG." + m.group(1) + "=")) {
                missing.add("GODEBUG " + m.group(1));
            }
        }
        assertTrue(missing.isEmpty(), "README settings without a row in ./gort env: " + missing + "\n" + r.out);
        assertEquals("1", r.value("GODEBUG.updatemaxprocs"));
        assertEquals("1", r.value("GODEBUG.containermaxprocs"));
        assertEquals("0", r.value("GODEBUG.psyscall"));
        assertEquals("2", r.value("gort.trace.level"));
        assertEquals("true", r.value("gort.preempt.sites"));
    }

    @Test
    void everySettingOfTheReadmeTableHasACase() {
        String covered = String.join(" ", GOOD.keySet()) + " " + String.join(" ", BAD.keySet());
        List<String> missing = new ArrayList<>();
        for (String s : readmeTableSettings()) {
            if (s.startsWith("GORT_")) {
                continue; // each GORT_X is read by the same call as its -Dgort.x (Config.setting); one is tested
            }
            if (!covered.contains("-D" + s + "=")) {
                missing.add(s);
            }
        }
        assertTrue(missing.isEmpty(), "README settings without a case here: " + missing);
    }
}
