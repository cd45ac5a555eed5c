package dev.gort.runtime.pprof;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.gort.runtime.Config;
import dev.gort.runtime.GoSema;
import dev.gort.runtime.Poll;
import dev.gort.runtime.Scheduler;
import dev.gort.runtime.pprof.ProfileProto.Profile;
import dev.gort.runtime.pprof.ProfileProto.Sample;
import java.io.ByteArrayOutputStream;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The CPU profile ({@link CpuProfile}): Go's profile.proto for CPU samples, a goroutine's stacks
 * ending at its own entry, one profile at a time.
 */
@Timeout(120)
class CpuProfileTest {
    static volatile long sink;

    /**
     * Spins on this thread's CPU for {@code cpuNanos}, polling as instrumented code would. The work
     * between two reads of the thread's CPU time is a xorshift C2 cannot fold (about 100 us), so
     * that the time goes to Java code: a read is a system call (about 1.8 us here), which JFR's
     * execution sampler does not sample, and a loop C2 folds (10,000 rounds of {@code x += x * 31 +
     * 7} took 8 ns) left almost all of it there: 6 samples in 1.2 s of CPU.
     */
    static long spinInAGoroutine(long cpuNanos) {
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        long x = 1;
        long used = 0;
        long last = mx.getCurrentThreadCpuTime();
        while (used < cpuNanos) {
            for (int i = 0; i < 100_000; i++) {
                x ^= x << 13;
                x ^= x >>> 7;
                x ^= x << 17;
            }
            Poll.poll();
            long now = mx.getCurrentThreadCpuTime(); // the carrier may change at the poll
            if (now > last) {
                used += Math.min(now - last, 1_000_000L);
            }
            last = now;
        }
        return x;
    }

    /** A CPU profile of two goroutines spinning 0.6 s of CPU each in {@link #spinInAGoroutine}. */
    static byte[] spinnersProfile() throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        CpuProfile.startCPUProfile(out);
        try {
            assertThrows(IllegalStateException.class, () -> CpuProfile.startCPUProfile(new ByteArrayOutputStream()));
            Scheduler s =
                    new Scheduler(Config.fromEnvironment().withGomaxprocs(2).withPanicExits(false));
            s.run(() -> {
                GoSema done = new GoSema(0);
                for (int i = 0; i < 2; i++) {
                    Scheduler.current().newproc(() -> {
                        sink = spinInAGoroutine(600_000_000L);
                        done.release();
                    });
                }
                done.acquire();
                done.acquire();
            });
        } finally {
            CpuProfile.stopCPUProfile();
        }
        assertFalse(CpuProfile.running());
        return out.toByteArray();
    }

    @Test
    void aGoroutinesCpuShowsInGosProfileFormWithItsOwnStack() throws Exception {
        Profile p = profile(spinnersProfile());
        List<String> st = p.getStringTableList();
        assertEquals("samples", st.get((int) p.getSampleType(0).getType()));
        assertEquals("count", st.get((int) p.getSampleType(0).getUnit()));
        assertEquals("cpu", st.get((int) p.getSampleType(1).getType()));
        assertEquals("nanoseconds", st.get((int) p.getSampleType(1).getUnit()));
        assertEquals("cpu", st.get((int) p.getPeriodType().getType()));
        assertEquals(10_000_000L, p.getPeriod());
        assertTrue(p.getDurationNanos() > 0);
        long spinSamples = 0;
        for (Sample sm : p.getSampleList()) {
            assertEquals(sm.getValue(0) * 10_000_000L, sm.getValue(1), "cpu = samples x period");
            List<String> fns = functions(p, sm);
            if (fns.stream().anyMatch(f -> f.endsWith("CpuProfileTest.spinInAGoroutine"))) {
                spinSamples += sm.getValue(0);
                // the goroutine's own frames only: the carrier's below its continuation are cut
                assertFalse(fns.stream().anyMatch(CpuProfileTest::isCarrierLoop), fns.toString());
                assertFalse(fns.stream().anyMatch(CpuProfileTest::isContinuationEntry), fns.toString());
                assertTrue(fns.get(fns.size() - 1).startsWith("dev.gort.runtime.pprof.CpuProfileTest"), fns.toString());
            }
        }
        // 1.2 s of CPU in the spinning method at 100 samples per second: 120, and more on a busy
        // machine (a goroutine waiting for a CPU is still in Java code); a quarter at least
        assertTrue(spinSamples >= 30, "samples in the spinning goroutines: " + spinSamples + "; all: " + summary(p));
        String file = null;
        for (ProfileProto.Function f : p.getFunctionList()) {
            if (st.get((int) f.getName()).endsWith("CpuProfileTest.spinInAGoroutine")) {
                file = st.get((int) f.getFilename());
            }
        }
        assertEquals("dev/gort/runtime/pprof/CpuProfileTest.java", file, "the file pprof -list looks for");
    }

    /** {@code go tool pprof -top} reads it (when Go is installed; CI installs golang-1.19-go). */
    @Test
    void goToolPprofReadsTheCpuProfile(@TempDir Path tmp) throws Exception {
        Path go = PprofTest.goBinary();
        assumeTrue(go != null, "skipped: no go binary (GORT_GO, /usr/lib/go-1.19/bin/go, go on PATH)");
        Path f = tmp.resolve("cpu.pb.gz");
        Files.write(f, spinnersProfile());
        String top = PprofTest.pprof(go, tmp, "-top", f.toString());
        assertTrue(top.contains("Type: cpu\n"), top);
        assertTrue(top.contains("dev.gort.runtime.pprof.CpuProfileTest.spinInAGoroutine"), top);
    }

    /**
     * A frame of the carrier's loop below a goroutine ({@code G.runCont}, {@code M.schedule}, ...,
     * {@code M.mstart}); not any method of M, which a goroutine calls too ({@code Poll.slow} calls
     * {@code M.current}).
     */
    static boolean isCarrierLoop(String fn) {
        return fn.matches("dev\\.gort\\.runtime\\.(G\\.runCont|M\\.(runWithLocals|run|execute|schedule|mstart))");
    }

    /** {@code Continuation.enter0}, {@code enter}, {@code enterSpecial} or {@code run}. */
    static boolean isContinuationEntry(String fn) {
        return fn.matches("jdk\\.internal\\.vm\\.Continuation\\.(enter0|enter|enterSpecial|run)");
    }

    static StackTraceElement frame(String cls, String method) {
        return new StackTraceElement(cls, method, JfrStacks.fileOf(cls), 1);
    }

    /**
     * A goroutine's stack ends above its continuation's entry; a yielding goroutine keeps the
     * continuation's yield frames above its own (where the JVM allocates its stack chunk); the
     * carrier's own work in the continuation (no goroutine frame above the entry) is kept whole.
     */
    @Test
    void aGoroutinesStackEndsAtItsContinuationsEntry() {
        String c = "jdk.internal.vm.Continuation";
        StackTraceElement user = frame("a.b.Main", "f");
        StackTraceElement park = frame("dev.gort.runtime.Scheduler", "gopark");
        List<StackTraceElement> carrier = List.of(
                frame(c, "enter0"),
                frame(c, "enter"),
                frame(c, "enterSpecial"),
                frame(c, "run"),
                frame("dev.gort.runtime.G", "runCont"),
                frame("dev.gort.runtime.M", "schedule"));
        List<StackTraceElement> running = new ArrayList<>(List.of(user));
        running.addAll(carrier);
        assertEquals(List.of(user), JfrStacks.goroutineStack(running));
        List<StackTraceElement> yielding = new ArrayList<>(List.of(frame(c, "yield0"), frame(c, "yield"), park, user));
        List<StackTraceElement> yieldingWhole = new ArrayList<>(yielding);
        yieldingWhole.addAll(carrier);
        assertEquals(yielding, JfrStacks.goroutineStack(yieldingWhole));
        List<StackTraceElement> mounting = new ArrayList<>(List.of(frame(c, "mount")));
        mounting.addAll(carrier.subList(3, carrier.size()));
        assertEquals(mounting, JfrStacks.goroutineStack(mounting), "the carrier's own work: all of it");
    }

    @Test
    void fileOfAClassIsItsOutermostClasssSource() {
        assertEquals("Outer.java", JfrStacks.fileOf("a.b.Outer$Inner$1"));
        assertEquals("Outer.java", JfrStacks.fileOf("a.b.Outer$$Lambda.0x000000007e0d7cc0"));
        assertEquals("Outer.java", JfrStacks.fileOf("a.b.Outer$$Lambda/0x000000007e0d7cc0"));
        assertEquals("Top.java", JfrStacks.fileOf("Top"));
    }

    /** A hidden class's frame is in its outer class's file, in the outer class's package's directory. */
    @Test
    void aHiddenClasssSourcePathIsItsOutermostClasss() {
        for (String cls :
                new String[] {"a.b.Outer$$Lambda.0x000000007e0d7cc0", "a.b.Outer$$Lambda/0x000000007e0d7cc0"}) {
            StackTraceElement e = new StackTraceElement(cls, "run", JfrStacks.fileOf(cls), 1);
            assertEquals("a/b/Outer.java", Pprof.sourcePath(e), cls);
        }
    }

    @Test
    void stopWithoutStartDoesNothing() throws Exception {
        CpuProfile.stopCPUProfile();
        assertFalse(CpuProfile.running());
    }

    static Profile profile(byte[] gz) throws java.io.IOException {
        try (java.util.zip.GZIPInputStream in =
                new java.util.zip.GZIPInputStream(new java.io.ByteArrayInputStream(gz))) {
            return Profile.parseFrom(in);
        }
    }

    /** The profile's samples, most first, as count and the top three frames, for a failure's message. */
    static String summary(Profile p) {
        StringBuilder sb = new StringBuilder();
        int n = 0;
        for (Sample sm : p.getSampleList()) {
            List<String> fns = functions(p, sm);
            sb.append(sm.getValue(0))
                    .append(' ')
                    .append(fns.subList(0, Math.min(3, fns.size())))
                    .append("; ");
            if (++n == 20) {
                break;
            }
        }
        return p.getSampleCount() + " stacks: " + sb;
    }

    /** The sample's function names, top first. */
    static List<String> functions(Profile p, Sample sm) {
        List<String> out = new ArrayList<>();
        for (long id : sm.getLocationIdList()) {
            ProfileProto.Location loc = p.getLocation((int) id - 1);
            assertEquals(id, loc.getId());
            long fid = loc.getLine(0).getFunctionId();
            ProfileProto.Function f = p.getFunction((int) fid - 1);
            assertEquals(fid, f.getId());
            out.add(p.getStringTable((int) f.getName()));
        }
        return out;
    }
}
