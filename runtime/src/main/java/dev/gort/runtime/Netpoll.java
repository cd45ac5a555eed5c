package dev.gort.runtime;

import dev.gort.runtime.trace.Ev;
import java.io.IOException;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.channels.CancelledKeyException;
import java.nio.channels.ClosedSelectorException;
import java.nio.channels.SelectableChannel;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;

/**
 * The network poller: goroutines that wait for a socket park here, not their carriers; the
 * scheduler polls for ready sockets and runs the goroutines they wake. The one file to open for
 * the netpoller.
 *
 * <h2>Model (Go's netpoll.go)</h2>
 *
 * <p>Each socket has a {@link PollDesc} with Go's two semaphores, {@code rg} (read) and {@code wg}
 * (write). Each is {@code pdNil} (null), {@link #pdReady} (an I/O notification is pending),
 * {@link #pdWait} (a goroutine is preparing to park) or the parked {@link G}. A goroutine's read
 * first tries the non-blocking call; only when it would block does it call {@link #pollWait}, which
 * parks it ({@code netpollblock}) after re-checking closing and deadlines. Whoever polls
 * ({@link #netpoll}) turns ready descriptors into runnable goroutines ({@code netpollready});
 * closing ({@link PollDesc#evict}) and deadlines ({@code netpolldeadlineimpl}, on the runtime's own
 * timers) unblock them with an error. The scheduler polls in Go's places: a non-blocking poll in
 * {@code findRunnable} before stealing, the blocking poll of the last idle M until the next timer,
 * sysmon's poll when nobody polled for 10 ms.
 *
 * <p>Besides gort's own sockets ({@code dev.gort.net}), a goroutine's read of one of the JDK's
 * blocking sockets that would block waits here too, on a one-shot registration of its descriptor
 * ({@link #waitJdkSocketReadable}: gort only, Go's sockets are all its own).
 *
 * <h2>Two pollers ({@code -Dgort.netpoll}, read once in {@link Config})</h2>
 *
 * <ul>
 *   <li>{@code epoll} (the default where it is available): Go's netpoll_epoll.go, in {@link Epoll},
 *       through the FFM API. Each socket is registered once, edge-triggered for reading and
 *       writing; an event sets the semaphore to pdReady when nobody waits, which the goroutine
 *       consumes before it parks (Go's protocol: an event between its EAGAIN and its park is not
 *       lost), so a socket whose goroutine is woken and queued is not reported again, and no wait
 *       changes the registration. Polls run concurrently (the blocking one on its own event
 *       array). Its differences from Go are listed in {@link Epoll}; also: Go's
 *       {@code pollEventErr} (an EPOLLERR-only event fails a read at once) is not ported, the
 *       channel's own read reports the error.
 *   <li>{@code selector}: the JDK's {@link Selector}, where epoll is not available (not Linux, no
 *       native access, {@code sun.nio.ch} not exported to gort). Its differences follow.
 * </ul>
 *
 * <h2>Differences from Go under the selector</h2>
 *
 * <ul>
 *   <li>Java's {@code Selector} is level-triggered, Go's epoll edge-triggered. A socket is
 *       registered once ({@link #netpollopen}); its interest is armed when a goroutine first parks
 *       on it and stays armed while goroutines keep waiting on it (the edge-triggered emulation:
 *       a connection that goes back and forth costs no interest update per message, nor does a
 *       non-blocking poll that reports a socket again whose goroutine is woken but still queued).
 *       The poller disarms a read interest only when it reports it and nobody waits (nor was
 *       woken), or when a blocking poll reports it, and a write interest whenever it reports it
 *       ({@link #netpollready}): a socket with unread data and no reader, or a writable one, would
 *       otherwise make every poll return at once. Arming again is
 *       a queued update (an {@code epoll_ctl} at the next selection); only when an M is blocked in
 *       the poll ({@code sched.lastpoll == 0}) does it cost a {@code Selector.wakeup()}, so that
 *       the blocked poll picks the new interest up.
 *   <li>Go's polls run concurrently on one epoll descriptor. A Java selection operation holds the
 *       selector's monitor, so here one thread polls at a time ({@link #pollLock}): a non-blocking
 *       poll that finds the lock taken returns nothing (the holder finds the events), a blocking
 *       one waits for it.
 *   <li>A Java selection operation consumes a pending {@code wakeup()}, where Go's non-blocking
 *       poll leaves the break for the blocking one: a non-blocking poll that may have eaten it
 *       re-issues it when some M is (about to be) blocked in the poll.
 *   <li>Closing a registered channel in Java only cancels its key: the descriptor is released at
 *       the selector's next selection operation. {@link #netpollclose} cancels the key and runs
 *       one before the channel is closed, so that the close releases the descriptor (and a
 *       listener's port) at once.
 * </ul>
 *
 * <p>Both: the poller is created at the first network use (Go: {@code netpollGenericInit}), not at
 * the first timer; until then the last idle M sleeps until the next timer on a {@link Note}.
 *
 * <p>Go: netpoll.go, netpoll_epoll.go; proc.go injectglist
 */
public final class Netpoll implements Describable {
    /** An I/O readiness notification is pending. Go: pdReady. */
    static final Object pdReady = new Object() {
        @Override
        public String toString() {
            return "pdReady";
        }
    };
    /** A goroutine prepares to park on the semaphore. Go: pdWait. */
    static final Object pdWait = new Object() {
        @Override
        public String toString() {
            return "pdWait";
        }
    };

    /** Go: netpoll.go pollNoError. */
    public static final int pollNoError = 0;
    /** Descriptor is closed. Go: pollErrClosing. */
    public static final int pollErrClosing = 1;
    /** I/O deadline expired. Go: pollErrTimeout. */
    public static final int pollErrTimeout = 2;

    /** Read mode, as Go's {@code 'r'}. */
    public static final int MODE_READ = 'r';
    /** Write mode, as Go's {@code 'w'}. */
    public static final int MODE_WRITE = 'w';
    /** Both, as Go's {@code 'r'+'w'} (pollSetDeadline only). */
    public static final int MODE_READ_WRITE = 'r' + 'w';

    // PollDesc.info bits. Go: pollClosing, pollExpiredReadDeadline, pollExpiredWriteDeadline.
    static final int pollClosing = 1;
    static final int pollExpiredReadDeadline = 4;
    static final int pollExpiredWriteDeadline = 8;

    private static final VarHandle RG;
    private static final VarHandle WG;

    static {
        try {
            MethodHandles.Lookup l = MethodHandles.lookup();
            RG = l.findVarHandle(PollDesc.class, "rg", Object.class);
            WG = l.findVarHandle(PollDesc.class, "wg", Object.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** Immutable: the runtime this poller serves. */
    final Scheduler sched;
    /**
     * The poller, one of two, written once by netpollGenericInit under initLock and read volatile
     * (Go: netpollInited): Linux's edge-triggered epoll ({@code -Dgort.netpoll=epoll}), else the
     * JDK's level-triggered Selector.
     */
    private volatile Selector selector;

    private volatile Epoll epoll;
    /**
     * Read keys reported for a goroutine a poll had woken and that had not run yet (the selector's
     * level-triggered re-reports). Guarded by pollLock; read racily by tests.
     */
    private long selQueuedReports;

    private final Object initLock = new Object();
    /**
     * Held by the thread in a selection operation (at most one: see the class comment). Taken with
     * tryLock by non-blocking polls (barging), lock by the blocking poll, and by netpollclose with
     * a timed tryLock between breaks. Fair, so that a blocking poll queues behind a waiting close.
     */
    private final ReentrantLock pollLock = new ReentrantLock(true);
    /** Goroutines parked on a descriptor (Go: netpollWaiters). Any thread, atomic. */
    private final AtomicInteger netpollWaiters = new AtomicInteger();

    // The list netpoll builds from ready keys, linked through G.schedlink. Guarded by pollLock.
    private G readyHead;
    private int readyN;
    /**
     * The selection under way blocks (the last idle M's poll): a read interest reported for a
     * goroutine already woken is disarmed there (see netpollready). Guarded by pollLock.
     */
    private boolean blockingSelect;

    /** The selection action, allocated once. */
    private final Consumer<SelectionKey> onReady = this::netpollready;

    /** Polls that returned at least one goroutine, and goroutines they woke. Any thread, atomic. */
    public final AtomicLong polls = new AtomicLong();

    public final AtomicLong wokenByPoller = new AtomicLong();
    /** Selector.wakeup calls made to break a blocked poll (netpollBreak and arming). Atomic. */
    public final AtomicLong breaks = new AtomicLong();
    /**
     * Interest changes, each a queued update the next selection applies with an {@code epoll_ctl}
     * (the cost Go's edge-triggered registration never pays): arms that had to set the interest
     * again, and read interests disarmed because nobody waited. Any thread, atomic (off the fast
     * path: a goroutine that parks on an armed key counts nothing).
     */
    public final AtomicLong arms = new AtomicLong();

    public final AtomicLong disarms = new AtomicLong();

    /**
     * Waits of goroutines for a JDK socket to read ({@link #waitJdkSocketReadable}: registered,
     * then parked unless the data came first). Any thread, atomic (once per wait, beside one or two
     * {@code epoll_ctl}s).
     */
    public final AtomicLong jdkSocketWaits = new AtomicLong();

    /**
     * Of those, the waits whose registration an earlier wait on the same socket left disarmed
     * after its event, re-armed ({@code EPOLL_CTL_MOD}) instead of added: one {@code epoll_ctl} per
     * wait, not two. Counted by {@link Epoll#openOneShot}; any thread, atomic.
     */
    public final AtomicLong jdkSocketRearms = new AtomicLong();

    /**
     * The looks at a goroutine's stack for JDK frames holding a lock before a JDK socket wait
     * ({@code Poll.framesClean}): after a clean look, none for the later waits of the same
     * invocation of the method that reads (the rule and its limits are there). Any thread, atomic
     * (once per look, a stack walk).
     */
    public final AtomicLong jdkSocketFrameLooks = new AtomicLong();

    /** Of those, the waits a close hook ended ({@link #jdkSocketClosed}). Any thread, atomic. */
    public final AtomicLong jdkSocketCloseWakes = new AtomicLong();

    /** Of those, the waits a sweep ended ({@link #sweepJdkSockets}: a close no hook saw). Atomic. */
    public final AtomicLong jdkSocketSweepWakes = new AtomicLong();

    Netpoll(Scheduler sched) {
        this.sched = sched;
        this.jdkSocketSweep = Timer.runtimeTimer(sched); // a reference only: armed at the first wait
    }

    /** The runtime's poller. */
    public static Netpoll of(Scheduler s) {
        return s.netpoll;
    }

    /** Go: netpoll.go netpollinited. */
    boolean netpollinited() {
        return selector != null || epoll != null;
    }

    /** The poller in use ({@code epoll} or {@code selector}), or null before the first network use. */
    public String pollerName() {
        return epoll != null ? Config.NETPOLL_EPOLL : selector != null ? Config.NETPOLL_SELECTOR : null;
    }

    /**
     * Read readiness reported for a goroutine that an earlier poll had woken and that had not run
     * yet: the level-triggered selector reports such a socket at every poll until it is read; the
     * edge-triggered epoll does not (tests).
     */
    long queuedReports() {
        Epoll ep = epoll;
        if (ep != null) {
            return ep.blocking.queuedReports + ep.nonblocking.queuedReports;
        }
        return selQueuedReports;
    }

    /** Descriptors registered with epoll now (tests; 0 under the selector). */
    int epollRegistered() {
        Epoll ep = epoll;
        return ep == null ? 0 : ep.registered();
    }

    /**
     * Opens the poller the runtime's settings name ({@code -Dgort.netpoll}) at the first network
     * use. Go: netpoll.go netpollGenericInit, netpoll_epoll.go netpollinit.
     */
    void netpollGenericInit() throws IOException {
        if (netpollinited()) {
            return;
        }
        boolean created = false;
        synchronized (initLock) {
            if (!netpollinited() && !sched.exiting) {
                if (Config.NETPOLL_EPOLL.equals(sched.config.settings().netpoll())) {
                    epoll = new Epoll(sched);
                } else {
                    selector = Selector.open();
                }
                created = true;
            }
        }
        if (!netpollinited()) {
            throw new IOException("use of closed network connection"); // the runtime is ending
        }
        if (created) {
            // An M whose idle poll began before the poller existed sleeps on the note until its
            // next timer (netpollSelector's pre-init branch), and while it does (lastpoll = 0)
            // neither sysmon nor another M polls: wake it to block in the poller instead. Go has
            // no such sleep: its first timer creates the poller.
            sched.netpollNote.notewakeup();
        }
    }

    /** Go: netpoll.go netpollAnyWaiters. */
    boolean netpollAnyWaiters() {
        return netpollWaiters.get() > 0;
    }

    /** Goroutines parked on the network now (metrics, tests). */
    public int netpollWaiters() {
        return netpollWaiters.get();
    }

    /** Go: netpoll.go netpollAdjustWaiters. */
    void netpollAdjustWaiters(int delta) {
        if (delta != 0) {
            netpollWaiters.addAndGet(delta);
        }
    }

    /**
     * Wakes the M blocked in {@link #netpoll}, or the next one to block. Go: netpoll_epoll.go
     * netpollBreak (a write to an eventfd: epoll's own, or the Selector's by {@code wakeup}; or the
     * Note before the poller exists: both, since it may be created while an M sleeps on the Note).
     */
    void netpollBreak() {
        sched.netpollNote.notewakeup();
        Epoll ep = epoll;
        if (ep != null) {
            if (ep.netpollBreak()) {
                breaks.incrementAndGet();
                if (SchedCounts.ON) SchedCounts.netpollWakeups.increment();
            }
            return;
        }
        Selector sel = selector;
        if (sel != null) {
            breaks.incrementAndGet();
            if (SchedCounts.ON) SchedCounts.netpollWakeups.increment();
            sel.wakeup();
        }
    }

    /** Closes the poller (runtime shutdown); a blocked poll returns. */
    void close() {
        forgetJdkSocketWaits();
        Selector sel;
        Epoll ep;
        synchronized (initLock) {
            sel = selector;
            ep = epoll;
        }
        if (ep != null) {
            ep.close();
        }
        if (sel != null) {
            try {
                sel.close();
            } catch (IOException ignored) {
                // nothing left to release
            }
        }
    }

    // ------------------------------------------------------------------------------------------
    // Descriptors.

    /**
     * Registers a non-blocking channel with the poller (once: its epoll registration or selection
     * key stays for the channel's life) and returns its poll descriptor. {@code what} names it in
     * dumps ({@code tcp 127.0.0.1:8080->127.0.0.1:51234}).
     *
     * <p>Go: netpoll.go poll_runtime_pollOpen, netpoll_epoll.go netpollopen
     */
    public PollDesc netpollopen(SelectableChannel ch, String what) throws IOException {
        netpollGenericInit();
        PollDesc pd = new PollDesc(this, ch, what);
        Epoll ep = epoll;
        if (ep != null) {
            ep.netpollopen(pd);
            return pd;
        }
        try {
            pd.key = ch.register(selector, 0, pd);
        } catch (ClosedSelectorException e) {
            throw new IOException("use of closed network connection", e);
        }
        return pd;
    }

    /**
     * Deregisters {@code pd}'s channel (after {@link PollDesc#evict}, before the channel is closed,
     * as Go's {@code pd.close()} before its {@code close(fd)}): under epoll an {@code EPOLL_CTL_DEL}
     * (the descriptor's number may be reused as soon as the channel closes); under the selector the
     * key is cancelled and a selection operation run, so that the channel is no longer registered
     * and its close releases the descriptor (and a listener's port) at once. The selector's blocks
     * the carrier only while a blocked poll returns. Goroutine code must call it from a frame the
     * JIT cannot inline into code that yields (the selector's takes a {@code ReentrantLock}, which
     * records the current thread: see runtime/HACKING.md; dev.gort.net's {@code Sys} does).
     *
     * <p>Go: netpoll.go poll_runtime_pollClose, netpoll_epoll.go netpollclose
     */
    public void netpollclose(PollDesc pd) {
        Epoll ep = epoll;
        if (ep != null) {
            ep.netpollclose(pd);
            return;
        }
        Selector sel = selector;
        if (sel == null) {
            return;
        }
        pd.key.cancel();
        // An M is in (or entering) a poll: break it until we get the lock. Once this thread waits
        // in the (fair) lock's queue, a blocking poll's lock() queues behind it; until then a
        // poller that took the lock again is broken again.
        while (!pollLock.tryLock()) {
            breaks.incrementAndGet();
            if (SchedCounts.ON) SchedCounts.netpollWakeups.increment();
            sel.wakeup();
            try {
                if (pollLock.tryLock(100, TimeUnit.MICROSECONDS)) {
                    break;
                }
            } catch (InterruptedException e) {
                // a carrier's interrupt status is no reason to stop (see Note); retry
            }
        }
        G list = null;
        try {
            if (SchedCounts.ON) SchedCounts.netpollSelectNow.increment();
            sel.selectNow(onReady);
            if (sched.sched.lastpoll.get() == 0) {
                if (SchedCounts.ON) SchedCounts.netpollWakeups.increment();
                sel.wakeup(); // re-issue a break we may have eaten (see netpoll)
            }
            list = takeReady();
        } catch (ClosedSelectorException | IOException e) {
            // the runtime is ending: the selector released everything
        } finally {
            pollLock.unlock();
            Thread.interrupted();
        }
        injectglist(readyParkedInPlace(list)); // as netpoll's result: no run queue holds such a G
    }

    // ------------------------------------------------------------------------------------------
    // Waits on the JDK's blocking sockets (gort: Go's sockets are all its own).

    /**
     * How often a runtime whose goroutines wait in {@link #waitJdkSocketReadable} looks whether
     * their sockets were closed behind the close hook's back ({@link #sweepJdkSockets}: a close
     * that no instrumented call site made, the JDK's own code, reflection, a {@code super.close()}).
     * Every close that an instrumented call site makes wakes its waiter at once
     * ({@link #jdkSocketClosed}).
     */
    static final long JDK_SOCKET_SWEEP_NS = 1_000_000_000L;

    /**
     * The goroutines waiting now in {@link #waitJdkSocketReadable}, by socket implementation (any
     * runtime's: a close may come from another runtime or from no goroutine at all). An entry is
     * put by the waiting goroutine under the socket's state lock, before it arms the descriptor and
     * parks, and removed by it under that lock after it woke and removed (or left disarmed) its
     * registration, or by {@link #close} when its runtime ends first. Read by the close hook and
     * the sweeps.
     */
    private static final java.util.concurrent.ConcurrentHashMap<Object, PollDesc> JDK_SOCKET_WAITS =
            new java.util.concurrent.ConcurrentHashMap<>();

    /**
     * Set (never cleared) by the first {@link #waitJdkSocketReadable} of the JVM, before its wait
     * is published: until then a close has no waiter to wake, and the close hook does not look at
     * its receiver ({@link #jdkSocketsWaitedOn}: nor initialise the JDK's socket classes for a
     * file's close). Volatile.
     */
    private static volatile boolean jdkSocketEverWaited;

    /**
     * Whether a goroutine of this JVM ever waited for a JDK socket: the close hook's fast path. A
     * close that read false while the first wait was being published finds no waiter to wake;
     * that waiter is woken by its runtime's next sweep.
     */
    static boolean jdkSocketsWaitedOn() {
        return jdkSocketEverWaited;
    }

    /** This runtime's sweep timer (a runtime timer: {@link #sweepJdkSockets}). Immutable. */
    private final Timer jdkSocketSweep;
    /** The sweep timer is armed. CAS, any goroutine of this runtime; cleared by the sweep. */
    private final java.util.concurrent.atomic.AtomicBoolean jdkSocketSweepArmed =
            new java.util.concurrent.atomic.AtomicBoolean();

    /**
     * Parks the calling goroutine until the JDK socket {@code impl} (a {@code java.net.Socket}'s
     * implementation, whose reads block their thread) has something to read, reached its end or
     * an error, is closed ({@link #jdkSocketClosed}, {@link #sweepJdkSockets}), or
     * {@code timeoutNanos} (0: none, the socket's {@code SO_TIMEOUT}) passes. Returns false only
     * on that timeout with nothing to read; true when the read should go on (it may still block,
     * in its syscall, if another reader took the data first). A goroutine waits here rather than
     * in its read's syscall as Go's reads wait in the netpoller: its P runs other goroutines, its
     * carrier is free, and when the data comes a poll readies it, where a syscall's return waits
     * for a P (in the global queue, which only sysmon's retake serves when every P is held by a
     * reader: LineEchoProbe's tail, agent/README.md) and each blocked reader holds a thread.
     *
     * <p>The wait is published in {@link #JDK_SOCKET_WAITS}, then the descriptor armed for this
     * wait, one-shot ({@link Epoll#openOneShot}: an earlier wait's disarmed registration re-armed,
     * else a new one added), under the socket's state lock after it was seen open. After the wait,
     * under that lock, the registration is removed only if its event did not come (after the event
     * it is disarmed, and stays for the next wait to re-arm: one {@code epoll_ctl} per wait) and
     * the socket is still open, and only then is the wait withdrawn from the map (a wait that
     * another goroutine published in between would re-arm a registration this one then removed).
     * The JDK closes the descriptor under that lock once the state says closing, so a close either
     * comes first (nothing is waited for) or finds the wait published (its hook wakes it), and a
     * closed descriptor, whose number may be another socket's by now (maybe one of gort's own), is
     * never armed or removed (its registration, armed or not, left the set with its file).
     * Nothing is waited for (true at once) without epoll (the selector cannot take a descriptor),
     * when another goroutine of any runtime waits on the socket already (the map: a re-arm would
     * take its registration), or once it is closed.
     *
     * <p>The JDK's virtual threads park the same way (its {@code Poller}: one-shot, re-armed by
     * {@code EPOLL_CTL_MOD}, removed only when no event came); its close wakes them directly,
     * gort's hook sits at the close call sites.
     */
    boolean waitJdkSocketReadable(Object impl, int fd, long timeoutNanos) {
        if (epoll == null) {
            try {
                netpollGenericInit();
            } catch (IOException e) {
                return true; // the runtime is ending: the read's own syscall
            }
        }
        Epoll ep = epoll;
        if (ep == null) {
            return true;
        }
        PollDesc pd = new PollDesc(this, null, "java.net socket");
        Object lock = PeerStreams.socketStateLock(impl);
        jdkSocketEverWaited = true; // before the wait is published: see jdkSocketsWaitedOn
        // In a syscall: the JDK's close holds the lock across close(2), which may linger.
        Poll.blockingEnter();
        try {
            synchronized (lock) {
                // Published before the registration is armed: a re-arm takes the registration
                // over, so no other goroutine (of any runtime) may wait on the socket then.
                if (!PeerStreams.socketOpen(impl) || JDK_SOCKET_WAITS.putIfAbsent(impl, pd) != null) {
                    return true;
                }
                // This runtime is ending (its close may have forgotten its waits before this one
                // was published), or the descriptor could not be armed.
                boolean armed = false;
                try {
                    armed = !sched.exiting && ep.openOneShot(M.current(), pd, fd) == 0;
                } finally {
                    if (!armed) {
                        JDK_SOCKET_WAITS.remove(impl, pd);
                    }
                }
                if (!armed) {
                    return true;
                }
            }
        } finally {
            Poll.blockingExit();
        }
        jdkSocketWaits.incrementAndGet();
        armJdkSocketSweep();
        boolean timedOut;
        boolean polled = false; // the registration's event came: the one-shot registration is disarmed
        try {
            if (timeoutNanos > 0) {
                pollSetDeadline(pd, timeoutNanos, MODE_READ);
            }
            // Ready, evicted by a close (its hook or a sweep), or past the socket's timeout.
            int r = pollWait(pd, MODE_READ);
            polled = r == pollNoError || RG.getVolatile(pd) == pdReady; // or ready after the timeout
            timedOut = r == pollErrTimeout && !polled;
        } finally {
            pd.evict(); // stops its deadline timer
            Poll.blockingEnter();
            try {
                synchronized (lock) {
                    try {
                        ep.closeOneShot(M.current(), pd, !polled && PeerStreams.socketOpen(impl));
                    } finally {
                        // Withdrawn only now, under the lock: until the registration is removed
                        // (or left disarmed), no other goroutine may arm it, or this removal would
                        // take away the registration its re-arm took over (a lost wake).
                        JDK_SOCKET_WAITS.remove(impl, pd);
                    }
                }
            } finally {
                Poll.blockingExit();
            }
        }
        return !timedOut;
    }

    /** The wait published for the JDK socket {@code impl} now, or null (tests). */
    static PollDesc jdkSocketWait(Object impl) {
        return JDK_SOCKET_WAITS.get(impl);
    }

    /**
     * After {@code impl} (a JDK socket implementation) was closed: wakes the goroutine waiting in
     * {@link #waitJdkSocketReadable} on it, if any, whose read then fails as the JDK's does
     * ("Socket closed"), as a close wakes a thread blocked in the socket's read. Any thread; one
     * map look.
     */
    static void jdkSocketClosed(Object impl) {
        PollDesc pd = JDK_SOCKET_WAITS.get(impl);
        if (pd != null && !pd.closing()) {
            pd.netpoll.jdkSocketCloseWakes.incrementAndGet();
            pd.evict();
        }
    }

    /**
     * The sweep timer's function: wakes this runtime's goroutines waiting on a socket that is no
     * longer open (closed where no hook saw it), and arms the timer again while any still wait.
     * On an M, as a deadline timer's function; a volatile read per waiting goroutine.
     */
    private static void sweepJdkSockets(Object arg, long seq, long delay) {
        Netpoll np = (Netpoll) arg;
        np.jdkSocketSweepArmed.set(false); // before the look: a wait published after it re-arms
        boolean any = false;
        for (java.util.Map.Entry<Object, PollDesc> e : JDK_SOCKET_WAITS.entrySet()) {
            PollDesc pd = e.getValue();
            if (pd.netpoll != np) {
                continue;
            }
            if (PeerStreams.socketOpen(e.getKey())) {
                any = true;
            } else if (!pd.closing()) {
                np.jdkSocketSweepWakes.incrementAndGet();
                pd.evict();
            }
        }
        if (any) {
            np.armJdkSocketSweep();
        }
    }

    /** Arms this runtime's sweep timer {@link #JDK_SOCKET_SWEEP_NS} from now, unless it is armed. */
    private void armJdkSocketSweep() {
        if (jdkSocketSweepArmed.compareAndSet(false, true)) {
            jdkSocketSweep.modify(Scheduler.nanotime() + JDK_SOCKET_SWEEP_NS, 0, Netpoll::sweepJdkSockets, this, 0);
        }
    }

    /**
     * Forgets this runtime's JDK socket waits (it ends: its waiting goroutines never run their
     * {@code finally}), so that the map pins neither their sockets nor this runtime.
     */
    private void forgetJdkSocketWaits() {
        JDK_SOCKET_WAITS.values().removeIf(pd -> pd.netpoll == this);
    }

    // ------------------------------------------------------------------------------------------
    // Polling (the scheduler's side).

    /**
     * Checks for ready network connections and returns the goroutines they make runnable, linked
     * through {@code schedlink} (still {@code _Gwaiting}; {@link #injectglist} readies them). delay
     * &lt; 0 blocks until woken, 0 does not block, &gt; 0 blocks up to delay ns (rounded to Java's
     * millisecond timeout as Go rounds to epoll_wait's). Before the selector exists, a positive or
     * negative delay sleeps on {@code sched.netpollNote}.
     *
     * <p>Each goroutine returned was counted in netpollWaiters: the caller adjusts by minus the
     * list's length after injecting it ({@link #injectglist} does).
     *
     * <p>A goroutine that waited parked in place (inside a Java monitor, or pinned: ADR 0004) is
     * not returned: its continuation is still mounted on its sleeping carrier, so no run queue may
     * hold it. It is readied here, as {@link #netpollgoready} readies one (goready wakes its
     * carrier), and uncounted from netpollWaiters.
     *
     * <p>Go: netpoll_epoll.go netpoll
     */
    G netpoll(long delay) {
        Epoll ep = epoll;
        return readyParkedInPlace(ep != null ? netpollEpoll(ep, delay) : netpollSelector(delay));
    }

    /**
     * Takes the goroutines parked in place out of a netpoll result (null: none) and readies each on
     * its own carrier; returns the rest of the list, in order. One load per goroutine ({@code rare}, null
     * for nearly all).
     */
    private G readyParkedInPlace(G list) {
        G head = list;
        G prev = null;
        for (G gp = list; gp != null; ) {
            G next = gp.schedlink;
            if (gp.parkedOn() != null) {
                if (prev == null) {
                    head = next;
                } else {
                    prev.schedlink = next;
                }
                gp.schedlink = null;
                netpollgoready(gp);
            } else {
                prev = gp;
            }
            gp = next;
        }
        return head;
    }

    /** {@link #netpoll} on the JDK's Selector. */
    private G netpollSelector(long delay) {
        Selector sel = selector;
        if (sel == null) {
            if (delay != 0) {
                sched.netpollNote.notetsleep(delay);
                sched.netpollNote.noteclear();
            }
            return null;
        }
        if (delay == 0) {
            if (!pollLock.tryLock()) {
                if (SchedCounts.ON) SchedCounts.netpollBusy.increment();
                return null; // someone else polls: they will find the events
            }
        } else {
            pollLock.lock();
        }
        try {
            if (delay == 0) {
                if (SchedCounts.ON) SchedCounts.netpollSelectNow.increment();
                sel.selectNow(onReady);
                if (sched.sched.lastpoll.get() == 0) {
                    // An M is (about to be) blocked in the poll: re-issue a break we may have eaten.
                    if (SchedCounts.ON) SchedCounts.netpollWakeups.increment();
                    sel.wakeup();
                }
            } else {
                // Go: netpoll_epoll.go's waitms rounding.
                long waitms;
                if (delay < 0) {
                    waitms = 0; // Java: block
                } else if (delay < 1_000_000) {
                    waitms = 1;
                } else if (delay < 1_000_000_000_000_000L) {
                    waitms = delay / 1_000_000;
                } else {
                    waitms = 1_000_000_000_000L; // 1e9 seconds: a very long time
                }
                if (SchedCounts.ON) SchedCounts.netpollSelectBlock.increment();
                blockingSelect = true;
                long t0Debug = SchedCounts.ON ? System.nanoTime() : 0;
                try {
                    sel.select(onReady, waitms);
                } finally {
                    blockingSelect = false;
                    if (SchedCounts.ON) SchedCounts.netpollBlockNanos.add(System.nanoTime() - t0Debug);
                }
            }
            sched.netpollNote.noteclear(); // a break that reached the note (pre-init) is spent too
            return takeReady();
        } catch (ClosedSelectorException | IOException e) {
            return takeReady(); // the runtime is ending
        } finally {
            pollLock.unlock();
            // Carriers' interrupt status is no wake-up (see Note): a set one would make every
            // selection return at once.
            Thread.interrupted();
        }
    }

    /**
     * netpoll on epoll: one {@code epoll_wait} (into the blocking poll's event array, or the
     * non-blocking polls' when its lock is free: a non-blocking poll that finds it taken returns
     * nothing, the holder finds the events; the blocking poll runs concurrently with them, as Go's
     * polls do), then Go's loop over the events.
     *
     * <p>Go: netpoll_epoll.go netpoll, netpoll.go netpollready
     */
    private G netpollEpoll(Epoll ep, long delay) {
        Epoll.Events ev = delay == 0 ? ep.nonblocking : ep.blocking;
        if (delay == 0) {
            if (!ev.lock.tryLock()) {
                if (SchedCounts.ON) SchedCounts.netpollBusy.increment();
                return null; // someone else polls: they will find the events
            }
        } else {
            ev.lock.lock();
        }
        G head = null;
        int n = 0;
        try {
            int waitms;
            if (delay < 0) {
                waitms = -1;
            } else if (delay == 0) {
                waitms = 0;
            } else if (delay < 1_000_000) {
                waitms = 1;
            } else if (delay < 1_000_000_000_000_000L) {
                waitms = (int) (delay / 1_000_000);
            } else {
                // An arbitrary cap on how long to wait for a timer. 1e9 ms == ~11.5 days.
                waitms = 1_000_000_000;
            }
            if (SchedCounts.ON)
                (delay == 0 ? SchedCounts.netpollSelectNow : SchedCounts.netpollSelectBlock).increment();
            long t0Debug = SchedCounts.ON && delay != 0 ? System.nanoTime() : 0;
            int k = ep.epollwait(ev, waitms);
            if (SchedCounts.ON && delay != 0) SchedCounts.netpollBlockNanos.add(System.nanoTime() - t0Debug);
            for (int i = 0; i < k; i++) {
                int events = ev.events(i);
                if (events == 0) {
                    continue;
                }
                long data = ev.data(i);
                if (Epoll.isBreak(data)) {
                    if (events != Epoll.EPOLLIN) {
                        throw Fatal.fatal(sched, "runtime: netpoll: eventfd ready for something unexpected");
                    }
                    if (delay != 0) {
                        // netpollBreak could be picked up by a nonblocking poll. Only read the
                        // 8-byte integer if blocking.
                        ep.consumeBreak(ev);
                    }
                    continue;
                }
                boolean r = (events & (Epoll.EPOLLIN | Epoll.EPOLLRDHUP | Epoll.EPOLLHUP | Epoll.EPOLLERR)) != 0;
                boolean w = (events & (Epoll.EPOLLOUT | Epoll.EPOLLHUP | Epoll.EPOLLERR)) != 0;
                if (!r && !w) {
                    continue;
                }
                PollDesc pd = ep.lookup(data);
                if (pd == null) {
                    continue; // closed after the kernel queued the event (Go: the fdseq tag)
                }
                if (SchedCounts.ON) SchedCounts.netpollKeys.increment();
                G rg = null;
                G wg = null;
                if (r) {
                    if (RG.getVolatile(pd) == pdReady) {
                        ev.queuedReports++;
                        if (SchedCounts.ON) SchedCounts.netpollKeysQueued.increment();
                    }
                    rg = netpollunblock(pd, MODE_READ, true);
                }
                if (w) {
                    wg = netpollunblock(pd, MODE_WRITE, true);
                }
                if (rg != null) {
                    rg.schedlink = head;
                    head = rg;
                    n++;
                }
                if (wg != null) {
                    wg.schedlink = head;
                    head = wg;
                    n++;
                }
            }
        } finally {
            ev.lock.unlock();
        }
        if (delay != 0) {
            sched.netpollNote.noteclear(); // a break that reached the note (pre-init) is spent too
        }
        if (n > 0) {
            polls.incrementAndGet();
            wokenByPoller.addAndGet(n);
        } else if (SchedCounts.ON) {
            SchedCounts.netpollEmpty.increment();
        }
        return head;
    }

    /** Detaches the list the last selection built; pollLock held. */
    private G takeReady() {
        G head = readyHead;
        int n = readyN;
        readyHead = null;
        readyN = 0;
        if (n > 0) {
            polls.incrementAndGet();
            wokenByPoller.addAndGet(n);
        } else if (SchedCounts.ON) {
            SchedCounts.netpollEmpty.increment();
        }
        return head;
    }

    /**
     * A selected key: unblocks the goroutines waiting for it, and disarms what fired where nobody
     * was waiting (see the class comment). Runs inside the selection operation, pollLock held.
     *
     * <p>Read interest (OP_READ, OP_ACCEPT) stays armed while a goroutine waits for it (Go's epoll
     * registration is edge-triggered and never changes): a connection that goes back and forth
     * costs no interest update, no {@code epoll_ctl} and no wake-up of a blocked poll per message.
     * It also stays armed when a non-blocking poll (findRunnable's, sysmon's, netpollclose's)
     * reports it again for a goroutine an earlier poll woke and that has not run yet
     * ({@code pdReady}): that goroutine consumes the notification and reads when it runs, and parks
     * again on an armed key; the level-triggered re-report costs a visit here, where disarming cost
     * two interest updates per such message. (With 1,000 connections at GOMAXPROCS=1 the run queue
     * holds hundreds of woken goroutines at every sysmon poll: disarming them cost 3.9 interest
     * updates per echoed message, keeping them armed 0.08 and three more key visits.) The interest is disarmed, so that the socket is reported at most once more,
     * where nobody waits at all ({@code pdNil}: no reader, or one that is running), and where a
     * blocking poll reports a woken goroutine's socket: armed, it would make the last idle M's
     * poll return at once over and over instead of sleeping. The next {@link #netpollblock}
     * re-arms it (an {@code epoll_ctl}, and a break if an M is blocked in the poll). Disarming races
     * with a goroutine that starts to wait after the unblock: it publishes pdWait, then checks the
     * interest ({@link #arm}); the poller here clears the interest, then checks the semaphore. Both
     * are volatile, so at least one of them sees the other: the goroutine re-arms, or the poller
     * does.
     *
     * <p>Write interest (OP_WRITE, OP_CONNECT) is disarmed whenever it fires, before the waiter is
     * unblocked: a socket is nearly always writable, so an armed write interest would be reported
     * by every poll.
     *
     * <p>Go: netpoll.go netpollready (netpoll_epoll.go registers EPOLLIN|EPOLLOUT|EPOLLET once)
     */
    private void netpollready(SelectionKey key) {
        PollDesc pd = (PollDesc) key.attachment();
        if (SchedCounts.ON) SchedCounts.netpollKeys.increment();
        int ready;
        try {
            ready = key.readyOps();
            int wready = ready & (SelectionKey.OP_WRITE | SelectionKey.OP_CONNECT);
            if (wready != 0) {
                if (SchedCounts.ON) SchedCounts.netpollInterestOps.increment();
                key.interestOpsAnd(~wready);
            }
        } catch (CancelledKeyException e) {
            return; // closed meanwhile: evict already woke its goroutines
        }
        G rg = null;
        G wg = null;
        int rready = ready & (SelectionKey.OP_READ | SelectionKey.OP_ACCEPT);
        if (rready != 0) {
            Object was = RG.getVolatile(pd);
            if (was == pdReady && !blockingSelect) {
                // Woken by an earlier poll and not run yet: it consumes the notification and reads
                // when it runs (what an edge-triggered poller would not report again).
                selQueuedReports++;
                if (SchedCounts.ON) SchedCounts.netpollKeysQueued.increment();
            } else {
                if (SchedCounts.ON && was == null) SchedCounts.netpollKeysNoReader.increment();
                if (was == pdReady) {
                    selQueuedReports++;
                    if (SchedCounts.ON) SchedCounts.netpollKeysQueued.increment();
                }
                rg = netpollunblock(pd, MODE_READ, true);
                if (rg == null && (was == null || blockingSelect)) {
                    // Nobody waits (or a blocking poll would keep reporting it): disarm, then
                    // re-arm if a reader began to wait meanwhile.
                    try {
                        if (SchedCounts.ON) SchedCounts.netpollInterestOps.increment();
                        key.interestOpsAnd(~rready);
                        Object now = RG.getVolatile(pd);
                        if (now != null && now != pdReady) {
                            if (SchedCounts.ON) SchedCounts.netpollInterestOps.increment();
                            key.interestOpsOr(rready);
                        }
                    } catch (CancelledKeyException e) {
                        // closed meanwhile: evict wakes its goroutines
                    }
                    disarms.incrementAndGet();
                }
            }
        }
        if ((ready & (SelectionKey.OP_WRITE | SelectionKey.OP_CONNECT)) != 0) {
            wg = netpollunblock(pd, MODE_WRITE, true);
        }
        if (rg != null) {
            rg.schedlink = readyHead;
            readyHead = rg;
            readyN++;
        }
        if (wg != null) {
            wg.schedlink = readyHead;
            readyHead = wg;
            readyN++;
        }
    }

    /**
     * Makes the goroutines of {@code glist} (linked through schedlink, {@code _Gwaiting}) runnable
     * and puts them on run queues: the current P's if it has one (those beyond what the idle Ps
     * can take go to the global queue, with Ms started for the idle Ps), else the global queue.
     * Then adjusts netpollWaiters by the list's length (each was counted when it parked).
     *
     * <p>Go: proc.go injectglist (with the netpollAdjustWaiters(delta) of its callers)
     */
    void injectglist(G glist) {
        if (glist == null) {
            return;
        }
        M mp = M.current();
        if (mp != null && mp.sched != sched) {
            mp = null;
        }
        // Mark all the goroutines as runnable before we put them on the run queues.
        G tail = null;
        int n = 0;
        for (G gp = glist; gp != null; gp = gp.schedlink) {
            tail = gp;
            n++;
            gp.casgstatus(G._Gwaiting, G._Grunnable);
        }
        if (mp != null) {
            mp.locks++; // no retake of our P while we use it (Retake.retakeBlocked)
        }
        try {
            P pp = mp == null ? null : Syscalls.pForRuntime(mp);
            if (pp == null) {
                // No P: the records are a trace section, before the Gs are queued (see
                // Scheduler.readyGlobal).
                sched.trace.sectionBegin(mp);
                try {
                    for (G gp = glist; gp != null; gp = gp.schedlink) {
                        if (sched.trace.on) sched.trace.goUnblock(mp, null, gp, Ev.W_GLOBAL);
                    }
                } finally {
                    sched.trace.sectionEnd(mp);
                }
                synchronized (sched.sched.lock) {
                    sched.sched.runq.globrunqputbatch(glist, tail, n);
                }
                netpollAdjustWaiters(-n);
                startIdle(n);
                return;
            }
            // As many as there are idle Ps go to the global queue, for them; the rest to ours.
            int npidle = sched.idle.npidle.get();
            G q = glist;
            int left = n;
            if (npidle > 0) {
                G gh = q;
                G gt = q;
                int gn = 1;
                if (sched.trace.on) sched.trace.goUnblock(mp, null, gt, Ev.W_GLOBAL);
                while (gn < npidle && gt.schedlink != null) {
                    gt = gt.schedlink;
                    gn++;
                    if (sched.trace.on) sched.trace.goUnblock(mp, null, gt, Ev.W_GLOBAL);
                }
                q = gt.schedlink;
                left -= gn;
                synchronized (sched.sched.lock) {
                    sched.sched.runq.globrunqputbatch(gh, gt, gn);
                }
                startIdle(gn);
            }
            if (q != null) {
                for (G gp = q; gp != null; gp = gp.schedlink) {
                    if (sched.trace.on) sched.trace.goUnblock(mp, pp, gp, Ev.W_LOCAL);
                }
                G rest = pp.runq.runqputbatch(q, left);
                if (rest != null) {
                    G rt = rest;
                    int rn = 1;
                    while (rt.schedlink != null) {
                        rt = rt.schedlink;
                        rn++;
                    }
                    synchronized (sched.sched.lock) {
                        sched.sched.runq.globrunqputbatch(rest, rt, rn);
                    }
                }
            }
        } finally {
            if (mp != null) {
                mp.locks--;
            }
        }
        netpollAdjustWaiters(-n);
        // Some P's might have become idle after we loaded npidle but before any goroutines were
        // added to the queue: wakep is the best bet (it does nothing in the common case).
        sched.wakep();
    }

    /** Starts up to n idle Ps (spinning). Go: injectglist's startIdle. */
    private void startIdle(int n) {
        for (; n > 0; n--) {
            P pp;
            synchronized (sched.sched.lock) {
                pp = sched.idle.pidlegetSpinningIfConfigured();
            }
            if (pp == null) {
                break;
            }
            sched.idle.startm(pp, false);
        }
    }

    // ------------------------------------------------------------------------------------------
    // The goroutine's side.

    /**
     * Prepares a descriptor for a read or write: fails with the pending error, else clears the
     * semaphore. Go: netpoll.go poll_runtime_pollReset.
     */
    public static int pollReset(PollDesc pd, int mode) {
        int errcode = netpollcheckerr(pd, mode);
        if (errcode != pollNoError) {
            return errcode;
        }
        if (mode == MODE_READ) {
            pd.rg = null;
        } else if (mode == MODE_WRITE) {
            pd.wg = null;
        }
        return pollNoError;
    }

    /**
     * Parks the calling goroutine until {@code pd} is ready for {@code mode}, it is closed or its
     * deadline expires. Returns pollNoError (try the I/O again), pollErrClosing or pollErrTimeout.
     *
     * <p>Go: netpoll.go poll_runtime_pollWait
     */
    public static int pollWait(PollDesc pd, int mode) {
        int errcode = netpollcheckerr(pd, mode);
        if (errcode != pollNoError) {
            return errcode;
        }
        while (!netpollblock(pd, mode, false)) {
            errcode = netpollcheckerr(pd, mode);
            if (errcode != pollNoError) {
                return errcode;
            }
            // Can happen if timeout has fired and unblocked us, but before we had a chance to run,
            // timeout has been reset. Pretend it has not happened and retry.
        }
        return pollNoError;
    }

    /** Go: netpoll.go netpollcheckerr. */
    static int netpollcheckerr(PollDesc pd, int mode) {
        int info = pd.info;
        if ((info & pollClosing) != 0) {
            return pollErrClosing;
        }
        if ((mode == MODE_READ && (info & pollExpiredReadDeadline) != 0)
                || (mode == MODE_WRITE && (info & pollExpiredWriteDeadline) != 0)) {
            return pollErrTimeout;
        }
        return pollNoError;
    }

    /**
     * Returns true if IO is ready, or false if timed out or closed. waitio: wait only for completed
     * IO, ignore errors.
     *
     * <p>Go: netpoll.go netpollblock
     */
    static boolean netpollblock(PollDesc pd, int mode, boolean waitio) {
        VarHandle gpp = mode == MODE_READ ? RG : WG;
        // set the gpp semaphore to pdWait
        for (; ; ) {
            // Consume notification if already ready.
            if (gpp.compareAndSet(pd, pdReady, null)) {
                return true;
            }
            if (gpp.compareAndSet(pd, null, pdWait)) {
                break;
            }
            // Double check that this isn't corrupt; otherwise we'd loop forever.
            Object v = gpp.getVolatile(pd);
            if (v != pdReady && v != null) {
                throw Fatal.fatal(pd.netpoll.sched, "runtime: double wait");
            }
        }
        // need to recheck error states after setting gpp to pdWait; this is necessary because
        // pollUnblock/pollSetDeadline/deadlineimpl do the opposite: store to closing/rd/wd,
        // publishInfo, load of rg/wg
        if (waitio || netpollcheckerr(pd, mode) == pollNoError) {
            pd.netpoll.arm(pd, mode);
            Scheduler.gopark(Netpoll::netpollblockcommit, pd.sema(mode), WaitReason.IO_WAIT, pd);
        }
        // be careful to not lose concurrent pdReady notification
        Object old = gpp.getAndSet(pd, null);
        if (old != null && old != pdReady && old != pdWait) {
            throw Fatal.fatal(pd.netpoll.sched, "runtime: corrupted polldesc");
        }
        return old == pdReady;
    }

    /**
     * gopark's unlock function, on the M after the goroutine yielded: publishes the parked G in
     * the semaphore (pdWait -&gt; G) unless a notification or an unblock came first. Go: netpoll.go
     * netpollblockcommit.
     */
    private static boolean netpollblockcommit(G gp, Sema sema) {
        PollDesc pd = sema.pd;
        boolean r = (sema.read ? RG : WG).compareAndSet(pd, pdWait, gp);
        if (r) {
            // Bump the count of goroutines waiting for the poller. The scheduler uses this to
            // decide whether to block waiting for the poller if there is nothing else to do.
            pd.netpoll.netpollAdjustWaiters(1);
        }
        return r;
    }

    /** gort: the semaphore of one mode, as gopark's lock argument (two per descriptor, immutable). */
    static final class Sema {
        final PollDesc pd;
        final boolean read;

        Sema(PollDesc pd, boolean read) {
            this.pd = pd;
            this.read = read;
        }
    }

    /**
     * Arms the selector's interest for mode before parking (see the class comment); nothing under
     * epoll, whose registration never changes.
     */
    private void arm(PollDesc pd, int mode) {
        SelectionKey k = pd.key;
        if (k == null) {
            return; // epoll
        }
        int op = mode == MODE_READ ? pd.rop : pd.wop;
        try {
            if ((k.interestOps() & op) != 0) {
                return; // still armed: the poller has not reported it yet
            }
            k.interestOpsOr(op);
            arms.incrementAndGet();
            if (SchedCounts.ON) SchedCounts.netpollInterestOps.increment();
        } catch (CancelledKeyException e) {
            return; // closed: evict wakes us (closing is re-checked after the park)
        }
        if (sched.sched.lastpoll.get() == 0) {
            // An M is blocked in the poll with the old interest set (or, if it blocked before the
            // selector existed, on the Note): break it so that it polls with the new interest.
            netpollBreak();
        }
    }

    /**
     * Takes the goroutine parked on pd's mode semaphore (or null). ioready: an I/O notification
     * (sets pdReady when nobody waits); else an unblock for closing or a deadline.
     *
     * <p>Go: netpoll.go netpollunblock (the returned G was counted in netpollWaiters; the caller
     * adjusts by -1)
     */
    static G netpollunblock(PollDesc pd, int mode, boolean ioready) {
        VarHandle gpp = mode == MODE_READ ? RG : WG;
        for (; ; ) {
            Object old = gpp.getVolatile(pd);
            if (old == pdReady) {
                return null;
            }
            if (old == null && !ioready) {
                // Only set pdReady for ioready. runtime_pollWait will check for timeout/cancel
                // before waiting.
                return null;
            }
            Object nw = ioready ? pdReady : null;
            if (gpp.compareAndSet(pd, old, nw)) {
                if (old == pdWait) {
                    return null;
                }
                return (G) old;
            }
        }
    }

    /**
     * Readies gp, taken from a semaphore by a deadline or a close, or by a poll that found it
     * parked in place. Go: netpoll.go netpollgoready.
     */
    private void netpollgoready(G gp) {
        netpollAdjustWaiters(-1);
        sched.goready(gp);
    }

    // ------------------------------------------------------------------------------------------
    // Deadlines.

    /**
     * Sets the read, write or both deadlines of pd: {@code d > 0} ns from now, {@code d < 0}
     * already expired (fails pending and future I/O at once), 0 none. Extending or clearing it
     * while a goroutine is blocked takes effect for that goroutine.
     *
     * <p>{@code d} is counted on the runtime's clock, {@link Scheduler#nanotime()}, the clock of
     * the descriptor's timers, also when the caller is in a synctest bubble: there the caller
     * computed d against the bubble's fake clock (Go: internal/poll's {@code time.Until(t)}), but
     * the deadline then passes in real time, as in Go, whose {@code d += nanotime()} is the real
     * clock and whose {@code pd.rt}/{@code pd.wt} are never fake. (A goroutine blocked on the
     * network is not durably blocked, so the fake clock could not reach such a deadline anyway.)
     *
     * <p>Go: netpoll.go poll_runtime_pollSetDeadline
     */
    public static void pollSetDeadline(PollDesc pd, long d, int mode) {
        Netpoll np = pd.netpoll;
        G rg = null;
        G wg = null;
        synchronized (pd) {
            if (pd.closing) {
                return;
            }
            long rd0 = pd.rd;
            long wd0 = pd.wd;
            boolean combo0 = rd0 > 0 && rd0 == wd0;
            if (d > 0) {
                d += Scheduler.nanotime(); // the runtime's clock, rt's and wt's (never a bubble's)
                if (d <= 0) {
                    // If the user has a deadline in the future, but the delay calculation
                    // overflows, then set the deadline to the maximum possible value.
                    d = Long.MAX_VALUE;
                }
            }
            if (mode == MODE_READ || mode == MODE_READ_WRITE) {
                pd.rd = d;
            }
            if (mode == MODE_WRITE || mode == MODE_READ_WRITE) {
                pd.wd = d;
            }
            pd.publishInfo();
            boolean combo = pd.rd > 0 && pd.rd == pd.wd;
            Timer.Func rtf = combo ? Netpoll::netpollDeadline : Netpoll::netpollReadDeadline;
            if (!pd.rrun) {
                if (pd.rd > 0) {
                    // Copy current seq into the timer arg. Timer func will check the seq against
                    // current descriptor seq, if they differ the descriptor was reused or timers
                    // were reset.
                    pd.rt.modify(pd.rd, 0, rtf, pd, pd.rseq);
                    pd.rrun = true;
                }
            } else if (pd.rd != rd0 || combo != combo0) {
                pd.rseq++; // invalidate current timers
                if (pd.rd > 0) {
                    pd.rt.modify(pd.rd, 0, rtf, pd, pd.rseq);
                } else {
                    pd.rt.stop();
                    pd.rrun = false;
                }
            }
            if (!pd.wrun) {
                if (pd.wd > 0 && !combo) {
                    pd.wt.modify(pd.wd, 0, Netpoll::netpollWriteDeadline, pd, pd.wseq);
                    pd.wrun = true;
                }
            } else if (pd.wd != wd0 || combo != combo0) {
                pd.wseq++; // invalidate current timers
                if (pd.wd > 0 && !combo) {
                    pd.wt.modify(pd.wd, 0, Netpoll::netpollWriteDeadline, pd, pd.wseq);
                } else {
                    pd.wt.stop();
                    pd.wrun = false;
                }
            }
            // If we set the new deadline in the past, unblock currently pending IO if any.
            // Note that pd.publishInfo has already been called, above, immediately after modifying
            // rd and wd.
            if (pd.rd < 0) {
                rg = netpollunblock(pd, MODE_READ, false);
            }
            if (pd.wd < 0) {
                wg = netpollunblock(pd, MODE_WRITE, false);
            }
        }
        if (rg != null) {
            np.netpollgoready(rg);
        }
        if (wg != null) {
            np.netpollgoready(wg);
        }
    }

    /** Go: netpoll.go netpolldeadlineimpl. */
    private static void netpolldeadlineimpl(PollDesc pd, long seq, boolean read, boolean write) {
        G rg = null;
        G wg = null;
        synchronized (pd) {
            // Seq arg is seq when the timer was set. If it's stale, ignore the timer event.
            long currentSeq = read ? pd.rseq : pd.wseq;
            if (seq != currentSeq) {
                // The descriptor was reused or timers were reset.
                return;
            }
            if (read) {
                if (pd.rd <= 0 || !pd.rrun) {
                    throw Fatal.fatal(pd.netpoll.sched, "runtime: inconsistent read deadline");
                }
                pd.rd = -1;
                pd.publishInfo();
                rg = netpollunblock(pd, MODE_READ, false);
            }
            if (write) {
                if (pd.wd <= 0 || (!pd.wrun && !read)) {
                    throw Fatal.fatal(pd.netpoll.sched, "runtime: inconsistent write deadline");
                }
                pd.wd = -1;
                pd.publishInfo();
                wg = netpollunblock(pd, MODE_WRITE, false);
            }
        }
        if (rg != null) {
            pd.netpoll.netpollgoready(rg);
        }
        if (wg != null) {
            pd.netpoll.netpollgoready(wg);
        }
    }

    /** Go: netpoll.go netpollDeadline. */
    private static void netpollDeadline(Object arg, long seq, long delay) {
        netpolldeadlineimpl((PollDesc) arg, seq, true, true);
    }

    /** Go: netpoll.go netpollReadDeadline. */
    private static void netpollReadDeadline(Object arg, long seq, long delay) {
        netpolldeadlineimpl((PollDesc) arg, seq, true, false);
    }

    /** Go: netpoll.go netpollWriteDeadline. */
    private static void netpollWriteDeadline(Object arg, long seq, long delay) {
        netpolldeadlineimpl((PollDesc) arg, seq, false, true);
    }

    @Override
    public String describe() {
        return "netpoll (" + netpollWaiters.get() + " waiting)";
    }

    // ------------------------------------------------------------------------------------------

    /**
     * One socket's poll descriptor.
     *
     * <p>Go: netpoll.go pollDesc
     */
    public static final class PollDesc implements Describable {
        /** Immutable. */
        final Netpoll netpoll;
        /**
         * Immutable: the channel (non-blocking), or null for one read wait on a socket gort does
         * not own ({@link #waitJdkSocketReadable}).
         */
        final SelectableChannel ch;
        /** The selector's key (null under epoll): written once by netpollopen before the descriptor is published. */
        SelectionKey key;
        /** Under epoll: the channel's descriptor and its slot in Epoll's table; written once by netpollopen. */
        int fd = -1;

        int slot = -1;
        /**
         * Under epoll: the registration's tag, carried in its events (Go: fdseq), 0 once removed.
         * Written by Epoll's netpollopen and netpollclose (volatile), read by pollers.
         */
        volatile int fdseq;
        /** Immutable: the interest a read wait arms (OP_ACCEPT for a listener). */
        final int rop;
        /**
         * The interest a write wait arms: OP_CONNECT while connecting, then OP_WRITE. Written by
         * the goroutine that connects before it waits, read by the waiting goroutine (plain).
         */
        int wop = SelectionKey.OP_WRITE;
        /** What dumps print; written by the owner when the addresses are known, read racily (volatile). */
        private volatile String what;

        // Go's semaphores: null (pdNil), pdReady, pdWait or the parked G. VarHandle CAS (RG, WG).
        @SuppressWarnings("unused")
        private volatile Object rg;

        @SuppressWarnings("unused")
        private volatile Object wg;

        /** closing, expired deadlines: written under this monitor by publishInfo, read lock-free. */
        volatile int info;

        // ---- guarded by this object's monitor (Go: pd.lock) ----
        boolean closing;
        /** Read deadline (nanotime), 0 none, &lt; 0 expired. */
        long rd;
        /** Write deadline. */
        long wd;
        /** Protects from stale read/write timers. */
        long rseq;

        long wseq;
        /** The read deadline timer is armed (rt). */
        boolean rrun;

        boolean wrun;
        /**
         * Immutable timers, armed by pollSetDeadline (Go: pd.rt, pd.wt): runtime timers, on
         * {@link Scheduler#nanotime()} and in a P's heap, never a bubble's ({@link Timer#runtimeTimer}).
         */
        final Timer rt;

        final Timer wt;
        /** Immutable gopark lock arguments for both modes. */
        private final Sema rsema;

        private final Sema wsema;

        PollDesc(Netpoll netpoll, SelectableChannel ch, String what) {
            this.netpoll = netpoll;
            this.ch = ch;
            this.what = what;
            this.rop = ch instanceof ServerSocketChannel ? SelectionKey.OP_ACCEPT : SelectionKey.OP_READ;
            // Never a bubble's, even when a bubble goroutine opens the socket (see pollSetDeadline).
            this.rt = Timer.runtimeTimer(netpoll.sched);
            this.wt = Timer.runtimeTimer(netpoll.sched);
            this.rsema = new Sema(this, true);
            this.wsema = new Sema(this, false);
        }

        Sema sema(int mode) {
            return mode == MODE_READ ? rsema : wsema;
        }

        /** While connecting, a write wait waits for the connection (OP_CONNECT). Owner goroutine. */
        public void setConnecting(boolean connecting) {
            wop = connecting ? SelectionKey.OP_CONNECT : SelectionKey.OP_WRITE;
        }

        /** Go: netpoll.go (*pollDesc).publishInfo; this monitor held. */
        void publishInfo() {
            int i = 0;
            if (closing) {
                i |= pollClosing;
            }
            if (rd < 0) {
                i |= pollExpiredReadDeadline;
            }
            if (wd < 0) {
                i |= pollExpiredWriteDeadline;
            }
            info = i;
        }

        /**
         * Marks the descriptor closing and wakes every goroutine parked on it (they return
         * pollErrClosing); stops its deadline timers. Call before closing the channel.
         *
         * <p>Go: netpoll.go poll_runtime_pollUnblock
         */
        public void evict() {
            G rg;
            G wg;
            synchronized (this) {
                if (closing) {
                    return; // gort: idempotent (Go's fdMutex lets only one Close through)
                }
                closing = true;
                rseq++;
                wseq++;
                publishInfo();
                rg = netpollunblock(this, MODE_READ, false);
                wg = netpollunblock(this, MODE_WRITE, false);
                if (rrun) {
                    rt.stop();
                    rrun = false;
                }
                if (wrun) {
                    wt.stop();
                    wrun = false;
                }
            }
            if (rg != null) {
                netpoll.netpollgoready(rg);
            }
            if (wg != null) {
                netpoll.netpollgoready(wg);
            }
        }

        /** Renames the descriptor in dumps (e.g. once a dial knows its local address). */
        public void describeAs(String what) {
            this.what = what;
        }

        /** Closing (evict was called). */
        public boolean closing() {
            return (info & pollClosing) != 0;
        }

        @Override
        public String describe() {
            return what;
        }

        @Override
        public String toString() {
            return what;
        }
    }
}
