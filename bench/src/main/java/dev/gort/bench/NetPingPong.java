package dev.gort.bench;

import dev.gort.Go;
import dev.gort.net.Conn;
import dev.gort.net.Listener;
import dev.gort.net.Net;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
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
 * TCP ping-pong on one loopback connection: one op = one round trip of one byte (the client writes
 * it, an echo server reads it and writes it back, the client reads it). gort: both ends are
 * goroutines on dev.gort.net (each read that would block parks on the network poller); virtual
 * threads and platform threads: blocking {@code java.net.Socket}s (a virtual thread's blocking read
 * parks on the JDK's own poller). The connection lives for the whole trial.
 *
 * <p>Results, 2026-12-01 11:00, 2-vCPU VM shared with four other builds (load average 9 before, 17
 * after: queueing dominates, the intervals are as wide as the means), {@code -f 1 -wi 2 -i 3}, ns per
 * round trip: gort P=1 67,883, P=2 53,647; vthread 88,355 / 112,345; platform 33,075 / 24,817; the
 * Go twin (Go 1.19, same minutes) 40,285 at P=1, 28,475 at P=2.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(
        value = 1,
        jvmArgsAppend = {
            "--add-exports",
            "java.base/jdk.internal.vm=ALL-UNNAMED",
            "--add-exports",
            "java.base/sun.nio.ch=ALL-UNNAMED",
            "--enable-native-access=ALL-UNNAMED",
            "-XX:+UseG1GC"
        })
public class NetPingPong {
    static final int N = 2_000;

    @Param({"1", "2"})
    public int procs;

    private GortHost host;
    private Conn gortClient;
    private Listener gortListener;
    private Runnable gortJob;

    private ServerSocket server;
    private Socket vtClient;
    private Socket ptClient;

    @Setup(Level.Trial)
    public void setup() throws IOException {
        host = new GortHost(procs);
        host.run(() -> {
            try {
                gortListener = Net.listen("tcp", "127.0.0.1:0");
                Go.go(() -> gortEcho(gortListener));
                gortClient = Net.dial("tcp", gortListener.addr().toString());
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        });
        gortJob = () -> roundTrips(gortClient);
        server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        // one echo server per client kind: a virtual thread for the virtual-thread client, a
        // platform thread for the platform client
        Thread.ofVirtual().start(() -> blockingEcho(server));
        vtClient = connect(server);
        Thread.ofPlatform().daemon().start(() -> blockingEcho(server));
        ptClient = connect(server);
    }

    static Socket connect(ServerSocket server) throws IOException {
        Socket s = new Socket(server.getInetAddress(), server.getLocalPort());
        s.setTcpNoDelay(true);
        return s;
    }

    @TearDown(Level.Trial)
    public void tearDown() throws IOException {
        host.run(() -> {
            try {
                gortClient.close();
                gortListener.close();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        });
        host.close();
        vtClient.close();
        ptClient.close();
        server.close();
    }

    static void gortEcho(Listener ln) {
        try (Conn c = ln.accept()) {
            byte[] b = new byte[64];
            for (int n; (n = c.read(b)) >= 0; ) {
                c.write(b, 0, n);
            }
        } catch (IOException e) {
            // closed at the end of the trial
        }
    }

    static void blockingEcho(ServerSocket server) {
        try (Socket s = server.accept()) {
            s.setTcpNoDelay(true);
            InputStream in = s.getInputStream();
            OutputStream out = s.getOutputStream();
            byte[] b = new byte[64];
            for (int n; (n = in.read(b)) >= 0; ) {
                out.write(b, 0, n);
            }
        } catch (IOException e) {
            // closed at the end of the trial
        }
    }

    static void roundTrips(Conn c) {
        byte[] b = {1};
        try {
            for (int i = 0; i < N; i++) {
                c.write(b);
                if (c.read(b) != 1) {
                    throw new IllegalStateException("echo lost");
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static void roundTrips(Socket s) {
        byte[] b = {1};
        try {
            InputStream in = s.getInputStream();
            OutputStream out = s.getOutputStream();
            for (int i = 0; i < N; i++) {
                out.write(b);
                if (in.read(b) != 1) {
                    throw new IllegalStateException("echo lost");
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Benchmark
    @OperationsPerInvocation(N)
    public void gort() {
        host.run(gortJob);
    }

    /** The client is a virtual thread (started per invocation), as is its echo server. */
    @Benchmark
    @OperationsPerInvocation(N)
    public void vthread() throws InterruptedException {
        Thread t = Thread.ofVirtual().start(() -> roundTrips(vtClient));
        t.join();
    }

    /** The client is the benchmark's own platform thread, its echo server a platform thread. */
    @Benchmark
    @OperationsPerInvocation(N)
    public void platform() {
        roundTrips(ptClient);
    }
}
