package dev.gort.bench;

import dev.gort.Go;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * A line-echo server on the JDK's own blocking sockets ({@code java.net.Socket},
 * {@code BufferedReader.readLine}, {@code PrintWriter.println} and {@code flush}), the way a Java
 * server is written, under four servers in the same run: gort (a goroutine per connection, under
 * the agent, whose reads that would block wait in gort's netpoller: agent/README.md, "JDK calls that
 * block"), virtual threads, platform threads, and Go's twin of it
 * ({@code bench/probes/line_echo_server.go}, a process of its own, when {@code -Dbench.goecho} names
 * its binary). The clients are the same for all four: {@link #CONNS} platform threads in this JVM,
 * each with its connection, sending {@link #ROUNDS} lines per invocation and waiting for each echo.
 * One op = one round trip (ns per round trip, {@link #CONNS} at a time). Not in {@code ./gort bench}'s
 * passes (it needs the agent on the fork's command line and the Go binary): run by hand
 * (bench/README.md, "The JDK's sockets"). Issue 19's comparison for a server that parks on I/O.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1)
public class JdkLineEcho {
    static final int CONNS = 50;
    static final int ROUNDS = 20;

    /** gort, vthread, platform or go ({@code -Dbench.goecho=<binary>}). */
    @Param({"gort", "vthread", "platform"})
    public String impl;

    /** GOMAXPROCS, virtual threads' parallelism or Go's GOMAXPROCS; platform threads ignore it. */
    @Param({"1", "2"})
    public int procs;

    private GortHost host;
    private ServerSocket server;
    private Process go;
    private ExecutorService clientThreads;
    private final List<Client> clients = new ArrayList<>();

    /** One connection's client end. */
    private record Client(Socket socket, BufferedReader in, PrintWriter out) {
        void rounds() throws IOException {
            for (int r = 0; r < ROUNDS; r++) {
                out.println("hello " + r);
                out.flush();
                String echo = in.readLine();
                if (echo == null || !echo.equals("hello " + r)) {
                    throw new IllegalStateException("bad echo: " + echo);
                }
            }
        }
    }

    @Setup(Level.Trial)
    public void setup() throws Exception {
        int port;
        switch (impl) {
            case "gort" -> {
                host = new GortHost(procs);
                server = new ServerSocket(0, CONNS, InetAddress.getLoopbackAddress());
                host.run(() -> Go.go(() -> accept(server, Go::go)));
                port = server.getLocalPort();
            }
            case "vthread" -> {
                // before the first virtual thread (each parameter set runs in a fork of its own)
                System.setProperty("jdk.virtualThreadScheduler.parallelism", Integer.toString(procs));
                server = new ServerSocket(0, CONNS, InetAddress.getLoopbackAddress());
                Thread.ofVirtual().start(() -> accept(server, Thread.ofVirtual()::start));
                port = server.getLocalPort();
            }
            case "platform" -> {
                server = new ServerSocket(0, CONNS, InetAddress.getLoopbackAddress());
                Thread.ofPlatform()
                        .daemon()
                        .start(() -> accept(server, Thread.ofPlatform().daemon()::start));
                port = server.getLocalPort();
            }
            case "go" -> {
                String bin = System.getProperty("bench.goecho");
                if (bin == null || !Files.isExecutable(Path.of(bin))) {
                    throw new IllegalStateException(
                            "impl=go needs -Dbench.goecho=<binary of bench/probes/line_echo_server.go>, not " + bin);
                }
                ProcessBuilder pb = new ProcessBuilder(bin).redirectError(ProcessBuilder.Redirect.INHERIT);
                pb.environment().put("GOMAXPROCS", Integer.toString(procs));
                go = pb.start();
                port = Integer.parseInt(new BufferedReader(new InputStreamReader(go.getInputStream()))
                        .readLine()
                        .strip());
            }
            default -> throw new IllegalArgumentException("impl " + impl);
        }
        clientThreads = Executors.newFixedThreadPool(CONNS);
        for (int i = 0; i < CONNS; i++) {
            Socket s = new Socket(InetAddress.getLoopbackAddress(), port);
            s.setTcpNoDelay(true);
            clients.add(new Client(
                    s,
                    new BufferedReader(new InputStreamReader(s.getInputStream(), StandardCharsets.UTF_8)),
                    new PrintWriter(new OutputStreamWriter(s.getOutputStream(), StandardCharsets.UTF_8))));
        }
    }

    /** The server's accept loop: each connection served by {@code spawn} (a goroutine, a thread). */
    private static void accept(ServerSocket server, java.util.function.Consumer<Runnable> spawn) {
        try {
            for (; ; ) {
                Socket s = server.accept();
                spawn.accept(() -> handle(s));
            }
        } catch (IOException e) {
            // closed at the end of the trial
        }
    }

    /** The server's side of a connection: every line read is written back and flushed. */
    static void handle(Socket s) {
        try (s;
                BufferedReader in =
                        new BufferedReader(new InputStreamReader(s.getInputStream(), StandardCharsets.UTF_8));
                PrintWriter out =
                        new PrintWriter(new OutputStreamWriter(s.getOutputStream(), StandardCharsets.UTF_8))) {
            String line;
            while ((line = in.readLine()) != null) {
                out.println(line);
                out.flush();
            }
        } catch (IOException e) {
            // the client closed
        }
    }

    @Benchmark
    @OperationsPerInvocation(CONNS * ROUNDS)
    public void roundTrips() throws Exception {
        List<Future<?>> done = new ArrayList<>(CONNS);
        for (Client c : clients) {
            done.add(clientThreads.submit(() -> {
                c.rounds();
                return null;
            }));
        }
        for (Future<?> f : done) {
            f.get();
        }
    }

    @TearDown(Level.Trial)
    public void tearDown() throws IOException, InterruptedException {
        for (Client c : clients) {
            c.socket().close();
        }
        clientThreads.shutdownNow();
        if (server != null) {
            server.close();
        }
        if (go != null) {
            go.destroy();
            go.waitFor(10, TimeUnit.SECONDS);
        }
        if (host != null) {
            host.close();
        }
    }
}
