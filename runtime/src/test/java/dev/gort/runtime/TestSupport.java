package dev.gort.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

/** Test configuration and helpers; the goroutine semaphore is {@link GoSema}. */
final class TestSupport {
    private TestSupport() {}

    static Config config(int procs) {
        return Config.fromEnvironment().withGomaxprocs(procs).withPanicExits(false);
    }

    /** {@link #config(int)} in the given syscall model ({@code psyscall}: Go 1.25's, else Go 1.26+'s). */
    static Config config(int procs, boolean psyscall) {
        Config c = config(procs);
        Config.Settings st = c.settings();
        return c.withSettings(st.withGodebug(st.godebug().with("psyscall=" + (psyscall ? 1 : 0))));
    }

    /** {@link #config(int)} with the network poller {@code poller} ({@code epoll} or {@code selector}). */
    static Config config(int procs, String poller) {
        Config c = config(procs);
        return c.withSettings(c.settings().withNetpoll(poller));
    }

    /** A body that may throw anything, for {@link #runChecked}. */
    interface Body {
        void run() throws Throwable;
    }

    /**
     * Runs {@code body} as goroutine 1 of {@code s} and rethrows, on the test's thread, what it threw:
     * an {@code Error} or {@code RuntimeException} as it is (so a failed assumption in the body aborts
     * the test instead of failing it), anything else wrapped in an {@code AssertionError}.
     */
    static void runChecked(Scheduler s, Body body) {
        AtomicReference<Throwable> failed = new AtomicReference<>();
        s.run(() -> {
            try {
                body.run();
            } catch (Throwable t) {
                failed.set(t);
            }
        });
        Throwable t = failed.get();
        if (t instanceof Error e) {
            throw e;
        }
        if (t instanceof RuntimeException e) {
            throw e;
        }
        if (t != null) {
            throw new AssertionError(t);
        }
    }

    /** A connected loopback pair: the accepted (server) side, non-blocking, and the client. */
    static SocketChannel[] socketPair() throws IOException {
        try (ServerSocketChannel ss = ServerSocketChannel.open()) {
            ss.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
            SocketChannel client = SocketChannel.open(ss.getLocalAddress());
            SocketChannel server = ss.accept();
            server.configureBlocking(false);
            return new SocketChannel[] {server, client};
        }
    }

    /**
     * Starts a goroutine that waits once for {@code pd} to be readable (no error) and then counts
     * the wake in {@code woke}; returns once it is parked on the poller. Call from a goroutine of
     * {@code s}, with no other goroutine waiting on the network.
     */
    static void parkReader(Scheduler s, Netpoll np, Netpoll.PollDesc pd, AtomicInteger woke) {
        s.newproc(() -> {
            Netpoll.pollReset(pd, Netpoll.MODE_READ);
            assertEquals(Netpoll.pollNoError, Netpoll.pollWait(pd, Netpoll.MODE_READ));
            woke.incrementAndGet();
        });
        while (np.netpollWaiters() == 0) {
            Scheduler.gosched(); // the reader runs and parks
        }
    }

    /**
     * Runs {@code body} while a helper thread holds sysmon's lock, so that no sysmon round (its
     * netpoll, its retake) runs meanwhile. The calling goroutine never blocks on the monitor itself:
     * a carrier BLOCKED on it across two sysmon rounds (sysmon can take the lock back before a
     * woken carrier gets a CPU on a loaded machine) is, to sysmon, a carrier blocked in user code,
     * whose P it hands to a new M (Retake.retakeBlocked); that M's own netpoll then takes the
     * readiness the test polls for, and the test's poll waits in vain
     * (NetpollEpollTest.theSelectorDoesReportItAgainTheCostEpollRemoves failed so once, in a
     * full runtime test run: "the poller did not report the readable socket within 10 s"). Make
     * the socket readable inside {@code body}: before it, sysmon's own netpoll may take it.
     */
    static void holdingSysmon(Scheduler s, Body body) throws Throwable {
        java.util.concurrent.atomic.AtomicBoolean held = new java.util.concurrent.atomic.AtomicBoolean();
        java.util.concurrent.atomic.AtomicBoolean release = new java.util.concurrent.atomic.AtomicBoolean();
        Thread holder = new Thread(
                () -> {
                    synchronized (s.sysmon().sysmonlock) {
                        held.set(true);
                        while (!release.get()) {
                            java.util.concurrent.locks.LockSupport.park(); // keeps the monitor
                        }
                    }
                },
                "sysmonlock-holder");
        holder.setDaemon(true);
        holder.start();
        while (!held.get()) {
            Thread.onSpinWait(); // not a monitor wait: this carrier stays RUNNABLE
        }
        try {
            body.run();
        } finally {
            release.set(true);
            java.util.concurrent.locks.LockSupport.unpark(holder);
        }
    }

    /** Polls (non-blocking) until the poller wakes someone; bounded. */
    static G pollUntilWoken(Netpoll np) {
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
}
