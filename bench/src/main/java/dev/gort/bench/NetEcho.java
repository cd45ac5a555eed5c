package dev.gort.bench;

import dev.gort.Go;
import dev.gort.Syscall;
import dev.gort.net.Conn;
import dev.gort.net.Listener;
import dev.gort.net.Net;
import dev.gort.runtime.Scheduler;
import dev.gort.sync.WaitGroup;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.ArrayList;
import java.util.List;
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
 * Echo throughput over {@link #CONNS} concurrent loopback connections: one op = one 64-byte
 * message written by a client and read back from its echo server; an invocation is {@link #ROUNDS}
 * messages on every connection at once (one client task per connection, one server task per
 * connection). The connections live for the whole trial.
 *
 * <ul>
 *   <li>{@code gort}: goroutines on dev.gort.net (parked on the network poller while they wait);
 *   <li>{@link NetEchoSyscallBlock}: goroutines on blocking {@code java.net.Socket}s, every
 *       blocking call wrapped in {@code Syscall.block} (each blocked call holds a carrier thread:
 *       the carriers climb towards the number of blocked calls);
 *   <li>{@code vthread}: virtual threads on blocking sockets; {@code platform}: platform threads.
 * </ul>
 *
 * <p>The gort trials print the runtime's thread count at their end ({@code mcount}: Ms never exit,
 * so it is the peak number of carrier threads the trial needed).
 *
 * <p>Results, ns per echoed message, quiet 2-vCPU VM. 2026-12-02 02:18-02:21 UTC (load 1.7-2.3),
 * {@code -p procs=2 -f 6 -wi 3 -i 5}: gort P=2 21,956 ± 1,832 (5 threads) with startm's CPU rule
 * ({@code Idle.mget}), 25,861 ± 1,286 without it (main a842dba, same minutes); vthread (2
 * carriers) 20,223 ± 1,600. Two runs with {@code -f 10}, 02:54 and 02:59 UTC: gort 20,173 ± 1,285
 * and 20,102 ± 1,089, vthread 21,335 ± 1,411 and 19,982 ± 1,014; pooled over the 26 forks each,
 * 20,557 against 20,558: parity. Earlier, 00:55 UTC, {@code -f 2}: gort P=1 40,522 ± 7,065 (3 threads).
 * The Go twin, same machine, between 02:05 and 02:10 UTC: 26,023 at P=1, 14,033 at P=2. About three quarters of
 * every implementation's CPU is the kernel's loopback TCP (perf); gort's CPU per message is no
 * higher than the virtual threads' ({@link NetCounts}: 34-46 µs against 44-45 µs, varying from JVM
 * to JVM), and since the CPU rule its carriers use ~1.96 of the 2 cores as the virtual threads'
 * do (perf stat). Earlier, on a loaded machine (2026-12-01 11:00, load 9-17): gort on
 * Syscall.block-wrapped blocking sockets P=1 47,962 (1,035 threads), P=2 25,316 (1,061 threads).
 */
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
public class NetEcho {
    static final int CONNS = 1_000;
    static final int ROUNDS = 10;
    static final int MSG = 64;

    /** gort on the poller, or gort on Syscall.block-wrapped blocking sockets. */
    @State(Scope.Benchmark)
    public static class GortState {
        @Param({"1", "2"})
        public int procs;

        GortHost host;
        Listener ln;
        final List<Conn> clients = new ArrayList<>();
        ServerSocket blockingServer;
        final List<Socket> blockingClients = new ArrayList<>();
        Runnable job;
        Runnable blockingJob;

        @Setup(Level.Trial)
        public void setup() {
            host = new GortHost(procs);
            job = () -> {
                WaitGroup wg = new WaitGroup();
                wg.add(clients.size());
                for (Conn c : clients) {
                    Go.go(() -> {
                        try {
                            clientRounds(c);
                        } finally {
                            wg.done();
                        }
                    });
                }
                wg.await();
            };
            blockingJob = () -> {
                WaitGroup wg = new WaitGroup();
                wg.add(blockingClients.size());
                for (Socket s : blockingClients) {
                    Go.go(() -> {
                        try {
                            Syscall.block(() -> clientRounds(s));
                        } finally {
                            wg.done();
                        }
                    });
                }
                wg.await();
            };
        }

        /** Connects the poller's connections (the gort benchmark's first invocation only). */
        void connect() {
            if (ln != null) {
                return;
            }
            host.run(() -> {
                try {
                    ln = Net.listen("tcp", "127.0.0.1:0");
                    Go.go(() -> {
                        try {
                            for (; ; ) {
                                Conn c = ln.accept();
                                Go.go(() -> echo(c));
                            }
                        } catch (IOException e) {
                            // closed at the end of the trial
                        }
                    });
                    for (int i = 0; i < CONNS; i++) {
                        clients.add(Net.dial("tcp", ln.addr().toString()));
                    }
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
        }

        /** Connects the blocking sockets (the gortSyscallBlock benchmark's first invocation only). */
        void connectBlocking() {
            if (blockingServer != null) {
                return;
            }
            host.run(() -> {
                try {
                    blockingServer = new ServerSocket(0, CONNS, InetAddress.getLoopbackAddress());
                    Go.go(() -> {
                        try {
                            for (; ; ) {
                                Socket s = Syscall.block(blockingServer::accept);
                                Go.go(() -> Syscall.block(() -> blockingEcho(s)));
                            }
                        } catch (IOException e) {
                            // closed at the end of the trial
                        }
                    });
                    for (int i = 0; i < CONNS; i++) {
                        blockingClients.add(Syscall.block(() -> NetEcho.connect(blockingServer)));
                    }
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
        }

        @TearDown(Level.Trial)
        public void tearDown() throws IOException {
            Scheduler s = host.scheduler();
            System.out.printf(
                    "%nNetEcho gort P=%d: %d carrier threads (mcount) for %d connections (%s)%n",
                    procs, s.mcountPublic(), CONNS, ln != null ? "poller" : "Syscall.block-wrapped blocking sockets");
            host.run(() -> {
                try {
                    for (Conn c : clients) {
                        c.close();
                    }
                    if (ln != null) {
                        ln.close();
                    }
                    Syscall.block(() -> {
                        for (Socket c : blockingClients) {
                            c.close();
                        }
                        if (blockingServer != null) {
                            blockingServer.close();
                        }
                    });
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
            host.close();
        }
    }

    /** Blocking sockets served by virtual threads or platform threads. */
    public abstract static class ThreadState {
        ServerSocket server;
        final List<Socket> clients = new ArrayList<>();

        abstract Thread.Builder builder();

        @Setup(Level.Trial)
        public void setup() throws IOException {
            server = new ServerSocket(0, CONNS, InetAddress.getLoopbackAddress());
            Thread.Builder b = builder();
            b.start(() -> {
                try {
                    for (; ; ) {
                        Socket s = server.accept();
                        builder().start(() -> blockingEcho(s));
                    }
                } catch (IOException e) {
                    // closed at the end of the trial
                }
            });
            for (int i = 0; i < CONNS; i++) {
                clients.add(connect(server));
            }
        }

        void rounds() throws InterruptedException {
            List<Thread> ts = new ArrayList<>(clients.size());
            Thread.Builder b = builder();
            for (Socket s : clients) {
                ts.add(b.start(() -> clientRounds(s)));
            }
            for (Thread t : ts) {
                t.join();
            }
        }

        @TearDown(Level.Trial)
        public void tearDown() throws IOException {
            for (Socket c : clients) {
                c.close();
            }
            server.close();
        }
    }

    @State(Scope.Benchmark)
    public static class VtState extends ThreadState {
        @Override
        Thread.Builder builder() {
            return Thread.ofVirtual();
        }
    }

    @State(Scope.Benchmark)
    public static class PtState extends ThreadState {
        @Override
        Thread.Builder builder() {
            return Thread.ofPlatform().daemon().stackSize(256 * 1024);
        }
    }

    static Socket connect(ServerSocket server) throws IOException {
        Socket s = new Socket(server.getInetAddress(), server.getLocalPort());
        s.setTcpNoDelay(true);
        return s;
    }

    static void echo(Conn c) {
        byte[] b = new byte[MSG];
        try (c) {
            for (int n; (n = c.read(b)) >= 0; ) {
                c.write(b, 0, n);
            }
        } catch (IOException e) {
            // closed at the end of the trial
        }
    }

    static void blockingEcho(Socket s) {
        try (s) {
            s.setTcpNoDelay(true);
            InputStream in = s.getInputStream();
            OutputStream out = s.getOutputStream();
            byte[] b = new byte[MSG];
            for (int n; (n = in.read(b)) >= 0; ) {
                out.write(b, 0, n);
            }
        } catch (IOException e) {
            // closed at the end of the trial
        }
    }

    static void clientRounds(Conn c) {
        byte[] msg = new byte[MSG];
        byte[] back = new byte[MSG];
        try {
            for (int r = 0; r < ROUNDS; r++) {
                c.write(msg);
                for (int got = 0; got < MSG; ) {
                    int n = c.read(back, got, MSG - got);
                    if (n < 0) {
                        throw new IllegalStateException("echo lost");
                    }
                    got += n;
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static void clientRounds(Socket s) {
        byte[] msg = new byte[MSG];
        byte[] back = new byte[MSG];
        try {
            InputStream in = s.getInputStream();
            OutputStream out = s.getOutputStream();
            for (int r = 0; r < ROUNDS; r++) {
                out.write(msg);
                for (int got = 0; got < MSG; ) {
                    int n = in.read(back, got, MSG - got);
                    if (n < 0) {
                        throw new IllegalStateException("echo lost");
                    }
                    got += n;
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Benchmark
    @OperationsPerInvocation(CONNS * ROUNDS)
    public void gort(GortState st) {
        st.connect();
        st.host.run(st.job);
    }

    @Benchmark
    @OperationsPerInvocation(CONNS * ROUNDS)
    public void vthread(VtState st) throws InterruptedException {
        st.rounds();
    }

    @Benchmark
    @OperationsPerInvocation(CONNS * ROUNDS)
    public void platform(PtState st) throws InterruptedException {
        st.rounds();
    }
}
