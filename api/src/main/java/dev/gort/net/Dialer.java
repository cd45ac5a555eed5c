package dev.gort.net;

import dev.gort.Chan;
import dev.gort.Time;
import dev.gort.context.CancelContext;
import dev.gort.context.Context;
import dev.gort.context.ContextError;
import dev.gort.runtime.Netpoll;
import dev.gort.runtime.Scheduler;
import java.io.IOException;
import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.StandardProtocolFamily;
import java.net.StandardSocketOptions;
import java.nio.channels.SocketChannel;
import java.nio.channels.UnsupportedAddressTypeException;
import java.time.DateTimeException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * Go's {@code net.Dialer}: options for connecting to an address. {@code new Dialer()} is Go's zero
 * Dialer, each option off: {@link Net#dial} is {@code new Dialer().dial(...)}, {@link
 * Net#dialTimeout} a Dialer with a {@link #setTimeout timeout}, {@link Net#dialContext} a zero
 * Dialer's {@link #dialContext}. The setters return this.
 *
 * <pre>{@code
 * Dialer d = new Dialer()                              // d := net.Dialer{
 *         .setTimeout(Duration.ofSeconds(5))           //     Timeout:   5 * time.Second,
 *         .setKeepAlive(Duration.ofSeconds(30));       //     KeepAlive: 30 * time.Second}
 * Conn c = d.dialContext(ctx, "tcp", "example.com:80"); // c, err := d.DialContext(ctx, "tcp", ...)
 * }</pre>
 *
 * <ul>
 *   <li>{@link #setTimeout Timeout}, {@link #setDeadline Deadline} and the context's deadline: the
 *       earliest of them bounds the whole dial, a host name's lookup included ({@code dial tcp:
 *       lookup example.com: i/o timeout}), then the connect ({@code dial tcp 10.0.0.1:80: i/o
 *       timeout}, a {@link DeadlineExceededException}).
 *   <li>{@link #setLocalAddr LocalAddr}: the address the socket is bound to before it connects
 *       (port 0: any free one). It must be a {@code tcp} address ({@code dial tcp: address
 *       127.0.0.1:5000: mismatched local address type} for a {@code udp} one) of the family of the
 *       address dialed unless either is a wildcard ({@code dial tcp: address [::1]:0: no suitable
 *       address found} for {@code ::1} to an IPv4 address); a dial's errors then name it as their
 *       source, {@code dial tcp 127.0.0.1:0->127.0.0.1:1: connect: connection refused}.
 *   <li>{@link #setKeepAlive KeepAlive}: the keep-alive idle time of the connection (zero: Go's
 *       15 s; negative: keep-alives off), as {@link ListenConfig#setKeepAlive}'s for accepted ones.
 * </ul>
 *
 * <p>A host name with several addresses (of the network's family: both IPv4 and IPv6 for {@code
 * tcp}) is dialed at each in turn, in the resolver's order, until one connects; the dial fails
 * with the first address's error if none does. With a deadline, each attempt gets an equal share
 * of the time left, at least 2 s (or all that is left, if less), so that one address that does not
 * answer leaves time for the next: a host with 4 addresses and a one-minute timeout gives each 15
 * s (Go's partialDeadline). This is Go's dialSerial, which Go's own Dialer uses where its {@code
 * FallbackDelay} is negative; gort has no Happy Eyeballs (RFC 6555 Fast Fallback, Go's
 * dialParallel, which by default races the first address family against the other after 300 ms):
 * where the first address (say an IPv6 one) does not answer, the next (an IPv4 one) is tried only
 * once its share of the deadline is spent (with no deadline, once the system gives up on it).
 * {@code FallbackDelay} and the deprecated {@code DualStack} are not ported. Two more differences:
 * where the JDK has no IPv6 ({@code -Djava.net.preferIPv4Stack=true}), a name's IPv6 addresses are
 * tried and fail ({@code socket: address family not supported by protocol}) where Go leaves them
 * out; and Go's retry of a connect the kernel made to itself (a dial of a free loopback port
 * whose chosen local port is that port, Go's selfConnect) is not ported.
 *
 * <p>A Dialer may be used by many goroutines at once (Go's "safe to call Dialer's methods
 * concurrently"); a dial reads its options when it starts. Setting them while dials run is a data
 * race, as in Go.
 *
 * <p>Not ported: {@code Control} and {@code ControlContext} (a {@code syscall.RawConn} the JDK's
 * channels do not give), {@code KeepAliveConfig} (Go 1.23), {@code Resolver} (gort resolves with
 * the JDK's resolver, see {@link Net}), the deprecated {@code Cancel} channel (use {@link
 * #dialContext}), MPTCP ({@code SetMultipathTCP}), and the networks gort lacks (connected {@code
 * udp}, {@code ip}, {@code unix}: {@code dial udp: unknown network udp}).
 *
 * <p>Go: net/dial.go Dialer
 */
public final class Dialer {
    /** Go: Dialer.Timeout (zero: none). Never null. */
    private Duration timeout = Duration.ZERO;

    /** Go: Dialer.Deadline; null is Go's zero time, no deadline. */
    private Instant deadline;

    /** Go: Dialer.LocalAddr; null: the system chooses. */
    private Addr localAddr;

    /** Go: Dialer.KeepAlive. Never null. */
    private Duration keepAlive = Duration.ZERO;

    /** Go's zero Dialer: no timeout, no deadline, no local address, Go's default keep-alive. */
    public Dialer() {}

    /** The maximum time a dial may take (zero: none). Go: Dialer.Timeout. */
    public Duration timeout() {
        return timeout;
    }

    /**
     * The maximum time a dial waits for a connect to complete, a host name's lookup included; zero
     * (the default) is no timeout, and a negative one has passed already (Go's "including negative,
     * for historical reasons": the dial fails with {@code i/o timeout}). The {@link #setDeadline
     * deadline} or the context's may end it earlier. With a host name of several addresses it is
     * divided among them (see {@link Dialer}). The system may give up on a connect earlier (Linux:
     * after about 2 minutes without an answer). Returns this.
     *
     * <p>Go: Dialer.Timeout
     */
    public Dialer setTimeout(Duration d) {
        this.timeout = Objects.requireNonNull(d, "d");
        return this;
    }

    /** The time after which dials fail, or null for none. Go: Dialer.Deadline. */
    public Instant deadline() {
        return deadline;
    }

    /**
     * The point in time after which dials fail ({@code i/o timeout}); null (the default) is none.
     * It is read against {@link Time#now()}, the fake clock inside a synctest bubble, as the
     * context's deadline is. The {@link #setTimeout timeout} or the context's deadline may end a
     * dial earlier: the earliest of the three wins. Returns this.
     *
     * <p>Go: Dialer.Deadline
     */
    public Dialer setDeadline(Instant t) {
        this.deadline = t;
        return this;
    }

    /** The local address dials bind to, or null. Go: Dialer.LocalAddr. */
    public Addr localAddr() {
        return localAddr;
    }

    /**
     * The local address to bind before connecting; null (the default) lets the system choose. A
     * {@code tcp} {@link Addr} ({@code Net.resolveAddr("tcp", "127.0.0.1:0")}, or {@code new
     * Addr("tcp", ip, port)}; a null ip is the wildcard, port 0 any free port): see {@link Dialer}
     * for the addresses it may be used with and the errors of those it may not, which a dial
     * reports, as Go's does, rather than this setter. Returns this.
     *
     * <p>Go: Dialer.LocalAddr
     */
    public Dialer setLocalAddr(Addr a) {
        this.localAddr = a;
        return this;
    }

    /** The keep-alive period of dialed connections (see {@link #setKeepAlive}). Go: Dialer.KeepAlive. */
    public Duration keepAlive() {
        return keepAlive;
    }

    /**
     * The keep-alive period of the connections dialed after this call: the idle time before the
     * first probe, rounded up to whole seconds, then probes every 15 s, 9 of them (Go's defaults).
     * Zero (the default) enables keep-alives with Go's 15 s; negative disables them (the socket
     * keeps the system's default, off). Returns this.
     *
     * <p>Go: Dialer.KeepAlive (Go 1.23+'s meaning: the Idle of a KeepAliveConfig), net/tcpsock.go
     * newTCPConn
     */
    public Dialer setKeepAlive(Duration d) {
        this.keepAlive = Objects.requireNonNull(d, "d");
        return this;
    }

    /**
     * Connects to the address on the named network: {@link #dialContext} with {@code
     * Context.background()}. Must be called from a goroutine.
     *
     * <p>Go: (*Dialer).Dial
     */
    public Conn dial(String network, String address) throws IOException {
        return dial("Dialer.dial", Context.background(), network, address);
    }

    /**
     * Connects to the address on the named network ({@code tcp}, {@code tcp4}, {@code tcp6}; see
     * {@link Net} for the addresses) with this Dialer's options, ctx ending the dial if it is done
     * first: canceled (from any goroutine or thread), the dial fails, its socket closed, with an
     * OpError whose cause is ctx's error, worded as Go's mapErr words it: {@code dial tcp
     * 10.0.0.1:80: operation was canceled}; past its deadline, a {@link DeadlineExceededException}
     * {@code dial tcp 10.0.0.1:80: i/o timeout}. A ctx already done fails before any socket is made.
     * A host name's lookup ends when ctx is done first, {@code dial tcp: lookup example.com:
     * operation was canceled} (the JDK's resolver itself cannot be interrupted and finishes
     * unseen). Once this returns, ctx no longer affects the connection. The connect's deadline
     * (the earliest of ctx's, {@link #setDeadline}'s and now plus {@link #setTimeout}'s) is read on
     * {@link Time#now()} and passes in real time, also in a synctest bubble (see {@link
     * Conn#setDeadline}). Must be called from a goroutine.
     *
     * <p>Go: (*Dialer).DialContext, net/fd_unix.go (*netFD).connect, net/net.go mapErr
     */
    public Conn dialContext(Context ctx, String network, String address) throws IOException {
        return dial("Dialer.dialContext", ctx, network, address);
    }

    /**
     * The dial of every public dial call; what names it in the outside-a-goroutine error.
     *
     * <p>Go: (*Dialer).DialContext
     */
    Conn dial(String what, Context ctx, String network, String address) throws IOException {
        Objects.requireNonNull(ctx, "nil context"); // Go panics: "nil context"
        Scheduler s = NetFD.sched(what);
        Addr la = localAddr; // Go copies the Dialer into its sysDialer
        long ka = keepAlive.isNegative() ? -1 : Net.saturatedNanos(keepAlive);
        String net = Net.network(network, "dial", true);
        Instant dl = deadline(ctx, Time.now());
        CancelContext sub = null;
        if (dl != null) {
            Optional<Instant> d = ctx.deadline();
            if (d.isEmpty() || dl.isBefore(d.get())) {
                sub = Context.withDeadline(ctx, dl);
                ctx = sub;
            }
        }
        try {
            List<InetSocketAddress> addrs = Net.resolveList("dial", net, address, false, ctx);
            if (la != null) {
                addrs = forLocalAddr(net, addrs, la);
            }
            return dialSerial(s, net, la, ka, ctx, addrs);
        } finally {
            if (sub != null) {
                sub.cancel(); // its timer
            }
        }
    }

    /**
     * The earliest of now plus the timeout (any nonzero one, negative included), the deadline and
     * ctx's deadline; null if none of them is set.
     *
     * <p>Go: (*Dialer).deadline
     */
    Instant deadline(Context ctx, Instant now) {
        Instant earliest = null;
        if (!timeout.isZero()) {
            try {
                earliest = now.plus(timeout);
            } catch (DateTimeException | ArithmeticException e) {
                earliest = timeout.isNegative() ? Instant.MIN : Instant.MAX;
            }
        }
        Optional<Instant> d = ctx.deadline();
        if (d.isPresent()) {
            earliest = minNonzeroTime(earliest, d.get());
        }
        return minNonzeroTime(earliest, deadline);
    }

    /** Go: net/dial.go minNonzeroTime (null is Go's zero time). */
    private static Instant minNonzeroTime(Instant a, Instant b) {
        if (a == null) {
            return b;
        }
        if (b == null || a.isBefore(b)) {
            return a;
        }
        return b;
    }

    /** Go: net/dial.go partialDeadline's saneMinimum. */
    private static final Duration SANE_MINIMUM = Duration.ofSeconds(2);

    /**
     * The deadline of a dial to one of addrsRemaining addresses still to try, all of them bounded
     * by deadline (not null): the time left shared equally, but at least 2 s each (stealing from
     * the end of the list), or all of it where less is left. Null where no time is left (Go's
     * errTimeout).
     *
     * <p>Go: net/dial.go partialDeadline
     */
    static Instant partialDeadline(Instant now, Instant deadline, int addrsRemaining) {
        Duration timeRemaining = Duration.between(now, deadline);
        if (timeRemaining.isNegative() || timeRemaining.isZero()) {
            return null;
        }
        Duration timeout = timeRemaining.dividedBy(addrsRemaining); // tentatively equal shares
        if (timeout.compareTo(SANE_MINIMUM) < 0) {
            timeout = timeRemaining.compareTo(SANE_MINIMUM) < 0 ? timeRemaining : SANE_MINIMUM;
        }
        return now.plus(timeout);
    }

    /**
     * The addresses a dial bound to hint may reach: hint must be a {@code tcp} address ({@code
     * address 127.0.0.1:5000: mismatched local address type}), and an address of the other family
     * is left out unless it or hint is a wildcard; none left is {@code address [::1]:0: no
     * suitable address found}.
     *
     * <p>Go: net/dial.go (*Resolver).resolveAddrList's hint
     */
    private static List<InetSocketAddress> forLocalAddr(String net, List<InetSocketAddress> addrs, Addr hint)
            throws OpError {
        if (!Net.base(net).equals(hint.network())) {
            throw addrError(net, "mismatched local address type", hint);
        }
        boolean wildcard = isWildcard(hint.ip());
        List<InetSocketAddress> ok = new ArrayList<>(addrs.size());
        for (InetSocketAddress a : addrs) {
            if (wildcard || isWildcard(a.getAddress()) || isIPv4(a.getAddress()) == isIPv4(hint.ip())) {
                ok.add(a);
            }
        }
        if (ok.isEmpty()) {
            throw addrError(net, "no suitable address found", hint);
        }
        return ok;
    }

    private static OpError addrError(String net, String err, Addr hint) {
        Net.AddrError e = new Net.AddrError(err, hint.toString());
        return new OpError("dial", net, null, null, e.getMessage(), e);
    }

    /** Go: (*TCPAddr).isWildcard: no IP, or the unspecified one. */
    private static boolean isWildcard(InetAddress ip) {
        return ip == null || ip.isAnyLocalAddress();
    }

    /** Go: IP.To4() != nil (the JDK makes an IPv4-mapped IPv6 address an Inet4Address). */
    private static boolean isIPv4(InetAddress ip) {
        return ip instanceof Inet4Address;
    }

    /**
     * Dials each address in turn until one connects; the first address's error if none does. ctx
     * done ends it before the next attempt; with a deadline each attempt has its share
     * ({@link #partialDeadline}).
     *
     * <p>Go: net/dial.go (*sysDialer).dialSerial
     */
    private static Conn dialSerial(
            Scheduler s, String net, Addr la, long keepAlive, Context ctx, List<InetSocketAddress> ras)
            throws IOException {
        IOException firstErr = null; // the error from the first address is most relevant
        for (int i = 0; i < ras.size(); i++) {
            InetSocketAddress ra = ras.get(i);
            ContextError done = ctx.err();
            if (done != null) {
                throw mapErr(net, la, Addr.of(net, ra), done);
            }
            Context dialCtx = ctx;
            CancelContext partial = null;
            Optional<Instant> deadline = ctx.deadline();
            if (deadline.isPresent()) {
                Instant pd = partialDeadline(Time.now(), deadline.get(), ras.size() - i);
                if (pd == null) { // ran out of time
                    if (firstErr == null) {
                        firstErr = new DeadlineExceededException("dial", net, la, Addr.of(net, ra));
                    }
                    break;
                }
                if (pd.isBefore(deadline.get())) {
                    partial = Context.withDeadline(ctx, pd);
                    dialCtx = partial;
                }
            }
            try {
                return dialSingle(s, net, la, keepAlive, dialCtx, ra);
            } catch (IOException e) {
                if (firstErr == null) {
                    firstErr = e;
                }
            } finally {
                if (partial != null) {
                    partial.cancel();
                }
            }
        }
        if (firstErr == null) {
            firstErr = new OpError("dial", net, null, null, "missing address", null);
        }
        throw firstErr;
    }

    /**
     * A dial's error for ctx's: Go's mapErr (context.Canceled is errCanceled, {@code operation was
     * canceled}; context.DeadlineExceeded is errTimeout, {@code i/o timeout}) in DialContext's
     * OpError, naming la (the LocalAddr, or null) as its source. Go: net/net.go mapErr, errCanceled
     */
    private static OpError mapErr(String net, Addr la, Addr raddr, ContextError e) {
        if (e.timeout()) {
            return new DeadlineExceededException("dial", net, la, raddr, e);
        }
        return new OpError("dial", net, la, raddr, "operation was canceled", e);
    }

    /**
     * One connect: a socket of the family Go's favoriteAddrFamily picks, bound to la if there is
     * one, connected to ra within ctx (its deadline, its cancellation), with TCP_NODELAY and
     * keepAlive (nanoseconds, negative: none) set. Any failure closes the socket.
     *
     * <p>Go: net/dial.go (*sysDialer).dialSingle, net/tcpsock_posix.go doDialTCP, net/sock_posix.go
     * socket and (*netFD).dial, net/tcpsock.go newTCPConn
     */
    private static Conn dialSingle(Scheduler s, String net, Addr la, long keepAlive, Context ctx, InetSocketAddress ra)
            throws IOException {
        Addr raddr = Addr.of(net, ra);
        boolean inet = inetFamily(net, la, ra.getAddress());
        SocketChannel ch;
        try {
            ch = Sys.call(() -> inet ? SocketChannel.open(StandardProtocolFamily.INET) : SocketChannel.open());
        } catch (IOException x) {
            throw NetFD.socketError("dial", net, la, raddr, x);
        }
        NetFD fd;
        try {
            Sys.run(() -> {
                ch.configureBlocking(false);
                ch.setOption(StandardSocketOptions.TCP_NODELAY, true);
                if (keepAlive >= 0) {
                    Net.setKeepAlive(ch, keepAlive);
                }
            });
            fd = new NetFD(s, net, ch, la, raddr); // laddr: la until connected (the errors' source)
        } catch (IOException x) {
            Sys.run(ch::close);
            throw new OpError("dial", net, la, raddr, NetFD.syscallText("dial", x), x);
        }
        boolean ok = false;
        try {
            boolean connected;
            try {
                if (la != null) {
                    InetSocketAddress lsa = localSockaddr(net, la, raddr, inet);
                    try {
                        Sys.run(() -> ch.bind(lsa));
                    } catch (IOException x) {
                        throw fd.error("dial", x); // bind: address already in use, cannot assign ...
                    }
                }
                try {
                    connected = Sys.call(() -> ch.connect(ra));
                } catch (IOException x) {
                    throw fd.error("dial", x);
                }
            } catch (UnsupportedAddressTypeException x) {
                // An IPv6 address where the JDK has no IPv6 (-Djava.net.preferIPv4Stack=true, or no
                // IPv6 in the kernel): Go's socket(AF_INET6, ...) fails so (EAFNOSUPPORT).
                throw new OpError("dial", net, la, raddr, "socket: address family not supported by protocol", x);
            }
            if (!connected) {
                fd.pd.setConnecting(true);
                connect(fd, ch, net, la, raddr, ctx);
                Netpoll.pollSetDeadline(fd.pd, 0, Netpoll.MODE_WRITE);
                fd.pd.setConnecting(false);
            } else if (ctx.err() != null) {
                throw mapErr(net, la, raddr, ctx.err()); // Go: connect's EISCONN case checks ctx too
            }
            fd.laddr = Addr.of(net, Sys.call(ch::getLocalAddress));
            // Go's is the peer's name (getpeername), not the address as dialed: 0.0.0.0:80 reaches
            // 127.0.0.1:80. The channel's is the address it connected to, where the JDK replaced
            // a wildcard by loopback as the kernel does; the dialed one if there is none.
            Addr peer = Addr.of(net, Sys.call(ch::getRemoteAddress));
            if (peer != null) {
                fd.raddr = peer;
            }
            fd.describe();
            ok = true;
            return new Conn(fd);
        } finally {
            if (!ok) {
                try {
                    fd.close("close");
                } catch (IOException ignored) {
                    // the dial's own error is the one to report
                }
            }
        }
    }

    /**
     * Whether the dial's socket is AF_INET: for {@code tcp4}, and for {@code tcp} where both the
     * local address (if any; one without an IP counts as IPv4) and the remote one are IPv4;
     * otherwise the JDK's default, dual-stack IPv6, socket. Go: net/ipsock_posix.go
     * favoriteAddrFamily
     */
    private static boolean inetFamily(String net, Addr la, InetAddress ra) {
        if (net.endsWith("4")) {
            return true;
        }
        if (net.endsWith("6")) {
            return false;
        }
        return (la == null || la.ip() == null || isIPv4(la.ip())) && isIPv4(ra);
    }

    /**
     * la as the socket's local address: on an AF_INET socket no IP is {@code 0.0.0.0} and an IPv6
     * one is Go's {@code address ::: non-IPv4 address}; on an IPv6 socket no IP or {@code 0.0.0.0}
     * is {@code ::}. A port outside 0..65535 is the kernel's EINVAL. Go: net/ipsock_posix.go
     * ipToSockaddr
     */
    private static InetSocketAddress localSockaddr(String net, Addr la, Addr raddr, boolean inet) throws OpError {
        InetAddress ip = la.ip();
        if (inet) {
            if (ip == null) {
                ip = InetAddress.ofLiteral("0.0.0.0");
            } else if (ip instanceof Inet6Address v6) {
                Net.AddrError e = new Net.AddrError("non-IPv4 address", Addr.format6(v6.getAddress()));
                throw new OpError("dial", net, la, raddr, e.getMessage(), e);
            }
        } else if (ip == null || (isIPv4(ip) && ip.isAnyLocalAddress())) {
            ip = InetAddress.ofLiteral("::");
        }
        if (la.port() < 0 || la.port() > 0xFFFF) {
            throw new OpError("dial", net, la, raddr, "bind: invalid argument", null);
        }
        return new InetSocketAddress(ip, la.port());
    }

    /**
     * Waits until the connect in progress on fd completes. ctx's deadline is the connect's, and
     * where ctx can be done, a goroutine started when it is ({@link Context#afterFunc}) sets the
     * write deadline in the past, which wakes the parked dial (Go's aLongTimeAgo); the dial then
     * reports ctx's error. If that goroutine fired but the connect won the race, the socket's write
     * deadline is spoiled, so the dial fails all the same (Go's issue 16523).
     *
     * <p>Go: net/fd_unix.go (*netFD).connect
     */
    private static void connect(NetFD fd, SocketChannel ch, String net, Addr la, Addr raddr, Context ctx)
            throws IOException {
        Optional<Instant> deadline = ctx.deadline();
        if (deadline.isPresent()) {
            fd.setDeadline(deadline.get(), Netpoll.MODE_WRITE);
        }
        Context.StopFunc stop = null;
        Chan<ContextError> interruptRes = null;
        Chan<Void> ctxDone = ctx.done();
        if (ctxDone != null && !ctxDone.isNil()) {
            Chan<ContextError> res = Chan.make(1);
            interruptRes = res;
            stop = Context.afterFunc(ctx, () -> {
                Netpoll.pollSetDeadline(fd.pd, -1, Netpoll.MODE_WRITE); // a deadline long ago
                res.send(ctx.err());
            });
        }
        boolean connected = false;
        try {
            for (; ; ) {
                try {
                    fd.await(Netpoll.MODE_WRITE, "dial");
                } catch (OpError e) {
                    ContextError done = ctx.err();
                    if (done != null) {
                        throw mapErr(net, la, raddr, done);
                    }
                    throw e;
                }
                try {
                    if (Sys.call(ch::finishConnect)) {
                        break;
                    }
                } catch (IOException x) {
                    throw fd.error("dial", x);
                }
            }
            connected = true;
        } finally {
            if (stop != null && !stop.stop()) {
                // The interrupter ran (or runs): wait for it, so that it touches no closed descriptor.
                ContextError done = interruptRes.recv();
                if (connected) {
                    throw mapErr(net, la, raddr, done);
                }
            }
        }
    }
}
