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
        ProcessBuilder pb =
                new ProcessBuilder(go.toString(), "tool", "pprof", "-raw", file.toString()).redirectErrorStream(true);
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
        assertTrue(raw.contains("dev.gort.runtime.GoSema.acquire GoSema.java:"), raw);
        Path tc = tmp.resolve("threadcreate.pb.gz");
        Files.write(tc, r[3]);
        String raw2 = pprofRaw(go, tc, tmp);
        assertTrue(raw2.contains("PeriodType: threadcreate count\n"), raw2);
    }
}
