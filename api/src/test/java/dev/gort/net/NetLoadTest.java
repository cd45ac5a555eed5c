package dev.gort.net;

import static dev.gort.GortTesting.check;
import static dev.gort.net.NetTest.go;
import static dev.gort.net.NetTest.run;
import static dev.gort.net.NetTest.waitFor;
import static dev.gort.net.NetTest.waiters;

import dev.gort.Go;
import dev.gort.runtime.Scheduler;
import dev.gort.sync.Mutex;
import dev.gort.sync.WaitGroup;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Many connections on the poller: idle connections park goroutines, not threads; random reads,
 * writes, deadlines and closes lose no byte and no goroutine. Short CI sizes here; the
 * {@code stress}-tagged variants run the sizes.
 */
class NetLoadTest {

    static long fdLimit() {
        if (ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.UnixOperatingSystemMXBean u) {
            return u.getMaxFileDescriptorCount();
        }
        return 4096;
    }

    @ParameterizedTest(name = "GOMAXPROCS={0}")
    @ValueSource(ints = {1, 2})
    void idleConnectionsParkGoroutinesNotThreads(int procs) {
        idleConnections(procs, 2_000);
    }

    /** The 10,000 (capped by this process's descriptor limit: two per connection). */
    @Tag("stress")
    @ParameterizedTest(name = "GOMAXPROCS={0}")
    @ValueSource(ints = {1, 4})
    void tenThousandIdleConnections(int procs) {
        int n = (int) Math.min(10_000, (fdLimit() - 1_000) / 2);
        if (n < 10_000) {
            System.err.println("NetLoadTest: descriptor limit " + fdLimit() + ": " + n + " connections");
        }
        idleConnections(procs, n);
    }

    private static void idleConnections(int procs, int n) {
        run(procs, () -> {
            Listener ln = Net.listen("tcp", "127.0.0.1:0");
            WaitGroup served = new WaitGroup();
            AtomicLong eofs = new AtomicLong();
            served.add(1);
            go(() -> {
                try {
                    for (int i = 0; i < n; i++) {
                        Conn c = ln.accept();
                        served.add(1);
                        go(() -> {
                            try {
                                if (c.read(new byte[1]) == -1) { // parks until the client closes
                                    eofs.incrementAndGet();
                                }
                                c.close();
                            } finally {
                                served.done();
                            }
                        });
                    }
                } finally {
                    served.done();
                }
            });
            List<Conn> clients = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                clients.add(Net.dial("tcp", ln.addr().toString()));
            }
            // The poller's waiter count alone can reach n early: the accept goroutine parked for
            // the last connections counts too, and a readied goroutine leaves the count only after
            // its poll's list is on the run queues (Go's netpollAdjustWaiters after injectglist),
            // so main may run on with its last dial still counted. The accept goroutine gone and n
            // waiters are the n readers parked.
            waitFor(n + " readers parked", () -> waiters() == n && Go.numGoroutine() == n + 1);
            long threads = Scheduler.current().mcountPublic();
            check(
                    threads <= procs + 3,
                    "%d goroutines parked on the network with %d threads (GOMAXPROCS=%d)",
                    n,
                    threads,
                    procs);
            check(Go.numGoroutine() == n + 1, "goroutines %d", Go.numGoroutine());
            for (Conn c : clients) {
                c.close();
            }
            served.await();
            check(eofs.get() == n, "every reader saw EOF: %d of %d", eofs.get(), n);
            check(waiters() == 0, "no waiter left: %d", waiters());
            ln.close();
        });
    }

    @ParameterizedTest(name = "GOMAXPROCS={0}")
    @ValueSource(ints = {1, 2, 4})
    void randomTrafficLosesNoByteAndNoGoroutine(int procs) {
        traffic(procs, 12, 128 * 1024, 0x5eed + procs);
    }

    @Tag("stress")
    @ParameterizedTest(name = "GOMAXPROCS={0}")
    @ValueSource(ints = {1, 2, 4})
    void randomTrafficStress(int procs) {
        for (int round = 0; round < 5; round++) {
            traffic(procs, 200, 2 * 1024 * 1024, round * 31L + procs);
        }
    }

    static byte pattern(long seed, long i) {
        return (byte) ((seed + i) % 251);
    }

    /**
     * conns connections to an echo server; per connection a writer sends up to total bytes in
     * random chunks and a reader verifies them with random buffer sizes and random short read
     * deadlines (a timeout loses nothing: the reader clears it and goes on); a quarter of the
     * connections are closed abruptly by their writer mid-stream (both goroutines must then end
     * with the closed error, never hang).
     */
    private static void traffic(int procs, int conns, int total, long seed) {
        run(procs, () -> {
            Listener ln = Net.listen("tcp", "127.0.0.1:0");
            WaitGroup wg = new WaitGroup();
            AtomicLong echoed = new AtomicLong();
            AtomicLong written = new AtomicLong();
            AtomicLong verified = new AtomicLong();
            AtomicLong timeouts = new AtomicLong();
            Mutex mu = new Mutex();
            List<String> errors = new ArrayList<>();
            wg.add(1);
            go(() -> {
                try {
                    for (int i = 0; i < conns; i++) {
                        Conn c = ln.accept();
                        wg.add(1);
                        go(() -> {
                            byte[] buf = new byte[8192];
                            try {
                                for (int k; (k = c.read(buf)) >= 0; ) {
                                    c.write(buf, 0, k);
                                    echoed.addAndGet(k);
                                }
                            } catch (OpError e) {
                                // the client reset or closed mid-stream
                            } finally {
                                try {
                                    c.close();
                                } catch (IOException ignored) {
                                    // already closed
                                }
                                wg.done();
                            }
                        });
                    }
                } finally {
                    wg.done();
                }
            });
            SplittableRandom rnd = new SplittableRandom(seed);
            for (int i = 0; i < conns; i++) {
                Conn c = Net.dial("tcp", ln.addr().toString());
                long cseed = rnd.nextLong(1 << 20);
                SplittableRandom wr = rnd.split();
                SplittableRandom rr = rnd.split();
                boolean abort = wr.nextInt(4) == 0;
                long abortAt = abort ? wr.nextLong(total) : -1;
                wg.add(2);
                go(
                        () -> { // writer
                            byte[] chunk = new byte[64 * 1024];
                            long off = 0;
                            try {
                                while (off < total) {
                                    if (abort && off >= abortAt) {
                                        c.close();
                                        return;
                                    }
                                    int len = (int) Math.min(total - off, 1 + wr.nextInt(chunk.length));
                                    for (int j = 0; j < len; j++) {
                                        chunk[j] = pattern(cseed, off + j);
                                    }
                                    c.write(chunk, 0, len);
                                    off += len;
                                    written.addAndGet(len);
                                }
                                c.closeWrite();
                            } catch (OpError e) {
                                if (!abort) {
                                    mu.lock();
                                    errors.add("writer: " + e.getMessage());
                                    mu.unlock();
                                }
                            } finally {
                                wg.done();
                            }
                        });
                go(
                        () -> { // reader
                            byte[] buf = new byte[32 * 1024];
                            long off = 0;
                            try {
                                for (; ; ) {
                                    if (rr.nextInt(8) == 0) {
                                        c.setReadDeadline(Instant.now().plusNanos(rr.nextLong(2_000_000)));
                                    }
                                    int k;
                                    try {
                                        k = c.read(buf, 0, 1 + rr.nextInt(buf.length));
                                    } catch (DeadlineExceededException e) {
                                        timeouts.incrementAndGet();
                                        c.setReadDeadline(null);
                                        continue;
                                    }
                                    if (k < 0) {
                                        break;
                                    }
                                    for (int j = 0; j < k; j++) {
                                        if (buf[j] != pattern(cseed, off + j)) {
                                            throw new AssertionError("byte " + (off + j) + " corrupted");
                                        }
                                    }
                                    off += k;
                                    verified.addAndGet(k);
                                    c.setReadDeadline(null);
                                }
                                if (off != total) {
                                    mu.lock();
                                    errors.add("reader: EOF after " + off + " of " + total);
                                    mu.unlock();
                                }
                                c.close();
                            } catch (OpError e) {
                                if (!abort || !e.closed()) {
                                    mu.lock();
                                    errors.add("reader (abort=" + abort + "): " + e.getMessage());
                                    mu.unlock();
                                }
                            } finally {
                                wg.done();
                            }
                        });
            }
            wg.await();
            check(errors.isEmpty(), "%s", errors);
            // (each connection that was not aborted checked off == total itself)
            check(verified.get() <= echoed.get(), "verified %d > echoed %d", verified.get(), echoed.get());
            waitFor("the goroutines to exit", () -> Go.numGoroutine() == 1);
            check(waiters() == 0, "no waiter left: %d", waiters());
            ln.close();
        });
    }
}
