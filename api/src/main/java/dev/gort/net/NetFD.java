package dev.gort.net;

import dev.gort.Time;
import dev.gort.runtime.Netpoll;
import dev.gort.runtime.Netpoll.PollDesc;
import dev.gort.runtime.Scheduler;
import dev.gort.sync.Mutex;
import java.io.IOException;
import java.net.BindException;
import java.net.ConnectException;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.SelectableChannel;
import java.time.Instant;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A socket on the poller: its channel (non-blocking), poll descriptor, Go's read and write locks
 * (one reader and one writer at a time, as internal/poll's fdMutex), and error wording.
 *
 * <p>Go: net/fd_posix.go netFD, internal/poll/fd_unix.go FD, fd_poll_runtime.go pollDesc
 */
final class NetFD {
    /** Immutable. */
    final String net;

    final SelectableChannel ch;
    final Scheduler sched;
    final PollDesc pd;
    /** Written by the goroutine that creates or connects the socket, before others see it. */
    volatile Addr laddr;

    volatile Addr raddr;
    /** Go: fdMutex's read and write halves (goroutine mutexes: a waiting reader parks). */
    private final Mutex rlock = new Mutex();

    private final Mutex wlock = new Mutex();
    /** Set once by the first close (CAS). */
    private final AtomicBoolean closed = new AtomicBoolean();

    NetFD(Scheduler sched, String net, SelectableChannel ch, Addr laddr, Addr raddr) throws IOException {
        this.sched = sched;
        this.net = net;
        this.ch = ch;
        this.laddr = laddr;
        this.raddr = raddr;
        this.pd = Sys.call(() -> Netpoll.of(sched).netpollopen(ch, ""));
        describe();
    }

    /**
     * The runtime of the calling goroutine, for a call that makes a socket ({@code what}: {@code
     * Net.dial}, {@code Net.listen} ...): the socket is registered with that runtime's poller, so
     * these calls are goroutine calls, from any other thread an {@link IllegalStateException}.
     */
    static Scheduler sched(String what) {
        Scheduler s = Scheduler.current();
        if (s == null || Scheduler.currentG() == null) {
            throw new IllegalStateException("gort: " + what + " called outside a goroutine (use Go.run / Go.go)");
        }
        return s;
    }

    /**
     * Fails a call that would wait, made outside a goroutine (a plain Java thread, or a carrier
     * between goroutines): only a goroutine can park on the poller or on the fd's locks. The same
     * rule as a channel's (a blocking operation outside a goroutine throws, a non-blocking one
     * works from any thread): a read that finds data, a write the socket's buffer takes whole, a
     * deadline setter or a close work from any thread. Without it the caller got the runtime's
     * {@code gort: gopark called outside a goroutine}, which names no call.
     */
    void mustPark(String op) {
        if (Scheduler.currentG() == null) {
            throw new IllegalStateException(
                    "gort: " + callName(op) + " would block outside a goroutine (use Go.run / Go.go)");
        }
    }

    /** The public call that does op on this socket: {@code Conn.read}, {@code PacketConn.writeTo} ... */
    private String callName(String op) {
        if (op.equals("dial")) {
            return "Net.dial";
        }
        if (ch instanceof java.nio.channels.ServerSocketChannel) {
            return "Listener." + op;
        }
        if (ch instanceof java.nio.channels.DatagramChannel) {
            return op.equals("read") ? "PacketConn.readFrom" : "PacketConn.writeTo";
        }
        return "Conn." + op;
    }

    void describe() {
        Addr l = laddr;
        Addr r = raddr;
        pd.describeAs(net + " " + (l == null ? "" : l.toString()) + (r == null ? "" : "->" + r));
    }

    boolean isClosed() {
        return closed.get();
    }

    void readLock(String op) throws IOException {
        if (closed.get()) {
            throw error(op, Netpoll.pollErrClosing);
        }
        if (!rlock.tryLock()) {
            mustPark(op); // another goroutine holds it: waiting needs a goroutine
            rlock.lock();
        }
    }

    void readUnlock() {
        rlock.unlock();
    }

    void writeLock(String op) throws IOException {
        writeLock(op, addrFor(op));
    }

    /** {@link #writeLock(String)} whose error names {@code addr}, as a datagram's names its destination. */
    void writeLock(String op, Addr addr) throws IOException {
        if (closed.get()) {
            throw error(op, Netpoll.pollErrClosing, addr);
        }
        if (!wlock.tryLock()) {
            mustPark(op);
            wlock.lock();
        }
    }

    void writeUnlock() {
        wlock.unlock();
    }

    /** Go: (*pollDesc).prepareRead / prepareWrite. */
    void prepare(int mode, String op) throws IOException {
        prepare(mode, op, addrFor(op));
    }

    /** {@link #prepare(int, String)} whose error names {@code addr}. */
    void prepare(int mode, String op, Addr addr) throws IOException {
        int e = Netpoll.pollReset(pd, mode);
        if (e != Netpoll.pollNoError) {
            throw error(op, e, addr);
        }
    }

    /** Go: (*pollDesc).waitRead / waitWrite. */
    void await(int mode, String op) throws IOException {
        await(mode, op, addrFor(op));
    }

    /** {@link #await(int, String)} whose error names {@code addr}. */
    void await(int mode, String op, Addr addr) throws IOException {
        mustPark(op);
        int e = Netpoll.pollWait(pd, mode);
        if (e != Netpoll.pollNoError) {
            throw error(op, e, addr);
        }
    }

    /** Go: internal/poll convertErr plus net's OpError. */
    OpError error(String op, int pollErr) {
        return error(op, pollErr, addrFor(op));
    }

    /** {@link #error(String, int)} naming {@code addr} as the remote address. */
    OpError error(String op, int pollErr, Addr addr) {
        if (pollErr == Netpoll.pollErrTimeout) {
            return new DeadlineExceededException(op, net, sourceFor(op), addr);
        }
        return new OpError(op, net, sourceFor(op), addr, OpError.CLOSED, null);
    }

    /**
     * The OpError's Source: none for accept and the deadline setters; for a dial, the Dialer's
     * LocalAddr as it was given ({@code 127.0.0.1:0}), which laddr is until the connect succeeds
     * (null without one). Go: net/dial.go (*sysDialer).dialSingle's OpError
     */
    private Addr sourceFor(String op) {
        return op.equals("accept") || op.equals("set") ? null : laddr;
    }

    /** The OpError's Addr: the listener's or the connection's own for accept and the deadline setters (Go's). */
    private Addr addrFor(String op) {
        return op.equals("accept") || op.equals("set") ? laddr : raddr;
    }

    /** An exception of the channel, worded as Go's (ECONNRESET: {@code read: connection reset by peer}). */
    OpError error(String op, IOException x) {
        return error(op, addrFor(op), null, x);
    }

    /**
     * {@link #error(String, IOException)} naming {@code addr} as the remote address and {@code sys}
     * as the system call (null: the op's), as a PacketConn's writeTo names its destination and
     * {@code sendto}.
     */
    OpError error(String op, Addr addr, String sys, IOException x) {
        if (closed.get() || pd.closing()) {
            return new OpError(op, net, sourceFor(op), addr, OpError.CLOSED, null);
        }
        if (x instanceof ClosedChannelException) {
            // Open, yet the JDK calls the channel closed: this direction was shut down (closeWrite).
            // A write there is Go's EPIPE, not net.ErrClosed (which says "we closed it ourselves").
            if (op.equals("write")) {
                return new OpError(op, net, sourceFor(op), addr, (sys != null ? sys : op) + ": broken pipe", x);
            }
            return new OpError(op, net, sourceFor(op), addr, OpError.CLOSED, null);
        }
        return new OpError(op, net, sourceFor(op), addr, syscallText(sys != null ? sys : op, x), x);
    }

    /**
     * A socket option's error ({@code SetLinger}, {@code SetNoDelay}): {@code set tcp
     * 127.0.0.1:5000->127.0.0.1:6000: use of closed network connection}. Go names both ends there,
     * where a deadline setter's error names only the local address ({@code set tcp
     * 127.0.0.1:5000: ...}).
     *
     * <p>Go: net/tcpsock.go (*TCPConn).SetLinger, SetNoDelay
     */
    OpError setsockoptError(IOException x) {
        if (closed.get() || pd.closing() || x instanceof ClosedChannelException) {
            return new OpError("set", net, laddr, raddr, OpError.CLOSED, null);
        }
        return new OpError("set", net, laddr, raddr, syscallText("setsockopt", x), x);
    }

    /** {what the JDK's message contains, Go's errno text}: the errors whose text Go's syscall names. */
    private static final String[][] ERRNO_TEXTS = {
        {"connection timed out", "connection timed out"},
        {"permission denied", "permission denied"},
        {"message too long", "message too long"},
        {"connection reset", "connection reset by peer"},
        {"broken pipe", "broken pipe"},
        {"cannot assign requested address", "cannot assign requested address"},
    };

    /**
     * A socket that could not be made (EMFILE, ENFILE, ENOBUFS): {@code dial tcp 127.0.0.1:80:
     * socket: too many open files}, an OpError as every other failure of the call, where the JDK's
     * {@code SocketException} escaped bare.
     *
     * <p>Go: net/sock_cloexec.go sysSocket, net/dial.go (*Dialer).DialContext's OpError
     */
    static OpError socketError(String op, String net, Addr addr, IOException x) {
        return socketError(op, net, null, addr, x);
    }

    /** {@link #socketError(String, String, Addr, IOException)} naming source: a dial's LocalAddr. */
    static OpError socketError(String op, String net, Addr source, Addr addr, IOException x) {
        return new OpError(op, net, source, addr, syscallText("socket", x), x);
    }

    /** Go's os.SyscallError text for a JDK socket exception. */
    /** The peer reset the connection (ECONNRESET): what {@link #syscallText} words {@code connection reset by peer}. */
    static boolean isReset(IOException x) {
        String m = x.getMessage();
        return m != null && m.toLowerCase(Locale.ROOT).contains("connection reset");
    }

    static String syscallText(String op, IOException x) {
        String m = x.getMessage() == null ? x.getClass().getSimpleName() : x.getMessage();
        String l = m.toLowerCase(Locale.ROOT);
        // The JDK's exception class names a family (BindException: EADDRINUSE, EADDRNOTAVAIL and
        // EACCES; ConnectException: ECONNREFUSED and ETIMEDOUT): the message says which.
        String sys = switch (op) {
            case "dial" -> "connect";
            case "listen" -> "bind";
            default -> op;
        };
        if (x instanceof ConnectException) {
            sys = "connect";
        } else if (x instanceof BindException && (op.equals("dial") || op.equals("listen"))) {
            sys = "bind";
        }
        if (l.contains("connection refused")) {
            return "connect: connection refused";
        }
        if (l.contains("address already in use")) {
            return "bind: address already in use";
        }
        for (String[] e : ERRNO_TEXTS) {
            if (l.contains(e[0])) {
                return sys + ": " + e[1];
            }
        }
        if (l.contains("network is unreachable") || l.contains("no route to host")) {
            return sys + ": " + l;
        }
        return sys + ": " + (l.isEmpty() ? m : Character.toLowerCase(m.charAt(0)) + m.substring(1));
    }

    /**
     * Go: internal/poll setDeadlineImpl: null clears; a deadline now or past fails pending and
     * future I/O at once. {@code t} is read against the caller's clock, as Go's
     * {@code time.Until(t)}: {@link Time#now()}, the bubble's fake clock inside a synctest bubble
     * (a deadline of {@code Time.now().plusSeconds(5)} there is 5 s away), the wall clock outside.
     * The duration then passes on the runtime's clock (see {@link Netpoll#pollSetDeadline}).
     */
    void setDeadline(Instant t, int mode) throws IOException {
        if (closed.get()) {
            throw error("set", Netpoll.pollErrClosing);
        }
        long d = 0;
        if (t != null) {
            Instant now = Time.now();
            try {
                d = java.time.Duration.between(now, t).toNanos();
            } catch (ArithmeticException overflow) {
                d = t.isAfter(now) ? Long.MAX_VALUE : -1;
            }
            if (d == 0) {
                d = -1; // don't confuse deadline right now with no deadline
            }
        }
        Netpoll.pollSetDeadline(pd, d, mode);
    }

    /**
     * Go: (*FD).Close and destroy: evicts the waiters (they fail with the closed error),
     * deregisters the descriptor from the poller, then closes it (Go's {@code fd.pd.close()} before
     * {@code CloseFunc(fd.Sysfd)}: once closed, its number may be reused by another socket, which an
     * {@code EPOLL_CTL_DEL} after the close could then remove).
     */
    void close(String op) throws IOException {
        if (!closed.compareAndSet(false, true)) {
            throw error(op, Netpoll.pollErrClosing);
        }
        pd.evict();
        try {
            // (the selector's poll lock is a ReentrantLock: call it from a frame of its own, see Sys)
            Sys.run(() -> Netpoll.of(sched).netpollclose(pd));
        } finally {
            Sys.run(ch::close);
        }
    }
}
