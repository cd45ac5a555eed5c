package dev.gort.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The read interest of a socket the poller has already woken a goroutine for, while that goroutine
 * waits in a run queue (Go's edge-triggered epoll would not report the socket again; Java's
 * level-triggered selector does, until the data is read).
 *
 * <ul>
 *   <li>A non-blocking poll (findRunnable's before stealing, sysmon's 10 ms poll) leaves that
 *       interest armed: the goroutine consumes the notification when it runs and parks again on an
 *       armed key, so the message costs no interest update. Before, every such report disarmed the
 *       key and the goroutine's next park re-armed it: two {@code epoll_ctl}s per message for every
 *       socket whose goroutine was still queued at a sysmon poll (the 1,000-connection echo at
 *       GOMAXPROCS=1: ~5 interest updates per message).
 *   <li>A blocking poll disarms it: armed, the level-triggered report would make the poll return
 *       at once, and the last idle M would spin instead of sleeping.
 * </ul>
 *
 * <p>The selector's ({@code -Dgort.netpoll=selector}); epoll, edge-triggered, registers each socket
 * once and never changes it (NetpollEpollTest).
 *
 * <p>GOMAXPROCS=1, and the test's goroutine plays the scheduler's poller: it holds sysmon's lock
 * around its polls, so that no sysmon poll or preemption gets between them.
 */
class NetpollInterestTest {

    /** A connected loopback pair: the accepted (server) side, non-blocking, and the client. */
    private static SocketChannel[] pair() throws IOException {
        try (ServerSocketChannel ss = ServerSocketChannel.open()) {
            ss.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
            SocketChannel client = SocketChannel.open(ss.getLocalAddress());
            SocketChannel server = ss.accept();
            server.configureBlocking(false);
            return new SocketChannel[] {server, client};
        }
    }

    private static boolean readArmed(Netpoll.PollDesc pd) {
        return (pd.key.interestOps() & SelectionKey.OP_READ) != 0;
    }

    /** Polls (non-blocking) until the poller wakes someone; bounded. */
    private static G pollUntilWoken(Netpoll np) {
        long deadline = System.nanoTime() + 10_000_000_000L;
        G list;
        while ((list = np.netpoll(0)) == null) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("the poller did not report the readable socket within 10 s");
            }
            Thread.onSpinWait();
        }
        return list;
    }

    @Test
    @Timeout(30)
    void aNonBlockingPollLeavesTheInterestOfAWokenQueuedReaderArmed() {
        Scheduler s = new Scheduler(TestSupport.config(1, Config.NETPOLL_SELECTOR));
        AtomicReference<Throwable> failed = new AtomicReference<>();
        AtomicInteger wakes = new AtomicInteger();
        s.run(() -> {
            try {
                Netpoll np = Netpoll.of(s);
                SocketChannel[] p = pair();
                SocketChannel server = p[0];
                SocketChannel client = p[1];
                Netpoll.PollDesc pd = np.netpollopen(server, "test");
                s.newproc(() -> {
                    // the reader: wait, count, wait again (on the key as the first wait left it)
                    for (int i = 0; i < 2; i++) {
                        Netpoll.pollReset(pd, Netpoll.MODE_READ);
                        assertEquals(Netpoll.pollNoError, Netpoll.pollWait(pd, Netpoll.MODE_READ));
                        wakes.incrementAndGet();
                    }
                });
                while (np.netpollWaiters() == 0) {
                    Scheduler.gosched(); // the reader runs and parks
                }
                long arms0 = np.arms.get();
                long disarms0 = np.disarms.get();
                ByteBuffer one = ByteBuffer.allocate(1);
                client.write(one);
                G reader;
                synchronized (s.sysmon().sysmonlock) {
                    reader = pollUntilWoken(np);
                    assertNull(reader.schedlink, "one reader");
                    // The reader is woken, not yet run; its socket is still readable.
                    assertNull(np.netpoll(0), "nobody else to wake");
                    assertEquals(
                            disarms0, np.disarms.get(), "the second, non-blocking poll disarmed the read interest");
                    assertEquals(true, readArmed(pd), "read interest after the second poll");
                }
                np.injectglist(reader);
                server.read(ByteBuffer.allocate(8)); // the message is consumed
                while (wakes.get() == 0 || np.netpollWaiters() == 0) {
                    Scheduler.gosched(); // the reader runs and parks again
                }
                assertEquals(arms0, np.arms.get(), "the reader's second park had to re-arm the interest");
                client.write(one.flip());
                while (wakes.get() < 2) {
                    Scheduler.gosched(); // the scheduler's own poll wakes it
                }
                pd.evict();
                server.close();
                client.close();
                np.netpollclose(pd);
            } catch (Throwable t) {
                failed.set(t);
            }
        });
        if (failed.get() != null) {
            throw new AssertionError(failed.get());
        }
        assertEquals(2, wakes.get());
    }

    @Test
    @Timeout(30)
    void aBlockingPollDisarmsTheInterestOfAWokenQueuedReader() {
        Scheduler s = new Scheduler(TestSupport.config(1, Config.NETPOLL_SELECTOR));
        AtomicReference<Throwable> failed = new AtomicReference<>();
        AtomicInteger wakes = new AtomicInteger();
        s.run(() -> {
            try {
                Netpoll np = Netpoll.of(s);
                SocketChannel[] p = pair();
                SocketChannel server = p[0];
                SocketChannel client = p[1];
                Netpoll.PollDesc pd = np.netpollopen(server, "test");
                s.newproc(() -> {
                    Netpoll.pollReset(pd, Netpoll.MODE_READ);
                    assertEquals(Netpoll.pollNoError, Netpoll.pollWait(pd, Netpoll.MODE_READ));
                    wakes.incrementAndGet();
                });
                while (np.netpollWaiters() == 0) {
                    Scheduler.gosched();
                }
                client.write(ByteBuffer.allocate(1));
                G reader;
                synchronized (s.sysmon().sysmonlock) {
                    reader = pollUntilWoken(np);
                    // A blocking poll (up to 10 s) sees only the queued reader's socket: it must
                    // disarm it (or every blocking poll would return at once), and wake nobody.
                    assertNull(np.netpoll(10_000_000_000L), "nobody else to wake");
                    assertEquals(false, readArmed(pd), "read interest after a blocking poll reported it");
                }
                assertNotNull(reader);
                np.injectglist(reader);
                while (wakes.get() == 0) {
                    Scheduler.gosched();
                }
                assertSame(null, reader.schedlink);
                assertNotEquals(0, wakes.get());
                pd.evict();
                server.close();
                client.close();
                np.netpollclose(pd);
            } catch (Throwable t) {
                failed.set(t);
            }
        });
        if (failed.get() != null) {
            throw new AssertionError(failed.get());
        }
    }
}
