package dev.gort.net;

import static dev.gort.GortTesting.check;
import static dev.gort.net.ListenConfigTest.withLookup;
import static dev.gort.net.NetTest.go;
import static dev.gort.net.NetTest.run;
import static dev.gort.net.NetTest.waitFor;
import static dev.gort.net.NetTest.waiters;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.gort.Chan;
import dev.gort.Time;
import dev.gort.context.CancelContext;
import dev.gort.context.Context;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.channels.ServerSocketChannel;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import jdk.net.ExtendedSocketOptions;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * Go's net.Dialer: Timeout, Deadline and the context's deadline (the earliest wins), LocalAddr,
 * KeepAlive, and the serial dial of a host name's addresses with a share of the deadline each
 * (net/dial_test.go TestDialerPartialDeadline, TestDialerLocalAddr, TestDialerKeepAlive). Loopback
 * only; a connect that hangs is one to a listener whose backlog is full (its SYNs dropped), as in
 * {@link NetTest#dialTimeout}; a host name's addresses are the test's own ({@link
 * Net#testHookLookupIP}).
 */
class DialerTest {
    static final InetAddress LOOPBACK4 = InetAddress.ofLiteral("127.0.0.1");
    static final InetAddress LOOPBACK6 = InetAddress.ofLiteral("::1");

    /**
     * A listener on ip (port 0: a free one) whose backlog is full, so that a dial to it hangs
     * until its deadline: dials of 200 ms fill it until one times out.
     */
    static final class Blackhole implements AutoCloseable {
        final ServerSocketChannel ch;
        final int port;
        final String addr;
        private final List<Conn> filled = new ArrayList<>();

        Blackhole(String ip, int port) throws IOException {
            ch = ServerSocketChannel.open();
            ch.bind(new InetSocketAddress(ip, port), 1);
            this.port = ((InetSocketAddress) ch.getLocalAddress()).getPort();
            addr = Net.joinHostPort(ip, Integer.toString(this.port));
            for (int i = 0; ; i++) {
                check(i < 16, "the backlog of %s never filled", addr);
                try {
                    filled.add(Net.dialTimeout("tcp", addr, Duration.ofMillis(200)));
                } catch (DeadlineExceededException e) {
                    return; // full: the SYNs after this one are dropped too
                }
            }
        }

        @Override
        public void close() throws IOException {
            for (Conn c : filled) {
                c.close();
            }
            ch.close();
        }
    }

    /** A port nothing listens on (a listener's, closed). */
    static int closedPort() throws IOException {
        try (Listener ln = Net.listen("tcp", "127.0.0.1:0")) {
            return ln.addr().port();
        }
    }

    /** Accepts one connection of ln into the channel returned. */
    static Chan<Conn> acceptOne(Listener ln) {
        Chan<Conn> srv = Chan.make(1);
        go(() -> srv.send(ln.accept()));
        return srv;
    }

    /** Whether this host has IPv6 loopback (a tcp6 listener on [::1]). */
    static boolean hasIPv6() {
        try (java.nio.channels.ServerSocketChannel s = java.nio.channels.ServerSocketChannel.open()) {
            s.bind(new InetSocketAddress(LOOPBACK6, 0));
            return true;
        } catch (IOException | UnsupportedOperationException e) {
            return false;
        }
    }

    /** Whether 127.0.0.2 is a local address here (Linux: all of 127/8 is). */
    static boolean has127002() {
        try (java.nio.channels.ServerSocketChannel s = java.nio.channels.ServerSocketChannel.open()) {
            s.bind(new InetSocketAddress("127.0.0.2", 0));
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    /** Go: TestDialerPartialDeadline's table (its zero-deadline row is the caller's: no deadline, no share). */
    @Test
    void partialDeadlineSharesTheTimeLeftAtLeastTwoSecondsEach() {
        Instant now = Instant.parse("2000-01-01T00:00:00Z");
        Object[][] cases = {
            // now, deadline, addrs, expected deadline (null: no time left, Go's errTimeout)
            {now, now.plusSeconds(12), 1, now.plusSeconds(12)}, // regular division
            {now, now.plusSeconds(12), 2, now.plusSeconds(6)},
            {now, now.plusSeconds(12), 3, now.plusSeconds(4)},
            {now, now.plusSeconds(12), 999, now.plusSeconds(2)}, // the 2 s sane minimum
            {now, now.plusMillis(1900), 999, now.plusMillis(1900)}, // less than that left: all of it
            {now.minusMillis(1), now, 1, now}, // the clock steps past the deadline
            {now, now, 1, null},
            {now.plusMillis(1), now, 1, null},
        };
        for (Object[] c : cases) {
            Instant got = Dialer.partialDeadline((Instant) c[0], (Instant) c[1], (Integer) c[2]);
            assertEquals(c[3], got, () -> "partialDeadline(" + c[0] + ", " + c[1] + ", " + c[2] + ")");
        }
    }

    /**
     * Go's Dialer.deadline: the earliest of now plus Timeout (any nonzero one, a negative one
     * included), Deadline and ctx's deadline; none set, none.
     */
    @Test
    void theDialsDeadlineIsTheEarliestOfTimeoutDeadlineAndTheContexts() {
        run(1, () -> {
            Instant now = Time.now();
            Context none = Context.background();
            CancelContext in20 = Context.withDeadline(none, now.plusSeconds(20));
            CancelContext in3 = Context.withDeadline(none, now.plusSeconds(3));
            Dialer d = new Dialer();
            check(d.deadline(none, now) == null, "a zero Dialer: none");
            check(d.deadline(in3, now).equals(now.plusSeconds(3)), "ctx's alone");
            d.setTimeout(Duration.ofSeconds(10));
            check(d.deadline(none, now).equals(now.plusSeconds(10)), "the timeout alone");
            check(d.deadline(in20, now).equals(now.plusSeconds(10)), "the timeout before ctx's");
            check(d.deadline(in3, now).equals(now.plusSeconds(3)), "ctx's before the timeout");
            d.setDeadline(now.plusSeconds(5));
            check(d.deadline(in20, now).equals(now.plusSeconds(5)), "the deadline before the timeout and ctx's");
            check(d.deadline(in3, now).equals(now.plusSeconds(3)), "ctx's before the deadline");
            d.setTimeout(Duration.ofSeconds(-1));
            check(d.deadline(in20, now).equals(now.minusSeconds(1)), "a negative timeout: past");
            d.setTimeout(Duration.ZERO);
            check(d.deadline(none, now).equals(now.plusSeconds(5)), "the deadline alone");
            in20.cancel();
            in3.cancel();
        });
    }

    /**
     * Whichever of Timeout, Deadline and ctx's deadline has passed fails the dial at once, the
     * others far off, with Go's {@code dial tcp ADDR: i/o timeout} (a DeadlineExceededException;
     * the Go 1.19 twin says the same for each), to a listener that would take the connection; none
     * passed, it connects.
     */
    @Test
    void aDeadlineThatHasPassedFailsTheDialWhateverTheOthers() {
        run(1, () -> {
            Listener ln = Net.listen("tcp", "127.0.0.1:0");
            String addr = ln.addr().toString();
            String want = "dial tcp " + addr + ": i/o timeout";
            Duration hour = Duration.ofHours(1);
            Instant inAnHour = Time.now().plus(hour);

            DeadlineExceededException e = assertThrows(
                    DeadlineExceededException.class,
                    () -> new Dialer()
                            .setDeadline(Time.now().minusSeconds(1))
                            .setTimeout(hour)
                            .dial("tcp", addr));
            check(e.getMessage().equals(want) && e.timeout(), "a past Deadline, a long Timeout: %s", e);

            e = assertThrows(
                    DeadlineExceededException.class,
                    () -> new Dialer()
                            .setTimeout(Duration.ofSeconds(-1))
                            .setDeadline(inAnHour)
                            .dial("tcp", addr));
            check(e.getMessage().equals(want), "a negative Timeout, a far Deadline: %s", e);

            CancelContext past =
                    Context.withDeadline(Context.background(), Time.now().minusSeconds(1));
            e = assertThrows(
                    DeadlineExceededException.class,
                    () -> new Dialer().setTimeout(hour).setDeadline(inAnHour).dialContext(past, "tcp", addr));
            check(
                    e.getMessage().equals(want) && e.getCause() == Context.DEADLINE_EXCEEDED,
                    "ctx past its deadline: %s",
                    e);

            Chan<Conn> srv = acceptOne(ln);
            try (Conn c = new Dialer().setTimeout(hour).setDeadline(inAnHour).dial("tcp", addr);
                    Conn s = srv.recv()) {
                check(c.remoteAddr().equals(s.localAddr()), "connected: %s", c);
            }
            ln.close();
        });
    }

    /**
     * A Deadline earlier than the Timeout ends a connect in progress (one that hangs): {@code dial
     * tcp ADDR: i/o timeout}, not before the deadline, and no waiter is left on the poller.
     */
    @Test
    void theDeadlineEndsAConnectInProgress() {
        run(1, () -> {
            try (Blackhole bh = new Blackhole("127.0.0.1", 0)) {
                Instant deadline = Instant.now().plusMillis(200);
                DeadlineExceededException e = assertThrows(
                        DeadlineExceededException.class,
                        () -> new Dialer()
                                .setTimeout(Duration.ofHours(1))
                                .setDeadline(deadline)
                                .dial("tcp", bh.addr));
                check(!Instant.now().isBefore(deadline), "failed before its deadline: %s", e);
                check(e.getMessage().equals("dial tcp " + bh.addr + ": i/o timeout"), "%s", e);
                check(waiters() == 0, "no waiter left");
            }
        });
    }

    /**
     * ctx canceled while the dial waits in its connect ends it ({@code operation was canceled},
     * ctx's error the cause), and with a LocalAddr the error names it as the source, as Go's
     * dialSingle's OpError does: {@code dial tcp 127.0.0.1:0->ADDR: operation was canceled}.
     */
    @Test
    void aCanceledContextEndsTheConnectAndTheErrorNamesTheLocalAddr() {
        run(1, () -> {
            try (Blackhole bh = new Blackhole("127.0.0.1", 0)) {
                CancelContext ctx = Context.withCancel(Context.background());
                Chan<Object> got = Chan.make(1);
                Dialer d = new Dialer().setLocalAddr(new Addr("tcp", LOOPBACK4, 0));
                go(() -> {
                    try {
                        got.send(d.dialContext(ctx, "tcp", bh.addr));
                    } catch (IOException e) {
                        got.send(e);
                    }
                });
                waitFor("the dial to park", () -> waiters() == 1);
                ctx.cancel();
                Object r = got.recv();
                check(
                        r instanceof OpError e
                                && !e.timeout()
                                && e.getMessage()
                                        .equals("dial tcp 127.0.0.1:0->" + bh.addr + ": operation was canceled")
                                && e.getCause() == Context.CANCELED
                                && e.source().equals(d.localAddr()),
                        "canceled: %s",
                        r);
                check(waiters() == 0, "no waiter left");
            }
        });
    }

    /**
     * LocalAddr is bound before the connect: the server sees the connection come from it (a port
     * chosen by the test; port 0 is any free one, on the IP asked); an IPv4 LocalAddr without an IP
     * is the wildcard. Go's twin: {@code laddr port: ok 127.0.0.1:40123->...}.
     */
    @Test
    void theConnectionComesFromTheLocalAddr() {
        run(1, () -> {
            Listener ln = Net.listen("tcp", "127.0.0.1:0");
            Addr local = new Addr("tcp", LOOPBACK4, closedPort());
            Chan<Conn> srv = acceptOne(ln);
            try (Conn c = new Dialer().setLocalAddr(local).dial("tcp", ln.addr().toString());
                    Conn s = srv.recv()) {
                check(s.remoteAddr().equals(local), "the server sees %s, not %s", s.remoteAddr(), local);
                check(c.localAddr().equals(local), "localAddr %s", c.localAddr());
            }
            srv = acceptOne(ln);
            try (Conn c = new Dialer()
                            .setLocalAddr(new Addr("tcp", null, 0))
                            .dial("tcp", ln.addr().toString());
                    Conn s = srv.recv()) {
                check(s.remoteAddr().equals(c.localAddr()), "any port: %s %s", s.remoteAddr(), c.localAddr());
            }
            ln.close();
        });
    }

    /**
     * The errors of a LocalAddr, as the Go 1.19 twin words them: a udp address for a tcp dial
     * ({@code dial tcp: address 127.0.0.1:5000: mismatched local address type}), an IPv6 one for an
     * IPv4 address ({@code no suitable address found}), {@code ::} for tcp4 ({@code dial tcp4
     * [::]:0->ADDR: address ::: non-IPv4 address}), an address not this host's ({@code bind: cannot
     * assign requested address}); and a dial's own errors name it as their source ({@code dial tcp
     * 127.0.0.1:0->127.0.0.1:P: connect: connection refused}).
     */
    @Test
    void aLocalAddrsErrorsAreGos() {
        run(1, () -> {
            Listener ln = Net.listen("tcp4", "127.0.0.1:0");
            String addr = ln.addr().toString();
            Object[][] cases = {
                {
                    "tcp",
                    new Addr("udp", LOOPBACK4, 5000),
                    "dial tcp: address 127.0.0.1:5000: mismatched local address type"
                },
                {"tcp", new Addr("tcp", LOOPBACK6, 0), "dial tcp: address [::1]:0: no suitable address found"},
                {
                    "tcp4",
                    new Addr("tcp", InetAddress.ofLiteral("::"), 0),
                    "dial tcp4 [::]:0->" + addr + ": address ::: non-IPv4 address"
                },
                {
                    "tcp",
                    new Addr("tcp", InetAddress.ofLiteral("10.1.2.3"), 0),
                    "dial tcp 10.1.2.3:0->" + addr + ": bind: cannot assign requested address"
                },
            };
            for (Object[] c : cases) {
                OpError e = assertThrows(
                        OpError.class,
                        () -> new Dialer().setLocalAddr((Addr) c[1]).dial((String) c[0], addr));
                check(e.getMessage().equals(c[2]), "LocalAddr %s: %s", c[1], e);
            }
            int closed = closedPort();
            OpError e = assertThrows(
                    OpError.class,
                    () -> new Dialer()
                            .setLocalAddr(new Addr("tcp", LOOPBACK4, 0))
                            .dial("tcp", "127.0.0.1:" + closed));
            check(
                    e.getMessage()
                            .equals("dial tcp 127.0.0.1:0->127.0.0.1:" + closed + ": connect: connection refused"),
                    "%s",
                    e);
            check(waiters() == 0, "no waiter left");
            ln.close();
        });
    }

    /**
     * Go: TestDialerLocalAddr's table: which LocalAddrs a dial of tcp4, tcp6 and tcp to 127.0.0.1
     * and ::1 takes (a wildcard with either family; an IP of the family dialed) and which fail (the
     * other family's IP; a udp address; {@code ::} for tcp4). The rows to ::1 need IPv6 loopback.
     */
    @Test
    void theLocalAddrsADialTakesAreGos() {
        boolean v6 = hasIPv6();
        run(1, () -> {
            Listener ln4 = Net.listen("tcp4", "127.0.0.1:0");
            Listener ln6 = v6 ? Net.listen("tcp6", "[::1]:0") : null;
            go(() -> acceptAndClose(ln4));
            if (v6) {
                go(() -> acceptAndClose(ln6));
            }
            InetAddress any4 = InetAddress.ofLiteral("0.0.0.0");
            InetAddress any6 = InetAddress.ofLiteral("::");
            Addr none = null;
            Addr tcpZero = new Addr("tcp", null, 0);
            Addr udpZero = new Addr("udp", null, 0);
            Object[][] rows = {
                // network, raddr, laddr, ok
                {"tcp4", LOOPBACK4, none, true},
                {"tcp4", LOOPBACK4, tcpZero, true},
                {"tcp4", LOOPBACK4, new Addr("tcp", any4, 0), true},
                {"tcp4", LOOPBACK4, new Addr("tcp", any6, 0), false},
                {"tcp4", LOOPBACK4, new Addr("tcp", LOOPBACK4, 0), true},
                {"tcp4", LOOPBACK4, new Addr("tcp", LOOPBACK6, 0), false},
                {"tcp4", LOOPBACK4, udpZero, false},
                {"tcp6", LOOPBACK6, none, true},
                {"tcp6", LOOPBACK6, tcpZero, true},
                {"tcp6", LOOPBACK6, new Addr("tcp", any4, 0), true},
                {"tcp6", LOOPBACK6, new Addr("tcp", any6, 0), true},
                {"tcp6", LOOPBACK6, new Addr("tcp", LOOPBACK4, 0), false},
                {"tcp6", LOOPBACK6, new Addr("tcp", LOOPBACK6, 0), true},
                {"tcp6", LOOPBACK6, udpZero, false},
                {"tcp", LOOPBACK4, none, true},
                {"tcp", LOOPBACK4, tcpZero, true},
                {"tcp", LOOPBACK4, new Addr("tcp", any4, 0), true},
                {"tcp", LOOPBACK4, new Addr("tcp", LOOPBACK4, 0), true},
                {"tcp", LOOPBACK4, new Addr("tcp", LOOPBACK6, 0), false},
                {"tcp", LOOPBACK4, udpZero, false},
                {"tcp", LOOPBACK4, new Addr("tcp", any6, 0), v6}, // Go: where IPv4 maps into IPv6
                {"tcp", LOOPBACK6, none, true},
                {"tcp", LOOPBACK6, tcpZero, true},
                {"tcp", LOOPBACK6, new Addr("tcp", any4, 0), true},
                {"tcp", LOOPBACK6, new Addr("tcp", any6, 0), true},
                {"tcp", LOOPBACK6, new Addr("tcp", LOOPBACK4, 0), false},
                {"tcp", LOOPBACK6, new Addr("tcp", LOOPBACK6, 0), true},
                {"tcp", LOOPBACK6, udpZero, false},
            };
            for (Object[] r : rows) {
                if (r[1] == LOOPBACK6 && !v6) {
                    continue;
                }
                Listener ln = r[1] == LOOPBACK6 ? ln6 : ln4;
                String desc = r[0] + " " + r[2] + "->" + ln.addr();
                try (Conn c = new Dialer()
                        .setLocalAddr((Addr) r[2])
                        .dial((String) r[0], ln.addr().toString())) {
                    check((Boolean) r[3], "%s: connected %s, want an error", desc, c);
                } catch (OpError e) {
                    check(!(Boolean) r[3], "%s: %s", desc, e);
                    check(e.op().equals("dial") && e.net().equals(r[0]), "%s: %s", desc, e);
                }
            }
            ln4.close();
            if (v6) {
                ln6.close();
            }
        });
    }

    private static void acceptAndClose(Listener ln) throws IOException {
        for (; ; ) {
            Conn c;
            try {
                c = ln.accept();
            } catch (OpError e) {
                return; // closed
            }
            c.close();
        }
    }

    /** [SO_KEEPALIVE, TCP_KEEPIDLE, TCP_KEEPINTERVAL, TCP_KEEPCOUNT] of a connection d dials. */
    static List<Object> keepAliveOfDialed(Dialer d, Listener ln) throws IOException {
        Chan<Conn> srv = acceptOne(ln);
        try (Conn c = d.dial("tcp", ln.addr().toString());
                Conn s = srv.recv()) {
            java.nio.channels.SocketChannel ch = c.channel();
            if (!ch.getOption(StandardSocketOptions.SO_KEEPALIVE)) {
                return List.of(false);
            }
            return List.of(
                    true,
                    ch.getOption(ExtendedSocketOptions.TCP_KEEPIDLE),
                    ch.getOption(ExtendedSocketOptions.TCP_KEEPINTERVAL),
                    ch.getOption(ExtendedSocketOptions.TCP_KEEPCOUNT));
        }
    }

    /**
     * Go: TestDialerKeepAlive: KeepAlive -1 leaves keep-alives off (SO_KEEPALIVE false); 0 is Go's
     * default, probes after 15 s idle, every 15 s, 9 of them; 5 s and 30 s are the idle time. A
     * Dialer's setting is the dialing side's only (the listener's keep-alive is its own).
     */
    @Test
    void keepAliveNegativeIsOffZeroIsGosDefaultPositiveIsTheIdleTime() throws IOException {
        try (java.nio.channels.SocketChannel probe = java.nio.channels.SocketChannel.open()) {
            Assumptions.assumeTrue(
                    probe.supportedOptions().contains(ExtendedSocketOptions.TCP_KEEPIDLE),
                    "TCP_KEEPIDLE (Linux, macOS)");
        }
        run(1, () -> {
            Listener ln = new ListenConfig()
                    .setKeepAlive(Duration.ofSeconds(-1))
                    .listen(Context.background(), "tcp", "127.0.0.1:0");
            List<Object> got = keepAliveOfDialed(new Dialer().setKeepAlive(Duration.ofSeconds(-1)), ln);
            check(got.equals(List.of(false)), "-1: off: %s", got);
            got = keepAliveOfDialed(new Dialer(), ln);
            check(got.equals(List.of(true, 15, 15, 9)), "0: Go's default: %s", got);
            got = keepAliveOfDialed(new Dialer().setKeepAlive(Duration.ofSeconds(5)), ln);
            check(got.equals(List.of(true, 5, 15, 9)), "5 s: %s", got);
            got = keepAliveOfDialed(new Dialer().setKeepAlive(Duration.ofSeconds(30)), ln);
            check(got.equals(List.of(true, 30, 15, 9)), "30 s: %s", got);
            ln.close();
        });
    }

    /**
     * A host name with several addresses is dialed at each in turn until one connects (Go's
     * dialSerial): {@code localhost} resolving to {@code ::1} then {@code 127.0.0.1}, with a server
     * on IPv4 only, connects to {@code 127.0.0.1} (gort dialed the first address only and failed,
     * {@code connection refused}); Net.dial is a zero Dialer's dial and does the same. Where none
     * connects, the error is the first address's.
     */
    @Test
    void aHostNamesAddressesAreDialedInTurn() {
        withLookup(
                host -> new InetAddress[] {LOOPBACK6, LOOPBACK4},
                () -> run(1, () -> {
                    Listener ln = Net.listen("tcp4", "127.0.0.1:0");
                    String port = Integer.toString(ln.addr().port());
                    Chan<Conn> srv = acceptOne(ln);
                    try (Conn c = new Dialer().dial("tcp", "localhost:" + port);
                            Conn s = srv.recv()) {
                        check(c.remoteAddr().equals(ln.addr()), "connected to %s", c.remoteAddr());
                        check(s.remoteAddr().equals(c.localAddr()), "the server's peer %s", s.remoteAddr());
                    }
                    srv = acceptOne(ln);
                    try (Conn c = Net.dial("tcp", "localhost:" + port);
                            Conn s = srv.recv()) {
                        check(c.remoteAddr().equals(ln.addr()), "Net.dial connected to %s", c.remoteAddr());
                    }
                    ln.close();

                    OpError e = assertThrows(OpError.class, () -> Net.dial("tcp", "localhost:" + port));
                    check(e.getMessage().startsWith("dial tcp [::1]:" + port + ": "), "the first address's: %s", e);
                    e = assertThrows(OpError.class, () -> Net.dial("tcp4", "localhost:" + port));
                    check(
                            e.getMessage().equals("dial tcp4 127.0.0.1:" + port + ": connect: connection refused"),
                            "tcp4 dials the IPv4 one only: %s",
                            e);
                    check(waiters() == 0, "no waiter left");
                }));
    }

    /**
     * With a deadline, each of a host name's addresses gets its share of the time left, at least 2
     * s (Go's partialDeadline): with a 3 s timeout, a first address that does not answer is given
     * up after 2 s and the second, which answers, connects in the second left. The whole 3 s went
     * to the first before, and the dial failed ({@code i/o timeout}).
     */
    @Test
    void eachAddressHasItsShareOfTheTimeout() {
        Assumptions.assumeTrue(has127002(), "127.0.0.2 is a loopback address (Linux)");
        withLookup(
                host -> new InetAddress[] {InetAddress.ofLiteral("127.0.0.2"), LOOPBACK4},
                () -> run(2, () -> {
                    try (Blackhole bh = new Blackhole("127.0.0.2", 0);
                            Listener ln = Net.listen("tcp", "127.0.0.1:" + bh.port)) {
                        Chan<Conn> srv = acceptOne(ln);
                        long t0 = System.nanoTime();
                        try (Conn c = new Dialer()
                                        .setTimeout(Duration.ofSeconds(3))
                                        .dial("tcp", "slowfast.test:" + bh.port);
                                Conn s = srv.recv()) {
                            long waited = System.nanoTime() - t0;
                            check(c.remoteAddr().equals(ln.addr()), "connected to %s", c.remoteAddr());
                            check(
                                    waited >= Duration.ofMillis(1900).toNanos(),
                                    "the first address was given up after %d ms, before its 2 s",
                                    waited / 1_000_000);
                        }
                    }
                }));
    }

    /**
     * In a synctest bubble the Deadline is read against the bubble's clock, as ctx's is, and the
     * Timeout counts from the bubble's now (Go's time.Now there): a Deadline an hour past the fake
     * clock's now dials (against the wall clock, 2000-01-01 is long past), the fake now itself has
     * passed; a negative Timeout has passed (from the wall clock's now it was 26 years ahead of the
     * fake clock, and the dial connected).
     */
    @Test
    void theDeadlineAndTimeoutAreReadOnTheBubblesClock() {
        run(1, () -> {
            Listener ln = Net.listen("tcp", "127.0.0.1:0");
            String addr = ln.addr().toString();
            SynctestNetTest.bubble(() -> {
                check(Time.now().equals(SynctestNetTest.EPOCH), "in a bubble");
                new Dialer()
                        .setDeadline(Time.now().plusSeconds(3600))
                        .dial("tcp", addr)
                        .close();
                DeadlineExceededException e = assertThrows(
                        DeadlineExceededException.class,
                        () -> new Dialer().setDeadline(Time.now()).dial("tcp", addr));
                check(e.getMessage().equals("dial tcp " + addr + ": i/o timeout"), "%s", e);
                e = assertThrows(
                        DeadlineExceededException.class,
                        () -> new Dialer().setTimeout(Duration.ofSeconds(-1)).dial("tcp", addr));
                check(e.getMessage().equals("dial tcp " + addr + ": i/o timeout"), "negative Timeout: %s", e);
            });
            ln.close();
        });
    }

    /** From a plain thread: the outside-a-goroutine error names the call; a nil context is Go's panic. */
    @Test
    void outsideAGoroutineTheErrorNamesTheCall() {
        IllegalStateException e =
                assertThrows(IllegalStateException.class, () -> new Dialer().dial("tcp", "127.0.0.1:1"));
        assertEquals("gort: Dialer.dial called outside a goroutine (use Go.run / Go.go)", e.getMessage());
        e = assertThrows(
                IllegalStateException.class,
                () -> new Dialer().dialContext(Context.background(), "tcp", "127.0.0.1:1"));
        assertEquals("gort: Dialer.dialContext called outside a goroutine (use Go.run / Go.go)", e.getMessage());
        NullPointerException n =
                assertThrows(NullPointerException.class, () -> new Dialer().dialContext(null, "tcp", "127.0.0.1:1"));
        assertEquals("nil context", n.getMessage());
    }
}
