package dev.gort.net;

import static dev.gort.GortTesting.check;
import static dev.gort.net.NetTest.bytes;
import static dev.gort.net.NetTest.go;
import static dev.gort.net.NetTest.readN;
import static dev.gort.net.NetTest.run;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.gort.Chan;
import dev.gort.Select;
import dev.gort.Syscall;
import dev.gort.Time;
import dev.gort.context.CancelContext;
import dev.gort.context.Context;
import java.io.IOException;
import java.net.InetAddress;
import java.net.StandardSocketOptions;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import jdk.net.ExtendedSocketOptions;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Go's net.ListenConfig: Listen and ListenPacket with a context that bounds the lookup of the
 * address to listen on and nothing else (net/dial.go: "The ctx argument is used while resolving
 * the address on which to listen; it does not affect the returned Listener"). A host name's lookup
 * in flight is the test's own ({@link Net#testHookLookupIP}, Go's testHookLookupIP).
 */
class ListenConfigTest {
    /** A lookup that answers 127.0.0.1 for any name, at once. */
    static final Net.LookupIP LOOPBACK = host -> new InetAddress[] {InetAddress.ofLiteral("127.0.0.1")};

    /** Runs call with testHookLookupIP set to hook, restoring the JDK's after. */
    static void withLookup(Net.LookupIP hook, Runnable call) {
        Net.LookupIP saved = Net.testHookLookupIP;
        Net.testHookLookupIP = hook;
        try {
            call.run();
        } finally {
            Net.testHookLookupIP = saved;
        }
    }

    /** The call named, with ctx: ListenConfig's listen or listenPacket, or Net.dialContext. */
    static AutoCloseable call(String call, Context ctx, String address) throws IOException {
        return switch (call) {
            case "listen" -> new ListenConfig().listen(ctx, "tcp", address);
            case "listenPacket" -> new ListenConfig().listenPacket(ctx, "udp", address);
            case "dialContext" -> Net.dialContext(ctx, "tcp", address);
            default -> throw new IllegalArgumentException(call);
        };
    }

    static String op(String call) {
        return switch (call) {
            case "listen" -> "listen tcp";
            case "listenPacket" -> "listen udp";
            default -> "dial tcp";
        };
    }

    /**
     * A ctx already done fails a listen that must look a host name up, before the lookup, with
     * Go's text (the Go 1.19 twin: {@code listen tcp: lookup localhost: operation was canceled});
     * an IP literal or an empty host needs no lookup and listens all the same (Go's too). A past
     * deadline is {@code i/o timeout}, a DeadlineExceededException. Net.dialContext's lookup says
     * the same ({@code dial tcp: lookup localhost: ...}). Errors found before the lookup stay.
     */
    @Test
    void aDoneContextFailsANameLookupOnly() {
        withLookup(
                host -> {
                    throw new AssertionError("looked up " + host + " with a done context");
                },
                () -> run(1, () -> {
                    CancelContext ctx = Context.withCancel(Context.background());
                    ctx.cancel();
                    ListenConfig lc = new ListenConfig();
                    try (Listener ln = lc.listen(ctx, "tcp", "127.0.0.1:0")) {
                        check(ln.addr().port() != 0, "listening on %s", ln.addr());
                    }
                    lc.listen(ctx, "tcp", ":0").close();
                    lc.listenPacket(ctx, "udp", "127.0.0.1:0").close();

                    for (String call : new String[] {"listen", "listenPacket", "dialContext"}) {
                        OpError e = assertThrows(OpError.class, () -> call(call, ctx, "localhost:80"));
                        check(
                                e.getMessage().equals(op(call) + ": lookup localhost: operation was canceled")
                                        && e.getCause() == Context.CANCELED
                                        && !e.timeout(),
                                "%s: %s",
                                call,
                                e);
                    }

                    CancelContext past = Context.withDeadline(
                            Context.background(), Instant.now().minusSeconds(1));
                    DeadlineExceededException t =
                            assertThrows(DeadlineExceededException.class, () -> lc.listen(past, "tcp", "localhost:0"));
                    check(
                            t.getMessage().equals("listen tcp: lookup localhost: i/o timeout")
                                    && t.getCause() == Context.DEADLINE_EXCEEDED,
                            "deadline: %s",
                            t);

                    OpError net = assertThrows(OpError.class, () -> lc.listen(ctx, "foo", "127.0.0.1:0"));
                    check(net.getMessage().equals("listen foo: unknown network foo"), "%s", net);
                }));
    }

    /**
     * A ctx canceled while the lookup of a host name is in flight ends the call at once (Go's
     * select on ctx.Done() and the lookup), although the lookup itself goes on until it returns;
     * the call does not wait for it. Without this the call waited for the lookup, which the test
     * releases only after the call has returned (or after 20 s, to fail rather than hang).
     */
    @ParameterizedTest
    @ValueSource(strings = {"listen", "listenPacket", "dialContext"})
    void aLookupInFlightEndsWhenTheContextIsDone(String call) {
        CountDownLatch entered = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        try {
            withLookup(
                    host -> {
                        entered.countDown();
                        try {
                            release.await(20, TimeUnit.SECONDS);
                        } catch (InterruptedException e) {
                            throw new AssertionError(e);
                        }
                        return LOOPBACK.lookup(host);
                    },
                    () -> run(2, () -> {
                        CancelContext ctx = Context.withCancel(Context.background());
                        Chan<Object> got = Chan.make(1);
                        go(() -> {
                            try (AutoCloseable c = call(call, ctx, "slow.example:9")) {
                                got.send(c);
                            } catch (IOException e) {
                                got.send(e);
                            }
                        });
                        Syscall.block(() -> entered.await()); // the lookup is in flight
                        ctx.cancel();
                        Object[] r = {null};
                        Select.select(
                                Select.recv(got, v -> r[0] = v),
                                Select.recv(Time.after(Duration.ofSeconds(20)), () -> r[0] = "no result in 20 s"));
                        boolean before = release.getCount() == 1;
                        release.countDown();
                        check(before, "the lookup was released before the call returned");
                        check(
                                r[0] instanceof OpError e
                                        && e.getMessage()
                                                .equals(op(call) + ": lookup slow.example: operation was canceled")
                                        && e.getCause() == Context.CANCELED,
                                "%s: %s",
                                call,
                                r[0]);
                    }));
        } finally {
            release.countDown();
        }
    }

    /**
     * Net.dialTimeout's timeout bounds the host name's lookup too, as Go's Dialer.Timeout (a
     * deadline on the context DialContext resolves under): a lookup that outlasts it fails the dial
     * with {@code dial tcp: lookup slow.example: i/o timeout} while the lookup is still in flight.
     * It waited for the whole lookup, the timeout bounding the connect only.
     */
    @Test
    void dialTimeoutBoundsTheLookup() {
        CountDownLatch release = new CountDownLatch(1);
        try {
            withLookup(
                    host -> {
                        try {
                            release.await(20, TimeUnit.SECONDS);
                        } catch (InterruptedException e) {
                            throw new AssertionError(e);
                        }
                        return LOOPBACK.lookup(host);
                    },
                    () -> run(2, () -> {
                        Object r;
                        try (Conn c = Net.dialTimeout("tcp", "slow.example:9", Duration.ofMillis(50))) {
                            r = c;
                        } catch (IOException e) {
                            r = e;
                        }
                        boolean before = release.getCount() == 1;
                        release.countDown();
                        check(before, "the lookup ended before the dial returned: %s", r);
                        check(
                                r instanceof DeadlineExceededException e
                                        && e.getMessage().equals("dial tcp: lookup slow.example: i/o timeout"),
                                "%s",
                                r);
                    }));
        } finally {
            release.countDown();
        }
    }

    /**
     * A host name with several addresses is listened on at its first IPv4 one, as Go's Listen and
     * ListenPacket ({@code addrs.first(isIPv4)}): {@code localhost} as {@code ::1} then {@code
     * 127.0.0.1} listens on {@code 127.0.0.1} (gort took the first, {@code ::1}). Net.resolveAddr
     * is Go's ResolveTCPAddr: the first IPv4 address, but the first IPv6 one for a bracketed host
     * ({@code [localhost]:80}); with only one family, that one.
     */
    @Test
    void aHostNameIsListenedOnAtItsFirstIPv4Address() {
        InetAddress v6 = InetAddress.ofLiteral("::1");
        InetAddress v4 = InetAddress.ofLiteral("127.0.0.1");
        withLookup(
                host -> host.equals("v6only") ? new InetAddress[] {v6} : new InetAddress[] {v6, v4},
                () -> run(1, () -> {
                    try (Listener ln = Net.listen("tcp", "localhost:0")) {
                        check(ln.addr().ip().equals(v4), "listen: %s", ln.addr());
                    }
                    try (Listener ln = new ListenConfig().listen(Context.background(), "tcp", "localhost:0")) {
                        check(ln.addr().ip().equals(v4), "ListenConfig.listen: %s", ln.addr());
                    }
                    try (PacketConn pc = Net.listenPacket("udp", "localhost:0")) {
                        check(pc.localAddr().ip().equals(v4), "listenPacket: %s", pc.localAddr());
                    }
                    assertEquals(new Addr("tcp", v4, 80), Net.resolveAddr("tcp", "localhost:80"));
                    assertEquals(new Addr("tcp", v6, 80), Net.resolveAddr("tcp", "[localhost]:80"));
                    assertEquals(new Addr("udp", v6, 53), Net.resolveAddr("udp", "[localhost]:53"));
                    assertEquals(new Addr("tcp", v6, 80), Net.resolveAddr("tcp", "v6only:80"));
                }));
    }

    /**
     * ctx does not affect what listen returned: canceled after, the listener still accepts and the
     * PacketConn still reads. A host name looked up under a live ctx (in a goroutine of its own)
     * gives its address.
     */
    @Test
    void theContextDoesNotAffectTheListener() {
        withLookup(
                LOOPBACK,
                () -> run(2, () -> {
                    CancelContext ctx = Context.withCancel(Context.background());
                    ListenConfig lc = new ListenConfig();
                    Listener ln = lc.listen(ctx, "tcp", "slow.example:0");
                    check(ln.addr().ip().equals(InetAddress.ofLiteral("127.0.0.1")), "listening on %s", ln.addr());
                    PacketConn pc = lc.listenPacket(ctx, "udp", "127.0.0.1:0");
                    ctx.cancel();

                    Chan<Conn> srv = Chan.make(1);
                    go(() -> srv.send(ln.accept()));
                    Conn c = Net.dial("tcp", ln.addr().toString());
                    Conn s = srv.recv();
                    s.write(bytes("hi"));
                    check(readN(c, 2).equals("hi"), "read through the accepted connection");

                    pc.writeTo(bytes("yo"), pc.localAddr());
                    byte[] b = new byte[8];
                    PacketConn.Packet p = pc.readFrom(b);
                    check(p.n() == 2 && b[0] == 'y', "datagram %s", p);
                    c.close();
                    s.close();
                    ln.close();
                    pc.close();
                }));
    }

    /** The accepted connection's SO_KEEPALIVE, TCP_KEEPIDLE, TCP_KEEPINTERVAL and TCP_KEEPCOUNT. */
    static List<Object> keepAliveOfAccepted(Listener ln) throws IOException {
        return keepAliveOf(ln, false);
    }

    /** [SO_KEEPALIVE, TCP_KEEPIDLE, TCP_KEEPINTERVAL, TCP_KEEPCOUNT] of the accepted or the dialed end. */
    static List<Object> keepAliveOf(Listener ln, boolean dialed) throws IOException {
        Chan<Conn> srv = Chan.make(1);
        go(() -> srv.send(ln.accept()));
        try (Conn c = Net.dial("tcp", ln.addr().toString());
                Conn s = srv.recv()) {
            java.nio.channels.SocketChannel ch = dialed ? c.channel() : s.channel();
            return List.of(
                    ch.getOption(StandardSocketOptions.SO_KEEPALIVE),
                    ch.getOption(ExtendedSocketOptions.TCP_KEEPIDLE),
                    ch.getOption(ExtendedSocketOptions.TCP_KEEPINTERVAL),
                    ch.getOption(ExtendedSocketOptions.TCP_KEEPCOUNT));
        } finally {
            ln.close();
        }
    }

    /**
     * Go's keep-alive on accepted connections: Listen's (a zero ListenConfig) and a zero KeepAlive
     * probe after 15 s idle, every 15 s, 9 times; a positive KeepAlive is the idle time, rounded
     * up to seconds; a negative one leaves keep-alives off. A listener keeps the period it was made
     * with. The dialing side has Go's zero Dialer's default, whatever the listener's: 15 s (a
     * Dialer's own KeepAlive is DialerTest's).
     */
    @Test
    void acceptedConnectionsHaveGosKeepAlive() throws IOException {
        try (java.nio.channels.SocketChannel probe = java.nio.channels.SocketChannel.open()) {
            Assumptions.assumeTrue(
                    probe.supportedOptions().contains(ExtendedSocketOptions.TCP_KEEPIDLE),
                    "TCP_KEEPIDLE (Linux, macOS)");
        }
        run(1, () -> {
            List<Object> dflt = List.of(true, 15, 15, 9);
            List<Object> got = keepAliveOfAccepted(Net.listen("tcp", "127.0.0.1:0"));
            check(got.equals(dflt), "Net.listen: %s", got);
            got = keepAliveOfAccepted(new ListenConfig().listen(Context.background(), "tcp", "127.0.0.1:0"));
            check(got.equals(dflt), "zero ListenConfig: %s", got);
            got = keepAliveOfAccepted(new ListenConfig()
                    .setKeepAlive(Duration.ofSeconds(30))
                    .listen(Context.background(), "tcp", "127.0.0.1:0"));
            check(got.equals(List.of(true, 30, 15, 9)), "30 s: %s", got);
            got = keepAliveOfAccepted(new ListenConfig()
                    .setKeepAlive(Duration.ofMillis(1500))
                    .listen(Context.background(), "tcp", "127.0.0.1:0"));
            check(got.equals(List.of(true, 2, 15, 9)), "1.5 s rounds up: %s", got);
            got = keepAliveOfAccepted(new ListenConfig()
                    .setKeepAlive(Duration.ofSeconds(-1))
                    .listen(Context.background(), "tcp", "127.0.0.1:0"));
            check(got.get(0).equals(false), "negative: off: %s", got);

            ListenConfig lc = new ListenConfig().setKeepAlive(Duration.ofSeconds(40));
            Listener ln = lc.listen(Context.background(), "tcp", "127.0.0.1:0");
            lc.setKeepAlive(Duration.ofSeconds(-1));
            got = keepAliveOfAccepted(ln);
            check(got.equals(List.of(true, 40, 15, 9)), "the listener's own period: %s", got);

            got = keepAliveOf(Net.listen("tcp", "127.0.0.1:0"), true);
            check(got.equals(dflt), "Net.dial: %s", got);
            got = keepAliveOf(
                    new ListenConfig()
                            .setKeepAlive(Duration.ofSeconds(-1))
                            .listen(Context.background(), "tcp", "127.0.0.1:0"),
                    true);
            check(got.equals(dflt), "Net.dial to a listener without keep-alives: %s", got);
        });
    }

    /**
     * An idle time the kernel refuses (Linux: above 32767 s) ends the keep-alive configuration
     * there, as Go's SetKeepAliveConfig returns at its first error (and newTCPConn ignores it):
     * keep-alive on, the interval and count left the system's, not Go's 15 s and 9 set after a
     * failed idle time.
     */
    @Test
    void aRefusedIdleTimeEndsTheKeepAliveConfigurationThere() throws IOException {
        try (java.nio.channels.SocketChannel probe = java.nio.channels.SocketChannel.open()) {
            Assumptions.assumeTrue(
                    probe.supportedOptions().contains(ExtendedSocketOptions.TCP_KEEPIDLE),
                    "TCP_KEEPIDLE (Linux, macOS)");
        }
        run(1, () -> {
            List<Object> system = keepAliveOfAccepted(new ListenConfig()
                    .setKeepAlive(Duration.ofSeconds(-1))
                    .listen(Context.background(), "tcp", "127.0.0.1:0"));
            List<Object> got = keepAliveOfAccepted(new ListenConfig()
                    .setKeepAlive(Duration.ofDays(1))
                    .listen(Context.background(), "tcp", "127.0.0.1:0"));
            if (!got.get(1).equals(86400)) { // refused (Linux); a kernel that takes it has nothing to check
                check(got.equals(List.of(true, system.get(1), system.get(2), system.get(3))), "1 day: %s", got);
            }
        });
    }

    /** From a plain thread: the outside-a-goroutine error names the call. */
    @Test
    void outsideAGoroutineTheErrorNamesTheCall() {
        IllegalStateException e = assertThrows(
                IllegalStateException.class,
                () -> new ListenConfig().listen(Context.background(), "tcp", "127.0.0.1:0"));
        assertEquals("gort: ListenConfig.listen called outside a goroutine (use Go.run / Go.go)", e.getMessage());
    }
}
