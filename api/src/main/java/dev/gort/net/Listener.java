package dev.gort.net;

import dev.gort.runtime.Netpoll;
import java.io.IOException;
import java.net.StandardSocketOptions;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;

/**
 * A TCP listener whose {@link #accept} parks the goroutine on the network poller: Go's
 * {@code net.Listener} ({@code *net.TCPListener}).
 *
 * <p>Go: net/net.go Listener, net/tcpsock.go TCPListener
 */
public final class Listener implements AutoCloseable {
    private final NetFD fd;
    private final ServerSocketChannel ch;
    /**
     * The accepted connections' keep-alive idle time in nanoseconds, 0 for Go's default, negative
     * for none: the ListenConfig's at listen time (Go copies the ListenConfig). Immutable.
     */
    private final long keepAlive;

    Listener(NetFD fd, long keepAlive) {
        this.fd = fd;
        this.ch = (ServerSocketChannel) fd.ch;
        this.keepAlive = keepAlive;
    }

    /**
     * Waits for and returns the next connection. A {@link #close} (from any goroutine) makes it
     * fail with {@code accept tcp 127.0.0.1:8080: use of closed network connection}. The
     * connection has TCP_NODELAY and, unless the listener's {@link ListenConfig#keepAlive} is
     * negative, keep-alive probes (by default after 15 s idle, every 15 s, 9 of them), as Go's.
     *
     * <p>Go: net/tcpsock.go (*TCPListener).Accept, internal/poll/fd_unix.go (*FD).Accept
     */
    public Conn accept() throws IOException {
        fd.readLock("accept");
        try {
            fd.prepare(Netpoll.MODE_READ, "accept");
            for (; ; ) {
                SocketChannel c;
                try {
                    c = Sys.call(ch::accept);
                } catch (IOException x) {
                    throw fd.error("accept", fd.laddr, "accept4", x); // Go names Linux's system call
                }
                if (c != null) {
                    return Net.newConn(fd.sched, fd.net, c, keepAlive);
                }
                fd.await(Netpoll.MODE_READ, "accept");
            }
        } finally {
            fd.readUnlock();
        }
    }

    /** The listening address (with the port the system chose for port 0). Go: (*TCPListener).Addr. */
    public Addr addr() {
        return fd.laddr;
    }

    /**
     * Stops listening; a parked {@code accept} fails with the closed error, the port is free when
     * this returns. Go: (*TCPListener).Close.
     */
    @Override
    public void close() throws IOException {
        fd.close("close");
    }

    /** Go: (*TCPListener).SetDeadline (for accept); null clears it. */
    public void setDeadline(java.time.Instant t) throws IOException {
        fd.setDeadline(t, Netpoll.MODE_READ);
    }

    static Listener listen(
            dev.gort.runtime.Scheduler s, String net, java.net.InetSocketAddress sa, Addr asked, long keepAlive)
            throws IOException {
        ServerSocketChannel ch;
        try {
            ch = Sys.call(() -> Net.ipv4Only(net)
                    ? ServerSocketChannel.open(java.net.StandardProtocolFamily.INET)
                    : ServerSocketChannel.open());
        } catch (IOException x) {
            throw NetFD.socketError("listen", net, asked, x);
        }
        try {
            Sys.run(() -> {
                ch.configureBlocking(false);
                // Go sets SO_REUSEADDR on listeners (net/sockopt_posix.go setDefaultListenerSockopts).
                ch.setOption(StandardSocketOptions.SO_REUSEADDR, true);
                ch.bind(sa, Backlog.listenerBacklog);
            });
        } catch (IOException x) {
            Sys.run(ch::close);
            throw new OpError("listen", net, null, asked, NetFD.syscallText("listen", x), x);
        }
        try {
            return new Listener(new NetFD(s, net, ch, Addr.of(net, Sys.call(ch::getLocalAddress)), null), keepAlive);
        } catch (IOException x) {
            Sys.run(ch::close);
            throw new OpError("listen", net, null, asked, NetFD.syscallText("listen", x), x);
        }
    }

    /**
     * The backlog every listener gets: the kernel's {@code somaxconn}, read once, as Go does. Java's
     * default (a backlog below 1) is 50: a burst of dials beyond it that the accepting goroutine
     * has not drained yet loses SYNs, and each such dial then waits for the SYN's retransmission
     * (1 s, then 3 s, 7 s ...) while every M sits idle.
     *
     * <p>Go: net/net.go listenerBacklog, net/sock_linux.go maxListenerBacklog, maxAckBacklog
     */
    static final class Backlog {
        private Backlog() {}

        /** Go: syscall.SOMAXCONN on Linux (the fallback when somaxconn cannot be read). */
        static final int SOMAXCONN = 128;

        /** Immutable once the holder is initialised (Go: listenerBacklogCache's sync.Once). */
        static final int listenerBacklog = maxListenerBacklog(somaxconn(), System.getProperty("os.version", ""));

        private static String somaxconn() {
            // Not Files.readString: a procfs file reports size 0, and JDK 25's readString then
            // returns its first byte only ("4" for "4096\n"). A stream reads to the end.
            try (java.io.FileInputStream in = new java.io.FileInputStream("/proc/sys/net/core/somaxconn")) {
                return new String(in.readAllBytes(), java.nio.charset.StandardCharsets.US_ASCII);
            } catch (IOException | RuntimeException e) {
                return null;
            }
        }

        /** Go: net/sock_linux.go maxListenerBacklog (somaxconn: the file's text, null if unreadable). */
        static int maxListenerBacklog(String somaxconn, String kernelVersion) {
            if (somaxconn == null || somaxconn.isBlank()) {
                return SOMAXCONN;
            }
            long n;
            try {
                n = Long.parseLong(somaxconn.trim().split("\\s+")[0]);
            } catch (NumberFormatException e) {
                return SOMAXCONN;
            }
            if (n <= 0) {
                return SOMAXCONN;
            }
            if (n > (1 << 16) - 1) {
                return maxAckBacklog(n, kernelVersion);
            }
            return (int) n;
        }

        /**
         * Linux stores the backlog as a uint16 before kernel 4.1, a uint32 since: truncate to avoid
         * wrapping (Java's listen takes an int, so at most Integer.MAX_VALUE). Go: net/sock_linux.go
         * maxAckBacklog.
         */
        static int maxAckBacklog(long n, String kernelVersion) {
            int major = 0;
            int minor = 0;
            String[] v = kernelVersion.split("[^0-9]+", 3);
            try {
                major = v.length > 0 && !v[0].isEmpty() ? Integer.parseInt(v[0]) : 0;
                minor = v.length > 1 && !v[1].isEmpty() ? Integer.parseInt(v[1]) : 0;
            } catch (NumberFormatException e) {
                // unparsable: the conservative 16 bits
            }
            long max = major > 4 || (major == 4 && minor >= 1) ? Integer.MAX_VALUE : (1 << 16) - 1;
            return (int) Math.min(n, max);
        }
    }

    @Override
    public String toString() {
        return "Listener[" + fd.net + " " + fd.laddr + "]";
    }
}
