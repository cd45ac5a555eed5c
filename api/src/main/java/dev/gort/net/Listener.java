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

    Listener(NetFD fd) {
        this.fd = fd;
        this.ch = (ServerSocketChannel) fd.ch;
    }

    /**
     * Waits for and returns the next connection. A {@link #close} (from any goroutine) makes it
     * fail with {@code accept tcp 127.0.0.1:8080: use of closed network connection}.
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
                    throw fd.error("accept", x);
                }
                if (c != null) {
                    return Net.newConn(fd.sched, fd.net, c);
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

    static Listener listen(dev.gort.runtime.Scheduler s, String net, java.net.InetSocketAddress sa, Addr asked)
            throws IOException {
        ServerSocketChannel ch = Sys.call(ServerSocketChannel::open);
        try {
            Sys.run(() -> {
                ch.configureBlocking(false);
                // Go sets SO_REUSEADDR on listeners (net/sockopt_posix.go setDefaultListenerSockopts).
                ch.setOption(StandardSocketOptions.SO_REUSEADDR, true);
                ch.bind(sa, 0);
            });
        } catch (IOException x) {
            Sys.run(ch::close);
            throw new OpError("listen", net, null, asked, NetFD.syscallText("listen", x), x);
        }
        try {
            return new Listener(new NetFD(s, net, ch, Addr.of(net, Sys.call(ch::getLocalAddress)), null));
        } catch (IOException x) {
            Sys.run(ch::close);
            throw new OpError("listen", net, null, asked, NetFD.syscallText("listen", x), x);
        }
    }

    @Override
    public String toString() {
        return "Listener[" + fd.net + " " + fd.laddr + "]";
    }
}
