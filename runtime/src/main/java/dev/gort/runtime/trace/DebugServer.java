package dev.gort.runtime.trace;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.gort.runtime.SchedTrace;
import dev.gort.runtime.Scheduler;
import dev.gort.runtime.Traceback;
import dev.gort.runtime.metrics.Metrics;
import dev.gort.runtime.pprof.CpuProfile;
import dev.gort.runtime.pprof.MemProfile;
import dev.gort.runtime.pprof.Pprof;
import java.io.IOException;
import java.io.OutputStream;
import java.io.StringWriter;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;

/**
 * Loopback-only HTTP endpoints for a running program, mirroring net/http/pprof:
 * <ul>
 *   <li>{@code /debug/pprof/goroutine}: the goroutine profile as gzip'd profile.proto ({@code go
 *       tool pprof} reads it); {@code ?debug=1} Go's grouped text ({@code goroutine profile: total
 *       N}, {@code <count> @ 0x..}, {@code #\t0x..\t<func>+0x0\t<file>:<line>}); {@code ?debug=2}
 *       the full goroutine dump (Go's format) and the wait-for graph; {@code ?seconds=N} (also
 *       on threadcreate, block and mutex) the change over N seconds ({@link Pprof#writeDelta});
 *   <li>{@code /debug/pprof/threadcreate} (and {@code ?debug=1}): one record per M ({@link Pprof});
 *   <li>{@code /debug/pprof/block}, {@code /debug/pprof/mutex} (and {@code ?debug=1}): the
 *       contention profiles, empty until {@code Go.setBlockProfileRate} /
 *       {@code Go.setMutexProfileFraction} turn them on;
 *   <li>{@code /debug/pprof/heap} ({@code ?gc=1} collects first), {@code /debug/pprof/allocs} (and
 *       {@code ?debug=1}, {@code ?seconds=N}): the heap profile of {@link MemProfile}, whose
 *       sampling runs while the server does;
 *   <li>{@code /debug/pprof/profile?seconds=N}: the CPU profile ({@link CpuProfile});
 *   <li>{@code /debug/pprof/cmdline}: the JVM's command line, NUL-separated ({@link #cmdline});
 *   <li>{@code /debug/sched?detail=1}: one schedtrace;
 *   <li>{@code /debug/metrics}: every runtime/metrics value, one {@code name value} per line;
 *   <li>{@code /debug/trace?seconds=5&format=html|json}: traces for that long (at most 60 s) and
 *       returns the HTML timeline or the Perfetto JSON;
 *   <li>{@code /debug/} and {@code /debug/pprof/}: an index of the above.
 * </ul>
 * Bound to 127.0.0.1 only. Start with {@link #start} (port 0 picks one).
 */
public final class DebugServer implements AutoCloseable {
    private final HttpServer server;
    private final Scheduler s;
    private final java.util.concurrent.ExecutorService handlers;
    /** Closed: under this server's monitor (a second close must not stop another's sampling). */
    private boolean closed;

    private DebugServer(Scheduler s, HttpServer server, java.util.concurrent.ExecutorService handlers) {
        this.s = s;
        this.server = server;
        this.handlers = handlers;
    }

    /**
     * Starts the endpoints of {@code s} on 127.0.0.1:{@code port}. Each request is served on a
     * thread of its own, as net/http serves each connection on a goroutine: a request that waits
     * ({@code ?seconds=N}, {@code /debug/trace}) does not hold up the others (the JDK server's
     * default would serve them one at a time, on its dispatcher thread).
     */
    public static DebugServer start(Scheduler s, int port) throws IOException {
        HttpServer hs = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 0);
        java.util.concurrent.atomic.AtomicInteger n = new java.util.concurrent.atomic.AtomicInteger();
        java.util.concurrent.ExecutorService handlers = java.util.concurrent.Executors.newCachedThreadPool(r -> {
            Thread t = new Thread(r, "gort-debug-http-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
        hs.setExecutor(handlers);
        DebugServer d = new DebugServer(s, hs, handlers);
        hs.createContext("/debug/pprof/goroutine", ex -> d.profile(ex, "goroutine"));
        hs.createContext("/debug/pprof/threadcreate", ex -> d.profile(ex, "threadcreate"));
        hs.createContext("/debug/pprof/goroutineleak", ex -> d.profile(ex, "goroutineleak"));
        hs.createContext("/debug/pprof/block", ex -> d.profile(ex, "block"));
        hs.createContext("/debug/pprof/mutex", ex -> d.profile(ex, "mutex"));
        hs.createContext("/debug/pprof/heap", ex -> d.profile(ex, "heap"));
        hs.createContext("/debug/pprof/allocs", ex -> d.profile(ex, "allocs"));
        hs.createContext("/debug/pprof/profile", d::cpuProfile);
        hs.createContext("/debug/pprof/trace", d::goTrace);
        hs.createContext("/debug/pprof/cmdline", DebugServer::cmdlineHandler);
        hs.createContext("/debug/sched", d::sched);
        hs.createContext("/debug/metrics", d::metrics);
        hs.createContext("/debug/trace", d::trace);
        hs.createContext("/debug/", d::index);
        // the heap profiles cover what is allocated while the server runs (Go's, the program's life)
        MemProfile.startAsync();
        hs.start();
        return d;
    }

    /**
     * The port of a {@code -Dgort.debug.http} setting: {@code <port>}, {@code :<port>},
     * {@code 127.0.0.1:<port>} or {@code localhost:<port>} (0 picks a free port). The server is
     * loopback-only, so any other host is refused.
     *
     * @throws IllegalArgumentException for anything else
     */
    public static int parsePort(String spec) {
        String v = spec.trim();
        int colon = v.lastIndexOf(':');
        if (colon >= 0) {
            String host = v.substring(0, colon);
            if (!host.isEmpty() && !host.equals("127.0.0.1") && !host.equals("localhost")) {
                throw new IllegalArgumentException(
                        "the debug server listens on the loopback interface only, not " + host);
            }
        }
        int port = dev.gort.runtime.Config.debugHttpPort(v);
        if (port < 0) {
            throw new IllegalArgumentException("not a port from 0 to 65535: " + v.substring(colon + 1));
        }
        return port;
    }

    public int port() {
        return server.getAddress().getPort();
    }

    /**
     * Stops listening, ends the requests in progress (a waiting one is interrupted) and matches
     * the server's start of allocation sampling ({@link MemProfile#stop}).
     */
    @Override
    public void close() {
        server.stop(0);
        handlers.shutdownNow();
        synchronized (this) {
            if (!closed) {
                closed = true;
                MemProfile.stop();
            }
        }
    }

    private static Map<String, String> query(URI u) {
        Map<String, String> m = new HashMap<>();
        String q = u.getRawQuery();
        if (q != null) {
            for (String kv : q.split("&")) {
                int eq = kv.indexOf('=');
                if (eq > 0) {
                    m.put(kv.substring(0, eq), kv.substring(eq + 1));
                }
            }
        }
        return m;
    }

    private static void reply(HttpExchange ex, int code, String type, String body) throws IOException {
        reply(ex, code, type, body.getBytes(StandardCharsets.UTF_8));
    }

    private static void reply(HttpExchange ex, int code, String type, byte[] b) throws IOException {
        ex.getResponseHeaders().set("Content-Type", type);
        ex.sendResponseHeaders(code, b.length);
        try (OutputStream os = ex.getResponseBody()) {
            os.write(b);
        }
    }

    /**
     * {@code /debug/pprof/goroutine}, {@code /debug/pprof/goroutineleak} (runs leak detection: a
     * few full collections), {@code /debug/pprof/threadcreate}, {@code block}, {@code mutex},
     * {@code heap} and {@code allocs}, as net/http/pprof serves them: {@code debug=0} (the
     * default) the gzip'd profile.proto as an attachment, {@code debug=1} the text, {@code
     * debug=2} (goroutine only) the full dump, here followed by gort's wait-for graph (text a dump
     * parser skips); {@code heap?gc=1} runs a collection first ({@code System.gc()}, Go's {@code
     * runtime.GC()}). Go: net/http/pprof handler.ServeHTTP.
     */
    private void profile(HttpExchange ex, String name) throws IOException {
        Map<String, String> q = query(ex.getRequestURI());
        int debug = atoi(q.get("debug"));
        String sec = q.get("seconds");
        if (sec != null && !sec.isEmpty()) {
            deltaProfile(ex, name, sec, debug);
            return;
        }
        if (name.equals("heap") && atoi(q.get("gc")) > 0) {
            System.gc();
        }
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        if (name.equals("goroutine")) {
            Pprof.writeGoroutine(s, out, debug);
            if (debug >= 2) {
                out.write(Traceback.waitForGraph(s).getBytes(StandardCharsets.UTF_8));
            }
        } else if (name.equals("goroutineleak")) {
            Pprof.writeGoroutineLeak(s, out, debug);
        } else if (name.equals("block")) {
            Pprof.writeBlock(s, out, debug);
        } else if (name.equals("mutex")) {
            Pprof.writeMutex(s, out, debug);
        } else if (name.equals("heap")) {
            MemProfile.writeHeap(out, debug);
        } else if (name.equals("allocs")) {
            MemProfile.writeAlloc(out, debug);
        } else {
            Pprof.writeThreadCreate(s, out, debug);
        }
        if (debug != 0) {
            reply(ex, 200, "text/plain; charset=utf-8", out.toByteArray());
        } else {
            attachment(ex, name, out.toByteArray());
        }
    }

    /** A query value as Go's {@code strconv.Atoi} with its error ignored: 0 if not an int. */
    private static int atoi(String v) {
        try {
            return v == null ? 0 : Integer.parseInt(v);
        } catch (NumberFormatException e) {
            return 0;
        }
    }

    /**
     * The program's command line as net/http/pprof's {@code /debug/pprof/cmdline} serves it: its
     * arguments separated by NUL bytes (Go: {@code os.Args}). A JVM's program is the JVM: the
     * launcher's path and every argument the process was started with (JVM options, class path,
     * main class or {@code -jar}, the program's own arguments), as the OS reports them ({@code
     * ProcessHandle.Info}); where it reports none, the launcher under {@code java.home}, the JVM's
     * input arguments and {@code sun.java.command} split at its spaces (so an argument with a space
     * in it reads as several, and the class path is missing). Go: net/http/pprof Cmdline.
     */
    static String cmdline() {
        ProcessHandle.Info info = ProcessHandle.current().info();
        java.util.List<String> argv = new java.util.ArrayList<>();
        if (info.command().isPresent() && info.arguments().isPresent()) {
            argv.add(info.command().get());
            argv.addAll(java.util.List.of(info.arguments().get()));
        } else {
            argv.add(java.nio.file.Path.of(System.getProperty("java.home"), "bin", "java")
                    .toString());
            argv.addAll(
                    java.lang.management.ManagementFactory.getRuntimeMXBean().getInputArguments());
            String command = System.getProperty("sun.java.command", "").trim();
            if (!command.isEmpty()) {
                argv.addAll(java.util.List.of(command.split(" +")));
            }
        }
        return String.join("\0", argv);
    }

    /** {@code /debug/pprof/cmdline}. Go: net/http/pprof Cmdline. */
    private static void cmdlineHandler(HttpExchange ex) throws IOException {
        ex.getResponseHeaders().set("X-Content-Type-Options", "nosniff");
        reply(ex, 200, "text/plain; charset=utf-8", cmdline());
    }

    /** A profile.proto as net/http/pprof serves one: an octet-stream attachment named {@code filename}. */
    private static void attachment(HttpExchange ex, String filename, byte[] b) throws IOException {
        ex.getResponseHeaders().set("Content-Disposition", "attachment; filename=\"" + filename + "\"");
        reply(ex, 200, "application/octet-stream", b);
    }

    /** {@code ?seconds=}'s value: 0 if it is not a positive integer (Go: strconv.ParseInt's error ignored). */
    private static long seconds(String v) {
        try {
            return Math.max(0, Long.parseLong(v));
        } catch (NumberFormatException e) {
            return 0;
        }
    }

    /** Sleeps for the request's {@code sec} seconds; an interrupt (the server closing) ends it early. */
    private static void sleepSeconds(long sec) {
        try {
            Thread.sleep(sec > Long.MAX_VALUE / 1000 ? Long.MAX_VALUE : sec * 1000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * {@code ?seconds=N}: the profile's change over N seconds ({@link Pprof#writeDelta}), what
     * {@code go tool pprof -seconds N} asks for; Go's answers (400, {@code X-Go-Pprof: 1}) to a
     * bad N, a profile without deltas and a {@code debug} beside it.
     *
     * <p>Go: net/http/pprof serveDeltaProfile, serveError
     */
    private void deltaProfile(HttpExchange ex, String name, String secStr, int debug) throws IOException {
        long sec = seconds(secStr);
        if (sec <= 0) {
            serveError(ex, 400, "invalid value for \"seconds\" - must be a positive integer");
            return;
        }
        if (!Pprof.supportsDelta(name)) {
            serveError(ex, 400, "\"seconds\" parameter is not supported for this profile type");
            return;
        }
        if (debug != 0) {
            serveError(ex, 400, "seconds and debug params are incompatible");
            return;
        }
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        Pprof.writeDelta(s, name, out, () -> sleepSeconds(sec));
        attachment(ex, name + "-delta", out.toByteArray());
    }

    /**
     * {@code /debug/pprof/profile?seconds=N}: the CPU profile of the next N seconds (30 if N is
     * missing or not a positive integer, as Go's), the gzip'd profile.proto
     * ({@link CpuProfile}); 500 {@code Could not enable CPU profiling: cpu profiling already in use}
     * while another runs. What {@code go tool pprof http://127.0.0.1:PORT/debug/pprof/profile}
     * fetches. Go: net/http/pprof Profile.
     */
    private void cpuProfile(HttpExchange ex) throws IOException {
        long sec = seconds(query(ex.getRequestURI()).getOrDefault("seconds", ""));
        if (sec <= 0) {
            sec = 30;
        }
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        try {
            CpuProfile.startCPUProfile(out);
        } catch (IllegalStateException e) {
            serveError(ex, 500, "Could not enable CPU profiling: " + e.getMessage());
            return;
        }
        try {
            sleepSeconds(sec); // the server closing ends it early: end the profile, answer
        } finally {
            CpuProfile.stopCPUProfile();
        }
        attachment(ex, "profile", out.toByteArray());
    }

    /**
     * {@code /debug/pprof/trace?seconds=N}: an execution trace of the next N seconds (1 if N is missing
     * or not a positive number, as Go's) in Go 1.19's binary format ({@link GoTraceWriter}), what
     * {@code go tool trace} reads; 500 {@code Could not enable tracing: tracing is already enabled}
     * while this runtime records a trace. Go: net/http/pprof Trace.
     */
    private void goTrace(HttpExchange ex) throws IOException {
        ex.getResponseHeaders().set("X-Content-Type-Options", "nosniff");
        double sec;
        try {
            sec = Double.parseDouble(query(ex.getRequestURI()).getOrDefault("seconds", ""));
        } catch (NumberFormatException e) {
            sec = 0;
        }
        if (!(sec > 0)) {
            sec = 1;
        }
        if (s.trace.recording()) {
            serveError(ex, 500, "Could not enable tracing: tracing is already enabled");
            return;
        }
        s.trace.start(new Tracer.Options().workload("debug/pprof/trace"));
        try {
            Thread.sleep((long) Math.min(Long.MAX_VALUE / 2, sec * 1000));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt(); // the server closing: answer with what was recorded
        }
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        GoTraceWriter.write(s.trace.stop(), out);
        attachment(ex, "trace", out.toByteArray());
    }

    /** Go: net/http/pprof serveError. */
    private static void serveError(HttpExchange ex, int status, String txt) throws IOException {
        ex.getResponseHeaders().set("X-Go-Pprof", "1");
        reply(ex, status, "text/plain; charset=utf-8", txt + "\n");
    }

    private void sched(HttpExchange ex) throws IOException {
        boolean detail = "1".equals(query(ex.getRequestURI()).get("detail"));
        reply(
                ex,
                200,
                "text/plain; charset=utf-8",
                SchedTrace.format(s, s.schedtrace.elapsedMs(System.nanoTime()), detail));
    }

    private void metrics(HttpExchange ex) throws IOException {
        Metrics m = new Metrics(s);
        StringBuilder sb = new StringBuilder();
        for (Metrics.Description d : Metrics.all()) {
            Metrics.Sample sample = new Metrics.Sample(d.name());
            m.read(sample);
            // as its kind prints it: an integer as one, a histogram as its number of samples
            // (histogram(N samples)), never a count under a name that says seconds
            sb.append(d.name()).append(' ').append(sample.value).append('\n');
        }
        reply(ex, 200, "text/plain; charset=utf-8", sb.toString());
    }

    /**
     * {@code /debug/} and {@code /debug/pprof/}: an index of the endpoints, as net/http/pprof serves
     * one at {@code /debug/pprof/}; any other path under {@code /debug/} that no endpoint has: 404.
     */
    private void index(HttpExchange ex) throws IOException {
        String path = ex.getRequestURI().getPath();
        if (!path.equals("/debug/") && !path.equals("/debug/pprof") && !path.equals("/debug/pprof/")) {
            reply(ex, 404, "text/plain; charset=utf-8", "404 page not found\n");
            return;
        }
        StringBuilder sb = new StringBuilder("<!DOCTYPE html><html><head><title>gort /debug/</title></head><body>\n");
        sb.append("<p>gort debug endpoints (").append(s.numGoroutine()).append(" goroutines):</p><ul>\n");
        for (String[] e : INDEX) {
            sb.append("<li><a href=\"").append(e[0]).append("\">").append(e[0]).append("</a>: ");
            sb.append(e[1]).append("</li>\n");
        }
        sb.append("</ul></body></html>\n");
        reply(ex, 200, "text/html; charset=utf-8", sb.toString());
    }

    /** The index's entries: path (with a useful query), what it serves. */
    private static final String[][] INDEX = {
        {"/debug/pprof/goroutine?debug=1", "goroutine profile (debug=0: profile.proto for go tool pprof, 2: full dump)"
        },
        {"/debug/pprof/threadcreate?debug=1", "one record per M"},
        {"/debug/pprof/goroutineleak?debug=1", "goroutines leaked: blocked on what nothing can reach"},
        {"/debug/pprof/block?debug=1", "blocking profile (Go.setBlockProfileRate)"},
        {"/debug/pprof/mutex?debug=1", "mutex contention profile (Go.setMutexProfileFraction)"},
        {
            "/debug/pprof/heap?debug=1",
            "allocations and live objects sampled by JFR since the server started (gc=1 collects first)"
        },
        {"/debug/pprof/allocs?debug=1", "the heap profile, alloc_space by default: a sampling of past allocations"},
        {"/debug/pprof/profile?seconds=30", "CPU profile (for go tool pprof)"},
        {"/debug/pprof/trace?seconds=1", "execution trace of that long, in Go's format (for go tool trace)"},
        {"/debug/pprof/cmdline", "the JVM's command line, NUL-separated"},
        {"/debug/sched?detail=1", "one schedtrace"},
        {"/debug/metrics", "runtime/metrics, one name and value per line"},
        {"/debug/trace?seconds=1&format=html", "an execution trace of that long, as the HTML timeline (or format=json)"}
    };

    private void trace(HttpExchange ex) throws IOException {
        Map<String, String> q = query(ex.getRequestURI());
        double secs;
        try {
            secs = Math.min(60, Math.max(0.001, Double.parseDouble(q.getOrDefault("seconds", "1"))));
        } catch (NumberFormatException e) {
            reply(ex, 400, "text/plain", "bad seconds\n");
            return;
        }
        if (s.trace.recording()) {
            reply(ex, 409, "text/plain", "a trace is already being recorded\n");
            return;
        }
        s.trace.start(new Tracer.Options().workload("debug/trace " + secs + "s"));
        try {
            Thread.sleep((long) (secs * 1000));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        Trace t = s.trace.stop();
        StringWriter w = new StringWriter();
        if ("json".equals(q.get("format"))) {
            ChromeTraceWriter.write(t, w);
            reply(ex, 200, "application/json", w.toString());
        } else {
            HtmlTimeline.write(t, w);
            reply(ex, 200, "text/html; charset=utf-8", w.toString());
        }
    }
}
