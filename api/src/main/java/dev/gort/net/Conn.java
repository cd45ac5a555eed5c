package dev.gort.net;

import dev.gort.runtime.Netpoll;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.time.Instant;
import java.util.Objects;

/**
 * A TCP connection whose reads and writes park the calling goroutine on the runtime's network
 * poller, never its carrier thread: Go's {@code net.Conn} ({@code *net.TCPConn}).
 *
 * <p>End of stream: {@link #read} returns -1 once the peer has closed its side (Go's
 * {@code io.EOF}), as {@link InputStream#read} does; a read of zero bytes returns 0. Errors are
 * {@link OpError}s worded as Go's ({@code read tcp 127.0.0.1:8080->127.0.0.1:51234: i/o timeout});
 * an expired deadline is a {@link DeadlineExceededException}. A failed {@link #write} says how many
 * bytes it sent before it failed ({@link OpError#bytesTransferred()}, Go's {@code n}). One goroutine reads and one writes at
 * a time (others queue, as on Go's fdMutex); a read and a write may run at once.
 *
 * <p>Go: net/net.go Conn, net/tcpsock.go TCPConn, internal/poll/fd_unix.go (*FD).Read, Write
 */
public final class Conn implements AutoCloseable {
    /**
     * The most one read or write system call moves. Go's maxRW is 1 GiB; gort's is smaller because
     * the JDK copies a heap buffer's whole remainder into a temporary direct buffer on every call
     * (and keeps that buffer cached on the carrier): one write of 256 MiB copied far more than the
     * socket took each time (80-231 MiB/s, other goroutines' timers late by up to 879 ms), in
     * 256 KiB calls it runs at 1.2-2.1 GiB/s. Go: internal/poll/fd_unix.go maxRW.
     */
    static final int MAX_RW = 256 * 1024;

    private final NetFD fd;
    private final SocketChannel ch;
    // Reused wrappers of the last array passed to read / write (under the read / write lock).
    private byte[] rArr;
    private ByteBuffer rBuf;
    private byte[] wArr;
    private ByteBuffer wBuf;

    Conn(NetFD fd) {
        this.fd = fd;
        this.ch = (SocketChannel) fd.ch;
    }

    /** The socket, for tests of its options. */
    SocketChannel channel() {
        return ch;
    }

    /**
     * A read has thrown the peer's reset ({@code read: connection reset by peer}) once: the reads
     * after it return EOF, as Go's do (Linux reports ECONNRESET to one recv, then the socket reads
     * as closed), where the JDK's channel throws the reset again on every read. Written and read by
     * readers only, under the fd's read lock (plain).
     */
    private boolean resetReported;

    /** Reads up to {@code b.length} bytes; see {@link #read(byte[], int, int)}. */
    public int read(byte[] b) throws IOException {
        return read(b, 0, b.length);
    }

    /**
     * Reads at least one and up to {@code len} bytes into {@code b[off..]}, parking the goroutine
     * until some arrive; returns -1 at end of stream (Go's {@code io.EOF}) and 0 if {@code len} is
     * 0.
     *
     * @throws IndexOutOfBoundsException for a negative {@code off} or {@code len}, or one past the
     *     array (nothing is read)
     * @throws DeadlineExceededException when the read deadline expires first
     * @throws OpError on a closed connection ({@code use of closed network connection}), a reset
     *     ({@code read: connection reset by peer}: once, as Go's; the reads after it return -1),
     *     or another socket error
     *
     * <p>Go: internal/poll/fd_unix.go (*FD).Read
     */
    public int read(byte[] b, int off, int len) throws IOException {
        Objects.checkFromIndexSize(off, len, b.length);
        fd.readLock("read");
        try {
            if (len == 0) {
                return 0; // before prepare, as Go's: a zero-byte read never fails on a deadline
            }
            fd.prepare(Netpoll.MODE_READ, "read");
            ByteBuffer bb = rArr == b ? rBuf : (rBuf = ByteBuffer.wrap(rArr = b));
            bb.limit(off + Math.min(len, MAX_RW)).position(off);
            for (; ; ) {
                int n;
                try {
                    n = Sys.read(ch, bb);
                } catch (IOException x) {
                    if (NetFD.isReset(x)) {
                        if (resetReported) {
                            return -1; // Go's second read after ECONNRESET: EOF (see resetReported)
                        }
                        resetReported = true;
                    }
                    throw fd.error("read", x);
                }
                if (n != 0) {
                    return n; // > 0, or -1: EOF
                }
                fd.await(Netpoll.MODE_READ, "read");
            }
        } finally {
            fd.readUnlock();
        }
    }

    /** Writes all of {@code b}; see {@link #write(byte[], int, int)}. */
    public void write(byte[] b) throws IOException {
        write(b, 0, b.length);
    }

    /**
     * Writes all {@code len} bytes of {@code b[off..]}, parking the goroutine while the socket's
     * buffer is full: it returns only when everything is written, or throws. Then a prefix may have
     * been sent, as with Go's short write and error ({@code n, err := c.Write(b)}): the
     * {@link OpError}'s {@link OpError#bytesTransferred()} is Go's {@code n}, the number of bytes
     * of {@code b[off..]} the socket took (0 if it failed before the first), so a caller that
     * retries after, say, a write deadline resumes at {@code off + bytesTransferred()} instead of
     * sending the prefix twice.
     *
     * @throws IndexOutOfBoundsException for a negative {@code off} or {@code len}, or one past the
     *     array (nothing is written)
     * @throws DeadlineExceededException when the write deadline expires first
     * @throws OpError on a closed connection, a reset or a broken pipe
     *
     * <p>Go: internal/poll/fd_unix.go (*FD).Write
     */
    public void write(byte[] b, int off, int len) throws IOException {
        Objects.checkFromIndexSize(off, len, b.length);
        fd.writeLock("write");
        try {
            fd.prepare(Netpoll.MODE_WRITE, "write");
            if (len == 0) {
                return;
            }
            ByteBuffer bb = wArr == b ? wBuf : (wBuf = ByteBuffer.wrap(wArr = b));
            int end = off + len;
            bb.limit(end).position(off);
            try {
                for (; ; ) {
                    int n;
                    bb.limit(end - bb.position() > MAX_RW ? bb.position() + MAX_RW : end);
                    try {
                        n = Sys.write(ch, bb);
                    } catch (IOException x) {
                        throw fd.error("write", x);
                    }
                    if (bb.position() == end) {
                        return;
                    }
                    if (n == 0) {
                        fd.await(Netpoll.MODE_WRITE, "write"); // EAGAIN: the socket's buffer is full
                    }
                }
            } catch (OpError e) {
                // Go's nn: what the socket took before the error (the position only moves by the
                // bytes a write call accepted).
                throw e.bytesTransferred(bb.position() - off);
            }
        } finally {
            fd.writeUnlock();
        }
    }

    /**
     * Closes the connection: goroutines parked in {@code read} or {@code write} on it fail with
     * {@code use of closed network connection}, and so does a second {@code close} (Go's).
     *
     * <p>Go: net/net.go (*conn).Close
     */
    @Override
    public void close() throws IOException {
        fd.close("close");
    }

    /** Shuts down the writing side (TCP half-close): the peer reads EOF. Go: (*TCPConn).CloseWrite. */
    public void closeWrite() throws IOException {
        if (fd.isClosed()) {
            throw fd.error("close", Netpoll.pollErrClosing);
        }
        try {
            Sys.run(ch::shutdownOutput);
        } catch (IOException x) {
            throw fd.error("close", x);
        }
    }

    /** Shuts down the reading side. Go: (*TCPConn).CloseRead. */
    public void closeRead() throws IOException {
        if (fd.isClosed()) {
            throw fd.error("close", Netpoll.pollErrClosing);
        }
        try {
            Sys.run(ch::shutdownInput);
        } catch (IOException x) {
            throw fd.error("close", x);
        }
    }

    /** Go: (*TCPConn).SetLinger: {@code sec < 0} the default, 0 discards unsent data and resets. */
    public void setLinger(int sec) throws IOException {
        try {
            Sys.run(() -> ch.setOption(StandardSocketOptions.SO_LINGER, sec));
        } catch (IOException x) {
            throw fd.setsockoptError(x);
        }
    }

    /** Go: (*TCPConn).SetNoDelay (on by default, as Go's). */
    public void setNoDelay(boolean on) throws IOException {
        try {
            Sys.run(() -> ch.setOption(StandardSocketOptions.TCP_NODELAY, on));
        } catch (IOException x) {
            throw fd.setsockoptError(x);
        }
    }

    /** Go: (*conn).LocalAddr. */
    public Addr localAddr() {
        return fd.laddr;
    }

    /** Go: (*conn).RemoteAddr. */
    public Addr remoteAddr() {
        return fd.raddr;
    }

    /**
     * Read and write deadline; null clears it. {@code t} is read against {@link dev.gort.Time#now()}
     * (inside a synctest bubble, the bubble's fake clock; the duration it gives then passes in
     * real time, as in Go). Go: (*conn).SetDeadline.
     */
    public void setDeadline(Instant t) throws IOException {
        fd.setDeadline(t, Netpoll.MODE_READ_WRITE);
    }

    /** Go: (*conn).SetReadDeadline. */
    public void setReadDeadline(Instant t) throws IOException {
        fd.setDeadline(t, Netpoll.MODE_READ);
    }

    /** Go: (*conn).SetWriteDeadline. */
    public void setWriteDeadline(Instant t) throws IOException {
        fd.setDeadline(t, Netpoll.MODE_WRITE);
    }

    /**
     * An {@link InputStream} view: its reads park the goroutine, return -1 at end of stream, and
     * throw this connection's errors. Closing it closes the connection (as a
     * {@code java.net.Socket}'s streams do); a second close of the view does nothing.
     */
    public InputStream inputStream() {
        return new InputStream() {
            private final byte[] one = new byte[1];

            @Override
            public int read() throws IOException {
                int n;
                do {
                    n = Conn.this.read(one, 0, 1);
                } while (n == 0);
                return n < 0 ? -1 : one[0] & 0xFF;
            }

            @Override
            public int read(byte[] b, int off, int len) throws IOException {
                return Conn.this.read(b, off, len);
            }

            @Override
            public void close() throws IOException {
                closeView();
            }
        };
    }

    /**
     * An {@link OutputStream} view: its writes park the goroutine and write everything; flush
     * does nothing (nothing is buffered). Closing it closes the connection; a second close of
     * the view does nothing.
     */
    public OutputStream outputStream() {
        return new OutputStream() {
            private final byte[] one = new byte[1];

            @Override
            public void write(int b) throws IOException {
                one[0] = (byte) b;
                Conn.this.write(one, 0, 1);
            }

            @Override
            public void write(byte[] b, int off, int len) throws IOException {
                Conn.this.write(b, off, len);
            }

            @Override
            public void close() throws IOException {
                closeView();
            }
        };
    }

    private void closeView() throws IOException {
        if (!fd.isClosed()) {
            try {
                close();
            } catch (OpError e) {
                if (!e.closed()) {
                    throw e;
                }
            }
        }
    }

    @Override
    public String toString() {
        return "Conn[" + fd.net + " " + fd.laddr + "->" + fd.raddr + "]";
    }
}
