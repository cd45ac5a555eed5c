package dev.gort.runtime;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;

import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@link Netpoll#waitJdkSocketReadable}'s protocol with the socket's state lock (no agent: the
 * wait is called directly).
 */
class JdkSocketWaitTest {
    /**
     * A wait that ended without its event (here its timeout) may leave its registration armed, and
     * removes it under the socket's state lock: it withdraws from the map of waits only there,
     * after the removal. Withdrawn before (as it was), a wait another goroutine published in
     * between re-armed that registration, which the first wait's removal then took away: the second
     * waiter never woke for data that came (a helper's reproduction: lost in 5 of 6 rounds). Here a
     * thread holds the state lock from before the timeout until the timed-out wait has evicted its
     * descriptor (so it waits for the lock to remove the registration): the wait is still published.
     */
    @Test
    @Timeout(60)
    void aTimedOutWaitWithdrawsOnlyUnderTheSocketsLockAfterItsRegistrationIsRemoved() throws Exception {
        try (ServerSocket ss = new ServerSocket(0, 8, InetAddress.getLoopbackAddress());
                Socket client = new Socket(ss.getInetAddress(), ss.getLocalPort());
                Socket server = ss.accept()) {
            Object impl = PeerStreams.socketImplClosedBy(client);
            int fd = PeerStreams.socketFd(impl);
            Object lock = PeerStreams.socketStateLock(impl);
            AtomicReference<Object> publishedWhenEvicted = new AtomicReference<>("not looked at");
            AtomicReference<Netpoll.PollDesc> waited = new AtomicReference<>();
            Thread holder = new Thread(() -> {
                Netpoll.PollDesc pd;
                while ((pd = Netpoll.jdkSocketWait(impl)) == null) {
                    Thread.onSpinWait(); // until the wait is published
                }
                waited.set(pd);
                synchronized (lock) {
                    while (!pd.closing()) {
                        Thread.onSpinWait(); // until it timed out and evicted its descriptor
                    }
                    publishedWhenEvicted.set(Netpoll.jdkSocketWait(impl));
                }
            });
            holder.start();
            Scheduler s = new Scheduler(TestSupport.config(2, "epoll"));
            boolean[] ready = {true};
            TestSupport.runChecked(s, () -> ready[0] = Netpoll.of(s).waitJdkSocketReadable(impl, fd, 50_000_000L));
            holder.join();
            assertFalse(ready[0], "the wait did not time out");
            assertSame(
                    waited.get(),
                    publishedWhenEvicted.get(),
                    "the timed-out wait withdrew before it took the socket's lock to remove its registration");
            assertNull(Netpoll.jdkSocketWait(impl), "the wait stayed published after it ended");
        }
    }
}
