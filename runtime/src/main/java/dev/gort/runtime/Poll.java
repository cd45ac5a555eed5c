package dev.gort.runtime;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Lock;

/**
 * The yield points that gort's java agent injects into user bytecode (preemption-strategies.md).
 * There is no way to stop a continuation from outside on JDK 25, so sysmon raises a request on the
 * carrier thread ({@link Preempt}: the request, its states, the refusal rule and the counters all
 * live there) and the running G looks for it here.
 *
 * <p><b>Fast path</b> ({@link #poll}): one opaque load of a JVM-wide count of carriers with a
 * pending request, and a branch: 13 bytes of bytecode, far under {@code MaxInlineSize = 35}, so C2
 * inlines it into the loop and compiles the never-taken call to {@link #slow} as an uncommon
 * trap. The load is opaque, never plain: a plain read may be hoisted out of the loop (JLS 17.3)
 * and the G would never stop.
 *
 * <p><b>Why not the carrier's own flag</b> (preemption-strategies.md §5's per-carrier variant):
 * C2 loads {@code Thread.currentThread()} from "immutable memory", so once the poll is inlined into
 * a loop the thread may be computed once, before the loop, and reused after the goroutine yielded
 * in the slow path and was resumed on another carrier: the loop would then watch the old carrier's
 * flag forever (and clear other Gs' requests). The armed count has no such dependency. The price:
 * while any carrier in the JVM has a pending request, every poll on every thread takes the out-of-
 * line slow path, which looks its carrier up through {@link M#current()} (always fresh: see there)
 * and returns at once if the request is not its own ({@link PreemptStats#spuriousPolls()}).
 * Requests are pending for microseconds when instrumented code runs; a G stuck in uninstrumented
 * code keeps its request pending until its slice ends (counted as unhonoured).
 *
 * <p><b>Slow path</b> ({@link #slow}, out of line, {@link Preempt#poll}): takes its carrier's
 * request, drops requests meant for an earlier slice, refuses (and counts) by {@link Preempt#refusal}
 * while the G holds a Java monitor or a counted {@code Lock}, runs a class initialiser, has a JDK
 * frame holding a lock on its stack ({@link LockFrames}, one stack walk, only there), or while the
 * M holds a runtime lock, records where it happened, then yields through {@link Preempt#gopreempt}: the G
 * goes to the global queue tail and gets a new slice when it runs again (Go's
 * {@code gopreempt_m}). A continuation that cannot yield (pinned: native frame, critical section)
 * is counted by {@code onPinned} reason.
 *
 * <p>Monitor bookkeeping ({@link #monitorEnter}/{@link #monitorExit}) is injected around
 * MONITORENTER/MONITOREXIT and synchronized methods: preempting a G inside a Java monitor would let
 * another G on the same carrier enter it (the monitor belongs to the carrier) or hang the carrier
 * (jdk25-continuations.md §3). On the last exit with a refused request pending, the request is
 * re-armed, like Go's {@code releasem} restoring {@code stackPreempt}.
 *
 * <p>Go: stack.go newstack (preemption branch), preempt.go, proc.go gopreempt_m, releasem
 */
public final class Poll {
    private Poll() {}

    /**
     * Carriers (of every runtime in the JVM) with a pending preemption request (or a NOTICE). Moved
     * by {@link Preempt} exactly when a carrier's word becomes armed or stops being armed (atomic
     * add); read by the fast path (opaque).
     * JVM-wide on purpose: it is what a poll can read without knowing its thread.
     */
    @SuppressWarnings("unused")
    private static volatile int armed;

    private static final VarHandle ARMED;

    static {
        try {
            ARMED = MethodHandles.lookup().findStaticVarHandle(Poll.class, "armed", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    static void arm() {
        ARMED.getAndAdd(1);
    }

    static void disarm() {
        ARMED.getAndAdd(-1);
    }

    /** Carriers with a pending request right now (JVM-wide). */
    public static int armedCount() {
        return (int) ARMED.getVolatile();
    }

    /**
     * The back-edge / entry poll ({@code backedge}, {@code entry} strategies) as the agent injects
     * it: {@code site} is a constant {@code "class.method"} pushed with {@code ldc}, free on the
     * fast path (a constant the JIT never reads unless the poll fires) and far cheaper than a stack
     * walk when it does (a StackWalker walk from a rarely run, hence interpreted, slow path cost
     * ~90 µs per preemption here).
     */
    public static void poll(String site) {
        if ((int) ARMED.getOpaque() != 0) {
            slow(site);
        }
    }

    /** A poll without a known site (hand-written yield points); the site is found by a stack walk. */
    public static void poll() {
        poll(null);
    }

    /**
     * The {@code budget} strategy's poll: decrements the running slice's budget; when it is spent,
     * yields if other work is runnable (else refills it). sysmon's requests are honoured here too.
     *
     * <p>The budget lives on the carrier and is reached through {@code Thread.currentThread()}, so
     * the JIT caveat above applies: after a yield inside the same compiled activation the loop may
     * go on charging its previous carrier's budget. That only blurs the budget (the slow path
     * refills the real carrier's); it cannot preempt the wrong G, because the yield decision is
     * taken in the slow path on the carrier found through {@link M#current()}.
     */
    public static void budget(String site) {
        Thread t = Thread.currentThread();
        if (t instanceof M.MThread mt) {
            int b = mt.budget - 1;
            mt.budget = b;
            if (b <= 0) {
                budgetSlow(site);
                return;
            }
        }
        if ((int) ARMED.getOpaque() != 0) {
            slow(site);
        }
    }

    /** {@link #budget(String)} without a known site. */
    public static void budget() {
        budget(null);
    }

    /**
     * After MONITORENTER and at the entry of a synchronized method. A contended entry blocks the
     * carrier in the JVM, so it may come back from a retaken "syscall" ({@link #returned}).
     */
    public static void monitorEnter() {
        M mp = M.current(); // never a cached carrier: see the class comment
        if (mp != null) {
            G gp = mp.curg;
            if (gp != null) {
                gp.monitorDepth++;
                returned(mp, gp);
            }
        }
    }

    /**
     * Before a call of a JDK method known to block its thread (the agent puts it before every call
     * site of {@code BlockingQueue.take}/{@code put}/timed {@code poll}/{@code offer},
     * {@code Future.get}, {@code CountDownLatch.await}, {@code Condition.await},
     * {@code LockSupport.park*}, {@code Object.wait}, {@code Thread.join},
     * {@code ServerSocket.accept}, {@code Selector.select}, ...: the agent's list): the goroutine
     * enters a syscall for the call, as Go's syscall wrappers call entersyscall, so that sysmon
     * retakes its P at its next tick if the call blocks while other work waits. Unwrapped, such a
     * block was noticed only when sysmon saw the carrier blocked at two ticks in a row (a wait the
     * JVM reports as RUNNABLE, such as {@code Selector.select}: after the time slice, and only on
     * Linux), and each waiter held a P meanwhile (HikariCP's borrowers, parked in
     * {@code SynchronousQueue.poll}). The syscall is implicit ({@link G#SYSCALL_HOOK}): a gort
     * call inside the call (a park on a channel in user code the JDK calls back) leaves it, as a
     * blocked-carrier retake's. sysmon asks no G in a syscall to yield, so such user code (a
     * {@code PriorityBlockingQueue} element's {@code compareTo}, an AQS subclass's
     * {@code tryAcquire} under {@code Condition.await}: short by contract) runs in the syscall,
     * without a P once sysmon has retaken it; a receiver that may run user code at length gets no
     * syscall ({@link #blockingEnter(Object)}). Nothing outside a goroutine, inside a syscall already
     * (the G's own {@code Syscall.block} around the call, or a retake it has not left), or inside a
     * class initialiser (the G could not leave its carrier at the exit, and the Ms holding every
     * P may wait for that class: see {@link Preempt#leaveRetake}). Costs a CAS at entry and one at
     * exit when the call does not block for long (~20 ns for the pair, agent/README.md).
     *
     * <p>Go: proc.go entersyscall (called by syscall.Syscall around the kernel call)
     */
    public static void blockingEnter() {
        M mp = M.current();
        G gp = mp == null ? null : mp.curg;
        if (gp != null && mp.locks == 0 && gp.readgstatusNoScan() == G._Grunning && gp.clinitDepth() == 0) {
            Syscalls.reentersyscall(mp, gp, G.SYSCALL_HOOK);
        }
    }

    /**
     * {@link #blockingEnter()} before a blocking call on {@code receiver} (an interface's or an
     * overridable method's), only if the receiver's class is the JDK's own (the bootstrap or
     * platform loader's) and not a {@code ForkJoinTask} or {@code ForkJoinPool}: a library's or a
     * user's implementation of {@code BlockingQueue}, {@code Future}, {@code ExecutorService} may
     * run user code there (a direct executor's tasks, a spinning take), and user code must not
     * run inside a syscall (without a P once sysmon retakes it, beyond GOMAXPROCS, never
     * preempted); a fork-join task's {@code join} may run the task itself. A null receiver: no
     * syscall (the call throws its {@code NullPointerException}).
     */
    public static void blockingEnter(Object receiver) {
        if (receiver != null && JDK_BLOCKER.get(receiver.getClass())) {
            blockingEnter();
        }
    }

    /**
     * {@link #blockingEnter()} before a read, write or flush of one of the JDK's stream wrappers
     * at an instrumented call site ({@code BufferedReader.readLine}, {@code DataInputStream.readInt},
     * {@code Writer.flush}, ...: the agent's list), only if the receiver waits for a peer
     * ({@link PeerStreams}: a socket's or a pipe's stream at the end of a chain of the JDK's own
     * wrappers, nothing else's code in between). A null receiver: no syscall (the call throws its
     * {@code NullPointerException}).
     */
    public static void blockingEnterStream(Object receiver) {
        if (receiver != null && PeerStreams.waitsForPeer(receiver)) {
            blockingEnter();
        }
    }

    /**
     * {@link #blockingEnterStream} before a read of one of the JDK's stream wrappers at an
     * instrumented call site that takes no buffer ({@code BufferedReader.readLine},
     * {@code DataInputStream.readInt}, ...: the agent's list): where the chain ends at the JDK's
     * socket implementation's input stream and the read would block (nothing buffered along the
     * chain: the receiver's {@code ready()} or {@code available()}), the goroutine first waits in
     * the netpoller until the socket has something to read ({@link Netpoll#waitJdkSocketReadable}),
     * as Go's reads do; then the read is a syscall as before (it may still block: another reader
     * took the data, a {@code readInt} wants more than came). Throws the JDK's
     * {@code SocketTimeoutException} ("Read timed out") when the socket's {@code SO_TIMEOUT}
     * passes with nothing to read, before the call, as the call would have. {@code frame}: the
     * invocation of the calling method ({@link #waitFrame}), which spares its later waits the
     * look at the stack for JDK frames' locks ({@link #framesClean}).
     */
    public static void blockingEnterStreamRead(Object receiver, long frame) throws java.io.IOException {
        enterStreamRead(receiver, true, frame);
    }

    /**
     * At the entry of an instrumented method with a read of a JDK stream
     * ({@link #blockingEnterStreamRead}, {@link #streamRead(java.io.InputStream, byte[], int, int,
     * long)}, ...): a token for this
     * invocation, which the agent keeps in a local and passes to each read's hook
     * ({@link M#nextFrameToken}; 0 outside a goroutine, where no read waits in the netpoller, without
     * the carrier lookup of {@link M#current()}: a deserialiser's helper that calls
     * {@code DataInputStream.readInt} on a platform thread pays a continuation lookup per call, no
     * more). While the invocation lives the frames below it stay the same, so once a look found no
     * JDK frame holding a lock there, its later waits skip the look.
     */
    public static long waitFrame() {
        M mp = M.ofGoroutine();
        return mp == null ? 0 : mp.nextFrameToken();
    }

    /**
     * {@link #blockingEnterStreamRead(Object, long)} for a read into the range {@code [off, off + len)}
     * of the array {@code dst} ({@code read(byte[], int, int)}, {@code readFully}, ...): it waits
     * only for a read that asks for something the JDK accepts ({@link #wantsRange}): a read of
     * nothing returns 0 at once, one with bad arguments throws at once.
     */
    public static void blockingEnterStreamReadRange(Object receiver, Object dst, int off, int len, long frame)
            throws java.io.IOException {
        enterStreamRead(receiver, wantsRange(dst, off, len), frame);
    }

    /**
     * {@link #blockingEnterStreamRead(Object, long)} for a read into the whole of {@code dst} (an array,
     * or a {@code CharBuffer}'s remaining room): no wait for an empty or missing one
     * ({@link #wantsAll}).
     */
    public static void blockingEnterStreamReadAll(Object receiver, Object dst, long frame) throws java.io.IOException {
        enterStreamRead(receiver, wantsAll(dst), frame);
    }

    /** {@link #blockingEnterStreamRead(Object, long)} for {@code readNBytes(len)}: no wait unless len &gt; 0. */
    public static void blockingEnterStreamReadN(Object receiver, int len, long frame) throws java.io.IOException {
        enterStreamRead(receiver, len > 0, frame);
    }

    /**
     * The stream reads' hooks: where the receiver waits for a peer, the netpoller wait if the read
     * {@code wants} something ({@link #awaitReadable}), then the syscall. A null receiver: no
     * syscall (the call throws its {@code NullPointerException}).
     */
    private static void enterStreamRead(Object receiver, boolean wants, long frame) throws java.io.IOException {
        if (receiver == null) {
            return;
        }
        Object end = PeerStreams.peerEnd(receiver);
        if (end != null) {
            if (wants) {
                awaitReadable(receiver, end, frame);
            }
            blockingEnter();
        }
    }

    /** Whether a read into {@code dst[off, off + len)} asks for something the JDK accepts. */
    private static boolean wantsRange(Object dst, int off, int len) {
        int n;
        if (dst instanceof byte[] b) {
            n = b.length;
        } else if (dst instanceof char[] c) {
            n = c.length;
        } else {
            return false; // null: the call's NullPointerException
        }
        return off >= 0 && len > 0 && len <= n - off;
    }

    /** Whether a read into all of {@code dst} (an array, a {@code CharBuffer}) asks for something. */
    private static boolean wantsAll(Object dst) {
        if (dst instanceof byte[] b) {
            return b.length > 0;
        }
        if (dst instanceof char[] c) {
            return c.length > 0;
        }
        return dst instanceof java.nio.CharBuffer cb && cb.hasRemaining() && !cb.isReadOnly();
    }

    /**
     * The netpoller wait of {@link #blockingEnterStreamRead} for a stream {@code in} whose chain
     * ends at {@code end} ({@link PeerStreams#peerEnd}): only on a running goroutine that could
     * leave its carrier (Preempt's refusal rule, as {@code Thread.sleep}'s park: no Java monitor,
     * counted lock, class initialiser or runtime lock, and no JDK frame on its stack that holds a
     * lock for its carrier, which one stack walk finds before it parks: {@link #framesClean}), only
     * for the JDK's socket implementation. The look whether anything is buffered ({@code ready()}, {@code available()})
     * runs in a syscall: it takes the wrapper's lock, which a reader blocked in the same wrapper
     * holds.
     */
    private static void awaitReadable(Object in, Object end, long frame) throws java.io.IOException {
        M mp = M.current();
        G gp = mp == null ? null : mp.curg;
        if (gp == null || gp.readgstatusNoScan() != G._Grunning) {
            return;
        }
        Object impl = PeerStreams.socketImplOfInput(end);
        if (impl == null || Preempt.refusal(mp, gp, false) != Preempt.R_NONE) {
            return;
        }
        boolean ready;
        blockingEnter();
        try {
            ready = in instanceof java.io.Reader r ? r.ready() : ((java.io.InputStream) in).available() > 0;
        } catch (java.io.IOException e) {
            return; // closed, not connected: the read itself fails
        } finally {
            blockingExit();
        }
        int fd = PeerStreams.socketFd(impl);
        if (ready || fd < 0) {
            return;
        }
        mp = M.current();
        // The goroutine may go on on another carrier: not under a lock a JDK frame holds for its
        // carrier (a BufferedReader's over a user's stream that reads the socket), as a sleep.
        if (Preempt.refusal(mp, gp, false) != Preempt.R_NONE || !framesClean(mp, gp, frame)) {
            return;
        }
        if (!mp.sched.netpoll.waitJdkSocketReadable(impl, fd, PeerStreams.socketTimeout(impl) * 1_000_000L)) {
            throw new java.net.SocketTimeoutException("Read timed out"); // NioSocketImpl's words
        }
    }

    /**
     * Whether no frame on gp's stack is a JDK frame holding a lock for its carrier or a class
     * initialiser ({@link LockFrames#scan}, the stack walk of {@link Preempt#refusal}), looked at
     * once per invocation {@code frame} of the method that reads ({@link #waitFrame}): the frames
     * below a live invocation cannot change, so a clean look holds for its later waits (a
     * server's loop that reads a connection's lines itself looks once per connection). Only a
     * clean look is kept, and one per goroutine ({@link G.Rare#cleanWaitFrame}): a look that found
     * a lock is repeated at every wait, a frame of 0 is looked at every time, and a method that
     * reads through a helper that reads too (a new invocation per call) looks at each of the
     * helper's waits and, its own token evicted, at its own next wait. Counts each look in
     * {@link Netpoll#jdkSocketFrameLooks}.
     */
    private static boolean framesClean(M mp, G gp, long frame) {
        G.Rare r = gp.rareOrNull();
        if (frame != 0 && r != null && r.cleanWaitFrame == frame) {
            return true;
        }
        mp.sched.netpoll.jdkSocketFrameLooks.incrementAndGet();
        if (LockFrames.scan() != LockFrames.NONE) {
            return false;
        }
        if (frame != 0) {
            gp.rare().cleanWaitFrame = frame;
        }
        return true;
    }

    /**
     * Before a {@code close()} at an instrumented call site, whatever its receiver: the JDK socket
     * implementation the call closes ({@link PeerStreams#socketImplClosedBy}: a {@code Socket}'s,
     * or the one at the end of a chain of the JDK's wrappers over one of its streams, looked at
     * before the close empties the wrappers' fields), or null. The agent keeps it on the stack for
     * {@link #closed} after the call.
     */
    public static Object closeTarget(Object receiver) {
        return receiver == null || !Netpoll.jdkSocketsWaitedOn() ? null : PeerStreams.socketImplClosedBy(receiver);
    }

    /**
     * After a {@code close()} at an instrumented call site returned, with what
     * {@link #closeTarget} found before it: wakes the goroutine waiting in the netpoller to read
     * that socket ({@link #blockingEnterStreamRead}), whose read then fails ("Socket closed"), as
     * a close wakes a thread blocked in the socket's read. After the close, not before: a waiter
     * either saw the socket closing (the JDK sets that under its state lock, under which the wait
     * is published) or is found here (Go's {@code Close} unblocks its readers through their
     * pollDesc: poll_runtime_pollUnblock).
     */
    public static void closed(Object impl) {
        if (impl != null) {
            Netpoll.jdkSocketClosed(impl);
        }
    }

    /**
     * {@link #blockingEnterStream} before a {@code transferTo} of one of the JDK's stream wrappers at
     * an instrumented call site ({@code BufferedInputStream.transferTo(OutputStream)},
     * {@code Reader.transferTo(Writer)}, ...): the JDK's loop writes to {@code target} inside the
     * call, so the call is a syscall only if the target runs only the JDK's code too
     * ({@link PeerStreams#jdkSink}): a user's stream or writer must not run inside a syscall.
     */
    public static void blockingEnterTransfer(Object receiver, Object target) {
        if (receiver != null && target != null && PeerStreams.waitsForPeer(receiver) && PeerStreams.jdkSink(target)) {
            blockingEnter();
        }
    }

    /** Whether a receiver's class is one whose blocking calls are syscalls ({@link #blockingEnter(Object)}). */
    private static final ClassValue<Boolean> JDK_BLOCKER = new ClassValue<>() {
        @Override
        protected Boolean computeValue(Class<?> c) {
            ClassLoader l = c.getClassLoader();
            return (l == null || l == ClassLoader.getPlatformClassLoader())
                    && !java.util.concurrent.ForkJoinTask.class.isAssignableFrom(c)
                    && !java.util.concurrent.ForkJoinPool.class.isAssignableFrom(c);
        }
    };

    /**
     * After a blocking call that {@link #blockingEnter} preceded, on its return and in a handler of
     * its exceptions: the goroutine leaves the syscall the hook entered (exitsyscall: its P if
     * sysmon did not take it, with the slice going on; else an idle P; else it waits on the global
     * queue, on another carrier or, holding a lock, on this one). If the G was already in a syscall
     * at the call, a syscall that sysmon made of its blocked carrier ({@link Retake}) is left here
     * too ({@link Preempt#leaveRetake}), and one of its own is kept.
     *
     * <p>Go: proc.go exitsyscall
     */
    public static void blockingExit() {
        M mp = M.current();
        G gp = mp == null ? null : mp.curg;
        if (gp != null) {
            if (gp.syscallImplicit == G.SYSCALL_HOOK
                    && gp.readgstatusNoScan() == G._Gsyscall
                    && gp.clinitDepth() == 0) {
                Syscalls.exitsyscall(gp);
            } else {
                // Inside a class initialiser (a hooked call's callback reached one: blockingEnter
                // enters no syscall there), leaveRetake defers the exit, as for a retake: the G
                // cannot leave its carrier, and waiting for a P there may wait on the Ms that
                // wait for this class.
                returned(mp, gp);
            }
        }
    }

    /**
     * Where a call that may have blocked the carrier in the JVM returned (the monitor and lock
     * hooks: after every monitor entry and {@code Lock.lock}). If sysmon retook the P while the
     * carrier was blocked there ({@link Retake}), the goroutine leaves that "syscall" now
     * ({@link Preempt#leaveRetake}), as Go's exitsyscall runs when the call returns. It used to
     * run on without a P until its next poll that took the slow path, and sysmon keeps a blocked
     * retaken carrier's NOTICE out of the polls' armed count until it sees that carrier run again,
     * up to a sysmon sleep (10 ms) later: meanwhile the goroutine ran user code beyond GOMAXPROCS
     * (H2 at GOMAXPROCS=1: woken row-lock waiters ran transactions in parallel with the P's
     * goroutine and blocked each other again). One volatile load when nothing was retaken.
     */
    private static void returned(M mp, G gp) {
        if (gp.syscallImplicit != G.SYSCALL_OWN && gp.readgstatusNoScan() == G._Gsyscall) {
            mp.sched.preempt.leaveRetake(mp, gp);
        }
    }

    /** After MONITOREXIT and on every exit of a synchronized method (returns and exceptions). */
    public static void monitorExit() {
        M mp = M.current();
        if (mp != null) {
            G gp = mp.curg;
            if (gp != null) {
                release(mp, gp);
            }
        }
    }

    /** One carrier-owned lock fewer; on the last one, re-arms a refused request (Go: releasem). */
    private static void release(M mp, G gp) {
        int d = gp.monitorDepth - 1;
        if (d <= 0) {
            // Clamped: an exception edge we could not see (e.g. a StackOverflowError inside
            // the hook) must not leave the G unpreemptible forever, nor negative.
            gp.monitorDepth = 0;
            G.Rare rare = gp.rareOrNull();
            if (rare != null) {
                rare.lockDepth = 0;
                rare.parkerDepth = 0;
                rare.jdkLockDepth = 0;
            }
            mp.sched.preempt.rearm(mp, gp, false);
        } else {
            gp.monitorDepth = d;
        }
    }

    /**
     * After a call of {@code lock()} or {@code lockInterruptibly()} on {@code lock} returned (the
     * agent passes the receiver of every such call; only {@link Lock}s count). A {@code Lock}
     * belongs to the carrier thread ({@code ReentrantLock}, both locks of a
     * {@code ReentrantReadWriteLock}): counted like a monitor, so that neither preemption nor a park
     * yields while it is held (a park then parks in place: {@link Scheduler#gopark}). Every
     * {@code Lock} counts, also those that no thread owns: for them this only delays preemption.
     */
    public static void lockAcquired(Object lock) {
        if (lock instanceof Lock) {
            M mp = M.current();
            G gp = mp == null ? null : mp.curg;
            if (gp != null) {
                gp.rare().lockDepth++;
                gp.monitorDepth++;
                returned(mp, gp); // lock() may have parked the carrier: see returned
            }
        }
    }

    /** After {@code tryLock()} / {@code tryLock(long, TimeUnit)} returned {@code ok}: counts a success. */
    public static boolean lockTried(Object lock, boolean ok) {
        if (ok) {
            lockAcquired(lock);
        }
        return ok;
    }

    /**
     * After a call of {@code unlock()} on {@code lock} returned (one that threw released nothing).
     * An unlock of a lock that no counted call took (taken in uninstrumented code) changes nothing.
     */
    public static void lockReleased(Object lock) {
        if (lock instanceof Lock) {
            M mp = M.current();
            G gp = mp == null ? null : mp.curg;
            if (gp != null && gp.lockDepth() > 0) {
                gp.rare().lockDepth--;
                release(mp, gp);
            }
        }
    }

    /**
     * First in an instrumented method that calls {@code LockSupport.park*} (the agent's
     * {@code PollInjector.parksCarrier}). Such a method names the thread to wake by
     * {@code Thread.currentThread()}, the carrier, before it parks (a waiter node), and polls in the
     * loops around the park; a goroutine moved to another carrier there would park a thread that
     * nobody unparks (the waker unparks the old carrier: Guava's {@code AbstractFuture.get}, seen
     * hung in {@code RealLibrariesTest}). So the method holds its carrier as a {@link Lock} is held,
     * from entry to exit (counted in {@code G.monitorDepth} and, apart from the locks,
     * {@code G.Rare.parkerDepth}): preemption is refused inside it, {@code Gosched} does nothing, a
     * syscall exit there waits for a P on this carrier, and a park on a gort primitive there parks
     * in place. A virtual thread needs none of this: its {@code Thread} is itself, not its carrier.
     */
    public static void parkerEnter() {
        M mp = M.current();
        G gp = mp == null ? null : mp.curg;
        if (gp != null) {
            gp.rare().parkerDepth++;
            gp.monitorDepth++;
        }
    }

    /** On every exit of a method that {@link #parkerEnter} entered (returns and exceptions). */
    public static void parkerExit() {
        M mp = M.current();
        G gp = mp == null ? null : mp.curg;
        if (gp != null && gp.parkerDepth() > 0) {
            gp.rare().parkerDepth--;
            release(mp, gp);
        }
    }

    /**
     * Before a call, from instrumented code, of a JDK collection method that runs a callback
     * ({@code computeIfAbsent}, {@code forEach}, ...: {@link LockFrames#CALLBACKS}; {@code method}
     * is {@link LockFrames#callbackBit} of its index and arity) on {@code receiver}: if the
     * implementation that call reaches holds a lock
     * around the callback ({@link LockFrames#callbackLocks}: {@code ConcurrentHashMap}'s bin
     * monitor, a {@code Collections.synchronized*} wrapper's, {@code Hashtable}'s, a
     * {@code CopyOnWriteArrayList}'s lock), counts it as a carrier-owned lock for the call's
     * duration, like a monitor: preemption is refused (no stack walk), a syscall exit waits for a
     * P on this carrier, and a park on a gort primitive inside the callback parks in place. A
     * yield there would leave the lock with the carrier, where another goroutine could enter it
     * (an inflated monitor belongs to the carrier thread: jdk25-continuations.md). Returns what
     * to pass to {@link #jdkCallbackExit}: 1 if counted, else 0.
     */
    public static int jdkCallbackEnter(Object receiver, int method) {
        if (receiver == null || (LockFrames.callbackLocks(receiver.getClass()) & (1 << method)) == 0) {
            return 0; // a null receiver: the call itself throws, with nothing counted
        }
        return countJdkCallback();
    }

    /**
     * {@link #jdkCallbackEnter} for a {@code super.} call ({@code INVOKESPECIAL}) made by
     * {@code self}'s code: the implementation reached is that of {@code owner} (the binary name of
     * the class the call names, one of {@code self}'s superclasses), whatever {@code self}'s class
     * overrides. A user override of {@code Hashtable.computeIfAbsent} holds no lock, the
     * {@code super.computeIfAbsent} it calls does. An owner that is not a superclass (an
     * interface's default method, {@code Map.super.forEach}) holds no lock.
     */
    public static int jdkCallbackSuperEnter(Object self, String owner, int method) {
        Class<?> k = self == null ? null : self.getClass();
        while (k != null && !k.getName().equals(owner)) {
            k = k.getSuperclass();
        }
        if (k == null || (LockFrames.callbackLocks(k) & (1 << method)) == 0) {
            return 0;
        }
        return countJdkCallback();
    }

    /** Counts a callback call found to hold a JDK lock; 1, or 0 outside a goroutine. */
    private static int countJdkCallback() {
        M mp = M.current();
        G gp = mp == null ? null : mp.curg;
        if (gp == null) {
            return 0;
        }
        gp.rare().jdkLockDepth++;
        gp.monitorDepth++;
        return 1;
    }

    /** After that call returned or threw: {@code counted} is what {@link #jdkCallbackEnter} returned. */
    public static void jdkCallbackExit(int counted) {
        if (counted == 0) {
            return;
        }
        M mp = M.current();
        G gp = mp == null ? null : mp.curg;
        if (gp != null && gp.jdkLockDepth() > 0) {
            gp.rare().jdkLockDepth--;
            release(mp, gp);
        }
    }

    /** First in an instrumented class initialiser ({@code <clinit>}). */
    public static void clinitEnter() {
        M mp = M.current();
        G gp = mp == null ? null : mp.curg;
        if (gp != null) {
            gp.rare().clinitDepth++;
        }
    }

    /**
     * On every exit of an instrumented class initialiser. After the last one, a request refused
     * (or a syscall exit deferred) inside it is re-armed, so that the next poll honours it.
     */
    public static void clinitExit() {
        M mp = M.current();
        G gp = mp == null ? null : mp.curg;
        if (gp != null) {
            G.Rare rare = gp.rare();
            int d = rare.clinitDepth - 1;
            if (d <= 0) {
                rare.clinitDepth = 0; // clamped, as monitorExit
                boolean deferred = rare.syscallExitDeferred && gp.readgstatusNoScan() == G._Gsyscall;
                rare.syscallExitDeferred = false;
                mp.sched.preempt.rearm(mp, gp, deferred);
            } else {
                rare.clinitDepth = d;
            }
        }
    }

    /** The preemption slow path; never inlined into loops (it is big and cold): {@link Preempt#poll}. */
    static void slow(String site) {
        M mp = M.current();
        if (mp != null) { // else instrumented code on a thread outside gort
            mp.sched.preempt.poll(mp, site);
        }
    }

    /** The budget is spent: {@link Preempt#budgetSpent}. */
    private static void budgetSlow(String site) {
        M mp = M.current();
        if (mp != null) {
            mp.sched.preempt.budgetSpent(mp, site);
        }
    }

    /** A small first batch: the site is a few frames up (Preempt.poll, slow, poll, the caller). */
    private static final StackWalker WALKER = StackWalker.getInstance(java.util.Set.of(), 6);

    private static final String POLL = Poll.class.getName();
    private static final String PREEMPT = Preempt.class.getName();

    static {
        site(); // bootstrap the walker and its lambdas now, not inside the first preemption
        LockFrames.scan(); // and the lock-frame walk (class values, reflection), likewise
    }

    /** "class.method" of the poll's caller, by a stack walk (polls that were not given their site). */
    static String site() {
        return WALKER.walk(s -> s.filter(
                        f -> !f.getClassName().equals(POLL) && !f.getClassName().equals(PREEMPT))
                .findFirst()
                .map(f -> f.getClassName() + "." + f.getMethodName())
                .orElse("(unknown)"));
    }

    // ------------------------------------------------------------------------------------------
    // ThreadLocal call sites. C2 compiles Thread.currentThread() as a load from "immutable memory"
    // in every method not annotated @ChangesCurrentThread (the JDK's own assumption: a continuation
    // never changes the current thread; a virtual thread stays itself), so a method into which
    // ThreadLocal.get/set/remove are inlined may reuse the carrier it read before a yield (a poll,
    // a park) after the goroutine resumed on another carrier, and read or write that carrier's
    // map: another goroutine's under goroutine-scoped ThreadLocals (GoroutineLocals), the old
    // carrier's under carrier-scoped ones. The agent therefore rewrites instrumented code's
    // call sites of ThreadLocal.get/set/remove (owner java/lang/ThreadLocal or InheritableThreadLocal)
    // into these, which reach the real method through a handle in a non-final field, as
    // M.current()'s fallback does: the JIT cannot inline it into the caller, so the thread is read
    // afresh in the callee on every call. A call more per access, in instrumented code only.

    /** Deliberately not final (see above). Written once in the static initializer. */
    @SuppressWarnings("FieldMayBeFinal")
    private static java.lang.invoke.MethodHandle TL_GET, TL_SET, TL_REMOVE, CURRENT_THREAD;

    static {
        try {
            MethodHandles.Lookup l = MethodHandles.lookup();
            TL_GET = l.findVirtual(ThreadLocal.class, "get", java.lang.invoke.MethodType.methodType(Object.class));
            TL_SET = l.findVirtual(
                    ThreadLocal.class, "set", java.lang.invoke.MethodType.methodType(void.class, Object.class));
            TL_REMOVE = l.findVirtual(ThreadLocal.class, "remove", java.lang.invoke.MethodType.methodType(void.class));
            CURRENT_THREAD =
                    l.findStatic(Thread.class, "currentThread", java.lang.invoke.MethodType.methodType(Thread.class));
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /**
     * {@code tl.get()} at an instrumented call site (see above). The goroutine holds its carrier for
     * the call, as inside a monitor (preemption refused, a park parks in place): a first get runs
     * {@code initialValue()} (user code, which polls) and then stores the value into the map of the
     * thread that get began on ({@code ThreadLocal.setInitialValue(t)}). A goroutine preempted there
     * resumed on another carrier and wrote into its first carrier's map: by then another
     * goroutine's, maybe running (a goroutine saw a value another made, {@code initialValue} ran 10
     * times for 8 goroutines, and Guava's EventBus failed in {@code ThreadLocalMap.replaceStaleEntry}).
     */
    public static Object threadLocalGet(ThreadLocal<?> tl) {
        M mp = M.current();
        G gp = mp == null ? null : mp.curg;
        if (gp != null) {
            // The carrier's identity held, as by a parker method (counted with them: a refusal
            // here is R_LOCK, not a monitor; and no lock anyone waits for, Syscalls.holdsLock)
            gp.rare().parkerDepth++;
            gp.monitorDepth++;
        }
        try {
            return (Object) TL_GET.invokeExact(tl);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new AssertionError(t);
        } finally {
            if (gp != null && gp.parkerDepth() > 0) {
                gp.rare().parkerDepth--;
                release(mp, gp); // the same carrier: it could not leave it
            }
        }
    }

    /**
     * {@code Thread.currentThread()} at an instrumented call site: the carrier, as before, but read
     * in a callee the JIT cannot inline (the handle in a non-final field, as for the ThreadLocals
     * above), so that compiled code never reuses a carrier it read before a yield. Library code names
     * the thread that owns a lock or is to be woken this way (Guava's and Caffeine's own locks, a
     * waiter node).
     */
    public static Thread currentThread() {
        try {
            return (Thread) CURRENT_THREAD.invokeExact();
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new AssertionError(t);
        }
    }

    /**
     * {@code Thread.yield()} at an instrumented call site: in a goroutine that may yield there (no
     * counted monitor or lock, class initialiser or JDK frame holding a lock, as for a preemption),
     * with other work runnable on its P or the global queue, it is {@code runtime.Gosched()} (the
     * goroutine goes to the global queue), as a virtual thread's {@code Thread.yield()} yields the
     * virtual thread; holding a monitor or lock, with other work runnable, a yield in place (the
     * P goes to that work, the goroutine waits on its carrier: {@link Preempt#threadYield});
     * otherwise, and outside goroutines, it is the carrier's {@code Thread.yield()}.
     * Without it, a loop that yields while it waits for another goroutine (a spin-then-yield
     * wait, a yielding idle strategy) waited at GOMAXPROCS=1 for sysmon's preemption after every
     * hand-off (10-25 ms each). See {@link Preempt#threadYield}.
     */
    public static void threadYield() {
        M mp = M.current();
        if (mp == null) {
            Thread.yield();
            return;
        }
        mp.sched.preempt.threadYield(mp);
    }

    /**
     * {@code Thread.sleep(millis)} at an instrumented call site: in a goroutine that may yield there
     * (as for {@link #threadYield}: no counted monitor or lock, class initialiser or JDK frame
     * holding a lock), the goroutine sleeps ({@code time.Sleep}: its carrier and P run other
     * goroutines meanwhile, and inside a synctest bubble the bubble's clock counts), as a virtual
     * thread's {@code Thread.sleep} parks the virtual thread; otherwise, and outside goroutines,
     * the carrier sleeps, in a syscall ({@link #blockingEnter}). The JDK's checks and messages:
     * a negative duration is an {@code IllegalArgumentException}, an interrupt status already set
     * is an {@code InterruptedException} ({@code "sleep interrupted"}, the status cleared), and a
     * sleep of 0 is a yield ({@link #threadYield}). A goroutine cannot be interrupted during its
     * sleep: an interrupt is delivered to a carrier, not a goroutine (README, "Limitations").
     */
    public static void threadSleep(long millis) throws InterruptedException {
        if (millis < 0) {
            throw new IllegalArgumentException("timeout value is negative");
        }
        sleepNanos(TimeUnit.MILLISECONDS.toNanos(millis));
    }

    /** {@code Thread.sleep(millis, nanos)} at an instrumented call site: see {@link #threadSleep(long)}. */
    public static void threadSleep(long millis, int nanos) throws InterruptedException {
        if (millis < 0) {
            throw new IllegalArgumentException("timeout value is negative");
        }
        if (nanos < 0 || nanos > 999_999) {
            throw new IllegalArgumentException("nanosecond timeout value out of range");
        }
        long total = TimeUnit.MILLISECONDS.toNanos(millis);
        total += Math.min(Long.MAX_VALUE - total, nanos);
        sleepNanos(total);
    }

    /**
     * {@code Thread.sleep(Duration)} at an instrumented call site: see {@link #threadSleep(long)}; a
     * negative duration returns at once, as the JDK's does.
     */
    public static void threadSleep(Duration duration) throws InterruptedException {
        long nanos = TimeUnit.NANOSECONDS.convert(duration); // Long.MAX_VALUE if > 292 years
        if (nanos >= 0) {
            sleepNanos(nanos);
        }
    }

    /**
     * {@code unit.sleep(timeout)} at an instrumented call site (the JDK's calls {@code Thread.sleep}
     * where the agent cannot see it): see {@link #threadSleep(long)}; a timeout of 0 or less
     * returns at once, as the JDK's does.
     */
    public static void timeUnitSleep(TimeUnit unit, long timeout) throws InterruptedException {
        long nanos = unit.toNanos(timeout); // null unit: the NullPointerException of the JDK's call
        if (timeout > 0) {
            sleepNanos(nanos);
        }
    }

    private static void sleepNanos(long nanos) throws InterruptedException {
        M mp = M.current();
        G gp = mp == null ? null : mp.curg;
        if (gp != null && gp.readgstatusNoScan() == G._Grunning && Preempt.refusal(mp, gp, true) == Preempt.R_NONE) {
            if (Thread.interrupted()) {
                throw new InterruptedException("sleep interrupted");
            }
            if (nanos == 0) {
                mp.sched.preempt.threadYield(mp); // the JVM's sleep(0) yields; a virtual thread's too
            } else {
                Timer.timeSleep(nanos);
            }
            return;
        }
        blockingEnter();
        try {
            Thread.sleep(Duration.ofNanos(nanos));
        } finally {
            blockingExit();
        }
    }

    // ------------------------------------------------------------------------------------------
    // Streams. The agent replaces an instrumented call site's array read or write of a stream it
    // names java.io.InputStream or OutputStream (its declared type: a socket's stream is handed
    // out as one) with these: a syscall (blockingEnter/blockingExit) when the stream waits for a
    // peer (PeerStreams: a socket's or a pipe's, or one of the JDK's wrappers over one), the plain
    // call otherwise; a read of the JDK's socket that would block waits in the netpoller first
    // (awaitReadable). Calls on the wrappers' own types (BufferedReader.readLine, ...) are wrapped
    // in blockingEnterStream/blockingExit, their reads in blockingEnterStreamRead*/blockingExit.

    /**
     * The methods here that stand in for a user's call site (the agent's replacement calls) and
     * make the user's call themselves: a carrier blocked below one of them (a plain stream read
     * that waits, {@code Thread.sleep} where the goroutine may not yield) is blocked in the user's
     * call, not in gort, so sysmon's blocked-carrier retake looks past their frames
     * ({@link Retake#blockedInRuntime}). Before, such a carrier was never retaken: a goroutine
     * reading a {@code SequenceInputStream} over a socket's stream held its P until the read
     * returned. A test checks that every replacement the agent writes is here. Immutable.
     */
    static final java.util.Set<String> CALL_SITE_STAND_INS = java.util.Set.of(
            "currentThread",
            "threadYield",
            "threadSleep",
            "timeUnitSleep",
            "sleepNanos",
            "streamRead",
            "streamReadNBytes",
            "streamReadAllBytes",
            "streamTransferTo",
            "streamWrite",
            "threadLocalGet",
            "threadLocalSet",
            "threadLocalRemove");

    /** A syscall for this stream's call (outside a goroutine, blockingEnter does nothing)? */
    private static boolean blocks(Object stream) {
        return PeerStreams.waitsForPeer(stream); // a null stream: the call's NullPointerException
    }

    /**
     * {@code in.read(b, off, len)} at an instrumented call site: a syscall on a socket's or pipe's
     * stream, after a wait in the netpoller where a JDK socket has nothing to read
     * ({@link #awaitReadable}). {@code frame}: the calling invocation's token ({@link #waitFrame}).
     */
    public static int streamRead(java.io.InputStream in, byte[] b, int off, int len, long frame)
            throws java.io.IOException {
        Object end = PeerStreams.peerEnd(in);
        if (end == null) {
            return in.read(b, off, len);
        }
        if (wantsRange(b, off, len)) {
            awaitReadable(in, end, frame);
        }
        blockingEnter();
        try {
            return in.read(b, off, len);
        } finally {
            blockingExit();
        }
    }

    /** {@code in.read(b)} at an instrumented call site: see {@link #streamRead(java.io.InputStream, byte[], int, int, long)}. */
    public static int streamRead(java.io.InputStream in, byte[] b, long frame) throws java.io.IOException {
        Object end = PeerStreams.peerEnd(in);
        if (end == null) {
            return in.read(b);
        }
        if (wantsAll(b)) {
            awaitReadable(in, end, frame);
        }
        blockingEnter();
        try {
            return in.read(b);
        } finally {
            blockingExit();
        }
    }

    /** {@code in.readNBytes(b, off, len)} at an instrumented call site: see {@link #streamRead(java.io.InputStream, byte[], int, int, long)}. */
    public static int streamReadNBytes(java.io.InputStream in, byte[] b, int off, int len, long frame)
            throws java.io.IOException {
        Object end = PeerStreams.peerEnd(in);
        if (end == null) {
            return in.readNBytes(b, off, len);
        }
        if (wantsRange(b, off, len)) {
            awaitReadable(in, end, frame);
        }
        blockingEnter();
        try {
            return in.readNBytes(b, off, len);
        } finally {
            blockingExit();
        }
    }

    /** {@code in.readNBytes(len)} at an instrumented call site: see {@link #streamRead(java.io.InputStream, byte[], int, int, long)}. */
    public static byte[] streamReadNBytes(java.io.InputStream in, int len, long frame) throws java.io.IOException {
        Object end = PeerStreams.peerEnd(in);
        if (end == null) {
            return in.readNBytes(len);
        }
        if (len > 0) {
            awaitReadable(in, end, frame);
        }
        blockingEnter();
        try {
            return in.readNBytes(len);
        } finally {
            blockingExit();
        }
    }

    /** {@code in.readAllBytes()} at an instrumented call site: see {@link #streamRead(java.io.InputStream, byte[], int, int, long)}. */
    public static byte[] streamReadAllBytes(java.io.InputStream in, long frame) throws java.io.IOException {
        Object end = PeerStreams.peerEnd(in);
        if (end == null) {
            return in.readAllBytes();
        }
        awaitReadable(in, end, frame);
        blockingEnter();
        try {
            return in.readAllBytes();
        } finally {
            blockingExit();
        }
    }

    /**
     * {@code in.transferTo(out)} at an instrumented call site: see {@link #streamRead(java.io.InputStream, byte[], int, int, long)};
     * the JDK's loop writes to {@code out} inside the call, so it is a syscall only if {@code out}
     * runs only the JDK's code too ({@link PeerStreams#jdkSink}: a user's stream must not run inside
     * a syscall).
     */
    public static long streamTransferTo(java.io.InputStream in, java.io.OutputStream out) throws java.io.IOException {
        if (!blocks(in) || out == null || !PeerStreams.jdkSink(out)) {
            return in.transferTo(out);
        }
        blockingEnter();
        try {
            return in.transferTo(out);
        } finally {
            blockingExit();
        }
    }

    /** {@code out.write(b, off, len)} at an instrumented call site: a syscall on a socket's or pipe's stream. */
    public static void streamWrite(java.io.OutputStream out, byte[] b, int off, int len) throws java.io.IOException {
        if (!blocks(out)) {
            out.write(b, off, len);
            return;
        }
        blockingEnter();
        try {
            out.write(b, off, len);
        } finally {
            blockingExit();
        }
    }

    /** {@code out.write(b)} at an instrumented call site: see {@link #streamWrite(java.io.OutputStream, byte[], int, int)}. */
    public static void streamWrite(java.io.OutputStream out, byte[] b) throws java.io.IOException {
        if (!blocks(out)) {
            out.write(b);
            return;
        }
        blockingEnter();
        try {
            out.write(b);
        } finally {
            blockingExit();
        }
    }

    /** {@code tl.set(v)} at an instrumented call site (see above). */
    public static void threadLocalSet(ThreadLocal<?> tl, Object v) {
        try {
            TL_SET.invokeExact(tl, v);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new AssertionError(t);
        }
    }

    /** {@code tl.remove()} at an instrumented call site (see above). */
    public static void threadLocalRemove(ThreadLocal<?> tl) {
        try {
            TL_REMOVE.invokeExact(tl);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new AssertionError(t);
        }
    }
}
