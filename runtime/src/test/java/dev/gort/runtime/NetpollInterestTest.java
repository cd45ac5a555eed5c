package dev.gort.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;

import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;
import java.util.concurrent.atomic.AtomicInteger;
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

    private static boolean readArmed(Netpoll.PollDesc pd) {
        return (pd.key.interestOps() & SelectionKey.OP_READ) != 0;
    }

    @Test
    @Timeout(30)
    void aNonBlockingPollLeavesTheInterestOfAWokenQueuedReaderArmed() {
        Scheduler s = new Scheduler(TestSupport.config(1, Config.NETPOLL_SELECTOR));
        AtomicInteger wakes = new AtomicInteger();
        TestSupport.runChecked(s, () -> {
            Netpoll np = Netpoll.of(s);
            SocketChannel[] p = TestSupport.socketPair();
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
            G[] reader = new G[1];
            TestSupport.holdingSysmon(s, () -> {
                client.write(one); // readable from here on: only the test polls
                reader[0] = TestSupport.pollUntilWoken(np);
                assertNull(reader[0].schedlink, "one reader");
                // The reader is woken, not yet run; its socket is still readable.
                assertNull(np.netpoll(0), "nobody else to wake");
                assertEquals(disarms0, np.disarms.get(), "the second, non-blocking poll disarmed the read interest");
                assertEquals(true, readArmed(pd), "read interest after the second poll");
            });
            np.injectglist(reader[0]);
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
        });
        assertEquals(2, wakes.get());
    }

    @Test
    @Timeout(30)
    void aBlockingPollDisarmsTheInterestOfAWokenQueuedReader() {
        Scheduler s = new Scheduler(TestSupport.config(1, Config.NETPOLL_SELECTOR));
        AtomicInteger wakes = new AtomicInteger();
        TestSupport.runChecked(s, () -> {
            Netpoll np = Netpoll.of(s);
            SocketChannel[] p = TestSupport.socketPair();
            SocketChannel server = p[0];
            SocketChannel client = p[1];
            Netpoll.PollDesc pd = np.netpollopen(server, "test");
            TestSupport.parkReader(s, np, pd, wakes);
            G[] reader = new G[1];
            TestSupport.holdingSysmon(s, () -> {
                client.write(ByteBuffer.allocate(1)); // readable from here on: only the test polls
                reader[0] = TestSupport.pollUntilWoken(np);
                // A blocking poll (up to 10 s) sees only the queued reader's socket: it must
                // disarm it (or every blocking poll would return at once), and wake nobody.
                assertNull(np.netpoll(10_000_000_000L), "nobody else to wake");
                assertEquals(false, readArmed(pd), "read interest after a blocking poll reported it");
            });
            assertNotNull(reader[0]);
            np.injectglist(reader[0]);
            while (wakes.get() == 0) {
                Scheduler.gosched();
            }
            assertSame(null, reader[0].schedlink);
            assertNotEquals(0, wakes.get());
            pd.evict();
            server.close();
            client.close();
            np.netpollclose(pd);
        });
    }
}
