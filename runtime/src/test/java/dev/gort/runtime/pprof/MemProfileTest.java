package dev.gort.runtime.pprof;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.gort.runtime.Config;
import dev.gort.runtime.GoSema;
import dev.gort.runtime.Poll;
import dev.gort.runtime.Scheduler;
import dev.gort.runtime.pprof.ProfileProto.Profile;
import dev.gort.runtime.pprof.ProfileProto.Sample;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Go's heap and allocs profiles ({@link MemProfile}): a goroutine's allocations under its own
 * stack with JFR's weights as {@code alloc_space}, the old-object sampler's live objects as
 * {@code inuse_*}, Go's text form, {@code go tool pprof} reading both.
 */
@Timeout(180)
class MemProfileTest {
    /** What JFR is given time to deliver a sample in (its stream flushes once a second). */
    static final long DEADLINE_NS = 60_000_000_000L;

    static final class DistinctiveAllocation {
        long a;
        long b;
        Object c;
    }

    static final class RetainedDistinctively {
        long a;
    }

    static volatile Object sink;

    /** Allocates {@code n} {@link DistinctiveAllocation}s, each escaping (no scalar replacement). */
    static void allocateDistinctively(int n) {
        for (int i = 0; i < n; i++) {
            DistinctiveAllocation d = new DistinctiveAllocation();
            d.a = i;
            sink = d;
            if ((i & 0xffff) == 0) {
                Poll.poll();
            }
        }
    }

    /** Adds {@code n} arrays of 64 Ki {@link RetainedDistinctively} references (256 KiB or more) to {@code keep}. */
    static void retainDistinctively(List<Object> keep, int n) {
        for (int i = 0; i < n; i++) {
            keep.add(new RetainedDistinctively[64 * 1024]);
        }
    }

    /** Allocates {@code n} arrays of 256 KiB that die at once. */
    static void allocateGarbage(int n) {
        for (int i = 0; i < n; i++) {
            sink = new long[32 * 1024];
        }
        sink = null;
    }

    /**
     * In a goroutine, allocates in {@link #allocateDistinctively} until JFR has delivered a sample
     * of it (failing when {@link #DEADLINE_NS} runs out), then writes the allocs profile.
     */
    static byte[] allocsProfile() throws Exception {
        MemProfile.start();
        AtomicReference<byte[]> got = new AtomicReference<>();
        try {
            Scheduler s =
                    new Scheduler(Config.fromEnvironment().withGomaxprocs(1).withPanicExits(false));
            s.run(() -> {
                GoSema done = new GoSema(0);
                boolean[] sampled = new boolean[1];
                Scheduler.current().newproc(() -> {
                    long deadline = System.nanoTime() + DEADLINE_NS;
                    while (System.nanoTime() - deadline < 0) {
                        allocateDistinctively(1 << 20);
                        if (MemProfile.allocSpaceAt(MemProfileTest.class.getName(), "allocateDistinctively") > 0) {
                            sampled[0] = true;
                            break;
                        }
                    }
                    done.release();
                });
                done.acquire();
                if (!sampled[0]) {
                    fail("no JFR allocation sample of allocateDistinctively in 60 s");
                }
                try {
                    ByteArrayOutputStream out = new ByteArrayOutputStream();
                    MemProfile.writeAlloc(out, 0);
                    got.set(out.toByteArray());
                } catch (java.io.IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            });
        } finally {
            MemProfile.stop();
        }
        assertFalse(MemProfile.running());
        return got.get();
    }

    @Test
    void aGoroutinesAllocationsShowUnderItsOwnStackInTheAllocsProfile() throws Exception {
        Profile p = CpuProfileTest.profile(allocsProfile());
        List<String> st = p.getStringTableList();
        String[][] types = {
            {"alloc_samples", "count"}, {"alloc_space", "bytes"}, {"inuse_objects", "count"}, {"inuse_space", "bytes"}
        };
        assertEquals(4, p.getSampleTypeCount());
        for (int i = 0; i < 4; i++) {
            assertEquals(types[i][0], st.get((int) p.getSampleType(i).getType()));
            assertEquals(types[i][1], st.get((int) p.getSampleType(i).getUnit()));
        }
        assertEquals("alloc_space", st.get((int) p.getDefaultSampleType()), "allocs: alloc_space by default, as Go's");
        assertEquals("space", st.get((int) p.getPeriodType().getType()));
        long samples = 0;
        long space = 0;
        for (Sample sm : p.getSampleList()) {
            List<String> fns = CpuProfileTest.functions(p, sm);
            if (!fns.isEmpty() && fns.get(0).endsWith("MemProfileTest.allocateDistinctively")) {
                samples += sm.getValue(0);
                space += sm.getValue(1);
                // the goroutine's own frames only: the carrier's below its continuation are cut
                assertFalse(fns.stream().anyMatch(CpuProfileTest::isCarrierLoop), fns.toString());
                assertFalse(fns.stream().anyMatch(CpuProfileTest::isContinuationEntry), fns.toString());
                assertTrue(fns.get(fns.size() - 1).startsWith("dev.gort.runtime.pprof.MemProfileTest"), fns.toString());
            }
        }
        assertTrue(
                samples > 0 && space > 0,
                "alloc_samples " + samples + ", alloc_space " + space + ": " + CpuProfileTest.summary(p));
        List<String> comments = new ArrayList<>();
        for (long c : p.getCommentList()) {
            comments.add(st.get((int) c));
        }
        assertTrue(
                comments.stream()
                        .anyMatch(
                                c -> c.contains("jdk.ObjectAllocationSample") && c.contains("not the program's start")),
                comments.toString());
    }

    /**
     * The heap profile's {@code inuse_*} are the live objects JFR's old-object sampler holds: big
     * arrays retained by a goroutine show under the method that allocated them, once a collection
     * has found other samples dead (JFR reports only samples older than that), and are gone after
     * they died and a collection ran.
     */
    @Test
    void theHeapProfilesInuseIsTheSamplersLiveObjects() throws Exception {
        MemProfile.start();
        AtomicReference<long[]> got = new AtomicReference<>();
        try {
            Scheduler s =
                    new Scheduler(Config.fromEnvironment().withGomaxprocs(1).withPanicExits(false));
            s.run(() -> {
                List<Object> keep = new ArrayList<>();
                long[] r = new long[3];
                try {
                    // 16 arrays (4 MiB) at a time, at most 64 MiB, until one has been sampled; JFR
                    // reports a live sample once a collection has found another sample dead
                    for (int round = 0; round < 16 && r[0] == 0; round++) {
                        retainDistinctively(keep, 16);
                        allocateGarbage(16);
                        System.gc();
                        long[] v = inuseAt(heapProfile(), "MemProfileTest.retainDistinctively");
                        r[0] = v[0];
                        r[1] = v[1];
                    }
                    sink = keep.size();
                    keep.clear();
                    allocateGarbage(16);
                    System.gc();
                    r[2] = inuseAt(heapProfile(), "MemProfileTest.retainDistinctively")[0];
                } catch (java.io.IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
                got.set(r);
            });
        } finally {
            MemProfile.stop();
        }
        long[] r = got.get();
        assertTrue(r[0] > 0, "no live sample of the retained arrays in 64 MiB of them");
        assertTrue(r[1] >= r[0] * 64 * 1024 * 4, "each at least its 64 Ki references: " + r[1] + " bytes for " + r[0]);
        assertEquals(0, r[2], "the dead arrays are not in use after a collection");
    }

    static Profile heapProfile() throws java.io.IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        MemProfile.writeHeap(out, 0);
        Profile p = CpuProfileTest.profile(out.toByteArray());
        assertEquals(0, p.getDefaultSampleType(), "heap: no default, pprof takes the last (inuse_space), as Go's");
        return p;
    }

    /** {inuse_objects, inuse_space} of the samples whose top frame ends with {@code fn}. */
    static long[] inuseAt(Profile p, String fn) {
        long[] v = new long[2];
        for (Sample sm : p.getSampleList()) {
            List<String> fns = CpuProfileTest.functions(p, sm);
            if (!fns.isEmpty() && fns.get(0).endsWith(fn)) {
                v[0] += sm.getValue(2);
                v[1] += sm.getValue(3);
            }
        }
        return v;
    }

    /** {@code debug=1}: Go's text, {@code heap profile: ...}, the records, the MemStats block. */
    @Test
    void theTextFormIsGosHeapProfile() throws Exception {
        MemProfile.start();
        String text;
        try {
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            MemProfile.writeHeap(out, 1);
            text = out.toString(StandardCharsets.UTF_8);
        } finally {
            MemProfile.stop();
        }
        assertTrue(
                Pattern.compile("^heap profile: \\d+: \\d+ \\[\\d+: \\d+\\] @ heap/0\n")
                        .matcher(text)
                        .find(),
                text);
        assertTrue(
                Pattern.compile("(?m)^\\d+: \\d+ \\[\\d+: \\d+\\] @( 0x[0-9a-f]+)+\n#\t0x")
                        .matcher(text)
                        .find(),
                text);
        assertTrue(
                Pattern.compile("\n\n# runtime\\.MemStats\n# Alloc = \\d+\n# TotalAlloc = \\d+\n")
                        .matcher(text)
                        .find(),
                text);
        assertTrue(
                Pattern.compile("(?m)^# HeapAlloc = \\d+\n# HeapSys = \\d+\n# LastGC = \\d+\n# NumGC = \\d+$")
                        .matcher(text)
                        .find(),
                text);
    }

    /** Allocates {@code n} arrays of 256 KiB that die at once, after sampling was turned on. */
    static void allocateAfterSamplingStarted(int n) {
        for (int i = 0; i < n; i++) {
            sink = new long[32 * 1024];
        }
        sink = null;
    }

    /**
     * What a thread allocated before sampling was on stays out of the allocs profile, where JFR
     * weighs a thread's first sample with every byte since its previous one: the test thread
     * allocates 2 GiB with sampling off, turns it on, and allocates a little until a sample of that
     * is read. Every sample's weight together may then be at most twice what all threads allocated
     * since the start (a thread's first weight is capped at what it allocated since, read a little
     * after its sample), far below the 2 GiB. (In CI on 2026-12-07, the bytes of the tests before
     * landed on the first stack the test thread sampled, and the stack {@link
     * #goToolPprofReadsTheAllocsAndHeapProfiles} looks for fell under {@code go tool pprof -top}'s
     * cut.)
     */
    @Test
    void bytesAThreadAllocatedBeforeSamplingStartedAreNotPutOnItsFirstSample() throws Exception {
        com.sun.management.ThreadMXBean t = MemProfile.allocationCounter();
        assertTrue(t != null, "HotSpot counts each thread's allocated bytes");
        assertFalse(MemProfile.running(), "sampling must start here, not in a session already on");
        long before = 2L << 30;
        allocateGarbage((int) (before / (256 * 1024)));
        long total0 = t.getTotalThreadAllocatedBytes();
        long space0 = MemProfile.allocSpaceTotal();
        MemProfile.start();
        try {
            long deadline = System.nanoTime() + DEADLINE_NS;
            String cls = MemProfileTest.class.getName();
            while (MemProfile.allocSpaceAt(cls, "allocateAfterSamplingStarted") == 0) {
                if (System.nanoTime() - deadline > 0) {
                    fail("no JFR allocation sample of allocateAfterSamplingStarted in 60 s");
                }
                allocateAfterSamplingStarted(32); // 8 MiB, then a look every 10 ms for 200 ms:
                for (int i = 0; i < 20 && MemProfile.allocSpaceAt(cls, "allocateAfterSamplingStarted") == 0; i++) {
                    Thread.sleep(10); // the stream delivers about once a second; not allocating meanwhile
                }
            }
            long space = MemProfile.allocSpaceTotal() - space0;
            long window = t.getTotalThreadAllocatedBytes() - total0;
            assertTrue(window < before / 4, "the JVM allocated " + window + " bytes since the start: too many to tell");
            assertTrue(
                    space <= 2 * window,
                    "samples weighing " + space + " bytes where the JVM allocated " + window + " since the start");
        } finally {
            MemProfile.stop();
        }
    }

    /** {@code go tool pprof} reads both (when Go is installed; CI installs golang-1.19-go). */
    @Test
    void goToolPprofReadsTheAllocsAndHeapProfiles(@TempDir Path tmp) throws Exception {
        Path go = PprofTest.goBinary();
        assumeTrue(go != null, "skipped: no go binary (GORT_GO, /usr/lib/go-1.19/bin/go, go on PATH)");
        Path f = tmp.resolve("allocs.pb.gz");
        Files.write(f, allocsProfile());
        // Every node: the profile is cumulative over every sampling session of this JVM (the tests
        // before this one), and -top's default cut (nodes under 0.5 % of the total) depends on those.
        String top = PprofTest.pprof(go, tmp, "-sample_index=alloc_space", "-nodefraction=0", "-top", f.toString());
        assertTrue(top.contains("Type: alloc_space\n"), top);
        assertTrue(top.contains("dev.gort.runtime.pprof.MemProfileTest.allocateDistinctively"), top);
        MemProfile.start();
        try {
            Path h = tmp.resolve("heap.pb.gz");
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            MemProfile.writeHeapProfile(out);
            Files.write(h, out.toByteArray());
            String heap = PprofTest.pprof(go, tmp, "-top", h.toString());
            assertTrue(heap.contains("Type: inuse_space\n"), heap);
        } finally {
            MemProfile.stop();
        }
    }

    /**
     * What a Go user types: {@code go tool pprof -sample_index=alloc_space -top
     * http://127.0.0.1:PORT/debug/pprof/allocs} against the debug server, whose sampling started
     * with it, shows a goroutine's allocations under the method that made them (when Go is
     * installed).
     */
    @Test
    void goToolPprofReadsTheAllocsEndpoint(@TempDir Path tmp) throws Exception {
        Path go = PprofTest.goBinary();
        assumeTrue(go != null, "skipped: no go binary (GORT_GO, /usr/lib/go-1.19/bin/go, go on PATH)");
        Scheduler s = new Scheduler(Config.fromEnvironment().withGomaxprocs(1).withPanicExits(false));
        try (dev.gort.runtime.trace.DebugServer d = dev.gort.runtime.trace.DebugServer.start(s, 0)) {
            s.run(() -> {
                long deadline = System.nanoTime() + DEADLINE_NS;
                while (MemProfile.allocSpaceAt(MemProfileTest.class.getName(), "allocateInAGoroutineOfTheServer")
                        == 0) {
                    if (System.nanoTime() - deadline > 0) {
                        fail("no JFR allocation sample of allocateInAGoroutineOfTheServer in 60 s");
                    }
                    allocateInAGoroutineOfTheServer(1 << 20);
                }
            });
            String top = PprofTest.pprof(
                    go,
                    tmp,
                    "-sample_index=alloc_space",
                    "-nodefraction=0", // every node, as above
                    "-top",
                    "http://127.0.0.1:" + d.port() + "/debug/pprof/allocs");
            assertTrue(top.contains("Type: alloc_space\n"), top);
            assertTrue(top.contains("dev.gort.runtime.pprof.MemProfileTest.allocateInAGoroutineOfTheServer"), top);
        }
    }

    /** {@link #allocateDistinctively} under another name, for the server's profile. */
    static void allocateInAGoroutineOfTheServer(int n) {
        for (int i = 0; i < n; i++) {
            DistinctiveAllocation d = new DistinctiveAllocation();
            d.b = i;
            sink = d;
            if ((i & 0xffff) == 0) {
                Poll.poll();
            }
        }
    }

    @Test
    void leadingRuntimeFramesAreHiddenAsGos() {
        StackTraceElement chan = new StackTraceElement("dev.gort.runtime.Chan", "makechan", "Chan.java", 1);
        StackTraceElement user = new StackTraceElement("a.b.Main", "f", "Main.java", 2);
        StackTraceElement inner = new StackTraceElement("dev.gort.runtime.Hchan", "init", "Hchan.java", 3);
        assertEquals(List.of(user, chan), MemProfile.hideRuntime(List.of(inner, user, chan)));
        assertEquals(List.of(inner, chan), MemProfile.hideRuntime(List.of(inner, chan)), "all runtime: all shown");
    }

    @Test
    void eachStartIsMatchedByAStop() {
        MemProfile.start();
        MemProfile.startAsync();
        assertTrue(MemProfile.running());
        MemProfile.stop();
        assertTrue(MemProfile.running(), "one start is not matched yet");
        MemProfile.stop();
        assertFalse(MemProfile.running());
        MemProfile.stop(); // nothing to match: nothing happens
        assertFalse(MemProfile.running());
    }
}
