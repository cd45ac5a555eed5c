package dev.gort.runtime.trace;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gort.runtime.GoSema;
import dev.gort.runtime.Scheduler;
import dev.gort.runtime.pprof.ProfileProto.Profile;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** The loopback debug endpoints against a running program. */
class DebugServerTest {
    @Test
    void endpointsServeDumpsSchedtraceMetricsAndTraces() throws Exception {
        Scheduler s = new Scheduler(Workloads.config(2, true));
        AtomicReference<String[]> got = new AtomicReference<>();
        try (DebugServer d = DebugServer.start(s, 0)) {
            HttpClient http = HttpClient.newHttpClient();
            String base = "http://127.0.0.1:" + d.port();
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
                // the HTTP calls block this carrier; the parked goroutines stay parked meanwhile
                String[] r = new String[12];
                try {
                    r[0] = get(http, base + "/debug/pprof/goroutine?debug=2");
                    r[1] = get(http, base + "/debug/pprof/goroutine?debug=1");
                    r[2] = get(http, base + "/debug/sched?detail=1");
                    r[3] = get(http, base + "/debug/metrics");
                    r[4] = get(http, base + "/debug/trace?seconds=0.05&format=json");
                    r[5] = get(http, base + "/debug/pprof/goroutine");
                    r[6] = get(http, base + "/debug/pprof/threadcreate?debug=1");
                    Scheduler.current().blockprof.setMutexProfileFraction(3);
                    r[7] = get(http, base + "/debug/pprof/block?debug=1");
                    r[8] = get(http, base + "/debug/pprof/mutex?debug=1");
                    r[9] = get(http, base + "/debug/");
                    r[10] = get(http, base + "/debug/pprof/");
                    HttpResponse<String> miss = http.send(
                            HttpRequest.newBuilder(URI.create(base + "/debug/nothing-here"))
                                    .build(),
                            HttpResponse.BodyHandlers.ofString());
                    r[11] = miss.statusCode() + " " + miss.body();
                } catch (Exception e) {
                    throw new RuntimeException(e);
                }
                got.set(r);
                for (int i = 0; i < 3; i++) {
                    never.release();
                }
            });
        }
        String[] r = got.get();
        // main is in a blocking HTTP call: running, or a syscall once sysmon saw its carrier blocked
        assertTrue(r[0].startsWith("goroutine 1 [running]:") || r[0].startsWith("goroutine 1 [syscall]:"), r[0]);
        assertTrue(r[0].contains("[semacquire]:"), r[0]);
        assertTrue(r[1].startsWith("goroutine profile: total 4\n"), r[1]);
        assertTrue(
                java.util.regex.Pattern.compile("(?m)^3 @( 0x[0-9a-f]+)+\n#\t0x")
                        .matcher(r[1])
                        .find(),
                r[1]);
        // no debug: the gzip'd profile.proto, as net/http/pprof serves it
        assertTrue(r[5].startsWith("\u001f"), r[5].substring(0, Math.min(20, r[5].length())));
        assertTrue(r[6].startsWith("threadcreate profile: total "), r[6]);
        assertEquals("--- contention:\ncycles/second=1000000000\n", r[7]);
        assertEquals("--- mutex:\ncycles/second=1000000000\nsampling period=3\n", r[8]);
        assertTrue(
                r[2].startsWith("SCHED ") && r[2].contains(" gcwaiting=false ") && r[2].contains("\n  P1: status="),
                r[2]);
        assertTrue(r[3].contains("/sched/goroutines:goroutines 4\n"), r[3]); // an integer prints as one
        assertTrue(r[3].matches("(?s).*\n/sched/latencies:seconds histogram\\(\\d+ samples\\)\n.*"), r[3]);
        // the index that net/http/pprof serves at /debug/pprof/, and no index for other paths
        for (String index : new String[] {r[9], r[10]}) {
            assertTrue(index.contains("<a href=\"/debug/pprof/goroutine?debug=1\">"), index);
            assertTrue(index.contains("<a href=\"/debug/pprof/heap?debug=1\">"), index);
            assertTrue(index.contains("<a href=\"/debug/pprof/allocs?debug=1\">"), index);
            assertTrue(index.contains("<a href=\"/debug/pprof/cmdline\">"), index);
            assertTrue(index.contains("<a href=\"/debug/metrics\">") && index.contains("4 goroutines"), index);
        }
        assertEquals("404 404 page not found\n", r[11]);
        assertTrue(r[4].startsWith("{\"displayTimeUnit\":\"ns\""), r[4].substring(0, Math.min(200, r[4].length())));
    }

    /** {@code /debug/pprof/goroutineleak}: two goroutines in {@code select {}} nobody can wake, one parked on a held semaphore. */
    @Test
    void goroutineleakEndpointRunsTheLeakProfile() throws Exception {
        Scheduler s = new Scheduler(Workloads.config(1, true));
        AtomicReference<String[]> got = new AtomicReference<>();
        try (DebugServer d = DebugServer.start(s, 0)) {
            HttpClient http = HttpClient.newHttpClient();
            String base = "http://127.0.0.1:" + d.port();
            s.run(() -> {
                GoSema held = new GoSema("held", 0);
                for (int i = 0; i < 2; i++) {
                    Scheduler.current()
                            .newproc(() ->
                                    Scheduler.gopark(null, null, dev.gort.runtime.WaitReason.SELECT_NO_CASES, null));
                }
                Scheduler.current().newproc(held::acquire);
                long deadline = System.nanoTime() + 30_000_000_000L;
                while (Scheduler.current().allgs().stream()
                                        .filter(g -> g.readgstatus() == dev.gort.runtime.G._Gwaiting)
                                        .count()
                                < 3
                        && System.nanoTime() < deadline) {
                    Scheduler.gosched(); // wait for the three to park
                }
                String[] r = new String[2];
                try {
                    r[0] = get(http, base + "/debug/pprof/goroutineleak?debug=2");
                    r[1] = get(http, base + "/debug/pprof/goroutineleak?debug=1");
                } catch (Exception e) {
                    throw new RuntimeException(e);
                }
                got.set(r);
                held.release();
            });
        }
        String[] r = got.get();
        assertEquals(2, r[0].split("\\[select \\(no cases\\) \\(leaked\\)\\]:\n", -1).length - 1, r[0]);
        assertTrue(r[0].matches("(?s)goroutine \\d+ \\[select \\(no cases\\) \\(leaked\\)\\]:\n.*"), r[0]);
        assertTrue(r[1].startsWith("goroutineleak profile: total 2\n"), r[1]);
    }

    /**
     * {@code ?seconds=N} serves the profile's change over N seconds, as net/http/pprof's
     * serveDeltaProfile ({@code go tool pprof -seconds N} asks for it): a block event recorded
     * before the request is not in it, and its duration is N seconds; a bad N, a profile without
     * deltas and a {@code debug} beside it get Go's 400s.
     */
    @Test
    void secondsServesTheProfilesChangeOverThatLong() throws Exception {
        Scheduler s = new Scheduler(Workloads.config(1, true));
        AtomicReference<Object[]> got = new AtomicReference<>();
        try (DebugServer d = DebugServer.start(s, 0)) {
            HttpClient http = HttpClient.newHttpClient();
            String base = "http://127.0.0.1:" + d.port();
            s.run(() -> {
                Scheduler.current().blockprof.setBlockProfileRate(1);
                Scheduler.current().blockprof.blockevent(1234, 0);
                Object[] r = new Object[6];
                try {
                    HttpResponse<byte[]> delta = http.send(
                            HttpRequest.newBuilder(URI.create(base + "/debug/pprof/block?seconds=1"))
                                    .build(),
                            HttpResponse.BodyHandlers.ofByteArray());
                    r[0] = delta;
                    r[1] = http.send(
                            HttpRequest.newBuilder(URI.create(base + "/debug/pprof/block"))
                                    .build(),
                            HttpResponse.BodyHandlers.ofByteArray());
                    String[] bad = {
                        "/debug/pprof/block?seconds=0",
                        "/debug/pprof/mutex?seconds=x",
                        "/debug/pprof/goroutineleak?seconds=1",
                        "/debug/pprof/goroutine?seconds=1&debug=1"
                    };
                    for (int i = 0; i < bad.length; i++) {
                        HttpResponse<String> e = http.send(
                                HttpRequest.newBuilder(URI.create(base + bad[i]))
                                        .build(),
                                HttpResponse.BodyHandlers.ofString());
                        r[2 + i] = e.statusCode() + " "
                                + e.headers().firstValue("X-Go-Pprof").orElse("-") + " " + e.body();
                    }
                } catch (Exception e) {
                    throw new RuntimeException(e);
                }
                got.set(r);
            });
        }
        Object[] r = got.get();
        @SuppressWarnings("unchecked")
        HttpResponse<byte[]> delta = (HttpResponse<byte[]>) r[0];
        assertEquals(200, delta.statusCode());
        assertEquals(
                "attachment; filename=\"block-delta\"",
                delta.headers().firstValue("Content-Disposition").orElse(""));
        Profile p = profile(delta.body());
        assertEquals(0, p.getSampleCount(), p.toString());
        assertTrue(p.getDurationNanos() >= 1_000_000_000L, p.toString());
        @SuppressWarnings("unchecked")
        HttpResponse<byte[]> all = (HttpResponse<byte[]>) r[1];
        assertEquals(1, profile(all.body()).getSampleCount());
        assertEquals("400 1 invalid value for \"seconds\" - must be a positive integer\n", r[2]);
        assertEquals("400 1 invalid value for \"seconds\" - must be a positive integer\n", r[3]);
        assertEquals("400 1 \"seconds\" parameter is not supported for this profile type\n", r[4]);
        assertEquals("400 1 seconds and debug params are incompatible\n", r[5]);
    }

    /**
     * A request that waits (a 60-second trace) does not hold up the others: each is served on a
     * thread of its own, as net/http serves each connection on a goroutine.
     */
    @Test
    void aWaitingRequestDoesNotHoldUpTheOthers() throws Exception {
        Scheduler s = new Scheduler(Workloads.config(1, true));
        AtomicReference<String> got = new AtomicReference<>();
        try (DebugServer d = DebugServer.start(s, 0)) {
            HttpClient http = HttpClient.newHttpClient();
            String base = "http://127.0.0.1:" + d.port();
            s.run(() -> {
                var slow = http.sendAsync(
                        HttpRequest.newBuilder(URI.create(base + "/debug/trace?seconds=60&format=json"))
                                .build(),
                        HttpResponse.BodyHandlers.ofString());
                long deadline = System.nanoTime() + 30_000_000_000L;
                while (!s.trace.recording() && System.nanoTime() < deadline) {
                    // until the trace request is being served: its start stops the world from a
                    // goroutine of its own, which needs this P now and then (nothing preempts here)
                    Scheduler.gosched();
                }
                try {
                    HttpResponse<String> r = http.send(
                            HttpRequest.newBuilder(URI.create(base + "/debug/sched"))
                                    .timeout(java.time.Duration.ofSeconds(20))
                                    .build(),
                            HttpResponse.BodyHandlers.ofString());
                    got.set(r.statusCode() + " " + r.body());
                } catch (Exception e) {
                    got.set(e.toString());
                }
                d.close(); // ends the trace request
                slow.handle((r, e) -> null).join();
                while (s.trace.recording()) {
                    Thread.onSpinWait();
                }
            });
        }
        assertTrue(got.get().startsWith("200 SCHED "), got.get());
    }

    /**
     * {@code /debug/pprof/profile?seconds=N}: the CPU profile, as net/http/pprof serves it (what
     * {@code go tool pprof http://.../debug/pprof/profile} fetches); 500 while another CPU profile
     * runs.
     */
    @Test
    void theCpuProfileEndpointServesGosCpuProfile() throws Exception {
        Scheduler s = new Scheduler(Workloads.config(1, true));
        try (DebugServer d = DebugServer.start(s, 0)) {
            HttpClient http = HttpClient.newHttpClient();
            String url = "http://127.0.0.1:" + d.port() + "/debug/pprof/profile?seconds=1";
            dev.gort.runtime.pprof.CpuProfile.startCPUProfile(new java.io.ByteArrayOutputStream());
            HttpResponse<String> busy;
            try {
                busy = http.send(HttpRequest.newBuilder(URI.create(url)).build(), HttpResponse.BodyHandlers.ofString());
            } finally {
                dev.gort.runtime.pprof.CpuProfile.stopCPUProfile();
            }
            assertEquals(500, busy.statusCode());
            assertEquals("Could not enable CPU profiling: cpu profiling already in use\n", busy.body());
            assertEquals("1", busy.headers().firstValue("X-Go-Pprof").orElse(""));
            HttpResponse<byte[]> ok =
                    http.send(HttpRequest.newBuilder(URI.create(url)).build(), HttpResponse.BodyHandlers.ofByteArray());
            assertEquals(200, ok.statusCode());
            assertEquals(
                    "attachment; filename=\"profile\"",
                    ok.headers().firstValue("Content-Disposition").orElse(""));
            Profile p = profile(ok.body());
            assertEquals("cpu", p.getStringTable((int) p.getPeriodType().getType()));
            assertEquals(10_000_000L, p.getPeriod());
            assertTrue(p.getDurationNanos() >= 1_000_000_000L, "a 1 s profile: " + p.getDurationNanos());
        }
    }

    /**
     * {@code /debug/pprof/trace?seconds=N}: the execution trace, as net/http/pprof serves it (what
     * {@code go tool trace} reads, in Go 1.19's format); Go's 500 while a trace records.
     */
    @Test
    void theTraceEndpointServesGosExecutionTrace() throws Exception {
        Scheduler s = new Scheduler(Workloads.config(1, true));
        try (DebugServer d = DebugServer.start(s, 0)) {
            HttpClient http = HttpClient.newHttpClient();
            String url = "http://127.0.0.1:" + d.port() + "/debug/pprof/trace?seconds=1";
            AtomicReference<HttpResponse<byte[]>> ok = new AtomicReference<>();
            AtomicReference<HttpResponse<String>> busy = new AtomicReference<>();
            s.run(() -> {
                Thread t = new Thread(() -> {
                    try {
                        ok.set(http.send(
                                HttpRequest.newBuilder(URI.create(url)).build(),
                                HttpResponse.BodyHandlers.ofByteArray()));
                    } catch (Exception e) {
                        throw new RuntimeException(e);
                    }
                });
                t.start();
                // wait-for-condition: the request's trace records (start publishes the session, then turns
                // the hooks on)
                while (!s.trace.recording() || !s.trace.on) {
                    Scheduler.gosched();
                }
                for (int i = 0; i < 10; i++) { // goroutines for the trace, well inside its second
                    Scheduler.current().newproc(() -> {});
                }
                try {
                    busy.set(http.send(
                            HttpRequest.newBuilder(URI.create(url)).build(), HttpResponse.BodyHandlers.ofString()));
                } catch (Exception e) {
                    throw new RuntimeException(e);
                }
                try {
                    t.join();
                } catch (InterruptedException e) {
                    throw new RuntimeException(e);
                }
            });
            assertEquals(500, busy.get().statusCode());
            assertEquals(
                    "Could not enable tracing: tracing is already enabled\n",
                    busy.get().body());
            assertEquals("1", busy.get().headers().firstValue("X-Go-Pprof").orElse(""));
            assertEquals(200, ok.get().statusCode());
            assertEquals(
                    "application/octet-stream",
                    ok.get().headers().firstValue("Content-Type").orElse(""));
            assertEquals(
                    "attachment; filename=\"trace\"",
                    ok.get().headers().firstValue("Content-Disposition").orElse(""));
            GoTraceDecoder trace = GoTraceDecoder.decode(ok.get().body());
            assertTrue(
                    trace.count(GoTraceWriter.EV_GO_CREATE) >= 11,
                    () -> "the goroutines are not in the trace: " + trace.counts);
            assertTrue(
                    get(http, "http://127.0.0.1:" + d.port() + "/debug/pprof/").contains("/debug/pprof/trace"));
        }
    }

    /**
     * {@code /debug/pprof/heap}, {@code /debug/pprof/allocs} and {@code /debug/pprof/cmdline} as
     * net/http/pprof serves them: the allocs profile.proto as an attachment with {@code
     * alloc_space} its default sample type, the heap one with none (pprof takes the last, {@code
     * inuse_space}); {@code ?debug=1} Go's text; {@code heap?gc=1} collects first; {@code
     * ?seconds=N} the change over N seconds; the command line NUL-separated, the JVM's own.
     */
    @Test
    void heapAllocsAndCmdlineServeWhatNetHttpPprofServes() throws Exception {
        Scheduler s = new Scheduler(Workloads.config(1, true));
        try (DebugServer d = DebugServer.start(s, 0)) {
            HttpClient http = HttpClient.newHttpClient();
            String base = "http://127.0.0.1:" + d.port();
            HttpResponse<byte[]> allocs = http.send(
                    HttpRequest.newBuilder(URI.create(base + "/debug/pprof/allocs"))
                            .build(),
                    HttpResponse.BodyHandlers.ofByteArray());
            assertEquals(200, allocs.statusCode());
            assertEquals(
                    "attachment; filename=\"allocs\"",
                    allocs.headers().firstValue("Content-Disposition").orElse(""));
            Profile a = profile(allocs.body());
            assertEquals("alloc_space", a.getStringTable((int) a.getDefaultSampleType()));
            assertEquals(
                    "inuse_space", a.getStringTable((int) a.getSampleType(3).getType()));
            Profile h = profile(getBytes(http, base + "/debug/pprof/heap"));
            assertEquals(0, h.getDefaultSampleType(), "heap: no default sample type, as Go's");
            assertEquals(4, h.getSampleTypeCount());
            String text = get(http, base + "/debug/pprof/heap?debug=1");
            assertTrue(text.startsWith("heap profile: "), text);
            assertTrue(text.contains("\n# runtime.MemStats\n# Alloc = "), text);
            long gcs = collections();
            profile(getBytes(http, base + "/debug/pprof/heap?gc=1"));
            assertTrue(collections() > gcs, "heap?gc=1 runs a collection first");
            HttpResponse<byte[]> delta = http.send(
                    HttpRequest.newBuilder(URI.create(base + "/debug/pprof/allocs?seconds=1"))
                            .build(),
                    HttpResponse.BodyHandlers.ofByteArray());
            assertEquals(200, delta.statusCode());
            assertEquals(
                    "attachment; filename=\"allocs-delta\"",
                    delta.headers().firstValue("Content-Disposition").orElse(""));
            Profile dp = profile(delta.body());
            assertTrue(dp.getDurationNanos() >= 1_000_000_000L, dp.toString());
            assertEquals("alloc_space", dp.getStringTable((int) dp.getDefaultSampleType()));
            HttpResponse<String> cmd = http.send(
                    HttpRequest.newBuilder(URI.create(base + "/debug/pprof/cmdline"))
                            .build(),
                    HttpResponse.BodyHandlers.ofString());
            assertEquals(200, cmd.statusCode());
            assertEquals(
                    "text/plain; charset=utf-8",
                    cmd.headers().firstValue("Content-Type").orElse(""));
            java.util.List<String> argv = java.util.List.of(cmd.body().split("\0"));
            for (String arg :
                    java.lang.management.ManagementFactory.getRuntimeMXBean().getInputArguments()) {
                if (arg.startsWith("-D") || arg.startsWith("-X")) { // as given (the JVM rewrites --add-*)
                    assertTrue(argv.contains(arg), "the JVM's argument " + arg + " in " + argv);
                }
            }
            java.nio.file.Path proc = java.nio.file.Path.of("/proc/self/cmdline");
            if (java.nio.file.Files.isReadable(proc)) { // Linux: the process's argv, NUL-terminated
                String raw =
                        new String(java.nio.file.Files.readAllBytes(proc), java.nio.charset.StandardCharsets.UTF_8);
                java.util.List<String> real = java.util.List.of(raw.split("\0"));
                assertEquals(real.subList(1, real.size()), argv.subList(1, argv.size()));
            }
            String main = System.getProperty("sun.java.command").split(" ")[0];
            assertTrue(argv.contains(main), "the main class or jar " + main + " in " + argv);
        }
    }

    /** Every collector's collection count, summed. */
    static long collections() {
        long n = 0;
        for (var gc : java.lang.management.ManagementFactory.getGarbageCollectorMXBeans()) {
            n += Math.max(0, gc.getCollectionCount());
        }
        return n;
    }

    static byte[] getBytes(HttpClient http, String url) throws Exception {
        HttpResponse<byte[]> resp =
                http.send(HttpRequest.newBuilder(URI.create(url)).build(), HttpResponse.BodyHandlers.ofByteArray());
        assertEquals(200, resp.statusCode(), url);
        return resp.body();
    }

    static Profile profile(byte[] gz) throws java.io.IOException {
        try (java.util.zip.GZIPInputStream in =
                new java.util.zip.GZIPInputStream(new java.io.ByteArrayInputStream(gz))) {
            return Profile.parseFrom(in);
        }
    }

    static String get(HttpClient http, String url) throws Exception {
        HttpResponse<String> resp =
                http.send(HttpRequest.newBuilder(URI.create(url)).build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(200, resp.statusCode(), url);
        return resp.body();
    }
}
