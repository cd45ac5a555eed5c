package dev.gort.net;

import static dev.gort.GortTesting.check;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gort.Chan;
import dev.gort.Go;
import dev.gort.GortTesting;
import dev.gort.Time;
import dev.gort.runtime.Netpoll;
import dev.gort.runtime.Scheduler;
import dev.gort.sync.WaitGroup;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * dev.gort.net on the network poller: the runtime-facing parts of Go's net tests
 * (net/net_test.go TestCloseUnblocksRead, net/timeout_test.go, net/dial_test.go), loopback only.
 */
class NetTest {

    /** Waits (parking, bounded) until cond holds: a wait-for-condition, never an ordering sleep. */
    static void waitFor(String what, BooleanSupplier cond) {
        long end = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        while (!cond.getAsBoolean()) {
            if (System.nanoTime() > end) {
                throw new AssertionError("timed out waiting for " + what);
            }
            Time.sleep(Time.MILLISECOND);
        }
    }

    /**
     * Starts a reader of 2 bytes from {@code c} (its result or error message to {@code got}) with a
     * short read deadline and waits until it is parked on the poller, before the deadline. On a
     * loaded machine the deadline may pass before the reader gets there (it then fails at once,
     * never parking): the attempt is repeated with a 10 times longer deadline (40 ms to 40 s).
     * Returns the deadline the parked reader has.
     */
    static Instant parkReaderBefore(Conn c, Chan<String> got) throws IOException {
        return parkReaderBefore(c, got, 40);
    }

    /** {@link #parkReaderBefore(Conn, Chan)} with a first deadline of {@code firstMs}. */
    static Instant parkReaderBefore(Conn c, Chan<String> got, long firstMs) throws IOException {
        for (long ms = firstMs; ; ms *= 10) {
            Instant dl = Instant.now().plusMillis(ms);
            c.setReadDeadline(dl);
            go(() -> {
                try {
                    got.send(readN(c, 2));
                } catch (IOException e) {
                    got.send(e.getMessage());
                }
            });
            waitFor("the reader to park or time out", () -> waiters() == 1 || got.len() > 0);
            if (got.len() == 0 && Instant.now().isBefore(dl)) {
                return dl;
            }
            check(ms < 40_000, "the reader never parked before its deadline");
            // it timed out before it parked (or is about to): wait for its result, try again
            String r = got.recv();
            check(r.contains("deadline") || r.contains("timeout") || r.contains("i/o"), "unexpected: %s", r);
        }
    }

    /**
     * Parks a reader ({@link #parkReaderBefore}), then runs {@code change} on its deadline while it
     * waits, and returns the deadline it had, once the change is known to have come before it: a
     * change that returned 1 ms or more before the old deadline did (a later result from the reader
     * is a failure for the caller to find). If main was held up past the old deadline before the
     * change returned (a loaded machine, or at GOMAXPROCS=2 the other P's M running the deadline's
     * timer meanwhile), the reader may have timed out first: that attempt is inconclusive, so the
     * reader is made to leave (a deadline in the past), its result is taken, and the whole is tried
     * again with a 10 times longer deadline.
     */
    static Instant parkReaderAndChange(Conn c, Chan<String> got, IoBody change) throws Exception {
        for (long ms = 40; ; ms *= 10) {
            Instant old = parkReaderBefore(c, got, ms);
            change.run();
            if (Instant.now().plusMillis(1).isBefore(old)) {
                return old;
            }
            check(ms < 40_000, "main never changed the deadline before it passed");
            c.setReadDeadline(Instant.now().minusSeconds(1)); // no verdict: end this reader
            String r = got.recv();
            check(r.contains("deadline") || r.contains("timeout") || r.contains("i/o"), "unexpected: %s", r);
        }
    }

    /** Sleeps until {@code t} is 50 ms past. */
    static void sleepPast(Instant t) {
        while (!Instant.now().isAfter(t.plusMillis(50))) {
            Time.sleep(Duration.ofMillis(10));
        }
    }

    static int waiters() {
        return Netpoll.of(Scheduler.current()).netpollWaiters();
    }

    static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    static String readN(Conn c, int n) throws IOException {
        byte[] b = new byte[n];
        int got = 0;
        while (got < n) {
            int k = c.read(b, got, n - got);
            if (k < 0) {
                throw new AssertionError("EOF after " + got + " bytes");
            }
            got += k;
        }
        return new String(b, StandardCharsets.UTF_8);
    }

    interface IoBody {
        void run() throws Exception;
    }

    /** body as a Runnable: unchecked exceptions pass, checked ones fail the test. */
    static Runnable unchecked(IoBody body) {
        return () -> {
            try {
                body.run();
            } catch (RuntimeException | Error e) {
                throw e;
            } catch (Exception e) {
                throw new AssertionError(e);
            }
        };
    }

    static void run(int procs, IoBody body) {
        GortTesting.run(procs, unchecked(body));
    }

    static void go(IoBody body) {
        Go.go(unchecked(body));
    }

    @ParameterizedTest(name = "GOMAXPROCS={0}")
    @ValueSource(ints = {1, 2})
    void echoRoundTripsAndEofIsMinusOne(int procs) {
        run(procs, () -> {
            Listener ln = Net.listen("tcp", "127.0.0.1:0");
            check(ln.addr().port() != 0, "port chosen: %s", ln.addr());
            go(() -> {
                Conn c = ln.accept();
                byte[] buf = new byte[7];
                for (int n; (n = c.read(buf)) >= 0; ) {
                    c.write(buf, 0, n);
                }
                c.close();
            });
            Conn c = Net.dial("tcp", ln.addr().toString());
            check(c.remoteAddr().equals(ln.addr()), "remote %s", c.remoteAddr());
            check(c.localAddr().toString().startsWith("127.0.0.1:"), "local %s", c.localAddr());
            for (int i = 0; i < 100; i++) {
                String msg = "hello " + i;
                c.write(bytes(msg));
                check(readN(c, msg.length()).equals(msg), "echo %d", i);
            }
            check(Netpoll.of(Scheduler.current()).wokenByPoller.get() > 0, "goroutines were woken by the poller");
            c.closeWrite();
            byte[] b = new byte[8];
            check(c.read(b) == -1, "EOF after half-close is -1");
            check(c.read(b) == -1, "EOF stays -1");
            check(c.read(b, 0, 0) == 0, "a zero-length read returns 0");
            c.close();
            ln.close();
        });
    }

    @Test
    void streamViewsRunJavaCodeOnAConn() {
        run(1, () -> {
            Listener ln = Net.listen("tcp", "127.0.0.1:0");
            go(() -> {
                Conn c = ln.accept();
                BufferedReader r = new BufferedReader(new InputStreamReader(c.inputStream(), StandardCharsets.UTF_8));
                OutputStream out = c.outputStream();
                for (String line; (line = r.readLine()) != null; ) {
                    out.write(bytes(line.toUpperCase() + "\n"));
                }
                out.close();
                out.close(); // a second close of a view does nothing
            });
            Conn c = Net.dial("tcp", ln.addr().toString());
            OutputStream out = c.outputStream();
            out.write(bytes("one\ntwo\n"));
            c.closeWrite();
            BufferedReader r = new BufferedReader(new InputStreamReader(c.inputStream(), StandardCharsets.UTF_8));
            check("ONE".equals(r.readLine()), "line 1");
            check("TWO".equals(r.readLine()), "line 2");
            check(r.readLine() == null, "EOF");
            check(c.inputStream().read() == -1, "single-byte read at EOF is -1");
            c.close();
            ln.close();
        });
    }

    /** Go: net_test.go TestCloseUnblocksRead. */
    @Test
    void closeUnblocksAParkedRead() {
        AtomicReference<Throwable> got = new AtomicReference<>();
        run(1, () -> {
            Listener ln = Net.listen("tcp", "127.0.0.1:0");
            Chan<Conn> srv = Chan.make(1);
            go(() -> srv.send(ln.accept()));
            Conn c = Net.dial("tcp", ln.addr().toString());
            Conn s = srv.recv();
            Chan<Boolean> done = Chan.make();
            go(() -> {
                try {
                    c.read(new byte[10]);
                } catch (IOException e) {
                    got.set(e);
                }
                done.send(true);
            });
            waitFor("the reader to park", () -> waiters() == 1);
            c.close();
            done.recv();
            check(waiters() == 0, "no waiter left");
            IOException again = assertThrows(IOException.class, c::close);
            check(again.getMessage().endsWith(": use of closed network connection"), "%s", again);
            s.close();
            ln.close();
        });
        OpError e = (OpError) got.get();
        assertTrue(e.closed(), String.valueOf(e));
        assertTrue(
                e.getMessage()
                        .matches(
                                "read tcp 127\\.0\\.0\\.1:\\d+->127\\.0\\.0\\.1:\\d+: use of closed network connection"),
                e.getMessage());
    }

    /** Go: net_test.go TestCloseUnblocksRead for a listener (accept). */
    @Test
    void closeUnblocksAParkedAccept() {
        AtomicReference<Throwable> got = new AtomicReference<>();
        AtomicReference<String> addr = new AtomicReference<>();
        run(2, () -> {
            Listener ln = Net.listen("tcp", "127.0.0.1:0");
            addr.set(ln.addr().toString());
            Chan<Boolean> done = Chan.make();
            go(() -> {
                try {
                    ln.accept();
                } catch (IOException e) {
                    got.set(e);
                }
                done.send(true);
            });
            waitFor("accept to park", () -> waiters() == 1);
            ln.close();
            done.recv();
            // the port is free again once close returns
            Listener again = Net.listen("tcp", addr.get());
            again.close();
        });
        assertEquals(
                "accept tcp " + addr.get() + ": use of closed network connection",
                got.get().getMessage());
    }

    /**
     * A listener's accept queue is the kernel's somaxconn, as Go's (net/sock_linux.go
     * maxListenerBacklog), not Java's default of 50: dials beyond 50 that nobody has accepted yet
     * complete at once instead of losing their SYN and waiting for its retransmission (1 s, 3 s, 7 s
     * ...: the stall of NetLoadTest.tenThousandIdleConnections at GOMAXPROCS=4).
     */
    @Test
    void listenBacklogIsSomaxconnNotJavasFifty() {
        int n = 200;
        run(2, () -> {
            Listener ln = Net.listen("tcp", "127.0.0.1:0");
            List<Conn> clients = new ArrayList<>();
            java.util.concurrent.atomic.AtomicInteger dialed = new java.util.concurrent.atomic.AtomicInteger();
            go(
                    () -> { // nobody accepts while these dial
                        for (int i = 0; i < n; i++) {
                            Conn c = Net.dial("tcp", ln.addr().toString());
                            synchronized (clients) {
                                clients.add(c);
                            }
                            dialed.incrementAndGet();
                        }
                    });
            try {
                waitFor(n + " dials with nobody accepting", () -> dialed.get() == n);
            } catch (AssertionError e) {
                throw new AssertionError(e.getMessage() + ": " + dialed.get() + " done", e);
            }
            for (int i = 0; i < n; i++) {
                ln.accept().close();
            }
            for (Conn c : clients) {
                c.close();
            }
            ln.close();
        });
    }

    /**
     * The metric /gort/sched/goroutines/waiting-network:goroutines and the MXBean's
     * GoroutinesWaitingNetwork count the goroutines parked on the poller: each parked read counts
     * once, a woken one no more, and they are part of /sched/goroutines/waiting.
     */
    @Test
    void waitingNetworkMetricCountsGoroutinesParkedOnThePoller() {
        int n = 7;
        run(2, () -> {
            dev.gort.runtime.metrics.Metrics m = new dev.gort.runtime.metrics.Metrics(Scheduler.current());
            String name = "/gort/sched/goroutines/waiting-network:goroutines";
            check(m.value(name) == 0, "nobody waits yet: %s", m.value(name));
            javax.management.ObjectName bean =
                    dev.gort.runtime.metrics.SchedulerMXBeanImpl.register(Scheduler.current());
            try {
                Listener ln = Net.listen("tcp", "127.0.0.1:0");
                WaitGroup wg = new WaitGroup();
                List<Conn> clients = new ArrayList<>();
                for (int i = 0; i < n; i++) {
                    clients.add(Net.dial("tcp", ln.addr().toString()));
                    Conn c = ln.accept();
                    wg.add(1);
                    go(() -> {
                        try {
                            c.read(new byte[1]); // parks until its client writes
                        } finally {
                            c.close();
                            wg.done();
                        }
                    });
                }
                waitFor(n + " readers parked", () -> waiters() == n);
                check(m.value(name) == n, "metric %s, want %d", m.value(name), n);
                Object attr = java.lang.management.ManagementFactory.getPlatformMBeanServer()
                        .getAttribute(bean, "GoroutinesWaitingNetwork");
                check(Integer.valueOf(n).equals(attr), "MXBean %s, want %d", attr, n);
                check(
                        m.value("/sched/goroutines/waiting:goroutines") >= n,
                        "part of waiting: %s",
                        m.value("/sched/goroutines/waiting:goroutines"));
                clients.get(0).write(bytes("x"));
                waitFor("one reader woken", () -> waiters() == n - 1);
                check(m.value(name) == n - 1, "metric %s after one wake-up, want %d", m.value(name), n - 1);
                for (Conn c : clients) {
                    c.close();
                }
                wg.await();
                check(m.value(name) == 0, "metric %s at the end", m.value(name));
                ln.close();
            } finally {
                dev.gort.runtime.metrics.SchedulerMXBeanImpl.unregister(bean);
            }
        });
    }

    /** Go: net/sock_linux.go maxListenerBacklog, maxAckBacklog (and net/sock_linux_test.go). */
    @Test
    void maxListenerBacklogReadsSomaxconnAsGoDoes() {
        assertEquals(4096, Listener.Backlog.maxListenerBacklog("4096\n", "6.8.0"));
        assertEquals(Listener.Backlog.SOMAXCONN, Listener.Backlog.maxListenerBacklog(null, "6.8.0"));
        assertEquals(Listener.Backlog.SOMAXCONN, Listener.Backlog.maxListenerBacklog("0\n", "6.8.0"));
        assertEquals(Listener.Backlog.SOMAXCONN, Listener.Backlog.maxListenerBacklog("x\n", "6.8.0"));
        assertEquals(70_000, Listener.Backlog.maxListenerBacklog("70000\n", "4.1.0"));
        assertEquals(65_535, Listener.Backlog.maxListenerBacklog("70000\n", "3.10.0-1160.el7"));
        assertEquals(Integer.MAX_VALUE, Listener.Backlog.maxAckBacklog(1L << 32, "5.15.0"));
    }

    /** Go: timeout_test.go TestReadTimeout's past deadline: fails at once, even with data waiting. */
    @Test
    void pastDeadlineFailsAtOnce() {
        run(1, () -> {
            Listener ln = Net.listen("tcp", "127.0.0.1:0");
            Chan<Conn> srv = Chan.make(1);
            go(() -> srv.send(ln.accept()));
            Conn c = Net.dial("tcp", ln.addr().toString());
            Conn s = srv.recv();
            s.write(bytes("x"));
            c.setReadDeadline(Instant.now().minusSeconds(1));
            DeadlineExceededException e = assertThrows(DeadlineExceededException.class, () -> c.read(new byte[1]));
            check(e.timeout(), "timeout()");
            check(
                    e.getMessage().equals("read tcp " + c.localAddr() + "->" + c.remoteAddr() + ": i/o timeout"),
                    "%s",
                    e);
            c.setWriteDeadline(Instant.now().minusSeconds(1));
            assertThrows(DeadlineExceededException.class, () -> c.write(bytes("y")));
            // clearing the deadlines restores I/O, and the byte was not lost
            c.setDeadline(null);
            check(readN(c, 1).equals("x"), "data kept");
            c.write(bytes("y"));
            check(readN(s, 1).equals("y"), "write works again");
            c.close();
            s.close();
            ln.close();
        });
    }

    /** An expired deadline wakes the parked reader; extending it while blocked takes effect. */
    @ParameterizedTest(name = "GOMAXPROCS={0}")
    @ValueSource(ints = {1, 2})
    void deadlineWakesTheReaderAndExtendingItWhileBlockedTakesEffect(int procs) {
        run(procs, () -> {
            Listener ln = Net.listen("tcp", "127.0.0.1:0");
            Chan<Conn> srv = Chan.make(1);
            go(() -> srv.send(ln.accept()));
            Conn c = Net.dial("tcp", ln.addr().toString());
            Conn s = srv.recv();

            // expires while parked
            Instant dl = Instant.now().plusMillis(30);
            c.setReadDeadline(dl);
            assertThrows(DeadlineExceededException.class, () -> c.read(new byte[1]));
            check(!Instant.now().isBefore(dl), "not before the deadline");

            // extended while parked: the old deadline passes, the read keeps waiting, gets the data
            Chan<String> got = Chan.make(1);
            Instant old = parkReaderAndChange(
                    c, got, () -> c.setReadDeadline(Instant.now().plusSeconds(3600)));
            sleepPast(old); // past the first deadline
            check(got.len() == 0, "still waiting after the old deadline: %s", got.len() == 0 ? "" : got.recv());
            s.write(bytes("ok"));
            check("ok".equals(got.recv()), "read the data");

            // cleared while parked
            old = parkReaderAndChange(c, got, () -> c.setReadDeadline(null));
            sleepPast(old);
            check(got.len() == 0, "cleared deadline does not fire");
            s.write(bytes("ok"));
            check("ok".equals(got.recv()), "read after clear");
            c.close();
            s.close();
            ln.close();
        });
    }

    /** Go: timeout_test.go TestReadTimeoutFluctuation's shape: each times out at its own deadline. */
    @Test
    void manyGoroutinesWithStaggeredDeadlinesEachTimeOutAtTheirOwn() {
        run(2, () -> {
            Listener ln = Net.listen("tcp", "127.0.0.1:0");
            int n = 20;
            List<Conn> servers = new ArrayList<>();
            Chan<Conn> srv = Chan.make(n);
            go(() -> {
                for (int i = 0; i < n; i++) {
                    srv.send(ln.accept());
                }
            });
            WaitGroup wg = new WaitGroup();
            Instant base = Instant.now();
            Chan<String> errs = Chan.make(n);
            for (int i = 0; i < n; i++) {
                Conn c = Net.dial("tcp", ln.addr().toString());
                servers.add(srv.recv());
                Instant dl = base.plusMillis(20 + 10L * i);
                c.setReadDeadline(dl);
                wg.add(1);
                go(() -> {
                    try {
                        c.read(new byte[1]);
                        errs.send("read returned");
                    } catch (DeadlineExceededException e) {
                        if (Instant.now().isBefore(dl)) {
                            errs.send("timed out before its deadline");
                        }
                    } finally {
                        c.close();
                        wg.done();
                    }
                });
            }
            wg.await();
            check(errs.len() == 0, "%s", errs.len() == 0 ? "" : errs.recv());
            for (Conn s : servers) {
                s.close();
            }
            ln.close();
        });
    }

    /** Go: dial_test.go TestDialTimeout, with a listener whose backlog is full (SYNs dropped). */
    @Test
    void dialTimeout() {
        run(1, () -> {
            java.nio.channels.ServerSocketChannel full = java.nio.channels.ServerSocketChannel.open();
            full.bind(new java.net.InetSocketAddress("127.0.0.1", 0), 1);
            String addr = "127.0.0.1:" + ((java.net.InetSocketAddress) full.getLocalAddress()).getPort();
            List<Conn> ok = new ArrayList<>();
            DeadlineExceededException timedOut = null;
            for (int i = 0; i < 16 && timedOut == null; i++) {
                try {
                    ok.add(Net.dialTimeout("tcp", addr, Duration.ofMillis(200)));
                } catch (DeadlineExceededException e) {
                    timedOut = e;
                }
            }
            check(timedOut != null, "a dial to a full backlog timed out");
            check(timedOut.getMessage().equals("dial tcp " + addr + ": i/o timeout"), "%s", timedOut);
            for (Conn c : ok) {
                c.close();
            }
            full.close();
            check(waiters() == 0, "no waiter left");
        });
    }

    /**
     * Go: dial_test.go TestDialContextCancelRace / TestDialerDeadline's rules, against a listener
     * whose backlog is full (its SYNs dropped, as in {@link #dialTimeout}): a dialContext parked in
     * its connect fails once another goroutine cancels ctx, with {@code dial tcp ADDR: operation
     * was canceled} whose cause is {@link dev.gort.context.Context#CANCELED}; one whose ctx has a
     * deadline fails with {@code dial tcp ADDR: i/o timeout} (a DeadlineExceededException); one
     * whose ctx is already done fails at once. The cancel comes only once the dial is parked on the
     * poller (the only waiter), and no waiter is left after.
     */
    @Test
    void dialContextFailsWhenItsContextIsDoneFirst() {
        run(1, () -> {
            java.nio.channels.ServerSocketChannel full = java.nio.channels.ServerSocketChannel.open();
            full.bind(new java.net.InetSocketAddress("127.0.0.1", 0), 1);
            String addr = "127.0.0.1:" + ((java.net.InetSocketAddress) full.getLocalAddress()).getPort();
            List<Conn> ok = new ArrayList<>();
            boolean timedOut = false;
            for (int i = 0; i < 16 && !timedOut; i++) {
                try {
                    ok.add(Net.dialTimeout("tcp", addr, Duration.ofMillis(200)));
                } catch (DeadlineExceededException e) {
                    timedOut = true; // the backlog is full: later SYNs are dropped too
                }
            }
            check(timedOut, "a dial to a full backlog timed out");

            dev.gort.context.CancelContext ctx =
                    dev.gort.context.Context.withCancel(dev.gort.context.Context.background());
            Chan<Object> got = Chan.make(1);
            go(() -> {
                try {
                    got.send(Net.dialContext(ctx, "tcp", addr));
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
                            && e.getMessage().equals("dial tcp " + addr + ": operation was canceled")
                            && e.getCause() == dev.gort.context.Context.CANCELED,
                    "canceled: %s",
                    r);

            OpError again = assertThrows(OpError.class, () -> Net.dialContext(ctx, "tcp", addr));
            check(again.getMessage().equals("dial tcp " + addr + ": operation was canceled"), "done before: %s", again);

            dev.gort.context.CancelContext tctx =
                    dev.gort.context.Context.withTimeout(dev.gort.context.Context.background(), Duration.ofMillis(100));
            DeadlineExceededException t =
                    assertThrows(DeadlineExceededException.class, () -> Net.dialContext(tctx, "tcp", addr));
            check(t.getMessage().equals("dial tcp " + addr + ": i/o timeout"), "deadline: %s", t);
            tctx.cancel();
            check(waiters() == 0, "no waiter left");
            for (Conn c : ok) {
                c.close();
            }
            full.close();
        });
    }

    static long openFds() throws IOException {
        try (var s = Files.list(Path.of("/proc/self/fd"))) {
            return s.count();
        }
    }

    /** A peer reset mid-read is an error, not a hang; no descriptor leaks. */
    @Test
    void peerResetMidReadIsAnErrorAndNoDescriptorLeaks() {
        org.junit.jupiter.api.Assumptions.assumeTrue(Files.isDirectory(Path.of("/proc/self/fd")), "Linux /proc");
        run(2, () -> {
            resetOnce(); // warm up: the poller, classes, the JDK's own descriptors
            long before = openFds();
            for (int i = 0; i < 5; i++) {
                resetOnce();
            }
            long after = openFds();
            check(before == after, "open descriptors before %d, after %d", before, after);
        });
    }

    /**
     * A read after the one that reported the peer's reset returns EOF, as Go's (the Go 1.19 twin:
     * {@code read 0 -> 0 read tcp ...: read: connection reset by peer}, then {@code read 1 -> 0 EOF},
     * {@code read 2 -> 0 EOF}); a write still fails ({@code write: broken pipe}). The JDK's channel
     * threw the reset on every read.
     */
    @Test
    void aReadAfterAResetIsEOFAsGos() {
        run(1, () -> {
            Listener ln = Net.listen("tcp", "127.0.0.1:0");
            Chan<Conn> srv = Chan.make(1);
            go(() -> srv.send(ln.accept()));
            Conn c = Net.dial("tcp", ln.addr().toString());
            Conn s = srv.recv();
            s.setLinger(0);
            s.close(); // RST
            byte[] b = new byte[16];
            Chan<String> first = Chan.make(1);
            go(() -> {
                try {
                    first.send("read " + c.read(b));
                } catch (OpError e) {
                    first.send(e.getMessage());
                }
            });
            String e = first.recv();
            check(
                    e.matches("read tcp 127\\.0\\.0\\.1:\\d+->127\\.0\\.0\\.1:\\d+: read: connection reset by peer"),
                    "%s",
                    e);
            check(c.read(b) == -1, "the second read is EOF");
            check(c.read(b) == -1, "and the third");
            OpError w = assertThrows(OpError.class, () -> c.write(new byte[] {1}));
            check(w.getMessage().endsWith(": write: broken pipe"), "%s", w);
            c.close();
            ln.close();
        });
    }

    private static void resetOnce() throws IOException {
        Listener ln = Net.listen("tcp", "127.0.0.1:0");
        Chan<Conn> srv = Chan.make(1);
        go(() -> srv.send(ln.accept()));
        Conn c = Net.dial("tcp", ln.addr().toString());
        Conn s = srv.recv();
        Chan<String> got = Chan.make(1);
        go(() -> {
            try {
                byte[] b = new byte[16];
                while (c.read(b) >= 0) {}
                got.send("EOF");
            } catch (OpError e) {
                got.send(e.getMessage());
            }
        });
        waitFor("the reader to park", () -> waiters() == 1);
        s.setLinger(0);
        s.close(); // RST
        String e = got.recv();
        check(
                e.matches("read tcp 127\\.0\\.0\\.1:\\d+->127\\.0\\.0\\.1:\\d+: read: connection reset by peer"),
                "%s",
                e);
        c.close();
        ln.close();
    }

    @Test
    void badInputGetsGoErrorsAndLosesNothing() {
        run(1, () -> {
            OpError e = assertThrows(OpError.class, () -> Net.dial("tcp", "127.0.0.1"));
            check(e.getMessage().equals("dial tcp: address 127.0.0.1: missing port in address"), "%s", e);
            e = assertThrows(OpError.class, () -> Net.dial("tcp", "1:2:3"));
            check(e.getMessage().equals("dial tcp: address 1:2:3: too many colons in address"), "%s", e);
            e = assertThrows(OpError.class, () -> Net.dial("tcp", "127.0.0.1:70000"));
            check(e.getMessage().equals("dial tcp: address 70000: invalid port"), "%s", e);
            e = assertThrows(OpError.class, () -> Net.dial("foo", "127.0.0.1:80"));
            check(e.getMessage().equals("dial foo: unknown network foo"), "%s", e);
            e = assertThrows(OpError.class, () -> Net.listen("udp", "127.0.0.1:0"));
            check(e.getMessage().equals("listen udp: unknown network udp"), "%s", e);

            Listener ln = Net.listen("tcp", "127.0.0.1:0");
            e = assertThrows(OpError.class, () -> Net.listen("tcp", ln.addr().toString()));
            check(e.getMessage().equals("listen tcp " + ln.addr() + ": bind: address already in use"), "%s", e);

            Chan<Conn> srv = Chan.make(1);
            go(() -> srv.send(ln.accept()));
            Conn c = Net.dial("tcp", ln.addr().toString());
            Conn s = srv.recv();
            s.write(bytes("abc"));
            byte[] b = new byte[3];
            assertThrows(IndexOutOfBoundsException.class, () -> c.read(b, 0, -1));
            assertThrows(IndexOutOfBoundsException.class, () -> c.read(b, 2, 2));
            assertThrows(IndexOutOfBoundsException.class, () -> c.write(b, -1, 1));
            check(readN(c, 3).equals("abc"), "nothing lost by the rejected reads");
            s.close();
            c.close();
            e = assertThrows(OpError.class, () -> c.read(b));
            check(e.closed() && e.getMessage().endsWith("use of closed network connection"), "%s", e);
            e = assertThrows(OpError.class, () -> c.write(b));
            check(e.getMessage().startsWith("write tcp ") && e.closed(), "%s", e);
            int port = ln.addr().port();
            ln.close();
            e = assertThrows(OpError.class, () -> Net.dial("tcp", "127.0.0.1:" + port));
            check(e.getMessage().equals("dial tcp 127.0.0.1:" + port + ": connect: connection refused"), "%s", e);
            check(waiters() == 0, "no waiter left");
        });
        assertThrows(IllegalStateException.class, () -> Net.listen("tcp", "127.0.0.1:0"));
    }

    /**
     * Go's errors where the JDK's exception classes say less: a write after closeWrite is EPIPE
     * ({@code write: broken pipe}, not net.ErrClosed: it said "use of closed network connection"),
     * a BindException or ConnectException is worded by its message (every BindException said
     * "address already in use"), a datagram's errors name sendto and its destination, a nil
     * destination is "missing address" (a NullPointerException before), and a zero-byte read
     * returns 0 even past its deadline (it timed out).
     */
    @Test
    void shutDownDirectionsAndSystemErrorsAreWordedAsGos() {
        check(
                NetFD.syscallText("listen", new java.net.BindException("Cannot assign requested address"))
                        .equals("bind: cannot assign requested address"),
                "EADDRNOTAVAIL");
        check(
                NetFD.syscallText("sendto", new java.net.BindException("Permission denied"))
                        .equals("sendto: permission denied"),
                "EACCES");
        check(
                NetFD.syscallText("dial", new java.net.ConnectException("Connection timed out"))
                        .equals("connect: connection timed out"),
                "ETIMEDOUT");
        check(
                NetFD.syscallText("sendto", new IOException("Message too long")).equals("sendto: message too long"),
                "EMSGSIZE");
        run(1, () -> {
            Listener ln = Net.listen("tcp", "127.0.0.1:0");
            Chan<Conn> srv = Chan.make(1);
            go(() -> srv.send(ln.accept()));
            Conn c = Net.dial("tcp", ln.addr().toString());
            Conn s = srv.recv();
            c.closeWrite();
            OpError e = assertThrows(OpError.class, () -> c.write(bytes("x")));
            check(
                    e.getMessage()
                            .equals("write tcp " + c.localAddr() + "->" + c.remoteAddr() + ": write: broken pipe"),
                    "%s",
                    e);
            check(!e.closed(), "not net.ErrClosed: %s", e);
            c.setReadDeadline(Instant.now().minusSeconds(1));
            check(c.read(new byte[4], 0, 0) == 0, "a zero-byte read returns 0 before its deadline is checked");
            s.close();
            c.close();
            ln.close();
            PacketConn u = Net.listenPacket("udp", "127.0.0.1:0");
            e = assertThrows(OpError.class, () -> u.writeTo(bytes("x"), null));
            check(e.getMessage().equals("write udp " + u.localAddr() + ": missing address"), "%s", e);
            u.close();
        });
    }

    /**
     * testprog for {@link #runningOutOfDescriptorsIsAnOpErrorWordedAsGos}: a listener (its address
     * printed) with one connection queued, then a dial, a listen, a UDP listen and an accept, each
     * printing its error, each with every descriptor the process may have taken by {@code /dev/null}
     * ({@code printWhenFull}). Every path is taken once first, so that nothing has to load a class
     * (which needs a descriptor) later.
     */
    public static final class OutOfDescriptorsProg {
        public static void main(String[] args) {
            Go.run(unchecked(() -> {
                Listener ln = Net.listen("tcp", "127.0.0.1:0");
                System.out.println(ln.addr());
                Conn c = Net.dial("tcp", ln.addr().toString());
                ln.accept().close();
                c.close();
                Net.listenPacket("udp", "127.0.0.1:0").close();
                Listener gone = Net.listen("tcp", "127.0.0.1:0");
                gone.close();
                print(() -> Net.dial("tcp", gone.addr().toString())); // the error path, once
                List<Conn> queued = new ArrayList<>(); // in the backlog, not accepted
                queued.add(Net.dial("tcp", ln.addr().toString()));
                List<java.io.FileInputStream> held = new ArrayList<>();
                // every call and its undoing made before the table is full (nothing to link later)
                Opening dial = () -> Net.dial("tcp", ln.addr().toString())::close;
                Opening listen = () -> Net.listen("tcp", "127.0.0.1:0")::close;
                Opening listenUdp = () -> Net.listenPacket("udp", "127.0.0.1:0")::close;
                Opening accept = () -> ln.accept()::close;
                IoBody nothing = () -> {};
                IoBody queueAnother = () -> {
                    // the accept took the queued connection: queue another (a descriptor for it first)
                    held.removeLast().close();
                    queued.add(Net.dial("tcp", ln.addr().toString()));
                };
                printWhenFull(held, dial, nothing);
                printWhenFull(held, listen, nothing);
                printWhenFull(held, listenUdp, nothing);
                printWhenFull(held, accept, queueAnother);
                for (java.io.FileInputStream f : held) {
                    f.close();
                }
                for (Conn q : queued) {
                    q.close();
                }
                ln.close();
            }));
        }

        private static void print(IoBody call) {
            try {
                call.run();
                System.out.println("no error");
            } catch (Exception e) {
                printError(e);
            }
        }

        /** The one place that words an error, linked by the first {@link #print}. */
        private static void printError(Exception e) {
            System.out.println(e.getClass().getSimpleName() + ": " + e.getMessage());
        }

        /** A call that opens something: returns how to close it. */
        interface Opening {
            IoBody open() throws Exception;
        }

        /**
         * Prints the error of {@code call} made with no descriptor left. The table is filled again
         * right before each try: another thread of this JVM may hold a descriptor for a moment and
         * give it back (sysmon reads /proc for a carrier it suspects blocked; a class loaded from a
         * directory), and then a call that should fail got it ("no error" once, on a loaded
         * machine). A call that succeeded is proof that a descriptor was free: what it opened is
         * closed, {@code afterSuccess} restores the scene, and it is tried again (20 times at most:
         * then "no error" is printed and the test fails).
         */
        private static void printWhenFull(List<java.io.FileInputStream> held, Opening call, IoBody afterSuccess)
                throws Exception {
            for (int attempt = 0; attempt < 20; attempt++) {
                try {
                    for (; ; ) {
                        held.add(new java.io.FileInputStream("/dev/null"));
                    }
                } catch (IOException full) {
                    // EMFILE: no descriptor left
                }
                IoBody close;
                try {
                    close = call.open();
                } catch (Exception e) {
                    printError(e);
                    return;
                }
                close.run();
                afterSuccess.run();
            }
            System.out.println("no error");
        }
    }

    /**
     * A socket call with no descriptor left fails with an OpError in Go's words: {@code dial tcp
     * 127.0.0.1:P: socket: too many open files} (the JDK's bare {@code SocketException: Too many
     * open files} escaped dial, listen and listenPacket), and accept names Linux's system call,
     * {@code accept4}, as Go does. Runs {@link OutOfDescriptorsProg} in a child JVM under {@code
     * ulimit -n 256}.
     */
    @Test
    @org.junit.jupiter.api.condition.EnabledOnOs(org.junit.jupiter.api.condition.OS.LINUX)
    @org.junit.jupiter.api.Timeout(120) // the child's output is read to its end before waitFor
    void runningOutOfDescriptorsIsAnOpErrorWordedAsGos() throws Exception {
        List<String> cmd = new ArrayList<>(List.of("/bin/sh", "-c", "ulimit -n 256 && exec \"$0\" \"$@\""));
        cmd.add(ProcessHandle.current().info().command().orElse("java"));
        cmd.addAll(List.of(
                "--add-exports=java.base/jdk.internal.vm=ALL-UNNAMED",
                "--add-exports=java.base/sun.nio.ch=ALL-UNNAMED",
                "--enable-native-access=ALL-UNNAMED",
                "-cp",
                System.getProperty("java.class.path"),
                OutOfDescriptorsProg.class.getName()));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        check(p.waitFor(60, java.util.concurrent.TimeUnit.SECONDS), "the child exits");
        check(p.exitValue() == 0, "exit %d: %s", p.exitValue(), out);
        List<String> lines = out.lines().toList();
        check(lines.size() == 6, "six lines: %s", out);
        String addr = lines.get(0);
        check(lines.get(1).endsWith(": connect: connection refused"), "%s", out);
        check(lines.get(2).equals("OpError: dial tcp " + addr + ": socket: too many open files"), "%s", out);
        check(lines.get(3).equals("OpError: listen tcp 127.0.0.1:0: socket: too many open files"), "%s", out);
        check(lines.get(4).equals("OpError: listen udp 127.0.0.1:0: socket: too many open files"), "%s", out);
        check(lines.get(5).equals("OpError: accept tcp " + addr + ": accept4: too many open files"), "%s", out);
    }

    /**
     * {@code tcp4} and {@code udp4} sockets are IPv4 ones, as Go's (AF_INET): a {@code tcp4}
     * listener on {@code :0} is {@code 0.0.0.0:P} and refuses an IPv6 dial (the JDK's default
     * socket is dual-stack: it called itself {@code [::]:P} and took the connection). And an
     * OpError names the network as the call named it ({@code dial tcp4 ...}, {@code read tcp4
     * ...}, {@code accept tcp4 ...}, {@code read udp6 ...}; all said {@code tcp} or {@code udp}),
     * while an Addr's network stays {@code tcp} or {@code udp}, as Go's.
     */
    @Test
    void tcp4AndUdp4AreIpv4SocketsAndErrorsNameTheNetworkAsked() {
        run(1, () -> {
            Listener ln = Net.listen("tcp4", ":0");
            int port = ln.addr().port();
            check(ln.addr().toString().equals("0.0.0.0:" + port), "%s", ln.addr());
            check(ln.addr().network().equals("tcp"), "%s", ln.addr().network());
            PacketConn u4 = Net.listenPacket("udp4", ":0");
            check(u4.localAddr().toString().equals("0.0.0.0:" + u4.localAddr().port()), "%s", u4.localAddr());
            u4.close();
            boolean ipv6 = false;
            try {
                Net.listen("tcp6", "[::1]:0").close();
                ipv6 = true;
            } catch (OpError noIpv6) {
                // no IPv6 loopback here: the refused IPv6 dial and udp6 cannot be tried
            }
            if (ipv6) {
                OpError e = assertThrows(OpError.class, () -> Net.dial("tcp6", "[::1]:" + port));
                check(e.getMessage().equals("dial tcp6 [::1]:" + port + ": connect: connection refused"), "%s", e);
                PacketConn u6 = Net.listenPacket("udp6", "[::1]:0");
                u6.setReadDeadline(Instant.now().minusSeconds(1));
                e = assertThrows(OpError.class, () -> u6.readFrom(new byte[1]));
                check(e.getMessage().equals("read udp6 " + u6.localAddr() + ": i/o timeout"), "%s", e);
                u6.close();
            }
            Listener gone = Net.listen("tcp4", "127.0.0.1:0");
            gone.close();
            OpError e = assertThrows(
                    OpError.class, () -> Net.dial("tcp4", gone.addr().toString()));
            check(e.getMessage().equals("dial tcp4 " + gone.addr() + ": connect: connection refused"), "%s", e);
            Conn c = Net.dial("tcp4", "127.0.0.1:" + port);
            Conn s = ln.accept();
            check(
                    c.localAddr().network().equals("tcp")
                            && s.remoteAddr().network().equals("tcp"),
                    "Addr: tcp");
            c.setReadDeadline(Instant.now().minusSeconds(1));
            e = assertThrows(OpError.class, () -> c.read(new byte[1]));
            check(
                    e.getMessage().equals("read tcp4 " + c.localAddr() + "->" + c.remoteAddr() + ": i/o timeout"),
                    "%s",
                    e);
            s.setReadDeadline(Instant.now().minusSeconds(1));
            e = assertThrows(OpError.class, () -> s.read(new byte[1]));
            check(e.getMessage().startsWith("read tcp4 127.0.0.1:" + port + "->"), "%s", e);
            ln.setDeadline(Instant.now().minusSeconds(1));
            e = assertThrows(OpError.class, ln::accept);
            check(e.getMessage().equals("accept tcp4 " + ln.addr() + ": i/o timeout"), "%s", e);
            c.close();
            s.close();
            ln.close();
        });
    }

    /**
     * A write larger than one system call's share ({@link Conn#MAX_RW}) arrives whole and in order,
     * read by a peer that takes it in small pieces.
     */
    @ParameterizedTest(name = "GOMAXPROCS={0}")
    @ValueSource(ints = {1, 2})
    void aWriteOfManyMaxRwSlicesArrivesWhole(int procs) {
        run(procs, () -> {
            Listener ln = Net.listen("tcp", "127.0.0.1:0");
            byte[] big = new byte[3 * Conn.MAX_RW + 7];
            for (int i = 0; i < big.length; i++) {
                big[i] = (byte) (i * 31 + (i >>> 11));
            }
            Chan<String> got = Chan.make(1);
            go(() -> {
                try (Conn a = ln.accept()) {
                    java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
                    byte[] buf = new byte[1000];
                    for (int n; (n = a.read(buf)) >= 0; ) {
                        out.write(buf, 0, n);
                    }
                    got.send(java.util.Arrays.equals(out.toByteArray(), big) ? "whole" : "differs: " + out.size());
                }
            });
            try (Conn c = Net.dial("tcp", ln.addr().toString())) {
                c.write(big);
                c.closeWrite();
                check(got.recv().equals("whole"), "the peer's copy");
            }
            ln.close();
        });
    }

    /**
     * A failed write says how much it sent (Go's {@code n, err := c.Write(b)}): a 64 MiB write to a
     * peer that does not read fills both sockets' buffers (a few MiB on loopback) and parks; a write
     * deadline set in the past then fails it. Its {@link OpError#bytesTransferred()} must be more
     * than 0 and less than the buffer, and what the peer then reads up to EOF must be exactly that
     * many bytes of the buffer's prefix: a retry from there sends nothing twice. The deadline is
     * set only once the writer is parked on the poller (the only waiter), so the error always comes
     * mid-write. An error before the first byte (a closed connection, a closed UDP socket, whose
     * datagram is all or nothing) reports 0. Without the count, it was always 0.
     */
    @ParameterizedTest(name = "GOMAXPROCS={0}")
    @ValueSource(ints = {1, 2})
    void aFailedWriteReportsTheBytesItSentAndThePeerGetsExactlyThose(int procs) {
        run(procs, () -> {
            Listener ln = Net.listen("tcp", "127.0.0.1:0");
            Chan<Conn> srv = Chan.make(1);
            go(() -> srv.send(ln.accept()));
            Conn c = Net.dial("tcp", ln.addr().toString());
            Conn s = srv.recv();
            byte[] big = new byte[64 << 20];
            for (int i = 0; i < big.length; i++) {
                big[i] = (byte) (i * 31 + (i >>> 11));
            }
            Chan<OpError> failed = Chan.make(1);
            go(() -> {
                try {
                    c.write(big);
                    failed.send(null);
                } catch (OpError e) {
                    failed.send(e);
                }
            });
            waitFor("the writer to park on a full socket buffer", () -> waiters() == 1);
            c.setWriteDeadline(Instant.now().minusSeconds(1));
            OpError e = failed.recv();
            check(e instanceof DeadlineExceededException, "the write timed out: %s", e);
            int n = e.bytesTransferred();
            check(n > 0 && n < big.length, "bytesTransferred %d of %d", n, big.length);
            c.close(); // the peer reads what was sent, then EOF
            byte[] got = new byte[big.length];
            int total = 0;
            for (int k; total < got.length && (k = s.read(got, total, got.length - total)) >= 0; ) {
                total += k;
            }
            check(s.read(new byte[1]) == -1, "EOF after %d bytes", total);
            check(total == n, "the peer read %d bytes, the write reported %d", total, n);
            check(java.util.Arrays.equals(got, 0, n, big, 0, n), "the peer's bytes are the buffer's first %d", n);

            OpError closed = assertThrows(OpError.class, () -> c.write(bytes("x")));
            check(
                    closed.closed() && closed.bytesTransferred() == 0,
                    "closed: %s, n %d",
                    closed,
                    closed.bytesTransferred());
            s.close();
            ln.close();

            PacketConn u = Net.listenPacket("udp", "127.0.0.1:0");
            Addr to = u.localAddr();
            u.close();
            OpError dgram = assertThrows(OpError.class, () -> u.writeTo(bytes("x"), to));
            check(dgram.bytesTransferred() == 0, "a datagram is all or nothing: n %d", dgram.bytesTransferred());
        });
    }

    /** Runs body on a new plain Java thread (not a goroutine) and returns what it threw, or null. */
    static Throwable onAPlainThread(IoBody body) throws InterruptedException {
        AtomicReference<Throwable> thrown = new AtomicReference<>();
        Thread t = new Thread(() -> {
            try {
                body.run();
            } catch (Throwable e) {
                thrown.set(e);
            }
        });
        t.start();
        t.join(); // blocks this carrier only until the thread's few non-waiting calls return
        return thrown.get();
    }

    /** Checks that body, run on a plain thread, threw an IllegalStateException saying want. */
    static void illegalOnAPlainThread(String want, IoBody body) throws InterruptedException {
        Throwable e = onAPlainThread(body);
        check(
                e instanceof IllegalStateException && want.equals(e.getMessage()),
                "expected IllegalStateException: %s, got %s",
                want,
                e);
    }

    /**
     * A net call that would wait, made from a plain Java thread, throws an IllegalStateException
     * naming the call and what to do (it said {@code gort: gopark called outside a goroutine}):
     * a read of an empty connection, a read while a goroutine holds the read lock (parked in its
     * own read), a write larger than the socket's buffers, an accept with nothing pending, a
     * readFrom of an empty UDP socket; a dial always. The calls that need not wait work there (a
     * write that fits, a read of data already received, a close), as a channel's non-blocking
     * operations do, and the connection is intact afterwards: a goroutine's read still gets the
     * next bytes.
     */
    @Test
    void aNetCallThatWouldWaitOnAPlainThreadNamesTheCall() {
        run(1, () -> {
            Listener ln = Net.listen("tcp", "127.0.0.1:0");
            Chan<Conn> srv = Chan.make(1);
            go(() -> srv.send(ln.accept()));
            Conn c = Net.dial("tcp", ln.addr().toString());
            Conn s = srv.recv();
            String hint = " would block outside a goroutine (use Go.run / Go.go)";

            illegalOnAPlainThread("gort: Conn.read" + hint, () -> c.read(new byte[8]));
            check(onAPlainThread(() -> s.write(bytes("hello"))) == null, "a write that fits works on a plain thread");
            check(readN(c, 1).equals("h"), "the goroutine reads the first byte, the rest is received");
            byte[] rest = new byte[8];
            check(onAPlainThread(() -> check(c.read(rest) == 4, "4 bytes")) == null, "a read of received data works");
            check(new String(rest, 0, 4, StandardCharsets.UTF_8).equals("ello"), "and reads them");

            Chan<String> got = Chan.make(1);
            go(() -> got.send(readN(c, 2)));
            waitFor("the goroutine's read to park", () -> waiters() == 1);
            illegalOnAPlainThread("gort: Conn.read" + hint, () -> c.read(new byte[8]));
            s.write(bytes("ok"));
            check(got.recv().equals("ok"), "the goroutine's read is undisturbed");

            illegalOnAPlainThread("gort: Conn.write" + hint, () -> c.write(new byte[64 << 20]));
            illegalOnAPlainThread("gort: Listener.accept" + hint, ln::accept);
            PacketConn u = Net.listenPacket("udp", "127.0.0.1:0");
            illegalOnAPlainThread("gort: PacketConn.readFrom" + hint, () -> u.readFrom(new byte[8]));
            illegalOnAPlainThread(
                    "gort: Net.dial called outside a goroutine (use Go.run / Go.go)",
                    () -> Net.dial("tcp", ln.addr().toString()));
            check(waiters() == 0, "no waiter left by the failed calls");
            check(onAPlainThread(u::close) == null, "a close works on a plain thread");
            s.close();
            c.close();
            ln.close();
        });
    }

    /**
     * Addresses as Go's net parses and prints them: an empty address (dial: missing address;
     * listen: a free port), signed and service-name ports, the host in "no suitable address", IPv6
     * in RFC 5952's short form (the JDK prints every group), and a deadline set on a closed conn
     * naming only its local address. Each differed before.
     */
    @Test
    void addressesParseAndPrintAsGos() {
        check(
                Addr.format6(java.net.InetAddress.ofLiteral("2001:db8::1").getAddress())
                        .equals("2001:db8::1"),
                "short");
        check(
                Addr.format6(java.net.InetAddress.ofLiteral("2001:db8:0:1:0:0:0:1")
                                .getAddress())
                        .equals("2001:db8:0:1::1"),
                "longest run");
        check(
                Addr.format6(java.net.InetAddress.ofLiteral("1:0:0:2:0:0:3:4").getAddress())
                        .equals("1::2:0:0:3:4"),
                "first of equal runs");
        check(
                Addr.format6(java.net.InetAddress.ofLiteral("1:0:2:3:4:5:6:7").getAddress())
                        .equals("1:0:2:3:4:5:6:7"),
                "one zero group stays");
        check(Addr.format6(new byte[16]).equals("::"), "unspecified");
        check(
                new Addr("tcp", java.net.InetAddress.ofLiteral("fe80::a:B"), 80)
                        .toString()
                        .equals("[fe80::a:b]:80"),
                "lower case");
        run(1, () -> {
            OpError e = assertThrows(OpError.class, () -> Net.dial("tcp", ""));
            check(e.getMessage().equals("dial tcp: missing address"), "%s", e);
            e = assertThrows(OpError.class, () -> Net.dial("tcp", "127.0.0.1:-1"));
            check(e.getMessage().equals("dial tcp: address -1: invalid port"), "%s", e);
            e = assertThrows(OpError.class, () -> Net.dial("tcp6", "127.0.0.1:80"));
            check(e.getMessage().equals("dial tcp6: address 127.0.0.1: no suitable address found"), "%s", e);
            e = assertThrows(OpError.class, () -> Net.dial("tcp", "127.0.0.1:no-such-service-here"));
            check(e.getMessage().equals("dial tcp: lookup tcp/no-such-service-here: unknown port"), "%s", e);
            check(Net.resolveAddr("tcp", "127.0.0.1:http").port() == 80, "http");
            check(Net.resolveAddr("tcp", "127.0.0.1:HTTPS").port() == 443, "https, any case");
            check(Net.resolveAddr("tcp", "127.0.0.1:+8080").port() == 8080, "a plus sign");
            check(Net.resolveAddr("tcp", "127.0.0.1:+").port() == 0, "a sign alone is port 0");
            Listener ln = Net.listen("tcp", "");
            check(ln.addr().port() != 0, "an empty address listens on a free port: %s", ln.addr());
            Conn c = Net.dial("tcp", "127.0.0.1:" + ln.addr().port());
            Conn a = ln.accept();
            c.close();
            e = assertThrows(OpError.class, () -> c.setReadDeadline(Instant.now()));
            check(e.getMessage().equals("set tcp " + c.localAddr() + ": use of closed network connection"), "%s", e);
            a.close();
            ln.close();
        });
    }

    @Test
    void dumpShowsIoWaitAndTheConnectionsAddresses() {
        run(1, () -> {
            Listener ln = Net.listen("tcp", "127.0.0.1:0");
            Chan<Conn> srv = Chan.make(1);
            go(() -> srv.send(ln.accept()));
            Conn c = Net.dial("tcp", ln.addr().toString());
            Conn s = srv.recv();
            go(() -> {
                try {
                    c.read(new byte[1]);
                } catch (OpError expected) {
                    // closed below
                }
            });
            waitFor("the reader to park", () -> waiters() == 1);
            String dump = Go.stack(true);
            check(dump.contains("[IO wait"), "%s", dump);
            check(dump.contains("tcp " + c.localAddr() + "->" + c.remoteAddr()), "%s", dump);
            c.close();
            s.close();
            ln.close();
        });
    }

    /** A program whose only goroutine waits on the network, with no deadline, is not a deadlock. */
    @Test
    void aGoroutineParkedOnTheNetworkIsNotADeadlock() throws Exception {
        Scheduler s = new Scheduler(GortTesting.config(1));
        AtomicReference<Addr> addr = new AtomicReference<>();
        AtomicReference<Throwable> failed = new AtomicReference<>();
        Thread t = new Thread(() -> {
            try {
                s.run(() -> {
                    try {
                        Listener ln = Net.listen("tcp", "127.0.0.1:0");
                        addr.set(ln.addr());
                        Conn c = ln.accept(); // main parks: every M is idle or in the poll
                        check(readN(c, 2).equals("hi"), "read");
                        c.close();
                        ln.close();
                    } catch (IOException e) {
                        throw new AssertionError(e);
                    }
                });
            } catch (Throwable e) {
                failed.set(e);
            }
        });
        t.start();
        long end = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        while ((addr.get() == null || s.netpoll.netpollWaiters() == 0) && System.nanoTime() < end && t.isAlive()) {
            Thread.onSpinWait();
        }
        // Main parked: wait until the P is idle, so that its M has gone through the idle path, whose
        // mput runs checkdead (Go: proc.go mput), instead of sleeping for a while.
        while (s.npidle() < s.gomaxprocs() && System.nanoTime() < end) {
            Thread.onSpinWait();
        }
        assertEquals(s.gomaxprocs(), s.npidle(), "the P never went idle while main waited on the network");
        assertTrue(t.isAlive(), "the program ended while main waited on the network: " + failed.get());
        try (java.net.Socket peer = new java.net.Socket("127.0.0.1", addr.get().port())) {
            peer.getOutputStream().write(bytes("hi"));
            t.join(20_000);
        }
        assertTrue(!t.isAlive(), "main returned");
        assertEquals(null, failed.get());
    }

    @Test
    void udpReadFromWriteToAndDeadlines() {
        run(2, () -> {
            PacketConn a = Net.listenPacket("udp", "127.0.0.1:0");
            PacketConn b = Net.listenPacket("udp", "127.0.0.1:0");
            Chan<String> got = Chan.make(1);
            go(() -> {
                byte[] buf = new byte[64];
                PacketConn.Packet p = b.readFrom(buf);
                got.send(new String(buf, 0, p.n(), StandardCharsets.UTF_8) + " from " + p.addr());
                b.writeTo(bytes("pong"), p.addr());
            });
            waitFor("the reader to park", () -> waiters() == 1);
            a.writeTo(bytes("ping"), b.localAddr());
            check(got.recv().equals("ping from " + a.localAddr()), "server got ping");
            byte[] buf = new byte[64];
            PacketConn.Packet p = a.readFrom(buf);
            check(new String(buf, 0, p.n(), StandardCharsets.UTF_8).equals("pong"), "client got pong");
            a.setReadDeadline(Instant.now().plusMillis(20));
            DeadlineExceededException e = assertThrows(DeadlineExceededException.class, () -> a.readFrom(buf));
            check(e.getMessage().equals("read udp " + a.localAddr() + ": i/o timeout"), "%s", e);
            a.close();
            b.close();
            e = null;
            OpError closed = assertThrows(OpError.class, () -> a.readFrom(buf));
            check(closed.closed(), "%s", closed);
        });
    }

    /**
     * A dialed connection's remote address is its peer's (Go's getpeername after connect), not the
     * address as dialed: a dial of a tcp4 listener's {@code 0.0.0.0:P} reaches {@code
     * 127.0.0.1:P}, and remoteAddr and the errors say so (they said {@code 0.0.0.0:P}).
     */
    @Test
    void aDialedConnsRemoteAddressIsItsPeers() {
        run(1, () -> {
            Listener ln = Net.listen("tcp4", ":0");
            check(ln.addr().toString().startsWith("0.0.0.0:"), "%s", ln.addr());
            Conn c = Net.dial("tcp", ln.addr().toString());
            Conn s = ln.accept();
            String peer = "127.0.0.1:" + ln.addr().port();
            check(c.remoteAddr().toString().equals(peer), "remoteAddr %s", c.remoteAddr());
            check(c.remoteAddr().equals(s.localAddr()), "the peer's own localAddr %s", s.localAddr());
            c.setReadDeadline(Instant.now().minusSeconds(1));
            OpError e = assertThrows(OpError.class, () -> c.read(new byte[1]));
            check(e.getMessage().equals("read tcp " + c.localAddr() + "->" + peer + ": i/o timeout"), "%s", e);
            c.close();
            s.close();
            ln.close();
        });
    }

    /**
     * A socket option set on a closed connection fails naming both ends, as Go's SetLinger and
     * SetNoDelay do ({@code set tcp L->R: use of closed network connection}; it said {@code set tcp
     * L: ...}), while a deadline setter's error names the local address alone, as Go's.
     */
    @Test
    void socketOptionErrorsNameBothEndsDeadlineErrorsTheLocalOne() {
        run(1, () -> {
            Listener ln = Net.listen("tcp", "127.0.0.1:0");
            Conn c = Net.dial("tcp", ln.addr().toString());
            Conn s = ln.accept();
            c.close();
            String both = "set tcp " + c.localAddr() + "->" + c.remoteAddr() + ": use of closed network connection";
            OpError e = assertThrows(OpError.class, () -> c.setLinger(0));
            check(e.getMessage().equals(both) && e.closed(), "setLinger: %s", e);
            e = assertThrows(OpError.class, () -> c.setNoDelay(false));
            check(e.getMessage().equals(both) && e.closed(), "setNoDelay: %s", e);
            e = assertThrows(OpError.class, () -> c.setWriteDeadline(Instant.now()));
            check(
                    e.getMessage().equals("set tcp " + c.localAddr() + ": use of closed network connection"),
                    "setWriteDeadline: %s",
                    e);
            s.close();
            ln.close();
        });
    }

    /**
     * A datagram write's errors name its destination, as Go's WriteTo wraps every error with it:
     * an expired write deadline is {@code write udp A->B: i/o timeout} and a closed socket {@code
     * write udp A->B: use of closed network connection} (both said {@code write udp A: ...}).
     */
    @Test
    void aDatagramWritesErrorsNameItsDestination() {
        run(1, () -> {
            PacketConn a = Net.listenPacket("udp", "127.0.0.1:0");
            PacketConn b = Net.listenPacket("udp", "127.0.0.1:0");
            a.setWriteDeadline(Instant.now().minusSeconds(1));
            OpError e = assertThrows(DeadlineExceededException.class, () -> a.writeTo(bytes("x"), b.localAddr()));
            check(
                    e.getMessage().equals("write udp " + a.localAddr() + "->" + b.localAddr() + ": i/o timeout"),
                    "%s",
                    e);
            check(e.addr().equals(b.localAddr()), "addr(): %s", e.addr());
            a.close();
            e = assertThrows(OpError.class, () -> a.writeTo(bytes("x"), b.localAddr()));
            check(
                    e.getMessage()
                            .equals("write udp " + a.localAddr() + "->" + b.localAddr()
                                    + ": use of closed network connection"),
                    "%s",
                    e);
            check(e.closed(), "%s", e);
            e = assertThrows(OpError.class, () -> a.readFrom(new byte[1]));
            check(
                    e.getMessage().equals("read udp " + a.localAddr() + ": use of closed network connection"),
                    "a read names no peer: %s",
                    e);
            b.close();
        });
    }

    /** Timers still fire on time once the poller exists (the blocking poll is the idle M's sleep). */
    @Test
    void timersStillFireOnceThePollerExists() {
        run(1, () -> {
            Listener ln = Net.listen("tcp", "127.0.0.1:0"); // initialises the poller
            for (int i = 0; i < 20; i++) {
                long t0 = System.nanoTime();
                Time.sleep(Duration.ofMillis(2));
                check(System.nanoTime() - t0 >= 2_000_000, "slept at least 2 ms");
            }
            ln.close();
        });
    }

    /**
     * A read inside a Java monitor (counted, as the agent counts one) cannot yield: it parks in
     * place on its carrier (ADR 0004). The poller that finds its socket readable must wake it
     * there, as goready does, and not queue a goroutine whose continuation is still mounted on a
     * sleeping carrier.
     */
    @ParameterizedTest(name = "GOMAXPROCS={0} poller={1}")
    @org.junit.jupiter.params.provider.CsvSource({"1,epoll", "2,epoll", "1,selector", "2,selector"})
    void aReadInsideAJavaMonitorParksInPlaceAndThePollerWakesItThere(int procs, String poller) {
        dev.gort.runtime.Config c =
                dev.gort.runtime.Config.fromEnvironment().withGomaxprocs(procs).withPanicExits(false);
        Go.run(c.withSettings(c.settings().withNetpoll(poller)), unchecked(() -> {
            Listener ln = Net.listen("tcp", "127.0.0.1:0");
            Conn client = Net.dial("tcp", ln.addr().toString());
            Conn server = ln.accept();
            Chan<String> got = Chan.make(1);
            Scheduler s = Scheduler.current();
            long before = s.syscallStats.snapshot(s).pinnedParks();
            go(() -> {
                Object mon = new Object();
                synchronized (mon) {
                    dev.gort.runtime.Poll.monitorEnter();
                    try {
                        got.send(readN(server, 2));
                    } finally {
                        dev.gort.runtime.Poll.monitorExit();
                    }
                }
            });
            waitFor(
                    "the reader parked in place",
                    () -> s.syscallStats.snapshot(s).pinnedParks() > before);
            client.write(bytes("hi"));
            assertEquals("hi", got.recv());
            client.close();
            server.close();
            ln.close();
        }));
    }
}
