package dev.gort.examples.showcase;

import dev.gort.Go;
import dev.gort.Syscall;
import dev.gort.Time;
import dev.gort.net.Conn;
import dev.gort.net.Listener;
import dev.gort.net.Net;
import dev.gort.runtime.Netpoll;
import dev.gort.runtime.Scheduler;
import dev.gort.runtime.trace.Trace;
import dev.gort.sync.WaitGroup;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The network: an echo server with a goroutine per connection serves N loopback connections at
 * once. On {@code dev.gort.net} a goroutine whose socket has nothing to read parks on the network
 * poller ({@code [IO wait]}) and its thread runs other goroutines: the thread count stays near
 * GOMAXPROCS. The same server on blocking {@code java.net.Socket}s, each blocking call wrapped in
 * {@code Syscall.block}, keeps a thread per waiting connection (sysmon hands the P of each blocked
 * thread to a new one): the thread count climbs to the number of connections. The clients are
 * goroutines on {@code dev.gort.net} in both runs, so the difference is the server's.
 *
 * <p>Go: runtime/netpoll.go (a goroutine blocked on a socket parks on the poller; findRunnable and
 * sysmon poll for ready ones)
 */
final class Network extends Scenario {
    Network() {
        super("network", "Network: connections on a few threads, parked on the poller");
    }

    @Override
    String title(Options o) {
        return String.format(
                Locale.ROOT,
                "Network: %,d %s on a few threads, parked on the poller",
                o.conns,
                o.conns == 1 ? "connection" : "connections");
    }

    /**
     * {@code --conns} against the descriptors this process may still open: each connection takes
     * two, its client's socket and its server's (the JVM's count and limit, where it gives them).
     */
    @Override
    String problem(Options o) {
        long[] fds = descriptors();
        if (fds == null) {
            return null;
        }
        long need = 2L * o.conns;
        if (need <= fds[0] - fds[1]) {
            return null;
        }
        return String.format(
                Locale.ROOT,
                "--conns %d needs %d file descriptors (a client's and a server's socket per connection), and"
                        + " this process may open %d more (ulimit -n: %d, %d open): lower --conns to %d or less,"
                        + " or raise the limit (ulimit -n %d)",
                o.conns,
                need,
                Math.max(0, fds[0] - fds[1]),
                fds[0],
                fds[1],
                Math.max(0, (fds[0] - fds[1]) / 2),
                need + fds[1] + 64);
    }

    /**
     * This process's file descriptor limit ({@code ulimit -n}) and how many are open, or null where
     * the JVM does not say (not a Unix).
     */
    static long[] descriptors() {
        if (ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.UnixOperatingSystemMXBean u) {
            long max = u.getMaxFileDescriptorCount();
            long open = u.getOpenFileDescriptorCount();
            if (max > 0 && open >= 0) {
                return new long[] {max, open};
            }
        }
        return null;
    }

    /**
     * Why the connections could not all be opened (a client's dial or the server's accept failed
     * with {@code e}): running out of descriptors (EMFILE: java.net's "Too many open files",
     * dev.gort.net's "too many open files") says so, with the limit. The limit only: counting the
     * open ones takes a descriptor too.
     */
    static String openFailure(Throwable e, int dialed, int conns) {
        String what = String.valueOf(e.getMessage()).toLowerCase(Locale.ROOT);
        if (!what.contains("too many open files")) {
            return "the connections could not be opened (" + dialed + " of " + conns + " dialed): " + e;
        }
        long max =
                ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.UnixOperatingSystemMXBean u
                        ? u.getMaxFileDescriptorCount()
                        : -1;
        return "ran out of file descriptors with " + dialed + " of " + conns + " connections dialed (" + e
                + "): each connection takes two, its client's socket and its server's"
                + (max > 0 ? ", and this process may open " + max + " (ulimit -n)" : "")
                + "; lower --conns or raise the limit with ulimit -n";
    }

    @Override
    String explanation(Options o) {
        return "An echo server with a goroutine per connection serves " + o.conns
                + " loopback connections at once: every\n"
                + "connection is opened and its server goroutine waits for the first message, then each client sends\n"
                + o.rounds + " messages of " + MSG
                + " bytes and reads each one back. On dev.gort.net a goroutine that waits for its\n"
                + "socket parks on the network poller ([IO wait]) and its thread runs other goroutines: the thread\n"
                + "count stays near GOMAXPROCS. The same server on blocking java.net.Sockets, every blocking call\n"
                + "wrapped in Syscall.block, keeps a thread per waiting connection: the thread count climbs.\n"
                + "The clients are goroutines on dev.gort.net in both runs; only the server differs.";
    }

    static final int MSG = 64;

    @Override
    List<Variant> variants(Options o) {
        int procs = o.gomaxprocs > 0 ? o.gomaxprocs : defaultProcs();
        boolean steal = o.stealing == null || o.stealing;
        boolean spin = o.spinning == null || o.spinning;
        String pre = o.preempt != null ? o.preempt : Showcase.jvmPreempt();
        List<Variant> v = new ArrayList<>();
        for (String mode : o.server != null ? List.of(o.server) : List.of("poller", "blocking")) {
            String how = mode.equals("poller")
                    ? "the server on dev.gort.net (goroutines park on the network poller)"
                    : "the server on blocking sockets, every blocking call wrapped in Syscall.block";
            v.add(new Variant(id, mode, describe(procs, steal, spin, pre) + "; " + how, procs, steal, spin, pre, mode));
        }
        return v;
    }

    @Override
    int defaultProcs() {
        return 2;
    }

    @Override
    int defaultSchedtrace() {
        return 50;
    }

    /** What the workload saw. */
    record Seen(
            int conns,
            int serversWaiting,
            long threadsWhileWaiting,
            int parkedOnPoller,
            long messages,
            long bytes,
            long echoNanos,
            long wokenByPoller,
            long polls,
            int served,
            long setupNanos,
            /** why the run stopped before its echoes (then the figures are not set), or null */
            String failure) {}

    /** The server side: accepts connections and echoes each one on a goroutine of its own. */
    interface Server extends AutoCloseable {
        String addr();

        /** Server goroutines waiting for their connection's first message. */
        int waiting();

        /** Server goroutines that have seen their connection's end. */
        int served();

        /** Why the accept loop stopped before {@link #close()} (out of descriptors), or null. */
        IOException failure();

        @Override
        void close() throws IOException;
    }

    /** The server on dev.gort.net. */
    static Server pollerServer(WaitGroup wg) throws IOException {
        Listener ln = Net.listen("tcp", "127.0.0.1:0");
        AtomicInteger waiting = new AtomicInteger();
        AtomicInteger served = new AtomicInteger();
        AtomicBoolean closing = new AtomicBoolean();
        AtomicReference<IOException> failure = new AtomicReference<>();
        wg.add(1);
        Go.go(() -> {
            try {
                for (; ; ) {
                    Conn c = ln.accept();
                    wg.add(1);
                    Go.go(() -> {
                        try (c) {
                            byte[] b = new byte[MSG];
                            waiting.incrementAndGet();
                            for (int n; (n = c.read(b)) >= 0; ) {
                                c.write(b, 0, n);
                            }
                            served.incrementAndGet();
                        } catch (IOException e) {
                            throw new UncheckedIOException(e);
                        } finally {
                            wg.done();
                        }
                    });
                }
            } catch (IOException e) {
                // closed: the server stops accepting; else the accept failed (out of descriptors)
                if (!closing.get()) {
                    failure.set(e);
                }
            } finally {
                wg.done();
            }
        });
        return new Server() {
            @Override
            public String addr() {
                return ln.addr().toString();
            }

            @Override
            public IOException failure() {
                return failure.get();
            }

            @Override
            public int waiting() {
                return waiting.get();
            }

            @Override
            public int served() {
                return served.get();
            }

            @Override
            public void close() throws IOException {
                closing.set(true);
                ln.close();
            }
        };
    }

    /** The same server on blocking java.net sockets, every blocking call in Syscall.block. */
    static Server blockingServer(WaitGroup wg, int backlog) throws IOException {
        ServerSocket ss = Syscall.block(() -> new ServerSocket(0, backlog, InetAddress.getLoopbackAddress()));
        AtomicInteger waiting = new AtomicInteger();
        AtomicInteger served = new AtomicInteger();
        AtomicBoolean closing = new AtomicBoolean();
        AtomicReference<IOException> failure = new AtomicReference<>();
        wg.add(1);
        Go.go(() -> {
            try {
                for (; ; ) {
                    Socket s = Syscall.block(ss::accept);
                    wg.add(1);
                    Go.go(() -> {
                        try (s) {
                            s.setTcpNoDelay(true);
                            InputStream in = s.getInputStream();
                            OutputStream out = s.getOutputStream();
                            byte[] b = new byte[MSG];
                            waiting.incrementAndGet();
                            for (int n; (n = Syscall.block(() -> in.read(b))) >= 0; ) {
                                int k = n;
                                Syscall.block(() -> out.write(b, 0, k));
                            }
                            served.incrementAndGet();
                        } catch (IOException e) {
                            throw new UncheckedIOException(e);
                        } finally {
                            wg.done();
                        }
                    });
                }
            } catch (IOException e) {
                // closed: the server stops accepting; else the accept failed (out of descriptors)
                if (!closing.get()) {
                    failure.set(e);
                }
            } finally {
                wg.done();
            }
        });
        return new Server() {
            @Override
            public String addr() {
                return "127.0.0.1:" + ss.getLocalPort();
            }

            @Override
            public IOException failure() {
                return failure.get();
            }

            @Override
            public int waiting() {
                return waiting.get();
            }

            @Override
            public int served() {
                return served.get();
            }

            @Override
            public void close() throws IOException {
                closing.set(true);
                Syscall.block(ss::close);
            }
        };
    }

    /** The workload, as main runs it. */
    static Seen play(Scheduler s, int conns, int rounds, boolean poller) {
        Netpoll np = Netpoll.of(s);
        WaitGroup servers = new WaitGroup();
        long start = Time.nanotime();
        try {
            Server srv = poller ? pollerServer(servers) : blockingServer(servers, conns);
            List<Conn> clients = new ArrayList<>(conns);
            String failure = null;
            try {
                for (int i = 0; i < conns && srv.failure() == null; i++) {
                    clients.add(Net.dial("tcp", srv.addr()));
                }
                // Every connection open, every server goroutine waiting for its first message: on the
                // poller they park ([IO wait]); on blocking sockets each holds its thread in a read.
                // (A wait for a condition, bounded: the server goroutines get there by themselves.)
                long deadline = Time.nanotime() + 30 * Time.SECOND;
                while (srv.failure() == null && (srv.waiting() < conns || (poller && np.netpollWaiters() < conns))) {
                    if (Time.nanotime() > deadline) {
                        failure = "the server goroutines did not all wait: " + srv.waiting() + " of " + conns;
                        break;
                    }
                    Time.sleep(Time.MILLISECOND);
                }
            } catch (IOException e) {
                failure = openFailure(e, clients.size(), conns);
            }
            if (failure == null && srv.failure() != null) {
                failure = openFailure(srv.failure(), clients.size(), conns);
            }
            if (failure != null) {
                // a failure of this run, not a panic of the whole showcase: close what is open
                for (Conn c : clients) {
                    c.close();
                }
                srv.close();
                servers.await();
                return new Seen(clients.size(), srv.waiting(), 0, 0, 0, 0, 0, 0, 0, srv.served(), 0, failure);
            }
            int parked = np.netpollWaiters();
            long threadsWaiting = s.mcountPublic();
            int waiting = srv.waiting();
            long w0 = np.wokenByPoller.get();
            long p0 = np.polls.get();
            long t0 = Time.nanotime();
            long setup = t0 - start;
            AtomicLong bytes = new AtomicLong();
            WaitGroup wg = new WaitGroup();
            for (Conn c : clients) {
                wg.add(1);
                Go.go(() -> {
                    try {
                        bytes.addAndGet(echoRounds(c, rounds));
                    } finally {
                        wg.done();
                    }
                });
            }
            wg.await();
            long echo = Time.since(t0);
            long woken = np.wokenByPoller.get() - w0;
            long polls = np.polls.get() - p0;
            for (Conn c : clients) {
                c.close();
            }
            srv.close();
            servers.await();
            return new Seen(
                    conns,
                    waiting,
                    threadsWaiting,
                    parked,
                    (long) conns * rounds,
                    bytes.get(),
                    echo,
                    woken,
                    polls,
                    srv.served(),
                    setup,
                    null);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** One client: rounds messages, each read back in full and checked; returns the bytes echoed. */
    static long echoRounds(Conn c, int rounds) {
        byte[] msg = new byte[MSG];
        byte[] back = new byte[MSG];
        long n = 0;
        try {
            for (int r = 0; r < rounds; r++) {
                for (int i = 0; i < MSG; i++) {
                    msg[i] = (byte) (r * 31 + i);
                }
                c.write(msg);
                for (int got = 0; got < MSG; ) {
                    int k = c.read(back, got, MSG - got);
                    if (k < 0) {
                        throw new IllegalStateException("the server closed the connection mid-message");
                    }
                    got += k;
                }
                if (!java.util.Arrays.equals(msg, back)) {
                    throw new IllegalStateException("the echo differs from the message");
                }
                n += MSG;
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return n;
    }

    @Override
    void warmUp(Options o, Variant v) {
        Lab.warm(v.config(), () -> play(Scheduler.current(), 20, 2, !"blocking".equals(v.mode())));
    }

    @Override
    Path run(Variant v, Options o, PrintStream out) throws Exception {
        boolean poller = !"blocking".equals(v.mode());
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        mx.resetPeakThreadCount();
        int jvmBefore = mx.getThreadCount();
        Lab.Outcome<Seen> r = Lab.run(
                v.config(),
                "network (" + v.id() + ")",
                o.schedtrace > 0 ? o.schedtrace : defaultSchedtrace(),
                o.scheddetail,
                s -> play(s, o.conns, o.rounds, poller));
        int jvmPeak = mx.getPeakThreadCount();
        Trace t = r.trace();
        Seen seen = r.value();
        if (seen.failure() != null) {
            throw new Failed(seen.failure());
        }
        Showcase.printSched(out, r.sched(), o, o.schedtrace > 0 ? o.schedtrace : defaultSchedtrace());
        int maxThreads = (int) Math.max(r.threads(), Showcase.maxField(r.sched(), "threads"));
        out.println("  figures:");
        out.printf(
                "    connections: %d open at once, %d server goroutines waiting for their first message%s%n",
                seen.conns(),
                seen.serversWaiting(),
                poller
                        ? ", " + seen.parkedOnPoller() + " goroutines parked on the poller (the accept loop's too,"
                                + " once it has nothing to accept)"
                        : " (each blocked in a read, holding its thread)");
        out.printf(
                "    all %d connections open and waiting after %s (dials, accepts%s)%n",
                seen.conns(),
                Facts.ms(seen.setupNanos()),
                poller ? "" : ", and a thread started for each waiting server goroutine");
        out.printf(
                "    threads: %d at most (GOMAXPROCS=%d; sysmon counts as one), %d while the %d connections"
                        + " waited%n",
                maxThreads, v.gomaxprocs(), seen.threadsWhileWaiting(), seen.conns());
        int spacers = v.config().carrierSpacers();
        out.printf(
                "    JVM threads: %d at the peak of the run (%d before it: the JVM's own, GC and JIT among them%s)%n",
                jvmPeak,
                jvmBefore,
                spacers == 0
                        ? ""
                        : "; each carrier thread starts " + spacers + " parked spacer thread"
                                + (spacers == 1 ? "" : "s") + " beside it, -Dgort.carrier.spacers");
        out.printf(
                "    echoed: %d messages, %d bytes, every one checked, in %s; %d server goroutines saw their"
                        + " connection's end%n",
                seen.messages(), seen.bytes(), Facts.ms(seen.echoNanos()), seen.served());
        out.printf(
                "    network poller: %d goroutines woken by %s while the messages went back and forth%n",
                seen.wokenByPoller(), Facts.n(seen.polls(), "poll"));
        if (seen.bytes() != seen.messages() * MSG || seen.served() != seen.conns()) {
            out.printf("  FAILED: bytes or connections lost%n");
        } else if (poller) {
            out.printf(
                    "  => %d connections served on %d threads (GOMAXPROCS=%d): a goroutine waiting for its socket%n"
                            + "     parks on the poller, and its thread runs the goroutines whose sockets are ready%n",
                    seen.conns(), maxThreads, v.gomaxprocs());
        } else {
            out.printf(
                    "  => the thread count climbed to %d for %d connections: every blocked read holds a thread,%n"
                            + "     and sysmon handed its P to another thread so that the next goroutine could run%n",
                    maxThreads, seen.conns());
        }
        return Showcase.writeTimeline(t, v, o, out);
    }
}
