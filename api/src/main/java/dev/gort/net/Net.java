package dev.gort.net;

import dev.gort.Chan;
import dev.gort.Go;
import dev.gort.Select;
import dev.gort.Syscall;
import dev.gort.context.Context;
import dev.gort.context.ContextError;
import dev.gort.runtime.Scheduler;
import java.io.IOException;
import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.StandardProtocolFamily;
import java.net.StandardSocketOptions;
import java.net.UnknownHostException;
import java.nio.channels.DatagramChannel;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Go's {@code net} package on gort's network poller: sockets whose I/O parks the goroutine, so a
 * server with 10,000 connections needs GOMAXPROCS carrier threads, not 10,000.
 *
 * <pre>{@code
 * Listener ln = Net.listen("tcp", "127.0.0.1:0");
 * Go.go(() -> { Conn c = ln.accept(); ... });
 * Conn c = Net.dial("tcp", ln.addr().toString());
 * }</pre>
 *
 * <p>Networks: {@code tcp}, {@code tcp4}, {@code tcp6} for {@link #listen} and {@link #dial};
 * {@code udp}, {@code udp4}, {@code udp6} for {@link #listenPacket} (no connected UDP: {@code
 * dial("udp", ...)} is {@code dial udp: unknown network udp}). {@code tcp4} and {@code udp4}
 * sockets are IPv4 ones; a {@code tcp6} or {@code udp6} socket on the IPv6 wildcard also takes
 * IPv4 peers, where Go's sets IPV6_V6ONLY (the JDK has no such option). Addresses are Go's {@code
 * host:port} ({@code [::1]:80}; an empty host listens on every address and dials the local
 * system; an empty address listens on a free port; the port may be a service name, {@code
 * http}, from {@code /etc/services} or Go's own table). Host names are resolved by the JDK's blocking resolver inside
 * {@link Syscall#block} (the P is handed off if it blocks long, as for Go's cgo resolver); IP
 * literals need no lookup.
 *
 * <p>Goroutines and plain threads: a call that would wait parks the calling goroutine, so it must
 * come from a goroutine ({@code Go.run} / {@code Go.go}). From any other thread (a plain Java
 * thread, a JDK executor's) it throws {@code IllegalStateException} naming the call, e.g. {@code
 * gort: Conn.read would block outside a goroutine (use Go.run / Go.go)}, the rule of {@link
 * dev.gort.Chan}'s blocking operations: {@link #dial}, {@link #listen} and {@link #listenPacket}
 * (and {@link ListenConfig}'s and {@link Dialer}'s) always (they register the socket with the calling goroutine's runtime); {@link Conn#read}, {@link
 * Conn#write}, {@link Listener#accept}, {@link PacketConn#readFrom} and {@link PacketConn#writeTo}
 * only when they would wait, the same as a channel's non-blocking operations: a read that finds
 * data, a write the socket's buffer takes whole, an accept of a pending connection, and every
 * {@code close}, {@code closeWrite} and deadline setter work from any thread. (A plain thread
 * cannot wait on the poller: its waiters are goroutines, which the scheduler, not a thread
 * parker, resumes; the poll descriptor's wait slots hold goroutines.) A write from a plain thread
 * that fails so may have sent a prefix, which the {@code IllegalStateException} does not count:
 * write from a goroutine where a short write matters ({@link OpError#bytesTransferred()}).
 *
 * <p>Go: net/dial.go Dial, DialTimeout, (*Dialer).DialContext, Listen, ListenPacket; net/ipsock.go
 * SplitHostPort; net/lookup.go (*Resolver).lookupIPAddr
 */
public final class Net {
    private Net() {}

    /**
     * Go: net.Listen (a zero ListenConfig's Listen with context.Background). A host name is
     * listened on at one of its addresses, the first IPv4 one (else the first), as Go's: Go
     * advises against host names here for that reason.
     */
    public static Listener listen(String network, String address) throws IOException {
        return listen("Net.listen", Context.background(), 0, network, address);
    }

    /**
     * Listen for {@link #listen} and {@link ListenConfig#listen}: ctx bounds the lookup of a host
     * name only; keepAlive (nanoseconds, negative: none) is the accepted connections'; what names
     * the call in the outside-a-goroutine error. Go: (*ListenConfig).Listen
     */
    static Listener listen(String what, Context ctx, long keepAlive, String network, String address)
            throws IOException {
        Scheduler s = NetFD.sched(what);
        String net = network(network, "listen", true);
        InetSocketAddress sa = first(resolveList("listen", net, address, true, ctx), true);
        return Listener.listen(s, net, sa, Addr.of(net, sa), keepAlive);
    }

    /**
     * Go: net.Dial, a zero {@link Dialer}'s dial: {@code new Dialer().dial(network, address)}. The
     * connection's {@link Conn#remoteAddr} is the peer's address, which may differ from the one
     * dialed ({@code 0.0.0.0:80} or {@code :80} reach {@code 127.0.0.1:80}). A host name with
     * several addresses is dialed at each in turn until one connects (see {@link Dialer}).
     * Go: net/sock_posix.go (*netFD).dial's getpeername
     */
    public static Conn dial(String network, String address) throws IOException {
        return new Dialer().dial("Net.dial", Context.background(), network, address);
    }

    /**
     * Go: net.DialTimeout, a Dialer with that {@link Dialer#setTimeout timeout}: {@code null} or
     * zero is no timeout (a negative one has passed already, Go's "for historical reasons"); a
     * connection not established in time fails with {@code dial tcp 10.0.0.1:80: i/o timeout}
     * ({@link DeadlineExceededException}). The timeout bounds the whole dial, as Go's
     * Dialer.Timeout: a host name's lookup that outlasts it fails with {@code dial tcp: lookup
     * example.com: i/o timeout} (the lookup, which the JDK cannot interrupt, finishes unseen), and
     * the connect gets what is left, shared among a host name's addresses (see {@link Dialer}). The
     * connect's part passes in real time, also inside a synctest bubble (as Go's connect deadline:
     * see {@link Conn#setDeadline}); the lookup's is a context deadline, on the bubble's clock there
     * (Go's DialContext turns the timeout into one too).
     */
    public static Conn dialTimeout(String network, String address, Duration timeout) throws IOException {
        return new Dialer()
                .setTimeout(timeout == null ? Duration.ZERO : timeout)
                .dial("Net.dial", Context.background(), network, address);
    }

    /**
     * Go: (*Dialer).DialContext with a zero Dialer: {@code new Dialer().dialContext(ctx, network,
     * address)}, a {@link #dial} that ctx can end (see {@link Dialer#dialContext}): {@code dial tcp
     * 10.0.0.1:80: operation was canceled} once ctx is canceled, {@code i/o timeout} past its
     * deadline.
     */
    public static Conn dialContext(Context ctx, String network, String address) throws IOException {
        return new Dialer().dial("Net.dialContext", ctx, network, address);
    }

    /** Go: net.ListenPacket (UDP; a zero ListenConfig's ListenPacket with context.Background). */
    public static PacketConn listenPacket(String network, String address) throws IOException {
        return listenPacket("Net.listenPacket", Context.background(), network, address);
    }

    /** ListenPacket for {@link #listenPacket} and {@link ListenConfig#listenPacket}; see {@link #listen}. */
    static PacketConn listenPacket(String what, Context ctx, String network, String address) throws IOException {
        Scheduler s = NetFD.sched(what);
        String net = network(network, "listen", false);
        InetSocketAddress sa = first(resolveList("listen", net, address, true, ctx), true);
        Addr asked = Addr.of(net, sa);
        DatagramChannel ch;
        try {
            ch = Sys.call(
                    () -> ipv4Only(net) ? DatagramChannel.open(StandardProtocolFamily.INET) : DatagramChannel.open());
        } catch (IOException x) {
            throw NetFD.socketError("listen", net, asked, x);
        }
        try {
            Sys.run(() -> {
                ch.configureBlocking(false);
                ch.bind(sa);
            });
            return new PacketConn(new NetFD(s, net, ch, Addr.of(net, Sys.call(ch::getLocalAddress)), null));
        } catch (IOException x) {
            Sys.run(ch::close);
            throw new OpError("listen", net, null, asked, NetFD.syscallText("listen", x), x);
        }
    }

    /**
     * Resolves {@code host:port} for network (off the P for a name): of a host name's addresses,
     * the first IPv4 one, or with {@code tcp} or {@code udp} and a bracketed host ({@code
     * [name]:80}) the first IPv6 one, else the first. Go: net.ResolveTCPAddr, ResolveUDPAddr,
     * net/ipsock.go (addrList).forResolve
     */
    public static Addr resolveAddr(String network, String address) throws IOException {
        String net = network(network, "resolve", network != null && network.startsWith("tcp"));
        boolean want6 = (net.equals("tcp") || net.equals("udp")) && address != null && address.indexOf('[') >= 0;
        return Addr.of(net, first(resolveList("resolve", net, address, false, null), !want6));
    }

    /**
     * An accepted connection; keepAlive is its listener's {@link ListenConfig#keepAlive} in
     * nanoseconds (negative: keep-alives not enabled). Go: net/tcpsock_posix.go
     * (*TCPListener).accept, net/tcpsock.go newTCPConn
     */
    static Conn newConn(Scheduler s, String net, SocketChannel c, long keepAlive) throws IOException {
        try {
            Sys.run(() -> {
                c.configureBlocking(false);
                c.setOption(StandardSocketOptions.TCP_NODELAY, true);
                if (keepAlive >= 0) {
                    setKeepAlive(c, keepAlive);
                }
            });
            return new Conn(new NetFD(
                    s,
                    net,
                    c,
                    Addr.of(net, Sys.call(c::getLocalAddress)),
                    Addr.of(net, Sys.call(c::getRemoteAddress))));
        } catch (IOException x) {
            Sys.run(c::close);
            throw new OpError("accept", net, null, null, NetFD.syscallText("accept", x), x);
        }
    }

    /** Go: net/dial.go defaultTCPKeepAliveIdle, defaultTCPKeepAliveInterval (15 s). */
    static final int DEFAULT_KEEP_ALIVE_SECONDS = 15;

    /** Go: net/dial.go defaultTCPKeepAliveCount. */
    static final int DEFAULT_KEEP_ALIVE_COUNT = 9;

    /**
     * Enables keep-alive probes on c: SO_KEEPALIVE, the idle time before the first probe (idle
     * nanoseconds rounded up to whole seconds; 0 is Go's default, 15 s), 15 s between probes and 9
     * probes (Go's defaults for a KeepAliveConfig with only Idle set). As Go's SetKeepAliveConfig,
     * the first option the kernel refuses (an idle time above 32767 s on Linux) ends it there, the
     * options after it left as they were, and as Go's newTCPConn that error is ignored; an option
     * the platform lacks is skipped.
     *
     * <p>Go: net/tcpsock.go (*TCPConn).SetKeepAliveConfig, net/tcpsockopt_unix.go setKeepAliveIdle,
     * setKeepAliveInterval, setKeepAliveCount
     */
    static void setKeepAlive(SocketChannel c, long idle) {
        long secs =
                idle == 0 ? DEFAULT_KEEP_ALIVE_SECONDS : idle / 1_000_000_000L + (idle % 1_000_000_000L != 0 ? 1 : 0);
        // each step only after the one before it took (Go's SetKeepAliveConfig returns its first
        // error, which newTCPConn ignores)
        if (setOption(c, StandardSocketOptions.SO_KEEPALIVE, true)
                && setOption(c, jdk.net.ExtendedSocketOptions.TCP_KEEPIDLE, (int) Math.min(secs, Integer.MAX_VALUE))
                && setOption(c, jdk.net.ExtendedSocketOptions.TCP_KEEPINTERVAL, DEFAULT_KEEP_ALIVE_SECONDS)) {
            setOption(c, jdk.net.ExtendedSocketOptions.TCP_KEEPCOUNT, DEFAULT_KEEP_ALIVE_COUNT);
        }
    }

    /** Sets o on c: false if the kernel refused it; true, doing nothing, if the platform lacks o. */
    private static <T> boolean setOption(SocketChannel c, java.net.SocketOption<T> o, T v) {
        if (!c.supportedOptions().contains(o)) {
            return true;
        }
        try {
            c.setOption(o, v);
            return true;
        } catch (IOException | IllegalArgumentException | UnsupportedOperationException e) {
            return false;
        }
    }

    static long saturatedNanos(Duration d) {
        try {
            return d.toNanos();
        } catch (ArithmeticException e) {
            return Long.MAX_VALUE;
        }
    }

    static String base(String net) {
        return net.substring(0, 3);
    }

    /**
     * Whether network's sockets are AF_INET: {@code tcp4} and {@code udp4}. The JDK's default
     * socket is a dual-stack IPv6 one, on which a {@code tcp4} listener on {@code :80} (the JDK
     * binds 0.0.0.0 as {@code ::}) took IPv6 connections too and called itself {@code [::]:80}.
     * Go: net/ipsock_posix.go favoriteAddrFamily
     */
    static boolean ipv4Only(String net) {
        return net.endsWith("4");
    }

    /** Go: net/dial.go parseNetwork: {@code dial foo: unknown network foo}. */
    static String network(String network, String op, boolean tcp) throws OpError {
        String n = network == null ? "" : network;
        boolean ok = tcp
                ? n.equals("tcp") || n.equals("tcp4") || n.equals("tcp6")
                : n.equals("udp") || n.equals("udp4") || n.equals("udp6");
        if (!ok) {
            throw new OpError(op, n, null, null, "unknown network " + n, null);
        }
        return n;
    }

    /** Go: net.SplitHostPort (the same checks and texts). Returns {host, port}. */
    public static String[] splitHostPort(String hostport) throws AddrError {
        final String missingPort = "missing port in address";
        final String tooManyColons = "too many colons in address";
        if (hostport == null) {
            throw new AddrError(missingPort, "");
        }
        int j = 0;
        int k = 0;
        // The port starts after the last colon.
        int i = hostport.lastIndexOf(':');
        if (i < 0) {
            throw new AddrError(missingPort, hostport);
        }
        String host;
        if (hostport.charAt(0) == '[') {
            // Expect the first ']' just before the last ':'.
            int end = hostport.indexOf(']');
            if (end < 0) {
                throw new AddrError("missing ']' in address", hostport);
            }
            if (end + 1 == hostport.length()) {
                // There can't be a ':' behind the ']' now.
                throw new AddrError(missingPort, hostport);
            } else if (end + 1 != i) {
                // Either ']' isn't followed by a colon, or it is followed by a colon that is not
                // the last one.
                if (hostport.charAt(end + 1) == ':') {
                    throw new AddrError(tooManyColons, hostport);
                }
                throw new AddrError(missingPort, hostport);
            }
            host = hostport.substring(1, end);
            j = 1;
            k = end + 1; // there can't be a '[' resp. ']' before these positions
        } else {
            host = hostport.substring(0, i);
            if (host.indexOf(':') >= 0) {
                throw new AddrError(tooManyColons, hostport);
            }
        }
        if (hostport.indexOf('[', j) >= 0) {
            throw new AddrError("unexpected '[' in address", hostport);
        }
        if (hostport.indexOf(']', k) >= 0) {
            throw new AddrError("unexpected ']' in address", hostport);
        }
        return new String[] {host, hostport.substring(i + 1)};
    }

    /** Go: net.JoinHostPort. */
    public static String joinHostPort(String host, String port) {
        return host.indexOf(':') >= 0 ? "[" + host + "]:" + port : host + ":" + port;
    }

    /** The underlying error of a malformed address. Go: net.AddrError. */
    public static final class AddrError extends IOException {
        private static final long serialVersionUID = 1L;

        AddrError(String err, String addr) {
            super(addr == null || addr.isEmpty() ? err : "address " + addr + ": " + err);
        }
    }

    /**
     * The first IPv4 address of addrs (ipv4) or the first other one (!ipv4), or else the first of
     * all: a listener is on a host name's first IPv4 address (Go: {@code addrs.first(isIPv4)}), and
     * Go's ResolveTCPAddr prefers IPv4 unless the address has a bracketed host ({@code [::1]:80}).
     * Go: net/ipsock.go (addrList).first, (addrList).forResolve
     */
    private static InetSocketAddress first(List<InetSocketAddress> addrs, boolean ipv4) {
        for (InetSocketAddress a : addrs) {
            if ((a.getAddress() instanceof Inet4Address) == ipv4) {
                return a;
            }
        }
        return addrs.get(0);
    }

    /**
     * {@code host:port} to the socket addresses it names, in the resolver's order, never empty: an
     * IP literal or an empty host is one; a host name is looked up ({@link #lookupIP}) with ctx
     * (null: none) and gives each of its addresses of network's family ({@code tcp4}: IPv4 only,
     * {@code tcp}: all), as Go's filterAddrList keeps them. Go: net/ipsock.go
     * (*Resolver).internetAddrList, filterAddrList
     */
    static List<InetSocketAddress> resolveList(String op, String net, String address, boolean listen, Context ctx)
            throws IOException {
        String[] hp;
        if (address == null || address.isEmpty()) {
            if (op.equals("dial")) {
                throw new OpError(op, net, null, null, "missing address", null); // Go: errMissingAddress
            }
            hp = new String[] {"", ""}; // Go: an empty address is every address, port 0
        } else {
            try {
                hp = splitHostPort(address);
            } catch (AddrError e) {
                throw new OpError(op, net, null, null, e.getMessage(), e);
            }
        }
        String host = hp[0];
        int port = port(op, net, hp[1]);
        boolean want4 = net.endsWith("4");
        boolean want6 = net.endsWith("6");
        if (host.isEmpty()) {
            if (listen) {
                return List.of(
                        want4
                                ? new InetSocketAddress(InetAddress.ofLiteral("0.0.0.0"), port)
                                : want6
                                        ? new InetSocketAddress(InetAddress.ofLiteral("::"), port)
                                        : new InetSocketAddress(port));
            }
            return List.of(new InetSocketAddress(InetAddress.ofLiteral(want6 ? "::1" : "127.0.0.1"), port));
        }
        InetAddress ip = literal(host);
        if (ip != null) {
            if ((want4 && !(ip instanceof Inet4Address)) || (want6 && !(ip instanceof Inet6Address))) {
                throw new OpError(op, net, null, null, "address " + host + ": no suitable address found", null);
            }
            return List.of(new InetSocketAddress(ip, port));
        }
        InetAddress[] all = lookupIP(op, net, host, ctx);
        List<InetSocketAddress> addrs = new ArrayList<>(all.length);
        for (InetAddress a : all) {
            if ((want4 && a instanceof Inet4Address) || (want6 && a instanceof Inet6Address) || (!want4 && !want6)) {
                addrs.add(new InetSocketAddress(a, port));
            }
        }
        if (addrs.isEmpty()) {
            throw new OpError(op, net, null, null, "address " + host + ": no suitable address found", null);
        }
        return addrs;
    }

    /** How a host name is looked up: the JDK's resolver; tests replace it. Go: testHookLookupIP. */
    @FunctionalInterface
    interface LookupIP {
        InetAddress[] lookup(String host) throws UnknownHostException;
    }

    /** The lookup {@link #lookupIP} calls; a test's own while it runs (set before, restored after). */
    static volatile LookupIP testHookLookupIP = InetAddress::getAllByName;

    /**
     * The addresses of a host name, from the JDK's blocking resolver inside {@link Syscall#block}.
     * With a ctx that can be done (its done channel is not nil), the lookup runs in a goroutine of
     * its own and the caller waits for it or for ctx, whichever comes first, as Go's select does: a
     * ctx done first fails with Go's DNSError text in the call's OpError, {@code listen tcp: lookup
     * example.com: operation was canceled} (a {@link DeadlineExceededException} {@code ...: i/o
     * timeout} for a deadline; the cause is ctx's error), while the lookup, which the JDK cannot
     * interrupt, finishes unseen. A ctx already done fails before any lookup. (Go also shares one
     * lookup among concurrent callers of the same name: not here.)
     *
     * <p>Go: net/lookup.go (*Resolver).lookupIPAddr, net/net.go mapErr, net/net.go DNSError
     */
    private static InetAddress[] lookupIP(String op, String net, String host, Context ctx) throws IOException {
        LookupIP lookup = testHookLookupIP;
        Chan<Void> done = ctx == null ? null : ctx.done();
        if (done == null || done.isNil()) {
            try {
                return Syscall.block(() -> lookup.lookup(host));
            } catch (UnknownHostException e) {
                throw noSuchHost(op, net, host, e);
            }
        }
        ContextError e = ctx.err();
        if (e != null) {
            throw lookupErr(op, net, host, e);
        }
        Chan<Object> res = Chan.make(1); // never blocks the lookup, whether or not anyone waits
        Go.go(() -> {
            Object r;
            try {
                r = Syscall.block(() -> lookup.lookup(host));
            } catch (UnknownHostException | RuntimeException x) {
                r = x;
            }
            res.send(r);
        });
        Select sel = new Select(2);
        int doneCase = sel.addRecv(done);
        sel.addRecv(res);
        if (sel.await() == doneCase) {
            throw lookupErr(op, net, host, ctx.err());
        }
        Object r = sel.value();
        if (r instanceof UnknownHostException x) {
            throw noSuchHost(op, net, host, x);
        }
        if (r instanceof RuntimeException x) {
            throw x;
        }
        return (InetAddress[]) r;
    }

    private static OpError noSuchHost(String op, String net, String host, UnknownHostException e) {
        return new OpError(op, net, null, null, "lookup " + host + ": no such host", e);
    }

    /** A lookup ended by ctx: Go's DNSError wrapping mapErr(ctx.Err()). */
    private static OpError lookupErr(String op, String net, String host, ContextError e) {
        if (e.timeout()) {
            return new DeadlineExceededException(op, net, null, null, "lookup " + host + ": " + OpError.TIMEOUT, e);
        }
        return new OpError(op, net, null, null, "lookup " + host + ": operation was canceled", e);
    }

    private static InetAddress literal(String host) {
        int pct = host.indexOf('%'); // zone
        String h = pct >= 0 ? host.substring(0, pct) : host;
        if (h.isEmpty() || !(h.indexOf(':') >= 0 || h.chars().allMatch(c -> c == '.' || (c >= '0' && c <= '9')))) {
            return null;
        }
        try {
            return InetAddress.ofLiteral(h);
        } catch (IllegalArgumentException e) {
            return null;
        }
    }

    /**
     * Go: net/port.go parsePort and net.LookupPort: a sign, digits ({@code address 70000: invalid
     * port}, {@code address -1: invalid port}), or else a service name ({@code http}: 80), else
     * {@code lookup tcp/http2: unknown port}.
     */
    private static int port(String op, String net, String port) throws OpError {
        if (port.isEmpty()) {
            return 0; // Go: an empty port is port 0
        }
        String digits = port.charAt(0) == '+' || port.charAt(0) == '-' ? port.substring(1) : port;
        if (digits.isEmpty()) {
            return 0; // Go's parsePort: a sign and no digits is port 0
        }
        boolean numeric = !digits.isEmpty() && digits.chars().allMatch(c -> c >= '0' && c <= '9');
        if (!numeric) {
            Integer named = Services.lookup(base(net), port);
            if (named == null) {
                throw new OpError(op, net, null, null, "lookup " + base(net) + "/" + port + ": unknown port", null);
            }
            return named;
        }
        long p = 0;
        for (int i = 0; i < digits.length() && p <= 65535; i++) {
            p = p * 10 + (digits.charAt(i) - '0');
        }
        if (port.charAt(0) == '-' && p != 0 || p > 65535) {
            throw new OpError(op, net, null, null, "address " + port + ": invalid port", null);
        }
        return (int) p;
    }
}
