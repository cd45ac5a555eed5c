package dev.gort.runtime.pprof;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.gort.runtime.Config;
import dev.gort.runtime.GoSema;
import dev.gort.runtime.Scheduler;
import dev.gort.runtime.pprof.ProfileProto.Profile;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.regex.Pattern;
import java.util.zip.GZIPInputStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Go's goroutine and threadcreate profiles (runtime/pprof writeGoroutine, writeThreadCreate,
 * printCountProfile): debug=0 is a gzip'd profile.proto that protobuf-java and {@code go tool pprof
 * -raw} read back, debug=1 Go's grouped text, debug=2 the goroutine dump.
 */
class PprofTest {
    /** [debug=0 goroutine, debug=1 goroutine, debug=2 goroutine, debug=0 threadcreate, debug=1 threadcreate] */
    static byte[][] profiles() {
        Scheduler s = new Scheduler(Config.fromEnvironment().withGomaxprocs(1).withPanicExits(false));
        AtomicReference<byte[][]> got = new AtomicReference<>();
        s.run(() -> {
            GoSema never = new GoSema("never", 0);
            GoSema started = new GoSema("started", 0);
            for (int i = 0; i < 3; i++) {
                Scheduler.current().newproc(() -> {
                    started.release();
                    never.acquire();
                });
            }
            for (int i = 0; i < 3; i++) {
                started.acquire();
            }
            byte[][] r = new byte[5][];
            try {
                for (int d = 0; d < 3; d++) {
                    ByteArrayOutputStream o = new ByteArrayOutputStream();
                    Pprof.writeGoroutine(Scheduler.current(), o, d);
                    r[d] = o.toByteArray();
                }
                for (int d = 0; d < 2; d++) {
                    ByteArrayOutputStream o = new ByteArrayOutputStream();
                    Pprof.writeThreadCreate(Scheduler.current(), o, d);
                    r[3 + d] = o.toByteArray();
                }
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            got.set(r);
            for (int i = 0; i < 3; i++) {
                never.release();
            }
        });
        return got.get();
    }

    static Profile parse(byte[] gz) throws IOException {
        assertEquals(0x1f, gz[0] & 0xff);
        assertEquals(0x8b, gz[1] & 0xff);
        try (GZIPInputStream in = new GZIPInputStream(new ByteArrayInputStream(gz))) {
            return Profile.parseFrom(in);
        }
    }

    @Test
    void goroutineProfileIsGzippedProfileProto() throws IOException {
        byte[][] r = profiles();
        Profile p = parse(r[0]);
        List<String> st = p.getStringTableList();
        assertEquals("", st.get(0));
        assertEquals("goroutine", st.get((int) p.getSampleType(0).getType()));
        assertEquals("count", st.get((int) p.getSampleType(0).getUnit()));
        assertEquals("goroutine", st.get((int) p.getPeriodType().getType()));
        assertEquals(1, p.getPeriod());
        assertEquals(4, p.getSampleList().stream().mapToLong(x -> x.getValue(0)).sum());
        // the three parked goroutines share one stack, first (Go sorts by count)
        assertEquals(3, p.getSample(0).getValue(0));
        List<String> fns = new ArrayList<>();
        for (long loc : p.getSample(0).getLocationIdList()) {
            var l = p.getLocation((int) loc - 1);
            assertEquals(loc, l.getId());
            var f = p.getFunction((int) l.getLine(0).getFunctionId() - 1);
            fns.add(st.get((int) f.getName()));
        }
        assertTrue(fns.contains("dev.gort.runtime.GoSema.acquire"), fns.toString());
        assertTrue(fns.stream().anyMatch(f -> f.startsWith(PprofTest.class.getName() + ".lambda$")), fns.toString());
        assertEquals(1, p.getMappingCount());
        assertTrue(p.getMapping(0).getHasFunctions());
    }

    static final Pattern FRAME = Pattern.compile("^#\t0x[0-9a-f]+\t+\\S+\\+0x0\t+\\S+:\\d+$");

    @Test
    void debug1IsGosGroupedText() {
        byte[][] r = profiles();
        String t = new String(r[1], StandardCharsets.UTF_8);
        assertTrue(t.startsWith("goroutine profile: total 4\n3 @ 0x"), t);
        String[] lines = t.split("\n");
        assertTrue(Pattern.matches("^3 @( 0x[0-9a-f]+)+$", lines[1]), t);
        // leading runtime frames (the park, GoSema) are hidden: the first is the test's lambda
        assertTrue(FRAME.matcher(lines[2]).matches() && lines[2].contains(PprofTest.class.getName() + ".lambda$"), t);
        assertTrue(t.contains("\n\n1 @ 0x"), t);
        String d2 = new String(r[2], StandardCharsets.UTF_8);
        assertTrue(d2.startsWith("goroutine 1 [running]:\n"), d2);
        String tc = new String(r[4], StandardCharsets.UTF_8);
        assertTrue(Pattern.matches("threadcreate profile: total (\\d+)\n\\1 @\n#\t0x0\n\n", tc), tc);
        // one M at GOMAXPROCS=1 (none exited, none spinning) and sysmon's, as Go's allm
        assertTrue(tc.startsWith("threadcreate profile: total 2\n"), tc);
    }

    /** A go binary: $GORT_GO, Debian's golang-1.19-go, or go on the PATH; null if none. */
    static Path goBinary() {
        List<String> c = new ArrayList<>();
        if (System.getenv("GORT_GO") != null) {
            c.add(System.getenv("GORT_GO"));
        }
        c.add("/usr/lib/go-1.19/bin/go");
        c.add("/usr/local/go/bin/go");
        c.add("/usr/bin/go");
        for (String p : c) {
            if (Files.isExecutable(Path.of(p))) {
                return Path.of(p);
            }
        }
        return null;
    }

    static String pprofRaw(Path go, Path file, Path tmp) throws Exception {
        return pprof(go, tmp, "-raw", file.toString());
    }

    /** {@code go tool pprof ARGS}: its output; fails unless it exits 0. */
    static String pprof(Path go, Path tmp, String... args) throws Exception {
        List<String> cmd = new ArrayList<>(List.of(go.toString(), "tool", "pprof"));
        cmd.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
        pb.environment().put("HOME", tmp.toString());
        pb.environment().put("PPROF_TMPDIR", tmp.toString());
        Process pr = pb.start();
        byte[] out = pr.getInputStream().readAllBytes();
        assertTrue(pr.waitFor(120, TimeUnit.SECONDS), "go tool pprof did not finish");
        String o = new String(out, StandardCharsets.UTF_8);
        assertEquals(0, pr.exitValue(), o);
        return o;
    }

    /** {@code go tool pprof -raw} (the real tool, when Go is installed; CI installs golang-1.19-go). */
    @Test
    void goToolPprofReadsTheProfiles(@TempDir Path tmp) throws Exception {
        Path go = goBinary();
        assumeTrue(
                go != null,
                "skipped: no go binary (GORT_GO, /usr/lib/go-1.19/bin/go, go on PATH); "
                        + "install Debian's golang-1.19-go to run go tool pprof -raw");
        byte[][] r = profiles();
        Path gp = tmp.resolve("goroutine.pb.gz");
        Files.write(gp, r[0]);
        String raw = pprofRaw(go, gp, tmp);
        assertTrue(raw.contains("PeriodType: goroutine count\n"), raw);
        assertTrue(raw.contains("Samples:\ngoroutine/count\n"), raw);
        assertTrue(Pattern.compile("(?m)^\\s+3: ").matcher(raw).find(), raw);
        assertTrue(raw.contains("dev.gort.runtime.GoSema.acquire dev/gort/runtime/GoSema.java:"), raw);
        // -list finds the source under a source root, as for a Go profile under GOROOT/GOPATH
        String list = pprof(
                go,
                tmp,
                "-list",
                "GoSema.acquire",
                "-source_path",
                Path.of("src/test/java").toAbsolutePath().toString(),
                gp.toString());
        assertTrue(list.contains("ROUTINE ======================== dev.gort.runtime.GoSema.acquire in "), list);
        assertTrue(list.contains(" Scheduler.gopark("), list); // a line of the source
        Path tc = tmp.resolve("threadcreate.pb.gz");
        Files.write(tc, r[3]);
        String raw2 = pprofRaw(go, tc, tmp);
        assertTrue(raw2.contains("PeriodType: threadcreate count\n"), raw2);
    }

    /** [block debug=0, block debug=1, mutex debug=0, mutex debug=1] after one event of each, recorded by {@link #blockedHere}. */
    static byte[][] contentionProfiles() {
        Scheduler s = new Scheduler(Config.fromEnvironment().withGomaxprocs(1).withPanicExits(false));
        AtomicReference<byte[][]> got = new AtomicReference<>();
        s.run(() -> {
            Scheduler cur = Scheduler.current();
            cur.blockprof.setBlockProfileRate(1);
            assertEquals(0, cur.blockprof.setMutexProfileFraction(1));
            assertEquals(1, cur.blockprof.setMutexProfileFraction(-1), "a negative fraction only reads");
            blockedHere(cur);
            byte[][] r = new byte[4][];
            try {
                for (int d = 0; d < 2; d++) {
                    ByteArrayOutputStream o = new ByteArrayOutputStream();
                    Pprof.writeBlock(cur, o, d);
                    r[d] = o.toByteArray();
                    o = new ByteArrayOutputStream();
                    Pprof.writeMutex(cur, o, d);
                    r[2 + d] = o.toByteArray();
                }
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            got.set(r);
        });
        return got.get();
    }

    /** What a channel wait (1234 ns) and a contended unlock (5678 ns) report, from this frame. */
    static void blockedHere(Scheduler s) {
        s.blockprof.blockevent(1234, 0);
        s.blockprof.mutexevent(5678, 0);
    }

    /** Go's writeProfileInternal text: header, cycles/second, the mutex sampling period, then records with every frame. */
    @Test
    void blockAndMutexProfilesInGosText() {
        byte[][] r = contentionProfiles();
        String b = new String(r[1], StandardCharsets.UTF_8);
        assertTrue(b.startsWith("--- contention:\ncycles/second=1000000000\n1234 1 @ 0x"), b);
        String[] lines = b.split("\n");
        assertTrue(Pattern.matches("^1234 1 @( 0x[0-9a-f]+)+$", lines[2]), b);
        assertTrue(FRAME.matcher(lines[3]).matches(), b);
        assertTrue(lines[3].contains(PprofTest.class.getName() + ".blockedHere+0x0"), b);
        String m = new String(r[3], StandardCharsets.UTF_8);
        assertTrue(m.startsWith("--- mutex:\ncycles/second=1000000000\nsampling period=1\n5678 1 @ 0x"), m);
    }

    /** debug=0: contentions/count and delay/nanoseconds, period 1, the event's stack. */
    @Test
    void blockAndMutexProfilesAreProfileProtos() throws IOException {
        byte[][] r = contentionProfiles();
        for (int i : new int[] {0, 2}) {
            Profile p = parse(r[i]);
            assertEquals("contentions", p.getStringTable((int) p.getPeriodType().getType()));
            assertEquals(1, p.getPeriod());
            assertEquals(2, p.getSampleTypeCount());
            assertEquals("delay", p.getStringTable((int) p.getSampleType(1).getType()));
            assertEquals(
                    "nanoseconds", p.getStringTable((int) p.getSampleType(1).getUnit()));
            assertEquals(1, p.getSampleCount());
            assertEquals(1, p.getSample(0).getValue(0));
            assertEquals(i == 0 ? 1234 : 5678, p.getSample(0).getValue(1));
            long loc = p.getSample(0).getLocationId(0);
            long fn = p.getLocation((int) loc - 1).getLine(0).getFunctionId();
            assertEquals(PprofTest.class.getName() + ".blockedHere", p.getStringTable((int)
                    p.getFunction((int) fn - 1).getName()));
        }
    }

    /** {@code go tool pprof -raw} reads the block and mutex profiles (when Go is installed). */
    @Test
    void goToolPprofReadsTheContentionProfiles(@TempDir Path tmp) throws Exception {
        Path go = goBinary();
        assumeTrue(go != null, "skipped: no go binary; install Debian's golang-1.19-go");
        byte[][] r = contentionProfiles();
        Path bp = tmp.resolve("block.pb.gz");
        Files.write(bp, r[0]);
        String raw = pprofRaw(go, bp, tmp);
        assertTrue(raw.contains("PeriodType: contentions count\n"), raw);
        assertTrue(raw.contains("Samples:\ncontentions/count delay/nanoseconds\n"), raw);
        assertTrue(Pattern.compile("(?m)^\\s+1\\s+1234: ").matcher(raw).find(), raw);
        Path mp = tmp.resolve("mutex.pb.gz");
        Files.write(mp, r[2]);
        String raw2 = pprofRaw(go, mp, tmp);
        assertTrue(Pattern.compile("(?m)^\\s+1\\s+5678: ").matcher(raw2).find(), raw2);
    }

    static void parkedMeanwhile(GoSema s) {
        s.acquire();
    }

    static void blockedMeanwhile(Scheduler s) {
        s.blockprof.blockevent(999, 0);
    }

    /** The sample of {@code p} whose stack has a frame of {@code fn} (a method of this class). */
    static long[] valuesAt(Profile p, String fn) {
        List<String> st = p.getStringTableList();
        long[] found = null;
        for (var sm : p.getSampleList()) {
            for (long loc : sm.getLocationIdList()) {
                var f = p.getFunction(
                        (int) p.getLocation((int) loc - 1).getLine(0).getFunctionId() - 1);
                if (st.get((int) f.getName()).equals(PprofTest.class.getName() + "." + fn)) {
                    assertEquals(null, found, fn + " in two samples");
                    found = sm.getValueList().stream()
                            .mapToLong(Long::longValue)
                            .toArray();
                    break;
                }
            }
        }
        return found;
    }

    /**
     * net/http/pprof's {@code ?seconds=N} (what {@code go tool pprof -seconds N} asks for): per stack,
     * what changed while the window ran. Goroutines that ended count negative, new ones positive,
     * the caller's own stack cancels; block events from before the window are gone, those in it
     * stay; the duration is the window's.
     */
    @Test
    void deltaProfilesHoldWhatChangedWhileTheWindowRan() throws IOException {
        Scheduler s = new Scheduler(Config.fromEnvironment().withGomaxprocs(1).withPanicExits(false));
        AtomicReference<byte[][]> got = new AtomicReference<>();
        s.run(() -> {
            Scheduler cur = Scheduler.current();
            cur.blockprof.setBlockProfileRate(1);
            blockedHere(cur);
            GoSema never = new GoSema("never", 0);
            GoSema started = new GoSema("started", 0);
            for (int i = 0; i < 3; i++) {
                cur.newproc(() -> {
                    started.release();
                    never.acquire();
                });
            }
            for (int i = 0; i < 3; i++) {
                started.acquire();
            }
            GoSema later = new GoSema("later", 0);
            byte[][] r = new byte[2][];
            try {
                ByteArrayOutputStream g = new ByteArrayOutputStream();
                Pprof.writeDelta(cur, "goroutine", g, () -> {
                    for (int i = 0; i < 3; i++) {
                        never.release();
                    }
                    for (int i = 0; i < 2; i++) {
                        cur.newproc(() -> {
                            started.release();
                            parkedMeanwhile(later);
                        });
                    }
                    for (int i = 0; i < 2; i++) {
                        started.acquire();
                    }
                    while (cur.numGoroutine() != 3) {
                        Scheduler.gosched(); // the three released ones end
                    }
                });
                r[0] = g.toByteArray();
                ByteArrayOutputStream b = new ByteArrayOutputStream();
                Pprof.writeDelta(cur, "block", b, () -> {
                    blockedMeanwhile(cur);
                    blockedHere(cur);
                });
                r[1] = b.toByteArray();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            got.set(r);
            later.release();
            later.release();
        });
        Profile g = parse(got.get()[0]);
        assertEquals(2, g.getSampleCount(), g.toString());
        assertEquals(2, valuesAt(g, "parkedMeanwhile")[0]);
        assertEquals(
                -3,
                g.getSampleList().stream()
                        .filter(x -> x.getValue(0) < 0)
                        .mapToLong(x -> x.getValue(0))
                        .sum());
        assertTrue(g.getDurationNanos() > 0, g.toString());
        assertEquals("goroutine", g.getStringTable((int) g.getSampleType(0).getType()));
        Profile b = parse(got.get()[1]);
        assertEquals(2, b.getSampleCount(), b.toString());
        assertEquals(
                List.of(1L, 999L),
                java.util.Arrays.stream(valuesAt(b, "blockedMeanwhile")).boxed().toList());
        assertEquals(
                List.of(1L, 1234L),
                java.util.Arrays.stream(valuesAt(b, "blockedHere")).boxed().toList());
        assertEquals("delay", b.getStringTable((int) b.getSampleType(1).getType()));
        assertEquals("contentions", b.getStringTable((int) b.getPeriodType().getType()));
        assertTrue(b.getTimeNanos() > 0 && b.getDurationNanos() > 0, b.toString());
    }
}
