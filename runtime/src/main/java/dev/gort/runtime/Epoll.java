package dev.gort.runtime;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.invoke.VarHandle;
import java.nio.channels.SelectableChannel;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Linux's edge-triggered epoll for {@link Netpoll} ({@code -Dgort.netpoll=epoll}), called through
 * the Foreign Function &amp; Memory API: one epoll descriptor per runtime, each socket registered
 * once ({@link #netpollopen}) with {@code EPOLLIN|EPOLLOUT|EPOLLRDHUP|EPOLLET} and removed at
 * {@link #netpollclose}, an eventfd to break a blocked {@code epoll_wait} ({@link #netpollBreak}).
 * The Go logic (semaphores, netpollready, deadlines) stays in {@link Netpoll}; this class only
 * speaks to the kernel.
 *
 * <p>An event's data is the socket's slot in {@link #pds} (low 32 bits) and the registration's tag
 * (high 32 bits, Go's {@code taggedPointer} with {@code pd.fdseq}): an event fetched before a
 * close and handled after it finds another tag (or none) and is dropped. Slot and tag are what the
 * kernel can carry where Go stores the pollDesc's address.
 *
 * <p>The socket's descriptor is the JDK channel's ({@code sun.nio.ch.SelChImpl.getFDVal()}: needs
 * {@code --add-exports java.base/sun.nio.ch=ALL-UNNAMED} or gort's agent); reads and writes stay
 * on the non-blocking channel (0 bytes is EAGAIN: the goroutine parks on its pollDesc). The libc
 * calls are restricted methods: {@code --enable-native-access=ALL-UNNAMED}. Without either,
 * or off Linux (amd64, aarch64), the runtime uses the {@code Selector} ({@link #UNAVAILABLE}).
 *
 * <p>Why the FFM API rather than the JDK's own {@code sun.nio.ch.EPoll}: FFM is a final, supported
 * API; {@code EPoll}'s methods are package-private statics of an internal class (an
 * {@code --add-opens}, deeper than the export of one public interface method that the descriptor
 * needs) whose shape has changed between releases; and a downcall can be
 * {@link Linker.Option#critical critical} (no thread-state transition) for the calls that never
 * block: {@code epoll_ctl}, the non-blocking {@code epoll_wait}, the eventfd's read and write. The
 * blocking {@code epoll_wait} is an ordinary downcall: the M blocks in it as Go's does, and the JVM
 * sees a thread in native code (a safepoint does not wait for it).
 *
 * <p>Unlike Go, whose epoll descriptor lives as long as the process, a runtime closes its own at
 * exit ({@link #close}): every call on the descriptors counts itself in {@link #users} and checks
 * {@link #closed} (both volatile: the closer sets closed then waits for users to drain, a caller
 * counts itself then checks closed, so at least one sees the other), so that no call uses a
 * number the closed descriptor's successor may hold.
 *
 * <p>Go: netpoll_epoll.go
 */
final class Epoll {
    // <sys/epoll.h>, <sys/eventfd.h>, <errno.h> (the same values on amd64 and aarch64).
    static final int EPOLLIN = 0x1;
    static final int EPOLLOUT = 0x4;
    static final int EPOLLERR = 0x8;
    static final int EPOLLHUP = 0x10;
    static final int EPOLLRDHUP = 0x2000;
    static final int EPOLLET = 1 << 31;
    static final int EPOLLONESHOT = 1 << 30;
    private static final int EPOLL_CTL_ADD = 1;
    private static final int EPOLL_CTL_DEL = 2;
    private static final int EPOLL_CTL_MOD = 3;
    private static final int ENOENT = 2;
    private static final int EPOLL_CLOEXEC = 0x80000;
    private static final int EFD_CLOEXEC = 0x80000;
    private static final int EFD_NONBLOCK = 0x800;
    private static final int EINTR = 4;
    private static final int EAGAIN = 11;

    /** Events one epoll_wait returns at most (Go: {@code var events [128]syscall.EpollEvent}). */
    static final int MAX_EVENTS = 128;
    /** The eventfd's event data; a socket's never is 0 (tags start at 1). */
    private static final long BREAK_DATA = 0;

    /** Why epoll cannot be used here, or null when it can. Immutable. */
    static final String UNAVAILABLE;
    /** sizeof(struct epoll_event): 12 on x86_64 (packed), 16 elsewhere. Immutable. */
    private static final long EVENT_SIZE;
    /** offsetof(struct epoll_event, data). Immutable. */
    private static final long DATA_OFFSET;

    // Downcall handles, immutable (null when UNAVAILABLE). Those marked critical are short calls
    // that never block: no thread-state transition (Linker.Option.critical).
    private static final MethodHandle EPOLL_CREATE1; // (cap, flags) int
    private static final MethodHandle EVENTFD; // (cap, initval, flags) int
    private static final MethodHandle EPOLL_CTL; // (cap, epfd, op, fd, ev) int, critical
    private static final MethodHandle EPOLL_WAIT_NOW; // (cap, epfd, events, max, 0) int, critical
    private static final MethodHandle EPOLL_WAIT; // (cap, epfd, events, max, ms) int: blocks
    private static final MethodHandle WRITE; // (fd, buf, n) long, critical
    private static final MethodHandle READ; // (fd, buf, n) long, critical
    private static final MethodHandle CLOSE; // (fd) int
    /** {@code (SelChImpl) int}: the channel's descriptor, as {@code (SelectableChannel) int}. */
    private static final MethodHandle FD_VAL;
    /** errno in a capture segment. Immutable. */
    private static final VarHandle ERRNO;
    /** The capture segment's layout. Immutable. */
    private static final StructLayout CAPTURE;
    /** The 8 bytes netpollBreak writes (1), read-only once set. Immutable. */
    private static final MemorySegment ONE;

    static {
        String why = null;
        MethodHandle create = null, efd = null, ctl = null, waitNow = null, wait = null;
        MethodHandle write = null, read = null, close = null, fdVal = null;
        VarHandle errno = null;
        StructLayout capture = null;
        String arch = System.getProperty("os.arch", "");
        long size = arch.equals("amd64") || arch.equals("x86_64") ? 12 : 16;
        try {
            if (!System.getProperty("os.name", "").toLowerCase(Locale.ROOT).startsWith("linux")) {
                throw new UnsupportedOperationException("not Linux");
            }
            if (!(arch.equals("amd64") || arch.equals("x86_64") || arch.equals("aarch64"))) {
                throw new UnsupportedOperationException("epoll_event's layout on " + arch + " is not known to gort");
            }
            Module self = Epoll.class.getModule();
            if (!self.isNativeAccessEnabled()) {
                throw new UnsupportedOperationException("native access is not enabled for gort");
            }
            Class<?> selCh = Class.forName("sun.nio.ch.SelChImpl");
            if (!selCh.getModule().isExported("sun.nio.ch", self)) {
                throw new UnsupportedOperationException("java.base/sun.nio.ch is not exported to gort");
            }
            fdVal = MethodHandles.lookup()
                    .findVirtual(selCh, "getFDVal", MethodType.methodType(int.class))
                    .asType(MethodType.methodType(int.class, SelectableChannel.class));
            Linker l = Linker.nativeLinker();
            SymbolLookup libc = l.defaultLookup();
            Linker.Option errnoOpt = Linker.Option.captureCallState("errno");
            Linker.Option critical = Linker.Option.critical(false);
            capture = Linker.Option.captureStateLayout();
            errno = capture.varHandle(MemoryLayout.PathElement.groupElement("errno"));
            ValueLayout.OfInt i = ValueLayout.JAVA_INT;
            ValueLayout.OfLong j = ValueLayout.JAVA_LONG;
            ValueLayout a = ValueLayout.ADDRESS;
            create = l.downcallHandle(find(libc, "epoll_create1"), FunctionDescriptor.of(i, i), errnoOpt);
            efd = l.downcallHandle(find(libc, "eventfd"), FunctionDescriptor.of(i, i, i), errnoOpt);
            ctl = l.downcallHandle(find(libc, "epoll_ctl"), FunctionDescriptor.of(i, i, i, i, a), errnoOpt, critical);
            FunctionDescriptor waitFd = FunctionDescriptor.of(i, i, a, i, i);
            waitNow = l.downcallHandle(find(libc, "epoll_wait"), waitFd, errnoOpt, critical);
            wait = l.downcallHandle(find(libc, "epoll_wait"), waitFd, errnoOpt);
            write = l.downcallHandle(find(libc, "write"), FunctionDescriptor.of(j, i, a, j), critical);
            read = l.downcallHandle(find(libc, "read"), FunctionDescriptor.of(j, i, a, j), critical);
            close = l.downcallHandle(find(libc, "close"), FunctionDescriptor.of(i, i));
        } catch (Throwable t) { // ReflectiveOperationException, IllegalCallerException, LinkageError...
            why = t.getMessage() == null ? t.toString() : t.getMessage();
            create = efd = ctl = waitNow = wait = write = read = close = fdVal = null;
        }
        UNAVAILABLE = why;
        EVENT_SIZE = size;
        DATA_OFFSET = size == 12 ? 4 : 8;
        EPOLL_CREATE1 = create;
        EVENTFD = efd;
        EPOLL_CTL = ctl;
        EPOLL_WAIT_NOW = waitNow;
        EPOLL_WAIT = wait;
        WRITE = write;
        READ = read;
        CLOSE = close;
        FD_VAL = fdVal;
        ERRNO = errno;
        CAPTURE = capture;
        MemorySegment one = null;
        if (why == null) {
            one = Arena.global().allocate(ValueLayout.JAVA_LONG);
            one.set(ValueLayout.JAVA_LONG, 0, 1L);
        }
        ONE = one;
    }

    private static MemorySegment find(SymbolLookup libc, String name) {
        return libc.find(name).orElseThrow(() -> new UnsupportedOperationException("libc has no " + name));
    }

    /** Whether the runtime can use epoll here. */
    static boolean available() {
        return UNAVAILABLE == null;
    }

    /** Immutable after the constructor: the runtime this poller serves (fatal errors name it). */
    private final Scheduler sched;
    /** Immutable: the epoll descriptor (Go: epfd) and the eventfd (Go: netpollEventFd). */
    private final int epfd;

    private final int efd;
    /** The eventfd holds a break no blocking poll has read yet (Go: netpollWakeSig). CAS, any thread. */
    private final AtomicInteger wakeSig = new AtomicInteger();
    /** Set once by {@link #close}; read by every call before it touches a descriptor (volatile). */
    private volatile boolean closed;
    /** Calls under way on the descriptors (see the class comment). Atomic, any thread. */
    private final AtomicInteger users = new AtomicInteger();

    /**
     * The registered descriptors by slot. The array is replaced (grown) and its slots written
     * under {@link #tableLock}; pollers read the array volatile and a slot with acquire
     * ({@link #SLOT}), after epoll_ctl published the registration that carries it.
     */
    private volatile Netpoll.PollDesc[] pds = new Netpoll.PollDesc[64];
    /** Free slots (a stack) and the next never-used slot. Guarded by tableLock. */
    private int[] free = new int[64];

    private int nfree;
    private int nextSlot;
    /** Registration tags, never 0 (BREAK_DATA). Guarded by tableLock. */
    private int nextTag;

    private final Object tableLock = new Object();

    private static final VarHandle SLOT = MethodHandles.arrayElementVarHandle(Netpoll.PollDesc[].class);

    /** The blocking poll's events (the last idle M's) and the non-blocking polls' (any other M). */
    final Events blocking = new Events();

    final Events nonblocking = new Events();

    /**
     * An event array and its errno capture, used by one poll at a time ({@link #lock}: the blocking
     * poll takes it, a non-blocking one tries it and, when it is taken, polls nothing: the holder
     * finds the events). Native memory of an automatic arena: freed with the poller.
     */
    static final class Events {
        final ReentrantLock lock = new ReentrantLock();
        final MemorySegment buf;
        final MemorySegment cap;
        /** The eventfd's counter, read by a blocking poll. */
        final MemorySegment scratch;
        /**
         * Read events reported for a goroutine a poll had already woken and that had not run yet
         * (its semaphore still pdReady): what an edge-triggered poller does not report again.
         * Guarded by lock; read racily by tests.
         */
        long queuedReports;

        Events() {
            Arena arena = Arena.ofAuto();
            buf = available() ? arena.allocate(EVENT_SIZE * MAX_EVENTS, 8) : null;
            cap = available() ? arena.allocate(CAPTURE) : null;
            scratch = available() ? arena.allocate(ValueLayout.JAVA_LONG) : null;
        }

        int events(int i) {
            return buf.get(ValueLayout.JAVA_INT, i * EVENT_SIZE);
        }

        long data(int i) {
            return buf.get(ValueLayout.JAVA_LONG_UNALIGNED, i * EVENT_SIZE + DATA_OFFSET);
        }
    }

    /** Opens the epoll descriptor and its eventfd. Go: netpoll_epoll.go netpollinit. */
    Epoll(Scheduler sched) throws IOException {
        if (!available()) {
            throw new IllegalStateException("gort: epoll is not available: " + UNAVAILABLE);
        }
        this.sched = sched;
        MemorySegment cap = Arena.ofAuto().allocate(CAPTURE);
        int ep;
        int ev;
        try {
            ep = (int) EPOLL_CREATE1.invokeExact(cap, EPOLL_CLOEXEC);
            if (ep < 0) {
                throw new IOException("epoll_create1: " + strerror(errno(cap)));
            }
            ev = (int) EVENTFD.invokeExact(cap, 0, EFD_CLOEXEC | EFD_NONBLOCK);
            if (ev < 0) {
                int e = errno(cap);
                closeFd(ep);
                throw new IOException("eventfd: " + strerror(e));
            }
            // Level-triggered: a non-blocking poll that sees the break leaves it to the blocking one.
            int r = ctl(cap, ep, EPOLL_CTL_ADD, ev, EPOLLIN, BREAK_DATA);
            if (r != 0) {
                closeFd(ep);
                closeFd(ev);
                throw new IOException("epoll_ctl: " + strerror(r));
            }
        } catch (IOException e) {
            throw e;
        } catch (Throwable t) {
            throw new IOException(t);
        }
        this.epfd = ep;
        this.efd = ev;
    }

    private static int errno(MemorySegment cap) {
        return (int) ERRNO.get(cap, 0L);
    }

    private static String strerror(int errno) {
        return switch (errno) {
            case 9 -> "bad file descriptor";
            case 12 -> "cannot allocate memory";
            case 17 -> "file exists";
            case 22 -> "invalid argument";
            case 24 -> "too many open files";
            case 28 -> "no space left on device";
            case 1 -> "operation not permitted";
            default -> "errno " + errno;
        };
    }

    /** epoll_ctl with a fresh event struct; returns 0 or errno. */
    private static int ctl(MemorySegment cap, int ep, int op, int fd, int events, long data) throws Throwable {
        MemorySegment ev = MemorySegment.NULL;
        if (op == EPOLL_CTL_ADD) {
            ev = Arena.ofAuto().allocate(EVENT_SIZE, 8);
            ev.set(ValueLayout.JAVA_INT, 0, events);
            ev.set(ValueLayout.JAVA_LONG_UNALIGNED, DATA_OFFSET, data);
        }
        int r = (int) EPOLL_CTL.invokeExact(cap, ep, op, fd, ev);
        return r == 0 ? 0 : errno(cap);
    }

    private static void closeFd(int fd) {
        try {
            int ignored = (int) CLOSE.invokeExact(fd);
        } catch (Throwable t) {
            throw new AssertionError(t);
        }
    }

    /** Counts a call on the descriptors; false (and not counted) once closed. */
    private boolean enter() {
        users.incrementAndGet();
        if (closed) {
            users.decrementAndGet();
            return false;
        }
        return true;
    }

    private void exit() {
        users.decrementAndGet();
    }

    /**
     * Registers pd's channel, edge-triggered for reading and writing, once for its life. Goroutine
     * code (no lock held across anything that parks).
     *
     * <p>Go: netpoll_epoll.go netpollopen
     */
    void netpollopen(Netpoll.PollDesc pd) throws IOException {
        int fd = fdVal(pd.ch);
        long data = allocSlot(pd, fd);
        if (!enter()) {
            freeSlot(pd);
            throw new IOException("use of closed network connection"); // the runtime is ending
        }
        int r;
        try {
            r = ctl(
                    Arena.ofAuto().allocate(CAPTURE),
                    epfd,
                    EPOLL_CTL_ADD,
                    fd,
                    EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET,
                    data);
        } catch (Throwable t) {
            throw new AssertionError(t);
        } finally {
            exit();
        }
        if (r != 0) {
            freeSlot(pd);
            throw new IOException("epoll_ctl: " + strerror(r));
        }
    }

    /**
     * Registers the descriptor of a socket gort does not own (a {@code java.net.Socket}'s, whose
     * reads block: {@link Netpoll#waitJdkSocketReadable}) for one read wait: level-triggered and
     * one-shot ({@code EPOLLIN|EPOLLRDHUP|EPOLLONESHOT}), so that data already there is reported at
     * once and nothing after the first report. A registration an earlier wait left disarmed (its
     * event came: {@link #closeOneShot} does not remove it then) is re-armed with this wait's slot
     * ({@code EPOLL_CTL_MOD}); where there is none ({@code ENOENT}: the first wait on the socket,
     * or the last one ended without its event) it is added. The JDK's own poller re-arms the same
     * way ({@code EPollPoller.implRegister}). Returns 0 or the errno. The caller holds the socket's
     * state lock, so that the descriptor is the socket's (not closed, its number not reused) while
     * it is armed, and has published its wait first (no other goroutine waits on the socket: a
     * re-arm would take its registration); it ends the wait with {@link #closeOneShot} under that
     * lock. Counts a re-arm in {@link Netpoll#jdkSocketRearms}.
     */
    int openOneShot(M mp, Netpoll.PollDesc pd, int fd) {
        long data = allocSlot(pd, fd);
        if (!enter()) {
            freeSlot(pd);
            return 9; // EBADF: the runtime is ending
        }
        int r;
        try {
            Scratch s = scratch(mp);
            s.ev.set(ValueLayout.JAVA_INT, 0, EPOLLIN | EPOLLRDHUP | EPOLLONESHOT);
            s.ev.set(ValueLayout.JAVA_LONG_UNALIGNED, DATA_OFFSET, data);
            r = (int) EPOLL_CTL.invokeExact(s.cap, epfd, EPOLL_CTL_MOD, fd, s.ev);
            r = r == 0 ? 0 : errno(s.cap);
            if (r == 0) {
                pd.netpoll.jdkSocketRearms.incrementAndGet();
            } else if (r == ENOENT) {
                r = (int) EPOLL_CTL.invokeExact(s.cap, epfd, EPOLL_CTL_ADD, fd, s.ev);
                r = r == 0 ? 0 : errno(s.cap);
            }
        } catch (Throwable t) {
            throw new AssertionError(t);
        } finally {
            exit();
        }
        if (r != 0) {
            freeSlot(pd);
        }
        return r;
    }

    /**
     * Ends a wait {@link #openOneShot} registered and frees its slot (an event fetched before and
     * handled after finds the tag gone). With {@code remove}, also removes the descriptor from the
     * epoll set: the caller holds the socket's state lock and saw it open (a closed socket's
     * descriptor left the set with its file, and its number may be another's now), and the wait
     * ended without its event (a timeout, a close, the runtime's end), so that the registration may
     * still be armed. After the event, the one-shot registration is disarmed and stays for the
     * next wait to re-arm: nothing is reported for it until then.
     */
    void closeOneShot(M mp, Netpoll.PollDesc pd, boolean remove) {
        if (pd.fdseq == 0) {
            return;
        }
        pd.fdseq = 0;
        if (remove && enter()) {
            try {
                Scratch s = scratch(mp);
                int ignored = (int) EPOLL_CTL.invokeExact(s.cap, epfd, EPOLL_CTL_DEL, pd.fd, MemorySegment.NULL);
            } catch (Throwable t) {
                throw new AssertionError(t);
            } finally {
                exit();
            }
        }
        freeSlot(pd);
    }

    /**
     * An M's event struct and errno capture for {@link #openOneShot} and {@link #closeOneShot}
     * (used where the goroutine cannot change carriers: nothing there parks), so that a read wait
     * allocates no native memory. Native memory of an automatic arena. Per M, not in a
     * {@code ThreadLocal}: a carrier's thread-locals are its goroutine's (ADR 0004).
     */
    private static final class Scratch {
        final MemorySegment ev;
        final MemorySegment cap;

        Scratch() {
            Arena arena = Arena.ofAuto();
            ev = arena.allocate(EVENT_SIZE, 8);
            cap = arena.allocate(CAPTURE);
        }
    }

    private static Scratch scratch(M mp) {
        Object s = mp.epollScratch;
        if (s == null) {
            mp.epollScratch = s = new Scratch();
        }
        return (Scratch) s;
    }

    /**
     * Takes a slot in {@link #pds} and a fresh tag for pd, the descriptor fd's, and returns the
     * event data that names them (the tag in the high 32 bits, the slot in the low).
     */
    private long allocSlot(Netpoll.PollDesc pd, int fd) {
        synchronized (tableLock) {
            int slot;
            if (nfree > 0) {
                slot = free[--nfree];
            } else {
                slot = nextSlot++;
                Netpoll.PollDesc[] t = pds;
                if (slot == t.length) {
                    pds = java.util.Arrays.copyOf(t, t.length * 2);
                }
            }
            if (++nextTag == 0) {
                nextTag = 1; // 0 is the break's
            }
            int tag = nextTag;
            pd.fd = fd;
            pd.slot = slot;
            pd.fdseq = tag;
            SLOT.setRelease(pds, slot, pd);
            return ((long) tag << 32) | (slot & 0xFFFF_FFFFL);
        }
    }

    /** The channel's descriptor number (the JDK's {@code SelChImpl.getFDVal}). */
    static int fdVal(SelectableChannel ch) throws IOException {
        try {
            return (int) FD_VAL.invokeExact(ch);
        } catch (Throwable t) {
            throw new IOException("gort: the channel's descriptor: " + t, t);
        }
    }

    /**
     * Removes pd's channel from the epoll set; call before the channel is closed (the descriptor's
     * number may be reused at once), from the goroutine that closes it (the channel is closed by
     * nobody else meanwhile). An event fetched before and handled after finds the tag gone.
     *
     * <p>Go: netpoll_epoll.go netpollclose (and netpoll.go's fdseq)
     */
    void netpollclose(Netpoll.PollDesc pd) {
        if (pd.fdseq == 0) {
            return; // never registered, or removed already
        }
        pd.fdseq = 0;
        // A channel the JDK closed itself (a failed connect or finishConnect closes it) has left
        // the set with its file, and its number may belong to another socket now: no DEL then.
        if (pd.ch.isOpen() && enter()) {
            try {
                // The result is ignored, as Go's poll_runtime_pollClose ignores it.
                int ignored = ctl(Arena.ofAuto().allocate(CAPTURE), epfd, EPOLL_CTL_DEL, pd.fd, 0, 0);
            } catch (Throwable t) {
                throw new AssertionError(t);
            } finally {
                exit();
            }
        }
        freeSlot(pd);
    }

    private void freeSlot(Netpoll.PollDesc pd) {
        synchronized (tableLock) {
            pd.fdseq = 0;
            SLOT.setRelease(pds, pd.slot, (Netpoll.PollDesc) null);
            if (nfree == free.length) {
                free = java.util.Arrays.copyOf(free, free.length * 2);
            }
            free[nfree++] = pd.slot;
        }
    }

    /** The descriptor registered under an event's data, or null when that registration is gone. */
    Netpoll.PollDesc lookup(long data) {
        int slot = (int) data;
        int tag = (int) (data >>> 32);
        Netpoll.PollDesc[] t = pds;
        if (slot < 0 || slot >= t.length) {
            return null;
        }
        Netpoll.PollDesc pd = (Netpoll.PollDesc) SLOT.getAcquire(t, slot);
        return pd != null && pd.fdseq == tag ? pd : null;
    }

    /** Interrupts an epoll_wait. Go: netpoll_epoll.go netpollBreak. */
    boolean netpollBreak() {
        // Failing to cas indicates there is an in-flight wakeup, so we're done here.
        if (!wakeSig.compareAndSet(0, 1)) {
            return false;
        }
        writeBreak();
        return true;
    }

    private void writeBreak() {
        if (!enter()) {
            return;
        }
        try {
            writeBreakRaw();
        } finally {
            exit();
        }
    }

    /**
     * Adds 1 to the eventfd's counter. A non-blocking eventfd write fails only with EAGAIN, when
     * the counter would overflow: impossible while wakeSig lets one break through at a time.
     */
    private void writeBreakRaw() {
        long n;
        try {
            n = (long) WRITE.invokeExact(efd, ONE, 8L);
        } catch (Throwable t) {
            throw new AssertionError(t);
        }
        if (n != 8 && !closed) {
            throw Fatal.fatal(sched, "runtime: netpollBreak write failed");
        }
    }

    /**
     * One epoll_wait into ev (its lock held): the number of events, 0 when interrupted during a
     * timed wait (Go: recompute the sleep), or -1 once closed. waitms as Go's (-1 blocks).
     *
     * <p>Go: netpoll_epoll.go netpoll (its epollwait and retry)
     */
    int epollwait(Events ev, int waitms) {
        if (!enter()) {
            return -1;
        }
        try {
            for (; ; ) {
                int n = waitms == 0
                        ? (int) EPOLL_WAIT_NOW.invokeExact(ev.cap, epfd, ev.buf, MAX_EVENTS, 0)
                        : (int) EPOLL_WAIT.invokeExact(ev.cap, epfd, ev.buf, MAX_EVENTS, waitms);
                if (n >= 0) {
                    return n;
                }
                int e = errno(ev.cap);
                if (e != EINTR) {
                    throw Fatal.fatal(sched, "runtime: netpoll failed: epollwait on fd " + epfd + " failed with " + e);
                }
                // If a timed sleep was interrupted, just return to recalculate how long we
                // should sleep now.
                if (waitms > 0) {
                    return 0;
                }
            }
        } catch (GortFatalError e) {
            throw e;
        } catch (Throwable t) {
            throw new AssertionError(t);
        } finally {
            exit();
        }
    }

    /** A break reached a blocking poll: drain the eventfd (Go: read it, netpollWakeSig = 0). */
    void consumeBreak(Events ev) {
        if (!enter()) {
            return;
        }
        try {
            // Since EFD_SEMAPHORE was not specified, the eventfd counter will be reset to 0.
            long ignored = (long) READ.invokeExact(efd, ev.scratch, 8L);
        } catch (Throwable t) {
            throw new AssertionError(t);
        } finally {
            exit();
        }
        wakeSig.set(0);
    }

    /** Whether data is the eventfd's. */
    static boolean isBreak(long data) {
        return data == BREAK_DATA;
    }

    /**
     * Runtime exit: stops every later call, breaks a blocked poll, waits (bounded) for the calls
     * under way to return, then closes both descriptors. (Go's live as long as the process.)
     */
    void close() {
        if (closed) {
            return;
        }
        closed = true;
        // Break a poll blocked now: it leaves at once (it reads closed next time).
        if (enter0()) {
            try {
                wakeSig.set(1);
                writeBreakRaw();
            } finally {
                users.decrementAndGet();
            }
        }
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (users.get() != 0) {
            if (System.nanoTime() > deadline) {
                return; // a call that does not return: leave the descriptors open rather than hang
            }
            LockSupport.parkNanos(100_000);
        }
        closeFd(epfd);
        closeFd(efd);
    }

    /** close's own count: counted while closed is already set (the users wait for it too). */
    private boolean enter0() {
        users.incrementAndGet();
        return true;
    }

    /** Registered descriptors now (tests). */
    int registered() {
        synchronized (tableLock) {
            return nextSlot - nfree;
        }
    }
}
