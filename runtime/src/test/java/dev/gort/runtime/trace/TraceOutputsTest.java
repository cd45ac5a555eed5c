package dev.gort.runtime.trace;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gort.runtime.GoSema;
import dev.gort.runtime.Scheduler;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.zip.GZIPInputStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** -Dgort.trace=<file>, the Chrome/Perfetto JSON layout, the flight-recorder window, tracing off. */
class TraceOutputsTest {
    /** Deleted by JUnit after each test (a temporary directory per run would pile up in /tmp). */
    @TempDir
    Path tmp;

    @Test
    void offByDefaultAndNothingRecorded() {
        Scheduler s = new Scheduler(Workloads.config(2, true));
        assertFalse(s.trace.on);
        assertFalse(s.trace.recording());
        s.run(() -> Workloads.pingPongBody(100));
        assertEquals(null, s.trace.stop());
    }

    @Test
    void systemPropertyWritesTheFileAtExit() throws Exception {
        Path dir = tmp;
        Path file = dir.resolve("run.json.gz");
        System.setProperty("gort.trace", file.toString());
        Scheduler s;
        try {
            s = new Scheduler(Workloads.config(2, true));
        } finally {
            System.clearProperty("gort.trace");
        }
        assertFalse(s.trace.on, "-Dgort.trace starts tracing when the runtime starts, not before");
        s.run(() -> {
            if (!Scheduler.current().trace.recording()) {
                throw new AssertionError("not tracing while main runs");
            }
            Workloads.pingPongBody(500);
        });
        assertTrue(Files.exists(file), "trace file written at exit");
        String json;
        try (var in = new GZIPInputStream(Files.newInputStream(file))) {
            json = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        assertTrue(json.startsWith("{\"displayTimeUnit\":\"ns\""), json.substring(0, 80));
        assertTrue(json.contains("\"traceEvents\":["));
        assertTrue(json.trim().endsWith("]}"));
    }

    /** go tool trace's layout: PROCS rows "Proc N", G slices "G<id> <fn>", unblock flows, STATS counters. */
    @Test
    void chromeJsonIsLaidOutLikeGoToolTrace() throws Exception {
        Workloads.Run r = Workloads.fanOut(Workloads.config(2, true), 8, 200_000);
        StringWriter w = new StringWriter();
        ChromeTraceWriter.write(r.trace(), w);
        String json = w.toString();
        assertTrue(
                json.contains(
                        "{\"ph\":\"M\",\"name\":\"process_name\",\"cat\":\"__metadata\",\"pid\":1,\"args\":{\"name\":\"PROCS\"}}"));
        assertTrue(
                json.contains(
                        "{\"ph\":\"M\",\"name\":\"thread_name\",\"cat\":\"__metadata\",\"pid\":1,\"tid\":2,\"args\":{\"name\":\"Proc 1\"}}"));
        assertTrue(json.contains("\"name\":\"STATS\""));
        // one X slice per run, named G<id> <start function>
        Matcher x = Pattern.compile("\\{\"ph\":\"X\",\"name\":\"G(\\d+) [^\"]+\",\"cat\":\"g\"")
                .matcher(json);
        int slices = 0;
        while (x.find()) {
            slices++;
        }
        assertEquals(r.trace().count(Ev.GO_START), slices);
        // flows: every start preceded by a create or unblock has s and f with the same id, cat and name
        Matcher s = Pattern.compile(
                        "\\{\"ph\":\"s\",\"bp\":\"e\",\"name\":(\"[^\"]+\"),\"cat\":\"sched\",\"id\":(\\d+)")
                .matcher(json);
        int flows = 0;
        while (s.find()) {
            String end = "{\"ph\":\"f\",\"bp\":\"e\",\"name\":" + s.group(1) + ",\"cat\":\"sched\",\"id\":" + s.group(2)
                    + ",";
            if (json.contains(end)) {
                flows++;
            }
        }
        assertTrue(flows >= 8, "go/unblock flows with both ends: " + flows);
        assertTrue(json.contains("\"name\":\"Goroutines\"") && json.contains("\"Runnable\":"));
        assertTrue(json.contains("\"name\":\"Threads\"") && json.contains("\"InSyscall\":"));
        assertTrue(json.contains("\"name\":\"Global runq\""));
        // valid JSON as far as a strict parser is concerned: balanced and parseable by the JDK's JS-free check
        assertEquals(count(json, '{'), count(json, '}'));
        assertEquals(count(json, '['), count(json, ']'));
    }

    private static int count(String s, char c) {
        int n = 0;
        boolean inStr = false;
        for (int i = 0; i < s.length(); i++) {
            char ch = s.charAt(i);
            if (ch == '"' && s.charAt(i - 1) != '\\') {
                inStr = !inStr;
            } else if (!inStr && ch == c) {
                n++;
            }
        }
        return n;
    }

    /** Sleeping goroutines: their timers fire on an M (TimerFire names the sleeper) and the trace validates. */
    @Test
    void timerFiresAreTraced() {
        for (int procs = 1; procs <= 2; procs++) {
            Scheduler s = new Scheduler(Workloads.config(procs, true));
            s.trace.start(new Tracer.Options().workload("sleepers"));
            s.run(() -> {
                GoSema done = new GoSema("done", 0);
                for (int i = 0; i < 3; i++) {
                    Scheduler.current().newproc(() -> {
                        dev.gort.runtime.Timer.timeSleep(2_000_000L);
                        done.release();
                    });
                }
                for (int i = 0; i < 3; i++) {
                    done.acquire();
                }
            });
            Trace t = s.trace.stop();
            TraceValidator.Result res = TraceValidator.validate(t, true, java.util.Map.of());
            assertTrue(res.ok(), res::toString);
            int fires = 0;
            for (int i = 0; i < t.size(); i++) {
                if (t.code(i) == Ev.TIMER_FIRE && t.g(i) > 1) {
                    fires++;
                }
            }
            assertTrue(fires >= 3, "timer fires naming the sleeper: " + fires);
        }
    }

    /**
     * The syscall events the syscall layer will emit (entersyscall/exitsyscall call these hooks):
     * emitted here by hand around a 1 ms busy section, to check the validator's and the exporters'
     * handling (G in a syscall on its M, back on its P) until that layer lands.
     */
    @Test
    void syscallEventsReplayAndExport() throws Exception {
        Scheduler s = new Scheduler(Workloads.config(2, true));
        s.trace.start(new Tracer.Options().workload("syscall hooks"));
        s.run(() -> {
            GoSema done = new GoSema("done", 0);
            Scheduler.current().newproc(() -> {
                dev.gort.runtime.M mp = dev.gort.runtime.M.current();
                dev.gort.runtime.G gp = Scheduler.currentG();
                Tracer tr = Scheduler.current().trace;
                tr.syscallEnter(mp, mp.p(), gp);
                Workloads.spin(1_000_000);
                tr.syscallExit(mp, mp.p(), gp, Ev.X_SAME_P);
                done.release();
            });
            done.acquire();
        });
        Trace t = s.trace.stop();
        TraceValidator.Result res = TraceValidator.validate(t, true, java.util.Map.of());
        assertTrue(res.ok(), res::toString);
        assertEquals(1, t.count(Ev.SYSCALL_ENTER));
        StringWriter w = new StringWriter();
        ChromeTraceWriter.write(t, w);
        String json = w.toString();
        assertTrue(json.contains("{\"ph\":\"b\",\"name\":\"G2 syscall (M"), json);
        assertTrue(json.contains("{\"ph\":\"e\",\"name\":\"G2 syscall (M"), json);
        // the run is split in two slices around the syscall: 2 starts' worth of G2 slices + 1 after exit
        Matcher x = Pattern.compile("\\{\"ph\":\"X\",\"name\":\"G2 ").matcher(json);
        int g2 = 0;
        while (x.find()) {
            g2++;
        }
        assertEquals(2, g2, "G2 runs before and after its syscall");
        // a G entering a syscall twice without leaving is caught
        int enter = -1;
        for (int i = 0; i < t.size(); i++) {
            if (t.code(i) == Ev.SYSCALL_EXIT) {
                t.code[i] = Ev.SYSCALL_ENTER;
                enter = i;
            }
        }
        assertTrue(enter > 0);
        assertFalse(TraceValidator.validate(t).ok());
    }

    /**
     * The format is the extension's, case ignored (an {@code .HTML} file once got JSON); a name
     * with no trace extension ({@code sieve.txt}, which once got JSON silently) has no format, and
     * writing it is refused.
     */
    @Test
    void theFileFormatIsTheExtensionsCaseIgnored() throws Exception {
        assertEquals(TraceFormat.HTML, TraceFormat.of("run.HTML"));
        assertEquals(TraceFormat.JSON, TraceFormat.of("/tmp/x/run.Json"));
        assertEquals(TraceFormat.JSON_GZ, TraceFormat.of("run.JSON.GZ"));
        assertEquals(TraceFormat.PFTRACE, TraceFormat.of("run.PFTrace"));
        assertEquals(TraceFormat.PFTRACE_GZ, TraceFormat.of("run.pftrace.gz"));
        for (String none : new String[] {"sieve.txt", "run.gz", "run", ".json", "run.json/"}) {
            assertNull(TraceFormat.of(none), none);
        }
        Scheduler s = new Scheduler(Workloads.config(1, true));
        s.trace.start(new Tracer.Options());
        s.run(() -> Workloads.pingPongBody(100));
        Trace t = s.trace.stop();
        Path html = tmp.resolve("run.HTML");
        TraceFiles.write(t, html);
        assertTrue(Files.readString(html).toLowerCase(java.util.Locale.ROOT).startsWith("<!doctype html>"), "not HTML");
        Path json = tmp.resolve("run.JSON");
        TraceFiles.write(t, json);
        assertTrue(Files.readString(json).contains("\"traceEvents\""), "not JSON");
        Path txt = tmp.resolve("sieve.txt");
        assertEquals(
                "trace file " + txt + ": want " + TraceFormat.WANTED,
                assertThrows(IllegalArgumentException.class, () -> TraceFiles.write(t, txt))
                        .getMessage());
        assertFalse(Files.exists(txt));
    }

    /** Flight-recorder mode keeps a bounded window; a windowed trace starts mid-run and still validates. */
    @Test
    void flightRecorderWindowBoundsTheTrace() {
        Scheduler s = new Scheduler(Workloads.config(1, true));
        s.trace.start(new Tracer.Options().window(1)); // the minimum: 2 chunks per M
        s.run(() -> Workloads.pingPongBody(100_000));
        Trace t = s.trace.stop();
        assertFalse(t.complete, "600k events cannot fit in the window");
        // what two chunks can hold (one-long records: the ping-pong's every one)
        assertTrue(t.size() <= 2 * TraceBuf.CHUNK_MAX_EVENTS + 1000, "kept " + t.size());
        TraceValidator.Result res = TraceValidator.validate(t);
        assertTrue(res.ok(), res::toString);
    }

    /**
     * The flight recorder keeps the last events: a windowed trace of a run is a suffix of it, the
     * events of the last millisecond up to the last one recorded (main's exit, or an M woken as
     * the runtime ends), and nothing from its beginning. The window is measured in time, so a
     * carrier stalled between the goroutines' exits (a loaded machine) can rightly leave an earlier
     * exit outside it: what must hold is that nothing inside is missing, so a goroutine with any
     * event kept has its exit kept.
     */
    @Test
    void flightRecorderWindowKeepsTheLastEvents() {
        Scheduler s = new Scheduler(Workloads.config(1, true));
        s.trace.start(new Tracer.Options().window(1));
        s.run(() -> Workloads.pingPongBody(100_000));
        Trace t = s.trace.stop();
        assertFalse(t.complete);
        assertTrue(t.size() > 0, "an empty window");
        long last = t.ts(t.size() - 1);
        boolean[] seen = new boolean[4];
        boolean[] exited = new boolean[4];
        for (int i = 0; i < t.size(); i++) {
            // (1 us of slack: the cut is made in the session's clock units, then stamps become ns)
            assertTrue(
                    t.ts(i) >= last - 1_001_000L, "an event older than the 1 ms window: " + t.ts(i) + ", last " + last);
            int g = (int) t.g(i);
            if (g >= 1 && g <= 3) {
                assertFalse(t.code(i) == Ev.GO_CREATE && g > 1, "the run's beginning kept: G" + g + "'s creation");
                seen[g] = true;
                exited[g] |= t.code(i) == Ev.GO_STOP && t.small(i) == Ev.S_EXIT;
            }
        }
        for (int g = 1; g <= 3; g++) {
            assertEquals(seen[g], exited[g], "G" + g + " has events in the window but not its exit: a hole in it");
        }
    }

    /**
     * A window is a time window, not only a memory bound: a quiet run of ~300 ms whose events fit in
     * the chunks many times over keeps only the last 50 ms (all 300 before: the chunks never filled).
     */
    @Test
    void flightRecorderWindowKeepsOnlyTheLastMillisecondsOfAQuietRun() {
        Scheduler s = new Scheduler(Workloads.config(1, true));
        s.trace.start(new Tracer.Options().window(50));
        s.run(() -> {
            long start = System.nanoTime();
            long next = start;
            for (long now = start; now - start < 300_000_000L; now = System.nanoTime()) {
                if (now - next >= 0) {
                    Scheduler.gosched(); // an event or two a millisecond
                    next += 1_000_000L;
                }
            }
        });
        Trace t = s.trace.stop();
        assertTrue(t.size() > 0);
        assertFalse(t.complete, "the run's start was cut");
        long span = t.endTs() - t.ts(0);
        assertTrue(span <= 50_000_000L, "kept " + span / 1_000_000.0 + " ms of a 50 ms window");
        TraceValidator.Result res = TraceValidator.validate(t);
        assertTrue(res.ok(), res::toString);
    }

    static final Pattern FIELD =
            Pattern.compile("\"(ph|name|cat|pid|tid|ts|dur|id|bp)\":(\"(?:[^\"\\\\]|\\\\.)*\"|-?[0-9.]+)");

    /** One trace event's top-level fields (the writer puts one event per line; args are not read). */
    static java.util.Map<String, String> fields(String line) {
        int args = line.indexOf(",\"args\":");
        Matcher m = FIELD.matcher(args < 0 ? line : line.substring(0, args));
        java.util.Map<String, String> f = new java.util.HashMap<>();
        while (m.find()) {
            String v = m.group(2);
            f.putIfAbsent(m.group(1), v.startsWith("\"") ? v.substring(1, v.length() - 1) : v);
        }
        return f;
    }

    static long ns(String us) {
        return new java.math.BigDecimal(us).movePointRight(3).longValueExact();
    }

    /**
     * What Perfetto's maintainers ask of synthetic JSON traces: processes and threads numbered from
     * 1 (never 0), a {@code cat} on every event, flow events bound to their enclosing slices
     * ({@code bp:e}: the start inside the waker's slice, the end at the start of the wakee's slice,
     * on the same row), none dangling (each id has one start and one end), and counters written only
     * when their values change.
     */
    @Test
    void chromeJsonFollowsPerfettosRules() throws Exception {
        Workloads.Run r = Workloads.fanOut(Workloads.config(2, true), 8, 200_000);
        StringWriter w = new StringWriter();
        ChromeTraceWriter.write(r.trace(), w);
        String json = w.toString();
        java.util.List<java.util.Map<String, String>> evs = new java.util.ArrayList<>();
        for (String line : json.split("\n")) {
            String l = line.endsWith(",") ? line.substring(0, line.length() - 1) : line;
            if (l.startsWith("{\"ph\":")) {
                evs.add(fields(l));
            }
        }
        assertTrue(evs.size() > 100, json.substring(0, Math.min(500, json.length())));
        java.util.Map<String, java.util.List<long[]>> slices = new java.util.HashMap<>();
        java.util.Map<String, java.util.List<java.util.Map<String, String>>> flows = new java.util.HashMap<>();
        java.util.Map<String, String> lastCounter = new java.util.HashMap<>();
        for (String line : json.split("\n")) {
            String l = line.endsWith(",") ? line.substring(0, line.length() - 1) : line;
            if (l.startsWith("{\"ph\":\"C\"")) {
                java.util.Map<String, String> f = fields(l);
                String args = l.substring(l.indexOf(",\"args\":"));
                assertFalse(args.equals(lastCounter.get(f.get("name"))), "counter written without a change: " + l);
                lastCounter.put(f.get("name"), args);
            }
        }
        for (java.util.Map<String, String> e : evs) {
            assertTrue(e.containsKey("cat") && !e.get("cat").isEmpty(), "no cat: " + e);
            assertTrue(Long.parseLong(e.get("pid")) >= 1, "pid 0: " + e);
            if (e.containsKey("tid")) {
                assertTrue(Long.parseLong(e.get("tid")) >= 1, "tid 0: " + e);
            }
            String row = e.get("pid") + "/" + e.get("tid");
            switch (e.get("ph")) {
                case "X" ->
                    slices.computeIfAbsent(row, k -> new java.util.ArrayList<>())
                            .add(new long[] {ns(e.get("ts")), ns(e.get("ts")) + ns(e.get("dur"))});
                case "s", "f" -> {
                    assertEquals("e", e.get("bp"), "flow not bound to its enclosing slice: " + e);
                    flows.computeIfAbsent(e.get("id"), k -> new java.util.ArrayList<>())
                            .add(e);
                }
                default -> {}
            }
        }
        assertTrue(flows.size() >= 8, "flows: " + flows.size());
        for (var fl : flows.entrySet()) {
            var halves = fl.getValue();
            assertEquals(2, halves.size(), "flow " + fl.getKey() + " dangles: " + halves);
            var st = halves.stream()
                    .filter(h -> h.get("ph").equals("s"))
                    .findFirst()
                    .orElseThrow();
            var fi = halves.stream()
                    .filter(h -> h.get("ph").equals("f"))
                    .findFirst()
                    .orElseThrow();
            long sts = ns(st.get("ts"));
            long fts = ns(fi.get("ts"));
            assertTrue(
                    slices.getOrDefault(st.get("pid") + "/" + st.get("tid"), java.util.List.of()).stream()
                            .anyMatch(x -> x[0] <= sts && sts <= x[1]),
                    "flow start outside any slice of its row: " + st);
            assertTrue(
                    slices.getOrDefault(fi.get("pid") + "/" + fi.get("tid"), java.util.List.of()).stream()
                            .anyMatch(x -> x[0] == fts),
                    "flow end not at a slice's start: " + fi);
        }
    }

    /** An HTML page that must drop events keeps the last ones (the end of the run), and says so. */
    @Test
    void htmlPageKeepsTheLastEventsWhenItDrops() throws Exception {
        Workloads.Run r = Workloads.fanOut(Workloads.config(2, true), 8, 200_000);
        Trace t = r.trace();
        int keep = t.size() / 3;
        StringWriter w = new StringWriter();
        HtmlTimeline.write(t, w, keep);
        String page = w.toString();
        int ev = page.indexOf("\"ev\":[");
        assertTrue(ev > 0);
        Matcher first = Pattern.compile("\\[(-?\\d+),(\\d+),").matcher(page);
        assertTrue(first.find(ev + 6));
        int k = t.size() - keep;
        assertEquals(t.ts(k), Long.parseLong(first.group(1)), "first event kept");
        assertEquals(t.code(k), Integer.parseInt(first.group(2)));
        String lastEv = "[" + t.ts(t.size() - 1) + "," + t.code(t.size() - 1) + "," + t.small(t.size() - 1) + ",";
        int last = page.lastIndexOf("],[");
        assertTrue(page.startsWith(lastEv, last + 2), "last event kept: " + page.substring(last, last + 80));
        assertTrue(page.contains("\"truncated\":true,\"totalEvents\":" + t.size()), "page says it dropped");
        assertTrue(page.contains("\"complete\":false"));
    }

    /**
     * The trace counts threads as SCHED's {@code threads=} does (Go's mcount, sysmon included): the
     * count when tracing started plus one per MCreate. The HTML page's threads card and counter are
     * this count. At GOMAXPROCS=1, with main running and every child done, no M can be created
     * between reading mcount and the snapshot (no idle P to wake).
     */
    @Test
    void traceCountsThreadsAsSchedtraceDoes() {
        Scheduler s = new Scheduler(Workloads.config(1, true));
        s.trace.start(new Tracer.Options().workload("threads"));
        long[] seen = new long[2];
        s.run(() -> {
            Workloads.pingPongBody(200);
            Scheduler rt = Scheduler.current();
            seen[0] = rt.mcountPublic();
            Trace snap = rt.trace.snapshot();
            seen[1] = snap.initialThreads + snap.count(Ev.M_CREATE);
        });
        s.trace.stop();
        assertEquals(seen[0], seen[1], "threads= (mcount) vs threads at trace start + MCreate events");
    }

    /**
     * A flight-recorder window allocates nothing once it is full: each buffer reuses its oldest chunk
     * (a long traced run used to allocate a 1.3 MB humongous chunk every 32768 events, and G1 spent
     * a collection cycle every few hundred ms reclaiming them).
     */
    @Test
    void flightRecorderWindowRecyclesItsChunks() {
        Scheduler s = new Scheduler(Workloads.config(1, true));
        s.trace.start(new Tracer.Options().window(1)); // 2 chunks per buffer
        Tracer.Session[] session = new Tracer.Session[1];
        s.run(() -> {
            Workloads.pingPongBody(100_000); // ~600k events: ~6 chunks' worth on one M
            session[0] = Scheduler.current().trace.session();
        });
        Trace t = s.trace.stop();
        assertFalse(t.complete);
        int bufs = 0;
        for (TraceBuf b : session[0].bufs) {
            bufs++;
            assertTrue(b.allocated <= session[0].maxChunksPerBuf, b.owner + " allocated " + b.allocated + " chunks");
        }
        assertTrue(bufs > 0);
        TraceValidator.Result res = TraceValidator.validate(t);
        assertTrue(res.ok(), res::toString);
    }

    /**
     * Snapshots taken while the writer recycles its chunks are consistent traces: the reader keeps
     * only chunks that did not change under it (a seqlock), so every snapshot validates.
     */
    @Test
    void snapshotsOfARecyclingWindowAreConsistent() throws Exception {
        Scheduler s = new Scheduler(Workloads.config(2, true));
        s.trace.start(new Tracer.Options().window(1));
        java.util.concurrent.CountDownLatch running = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.atomic.AtomicBoolean done = new java.util.concurrent.atomic.AtomicBoolean();
        java.util.List<String> bad = new java.util.concurrent.CopyOnWriteArrayList<>();
        java.util.concurrent.atomic.AtomicInteger snaps = new java.util.concurrent.atomic.AtomicInteger();
        Thread reader = new Thread(() -> {
            try {
                running.await();
            } catch (InterruptedException e) {
                return;
            }
            while (!done.get() && snaps.get() < 50) {
                Trace t = s.trace.snapshot();
                if (t == null) {
                    break;
                }
                snaps.incrementAndGet();
                TraceValidator.Result r = TraceValidator.validate(t);
                if (!r.ok()) {
                    bad.add(r.toString());
                }
            }
        });
        reader.start();
        s.run(() -> {
            running.countDown();
            // the writer recycles until the reader has taken its snapshots under it (a reader
            // thread the OS left waiting through a fixed amount of work would take none)
            int rounds = 0;
            do {
                Workloads.pingPongBody(20_000);
            } while (++rounds < 10 || (snaps.get() < 10 && reader.isAlive()));
            done.set(true);
        });
        reader.join();
        s.trace.stop();
        assertTrue(snaps.get() >= 10, "only " + snaps.get() + " snapshots taken");
        assertTrue(
                bad.isEmpty(),
                bad.size() + " of " + snaps.get() + " snapshots invalid: " + (bad.isEmpty() ? "" : bad.get(0)));
    }

    /**
     * The window cut counts every buffer that lost chunks, even one whose kept events all come after
     * the snapshot's end cut: a writer that recycled its whole window between the moment the snapshot
     * was asked for and its copy (a reader descheduled for a few ms) lost history that the other
     * buffers still hold, so their events from before its oldest kept one must go too. Hand-built:
     * M1 unblocks G3 into P1's runnext twice; in between, M0 stole and parked it, in a chunk M0 has
     * since recycled, and M0's kept chunks are stamped after the end cut.
     */
    @Test
    void windowCutCountsABufferWhoseKeptEventsAreAllAfterTheEndCut() {
        Tracer.Session s = new Tracer.Session(Tracer.NOOP, 2, true, "hand-built");
        TraceBuf m0 = s.newBuf(0, "M0");
        TraceBuf m1 = s.newBuf(1, "M1");
        long t0 = s.t0;
        m1.emit(t0 + 10, hdr(Ev.GO_UNBLOCK, Ev.W_RUNNEXT, 1, 1), 3, 2, 0);
        m0.emit(t0 + 15, hdr(Ev.GO_START, Ev.F_STOLEN, 0, 0), 3, 1, 0);
        m0.emit(t0 + 20, hdr(Ev.GO_STOP, Ev.S_PARK, 0, 0), 3, 0, 0);
        for (int i = 2; i < TraceBuf.CHUNK_FULL_EVENTS; i++) {
            m0.emit(t0 + 21, hdr(Ev.M_PARK, 0, -1, 0), 0, 0, 0); // fills M0's first chunk
        }
        m1.emit(t0 + 30, hdr(Ev.GO_UNBLOCK, Ev.W_RUNNEXT, 1, 1), 3, 2, 0);
        long later = System.nanoTime() + 3_600_000_000_000L; // after any end cut this test takes
        for (int i = 0; i <= TraceBuf.CHUNK_FULL_EVENTS; i++) {
            m0.emit(later, hdr(Ev.M_PARK, 0, -1, 0), 0, 0, 0); // a second chunk, then the first recycled
        }
        assertEquals(1, m0.dropped);
        Trace t = Trace.decode(s, null);
        TraceValidator.Result r = TraceValidator.validate(t);
        assertTrue(r.ok(), r::toString);
        for (int i = 0; i < t.size(); i++) {
            assertTrue(t.ts(i) >= later - t0, "kept from before M0's oldest kept event: " + t.describe(i));
        }
    }

    private static long hdr(int code, int small, int pid, long mid) {
        return (code & 0xFFL) | ((small & 0xFFFFL) << 8) | (((pid + 1) & 0xFFFFL) << 24) | ((mid + 1) << 40);
    }
}
