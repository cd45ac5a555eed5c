package dev.gort.net;

import static dev.gort.GortTesting.check;
import static dev.gort.net.NetTest.bytes;
import static dev.gort.net.NetTest.go;
import static dev.gort.net.NetTest.readN;
import static dev.gort.net.NetTest.run;
import static dev.gort.net.NetTest.waitFor;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.gort.Chan;
import dev.gort.GortTesting;
import dev.gort.Synctest;
import dev.gort.Time;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * Network deadlines inside a synctest bubble, Go's rule (internal/poll setDeadlineImpl, runtime
 * netpoll.go poll_runtime_pollSetDeadline, time.go): a deadline is read against the clock of the
 * goroutine that sets it ({@code time.Until(t)}: the bubble's fake clock inside a bubble, the wall
 * clock outside), and the duration it gives then passes on the runtime's real clock, because a poll
 * descriptor's timers are never a bubble's (Go's {@code pd.rt.init}, not {@code newTimer}: no
 * {@code isFake}). A goroutine blocked on the network is not durably blocked, so the fake clock
 * does not move while it waits. Loopback only; each deadline that must pass is 100 ms of real time.
 *
 * <p>The lower bounds on real time below ({@code waited >= d}) are the rule itself (a timer never
 * runs before its when), never an ordering by sleeping: load can only make them longer.
 */
class SynctestNetTest {
    static final Instant EPOCH = Instant.parse("2000-01-01T00:00:00Z");
    /** The real time a deadline that must pass is set to: 100 ms. */
    static final long D = 100 * Time.MILLISECOND;

    /** Runs body as a synctest bubble's main goroutine (from a goroutine: the caller is the root). */
    static void bubble(NetTest.IoBody body) {
        Synctest.test(NetTest.unchecked(body));
    }

    /** A connected pair on loopback: {client, server}; the listener is closed. */
    static Conn[] pair() throws IOException {
        Listener ln = Net.listen("tcp", "127.0.0.1:0");
        Chan<Conn> srv = Chan.make(1);
        go(() -> srv.send(ln.accept()));
        Conn c = Net.dial("tcp", ln.addr().toString());
        Conn s = srv.recv();
        ln.close();
        return new Conn[] {c, s};
    }

    /**
     * {@code Time.now().plusSeconds(5)} inside a bubble is 5 s ahead on the bubble's clock (gort
     * read it against the wall clock: 26 years in the past, so every such deadline failed the I/O
     * at once); a past or present one (fake) fails at once even with data waiting; clearing one
     * restores I/O; the same for a listener's and a packet conn's deadlines. No clock moves.
     */
    @Test
    void aDeadlineInABubbleIsReadAgainstTheBubblesClock() {
        run(
                2,
                () -> bubble(() -> {
                    Conn[] p = pair();
                    Conn c = p[0];
                    Conn s = p[1];
                    s.write(bytes("xy"));
                    c.setReadDeadline(Time.now().plusSeconds(5));
                    check(readN(c, 1).equals("x"), "a read before its deadline (5 s ahead, fake) reads");
                    c.setWriteDeadline(Time.now().plusSeconds(5));
                    c.write(bytes("w"));
                    check(readN(s, 1).equals("w"), "a write before its deadline writes");

                    c.setReadDeadline(Time.now().minusNanos(1)); // just past, on the bubble's clock
                    DeadlineExceededException e =
                            assertThrows(DeadlineExceededException.class, () -> c.read(new byte[1]));
                    check(
                            e.getMessage()
                                    .equals("read tcp " + c.localAddr() + "->" + c.remoteAddr() + ": i/o timeout"),
                            "%s",
                            e);
                    c.setReadDeadline(Time.now()); // now is expired too (Go: d == 0 becomes -1)
                    assertThrows(DeadlineExceededException.class, () -> c.read(new byte[1]));
                    c.setDeadline(null);
                    check(readN(c, 1).equals("y"), "cleared: the byte that waited is read");

                    Listener ln = Net.listen("tcp", "127.0.0.1:0");
                    ln.setDeadline(Time.now().plusSeconds(5));
                    go(() -> Net.dial("tcp", ln.addr().toString()).close());
                    ln.accept().close();
                    ln.setDeadline(Time.now().minusSeconds(1));
                    assertThrows(DeadlineExceededException.class, ln::accept);
                    ln.close();

                    PacketConn a = Net.listenPacket("udp", "127.0.0.1:0");
                    PacketConn b = Net.listenPacket("udp", "127.0.0.1:0");
                    a.setDeadline(Time.now().plusSeconds(5));
                    a.writeTo(bytes("ping"), b.localAddr());
                    byte[] buf = new byte[16];
                    b.setReadDeadline(Time.now().plusSeconds(5));
                    check(b.readFrom(buf).n() == 4, "a datagram read before its deadline");
                    a.close();
                    b.close();
                    c.close();
                    s.close();
                    check(Time.now().equals(EPOCH), "no fake clock moved: %s", Time.now());
                }));
    }

    /**
     * A deadline set in a bubble on a peer that never writes: the read parks and fails with
     * {@code i/o timeout} once the duration has passed in real time, as in Go; the bubble's clock
     * has not moved (the reader was not durably blocked, so another goroutine's hour of sleep could
     * not pass meanwhile); then, with everyone durably blocked, it does.
     */
    @Test
    void aDeadlineSetInABubblePassesInRealTimeAndMovesNoFakeClock() {
        run(
                2,
                () -> bubble(() -> {
                    Chan<String> slept = Chan.make(1);
                    go(() -> {
                        Time.sleep(Duration.ofHours(1));
                        slept.send("slept to " + Time.now());
                    });
                    Conn[] p = pair();
                    Conn c = p[0];
                    long t0 = System.nanoTime();
                    c.setReadDeadline(Time.now().plusNanos(D));
                    DeadlineExceededException e =
                            assertThrows(DeadlineExceededException.class, () -> c.read(new byte[1]));
                    long waited = System.nanoTime() - t0;
                    check(e.getMessage().endsWith(": i/o timeout"), "%s", e);
                    check(
                            waited >= D,
                            "the read timed out after %d ns, before its deadline (%d ns of real time)",
                            waited,
                            D);
                    check(Time.now().equals(EPOCH), "the fake clock moved while the reader waited: %s", Time.now());

                    Listener ln = Net.listen("tcp", "127.0.0.1:0");
                    t0 = System.nanoTime();
                    ln.setDeadline(Time.now().plusNanos(D));
                    assertThrows(DeadlineExceededException.class, ln::accept);
                    waited = System.nanoTime() - t0;
                    check(waited >= D, "the accept timed out after %d ns, before its deadline", waited);
                    ln.close();

                    PacketConn u = Net.listenPacket("udp", "127.0.0.1:0");
                    t0 = System.nanoTime();
                    u.setReadDeadline(Time.now().plusNanos(D));
                    assertThrows(DeadlineExceededException.class, () -> u.readFrom(new byte[4]));
                    waited = System.nanoTime() - t0;
                    check(waited >= D, "the datagram read timed out after %d ns, before its deadline", waited);
                    u.close();
                    check(Time.now().equals(EPOCH), "the fake clock moved: %s", Time.now());

                    c.close();
                    p[1].close();
                    check(slept.recv().equals("slept to 2000-01-01T01:00:00Z"), "the sleeper's hour passes afterwards");
                }));
    }

    /**
     * Net.dialTimeout in a bubble: the timeout passes in real time (gort put the connect's
     * deadline timer into the bubble's heap, which runs only when the bubble is idle, which it never
     * is while the dialer waits on the network: the dial hung). A listener whose backlog is full
     * drops the SYNs, as in NetTest.dialTimeout.
     */
    @Test
    void dialTimeoutInABubbleTimesOut() {
        GortTesting.run(
                1,
                Duration.ofSeconds(30),
                () -> bubble(() -> {
                    try (java.nio.channels.ServerSocketChannel full = java.nio.channels.ServerSocketChannel.open()) {
                        full.bind(new java.net.InetSocketAddress("127.0.0.1", 0), 1);
                        String addr = "127.0.0.1:" + ((java.net.InetSocketAddress) full.getLocalAddress()).getPort();
                        List<Conn> ok = new ArrayList<>();
                        DeadlineExceededException timedOut = null;
                        long waited = 0;
                        for (int i = 0; i < 16 && timedOut == null; i++) {
                            long t0 = System.nanoTime();
                            try {
                                ok.add(Net.dialTimeout("tcp", addr, Duration.ofNanos(D)));
                            } catch (DeadlineExceededException e) {
                                waited = System.nanoTime() - t0;
                                timedOut = e;
                            }
                        }
                        check(timedOut != null, "a dial to a full backlog timed out");
                        check(timedOut.getMessage().equals("dial tcp " + addr + ": i/o timeout"), "%s", timedOut);
                        check(waited >= D, "the dial timed out after %d ns, before its timeout", waited);
                        check(Time.now().equals(EPOCH), "the fake clock moved: %s", Time.now());
                        for (Conn c : ok) {
                            c.close();
                        }
                    }
                }));
    }

    /**
     * A connection made outside a bubble and used inside it: its deadline is read on the bubble's
     * clock and passes in real time (Go: the poll descriptor belongs to no bubble, so there is no
     * cross-bubble misuse to report).
     */
    @Test
    void aConnFromOutsideUsedInABubbleTakesTheBubblesClock() {
        run(2, () -> {
            Conn[] p = pair();
            Conn c = p[0];
            bubble(() -> {
                long t0 = System.nanoTime();
                c.setReadDeadline(Time.now().plusNanos(D));
                assertThrows(DeadlineExceededException.class, () -> c.read(new byte[1]));
                long waited = System.nanoTime() - t0;
                check(waited >= D, "timed out after %d ns, before its deadline", waited);
                c.setReadDeadline(Time.now().plusSeconds(5));
                p[1].write(bytes("z"));
                check(readN(c, 1).equals("z"), "reads before its deadline (5 s ahead, fake)");
            });
            // and outside again: the wall clock
            c.setReadDeadline(Instant.now().plusSeconds(3600));
            p[1].write(bytes("q"));
            check(readN(c, 1).equals("q"), "reads before its deadline (an hour ahead, wall clock)");
            c.close();
            p[1].close();
        });
    }

    /**
     * A connection made in a bubble and used after the bubble ended: its deadline is read on the
     * wall clock and fires (gort armed the bubble's dead timer heap, which nobody runs: the read
     * hung).
     */
    @Test
    void aConnFromABubbleUsedOutsideTakesTheWallClock() {
        run(2, () -> {
            Listener ln = Net.listen("tcp", "127.0.0.1:0");
            Chan<Conn> srv = Chan.make(1);
            go(() -> srv.send(ln.accept()));
            AtomicReference<Conn> made = new AtomicReference<>();
            bubble(() -> made.set(Net.dial("tcp", ln.addr().toString())));
            Conn c = made.get();
            Conn s = srv.recv();
            Instant dl = Instant.now().plusNanos(D);
            c.setReadDeadline(dl);
            Chan<String> got = Chan.make(1);
            go(() -> {
                try {
                    c.read(new byte[1]);
                    got.send("read returned");
                } catch (IOException e) {
                    got.send(e.getMessage() + (Instant.now().isBefore(dl) ? " before its deadline" : ""));
                }
            });
            waitFor("the read to time out", () -> got.len() > 0); // bounded: 20 s
            String r = got.recv();
            check(r.equals("read tcp " + c.localAddr() + "->" + c.remoteAddr() + ": i/o timeout"), "%s", r);
            c.close();
            s.close();
            ln.close();
        });
    }
}
