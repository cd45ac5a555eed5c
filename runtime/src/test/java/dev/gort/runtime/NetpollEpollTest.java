package dev.gort.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The edge-triggered epoll poller ({@code -Dgort.netpoll=epoll}, Go's netpoll_epoll.go): a socket
 * is registered once and reported once per readiness change, so a socket whose goroutine a poll
 * has woken and that waits in a run queue is not reported again (the JDK's level-triggered
 * selector reports it at every poll until the data is read: with 1,000 connections at
 * GOMAXPROCS=1, hundreds of keys per sysmon poll); a break wakes a blocked poll and is not lost
 * when it comes first; a closed socket leaves the epoll set, and the runtime's exit closes the
 * poller's own descriptors.
 *
 * <p>GOMAXPROCS=1, and the test's goroutine plays the scheduler's poller: it holds sysmon's lock
 * around its polls, so that no sysmon poll gets between them (as NetpollInterestTest).
 */
class NetpollEpollTest {

    @BeforeAll
    static void epollIsHere() {
        Assumptions.assumeTrue(Epoll.available(), () -> "epoll: " + Epoll.UNAVAILABLE);
    }

    static Config config(String poller) {
        return TestSupport.config(1, poller);
    }

    /**
     * The regression test of the level-triggered re-reports: after the poll that woke the reader,
     * three more non-blocking polls while it is still queued (its data unread). Returns the
     * reports of its socket those polls made.
     */
    static long reportsOfAQueuedReadersSocket(String poller) {
        Scheduler s = new Scheduler(config(poller));
        AtomicInteger wakes = new AtomicInteger();
        long[] reports = {-1};
        TestSupport.runChecked(s, () -> {
            Netpoll np = Netpoll.of(s);
            SocketChannel[] p = TestSupport.socketPair();
            SocketChannel server = p[0];
            SocketChannel client = p[1];
            Netpoll.PollDesc pd = np.netpollopen(server, "test");
            assertEquals(poller, np.pollerName());
            TestSupport.parkReader(s, np, pd, wakes);
            G[] reader = new G[1];
            TestSupport.holdingSysmon(s, () -> {
                client.write(ByteBuffer.allocate(1)); // readable from here on: only the test polls
                reader[0] = TestSupport.pollUntilWoken(np);
                assertNull(reader[0].schedlink, "one reader");
                long before = np.queuedReports();
                for (int i = 0; i < 3; i++) {
                    assertNull(np.netpoll(0), "nobody else to wake");
                }
                reports[0] = np.queuedReports() - before;
            });
            np.injectglist(reader[0]);
            while (wakes.get() == 0) {
                Scheduler.gosched();
            }
            pd.evict();
            np.netpollclose(pd);
            server.close();
            client.close();
        });
        assertEquals(1, wakes.get());
        return reports[0];
    }

    @Test
    @Timeout(30)
    void aSocketWhoseGoroutineIsWokenAndQueuedIsNotReportedAgain() {
        assertEquals(0, reportsOfAQueuedReadersSocket(Config.NETPOLL_EPOLL), "epoll re-reported the queued reader");
    }

    @Test
    @Timeout(30)
    void theSelectorDoesReportItAgainTheCostEpollRemoves() {
        // the control: the level-triggered selector reports the unread socket at each of the polls
        assertEquals(3, reportsOfAQueuedReadersSocket(Config.NETPOLL_SELECTOR));
    }

    @Test
    @Timeout(30)
    void theDefaultPollerIsEpollWhereItIsAvailable() {
        Assumptions.assumeTrue(Config.setting("gort.netpoll", "GORT_NETPOLL") == null, "a poller is set");
        assertEquals(Config.NETPOLL_EPOLL, Config.netpollSetting());
    }

    @Test
    @Timeout(30)
    void aSocketIsRegisteredOnceAndLeavesTheSetAtClose() {
        Scheduler s = new Scheduler(config(Config.NETPOLL_EPOLL));
        TestSupport.runChecked(s, () -> {
            Netpoll np = Netpoll.of(s);
            SocketChannel[] p = TestSupport.socketPair();
            Netpoll.PollDesc pd = np.netpollopen(p[0], "test");
            assertEquals(1, np.epollRegistered());
            // Two waits on the same registration: no re-registration, no interest update.
            for (int i = 0; i < 2; i++) {
                CountDownLatch parked = new CountDownLatch(1);
                AtomicInteger woke = new AtomicInteger();
                s.newproc(() -> {
                    Netpoll.pollReset(pd, Netpoll.MODE_READ);
                    parked.countDown();
                    assertEquals(Netpoll.pollNoError, Netpoll.pollWait(pd, Netpoll.MODE_READ));
                    try {
                        p[0].read(ByteBuffer.allocate(8));
                    } catch (IOException e) {
                        throw new java.io.UncheckedIOException(e);
                    }
                    woke.incrementAndGet();
                });
                while (np.netpollWaiters() == 0) {
                    Scheduler.gosched();
                }
                p[1].write(ByteBuffer.allocate(1));
                while (woke.get() == 0) {
                    Scheduler.gosched(); // the scheduler's own polls wake it
                }
            }
            assertEquals(1, np.epollRegistered());
            assertEquals(0, np.arms.get(), "epoll never changes a registration");
            pd.evict();
            np.netpollclose(pd);
            assertEquals(0, np.epollRegistered());
            np.netpollclose(pd); // a second close is nothing
            assertEquals(0, np.epollRegistered());
            p[0].close();
            p[1].close();
        });
    }

    /**
     * A channel the JDK closed itself (a failed {@code connect} or {@code finishConnect} closes it)
     * left the epoll set with its file, and its number may already belong to another registered
     * socket: netpollclose must not {@code EPOLL_CTL_DEL} that number. Before, it did (and failed
     * with EBADF when the number was free: NetTest.badInputGetsGoErrorsAndLosesNothing): the next
     * owner lost its registration, and its reader was never woken.
     */
    @Test
    @Timeout(60)
    void netpollcloseOfAChannelClosedAlreadyLeavesTheNumbersNextOwnerRegistered() {
        Scheduler s = new Scheduler(config(Config.NETPOLL_EPOLL));
        TestSupport.runChecked(s, () -> {
            try (ServerSocketChannel ss = ServerSocketChannel.open()) {
                ss.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
                Netpoll np = Netpoll.of(s);
                np.netpollGenericInit();
                // warm: the classes below load now, not between a's close and b's open
                SocketChannel.open(ss.getLocalAddress()).close();
                ss.accept().close();
                SocketChannel a = SocketChannel.open();
                a.configureBlocking(false);
                Netpoll.PollDesc pa = np.netpollopen(a, "a");
                a.close(); // as the JDK does when a connect fails; its number is free now
                SocketChannel b = SocketChannel.open(ss.getLocalAddress()); // the lowest free number
                SocketChannel peer = ss.accept();
                Assumptions.assumeTrue(
                        Epoll.fdVal(b) == pa.fd, "another thread took the freed descriptor number first");
                b.configureBlocking(false);
                Netpoll.PollDesc pb = np.netpollopen(b, "b");
                pa.evict();
                np.netpollclose(pa); // A's close, after the JDK's: must not remove b's registration
                assertEquals(1, np.epollRegistered());
                AtomicInteger woke = new AtomicInteger();
                TestSupport.parkReader(s, np, pb, woke);
                peer.write(ByteBuffer.allocate(1));
                long deadline = System.nanoTime() + 10_000_000_000L;
                while (woke.get() == 0) {
                    assertTrue(System.nanoTime() < deadline, "b's reader was never woken: its registration is gone");
                    Scheduler.gosched(); // the scheduler's own polls wake it
                }
                pb.evict();
                np.netpollclose(pb);
                b.close();
                peer.close();
            }
        });
    }

    @Test
    @Timeout(30)
    void aBreakWakesABlockedPollAndOneThatComesFirstIsNotLost() throws Exception {
        Scheduler s = new Scheduler(config(Config.NETPOLL_EPOLL));
        TestSupport.runChecked(s, () -> {
            Netpoll np = Netpoll.of(s);
            np.netpollGenericInit();
            TestSupport.holdingSysmon(s, () -> {
                // First: the break before the poll; the blocking poll returns at once.
                np.netpollBreak();
                assertNull(np.netpoll(0), "a non-blocking poll leaves the break to the blocking one");
                assertNull(np.netpoll(-1), "the break reached no goroutine");
                // Then: a poll blocked (up to 60 s) while another thread breaks it.
                CountDownLatch polling = new CountDownLatch(1);
                AtomicReference<Object> result = new AtomicReference<>("not returned");
                Thread poller = new Thread(() -> {
                    polling.countDown();
                    result.set(np.netpoll(60_000_000_000L));
                });
                poller.start();
                polling.await();
                long deadline = System.nanoTime() + 30_000_000_000L;
                while (poller.isAlive()) {
                    np.netpollBreak(); // until it is in epoll_wait and leaves it (a break is deduplicated)
                    poller.join(10);
                    assertTrue(System.nanoTime() < deadline, "the break did not wake the blocked poll");
                }
                assertSame(null, result.get());
            });
        });
    }

    @Test
    @Timeout(60)
    void theRuntimesExitClosesThePollersDescriptors() throws Exception {
        Assumptions.assumeTrue(Files.isDirectory(Path.of("/proc/self/fd")), "Linux /proc");
        // warm: classes, the JDK's own descriptors
        for (int round = 0; round < 2; round++) {
            long before = openFds();
            for (int i = 0; i < 5; i++) {
                Scheduler s = new Scheduler(config(Config.NETPOLL_EPOLL));
                s.run(() -> {
                    try {
                        Netpoll.of(s).netpollGenericInit();
                    } catch (IOException e) {
                        throw new java.io.UncheckedIOException(e);
                    }
                });
            }
            long after = openFds();
            if (round == 1) {
                assertEquals(before, after, "descriptors left open by five runtimes' pollers");
            }
        }
    }

    static long openFds() throws IOException {
        try (var st = Files.list(Path.of("/proc/self/fd"))) {
            return st.count();
        }
    }
}
