package dev.gort.net;

import dev.gort.runtime.Netpoll;
import java.io.IOException;
import java.net.SocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;
import java.time.Instant;
import java.util.Objects;

/**
 * A UDP socket whose reads and writes park the goroutine on the network poller: Go's
 * {@code net.PacketConn} ({@code *net.UDPConn}). A datagram longer than the buffer is truncated,
 * as Go's.
 *
 * <p>Go: net/net.go PacketConn, net/udpsock.go UDPConn
 */
public final class PacketConn implements AutoCloseable {
    /** One datagram read: its length and its sender. */
    public record Packet(int n, Addr addr) {}

    private final NetFD fd;
    private final DatagramChannel ch;

    PacketConn(NetFD fd) {
        this.fd = fd;
        this.ch = (DatagramChannel) fd.ch;
    }

    /** Reads one datagram into {@code b}. Go: (*UDPConn).ReadFrom. */
    public Packet readFrom(byte[] b) throws IOException {
        return readFrom(b, 0, b.length);
    }

    /** Reads one datagram into {@code b[off..off+len)}, parking until one arrives. */
    public Packet readFrom(byte[] b, int off, int len) throws IOException {
        Objects.checkFromIndexSize(off, len, b.length);
        fd.readLock("read");
        try {
            fd.prepare(Netpoll.MODE_READ, "read");
            ByteBuffer bb = ByteBuffer.wrap(b, off, len);
            for (; ; ) {
                SocketAddress from;
                try {
                    from = Sys.call(() -> ch.receive(bb));
                } catch (IOException x) {
                    throw fd.error("read", null, "recvfrom", x);
                }
                if (from != null) {
                    return new Packet(bb.position() - off, Addr.of(fd.net, from));
                }
                fd.await(Netpoll.MODE_READ, "read");
            }
        } finally {
            fd.readUnlock();
        }
    }

    /**
     * Sends {@code b} as one datagram to {@code addr}. Every error names the destination, as Go's
     * ({@code write udp 127.0.0.1:5000->127.0.0.1:6000: use of closed network connection}, also
     * for a closed socket and an expired deadline). A datagram is sent whole or not at all, so a
     * failed one sent nothing: its {@link OpError#bytesTransferred()} is 0 (Go's {@code n} is 0
     * with the error too). Go: (*UDPConn).WriteTo.
     */
    public void writeTo(byte[] b, Addr addr) throws IOException {
        writeTo(b, 0, b.length, addr);
    }

    public void writeTo(byte[] b, int off, int len, Addr addr) throws IOException {
        Objects.checkFromIndexSize(off, len, b.length);
        if (addr == null) {
            throw new OpError("write", fd.net, fd.laddr, null, "missing address", null); // Go: errMissingAddress
        }
        fd.writeLock("write", addr);
        try {
            fd.prepare(Netpoll.MODE_WRITE, "write", addr);
            ByteBuffer bb = ByteBuffer.wrap(b, off, len);
            for (; ; ) {
                int n;
                try {
                    n = Sys.call(() -> ch.send(bb, addr.toInetSocketAddress()));
                } catch (IOException x) {
                    throw fd.error("write", addr, "sendto", x);
                }
                if (n > 0 || len == 0) {
                    return;
                }
                fd.await(Netpoll.MODE_WRITE, "write", addr);
            }
        } finally {
            fd.writeUnlock();
        }
    }

    /** Go: (*UDPConn).LocalAddr. */
    public Addr localAddr() {
        return fd.laddr;
    }

    /** Closes the socket; parked reads and writes fail with the closed error. */
    @Override
    public void close() throws IOException {
        fd.close("close");
    }

    public void setDeadline(Instant t) throws IOException {
        fd.setDeadline(t, Netpoll.MODE_READ_WRITE);
    }

    public void setReadDeadline(Instant t) throws IOException {
        fd.setDeadline(t, Netpoll.MODE_READ);
    }

    public void setWriteDeadline(Instant t) throws IOException {
        fd.setDeadline(t, Netpoll.MODE_WRITE);
    }

    @Override
    public String toString() {
        return "PacketConn[" + fd.net + " " + fd.laddr + "]";
    }
}
