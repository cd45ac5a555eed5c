package dev.gort.net;

import java.io.IOException;

/**
 * A failed network operation, worded as Go's {@code *net.OpError}: {@code read tcp
 * 127.0.0.1:8080->127.0.0.1:51234: use of closed network connection}, {@code dial tcp
 * 127.0.0.1:1: connect: connection refused}, {@code listen tcp 127.0.0.1:8080: bind: address
 * already in use}. The cause carries the underlying error's text ({@link #err()}). A failed
 * {@code write} also says how many bytes it sent before it failed ({@link #bytesTransferred()}):
 * Go's {@code n} in {@code n, err := c.Write(b)}.
 *
 * <p>Go: net/net.go OpError
 */
public class OpError extends IOException {
    private static final long serialVersionUID = 1L;

    /** Text of Go's {@code net.ErrClosed}. */
    public static final String CLOSED = "use of closed network connection";
    /** Text of Go's {@code os.ErrDeadlineExceeded}. */
    public static final String TIMEOUT = "i/o timeout";

    private final String op;
    private final String net;
    private final Addr source;
    private final Addr addr;
    private final String err;
    /**
     * Bytes the failed call moved before it failed. Written (plain) only by the goroutine that
     * made the failing call, before it throws this; read after it caught it, or after whatever
     * handed the exception on (a channel, a join) published it.
     */
    private int bytesTransferred;

    OpError(String op, String net, Addr source, Addr addr, String err, Throwable cause) {
        super(format(op, net, source, addr, err), cause);
        this.op = op;
        this.net = net;
        this.source = source;
        this.addr = addr;
        this.err = err;
    }

    private static String format(String op, String net, Addr source, Addr addr, String err) {
        StringBuilder s = new StringBuilder(op);
        if (net != null && !net.isEmpty()) {
            s.append(' ').append(net);
        }
        if (source != null) {
            s.append(' ').append(source);
        }
        if (addr != null) {
            s.append(source != null ? "->" : " ").append(addr);
        }
        return s.append(": ").append(err).toString();
    }

    /** The operation: {@code read}, {@code write}, {@code dial}, {@code listen}, {@code accept}, {@code close}. */
    public String op() {
        return op;
    }

    /** The network as the call named it: {@code tcp}, {@code tcp4}, {@code udp6} ... (Go's OpError.Net). */
    public String net() {
        return net;
    }

    /** The local address, or null. */
    public Addr source() {
        return source;
    }

    /** The remote (or listening) address, or null. */
    public Addr addr() {
        return addr;
    }

    /** The underlying error's text, e.g. {@code i/o timeout}. */
    public String err() {
        return err;
    }

    /**
     * The bytes the failed call sent before it failed: Go's {@code n} returned with the error of
     * {@code n, err := c.Write(b)} (as {@link java.io.InterruptedIOException#bytesTransferred}).
     * Set by {@link Conn#write} (and its {@link Conn#outputStream} view): after a write deadline
     * expired, a reset or a close mid-write, exactly the first {@code bytesTransferred()} bytes of
     * the buffer were handed to the socket, so a retry sends the rest, not the whole buffer. It is
     * 0 for an error before any byte was sent (a closed connection, a deadline already past), for
     * every error of a read, accept or dial, and for {@link PacketConn#writeTo}, whose datagram is
     * sent whole or not at all.
     *
     * <p>Go: internal/poll/fd_unix.go (*FD).Write's nn, net/net.go (*conn).Write
     */
    public int bytesTransferred() {
        return bytesTransferred;
    }

    /** Records the bytes sent before the error (see {@link #bytesTransferred()}); returns this. */
    OpError bytesTransferred(int n) {
        this.bytesTransferred = n;
        return this;
    }

    /** Go: (*OpError).Timeout: a deadline expired (then this is a {@link DeadlineExceededException}). */
    public boolean timeout() {
        return false;
    }

    /** Go: {@code errors.Is(err, net.ErrClosed)}: the connection or listener was closed. */
    public boolean closed() {
        return CLOSED.equals(err);
    }
}
