package dev.gort.runtime;

import dev.gort.runtime.trace.Ev;
import dev.gort.runtime.trace.Tracer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import jdk.internal.vm.Continuation;

/**
 * One gort runtime: Go's goroutine scheduler on JDK continuations.
 *
 * <h2>Design</h2>
 *
 * <p>The scheduler's job is to distribute ready-to-run goroutines over worker threads. As in Go's
 * runtime/proc.go, the main concepts are:
 * <ul>
 *   <li><b>G</b> - goroutine: a {@link Continuation} and its scheduling state ({@link G}).
 *   <li><b>M</b> - worker thread, or machine: a platform "carrier" thread ({@link M}).
 *   <li><b>P</b> - processor, a resource that is required to execute Go code. An M must hold a P to
 *       run a G; there are exactly GOMAXPROCS Ps ({@link P}).
 * </ul>
 *
 * <p>A runnable G sits in exactly one of: its P's {@code runnext} slot, its P's 256-slot lock-free
 * ring ({@link RunQueue}), or the global queue ({@link GlobalRunQueue}, under {@code sched.lock}).
 * {@code go f()} and every wake-up ({@code goready}) put the G in the current P's runnext, kicking
 * the previous occupant to the ring; a G taken from runnext inherits the time slice, so a
 * communicating pair runs as a unit and is preempted as one.
 *
 * <h3>Rejected alternatives</h3>
 * <ol>
 *   <li><b>One central queue</b> (Go before 1.1; a {@code ForkJoinPool} submission queue): every
 *       spawn and wake-up serialises on one lock or one contended head; no locality.
 *   <li><b>Direct hand-off of a readied G to an idle thread</b>: "thread handoff" moves the G away
 *       from the cache that holds its data and makes the waker wait for an OS wake-up.
 *   <li><b>Unpark a thread on every ready</b>: on a ping-pong both carriers wake and sleep on every
 *       message (thread thrashing), which is exactly the cost Go's spinning protocol avoids.
 * </ol>
 *
 * <h3>Worker thread parking/unparking (the spinning protocol)</h3>
 *
 * <p>We need to balance between keeping enough running worker threads to utilize available
 * hardware parallelism and parking excessive running worker threads to conserve CPU. We unpark an
 * additional thread when we ready a goroutine if (1) there is an idle P and (2) there are no
 * "spinning" worker threads. A worker thread is spinning if it is out of local work and did not
 * find work in the global run queue or in other Ps. The protocol:
 * <ol>
 *   <li>Submitter publishes the G (runnext/ring store-release, or the global queue under the lock),
 *       then calls {@link #wakep}: it reads {@code nmspinning} (volatile: the StoreLoad of the
 *       submitter is the volatile read-modify-write CAS of {@code nmspinning} 0&rarr;1, or the
 *       volatile read that sees it non-zero).
 *   <li>If a spinner exists, nothing is woken: that spinner will find the work.
 *   <li>A spinner that finds work calls {@code resetspinning} &rarr; {@code wakep}, so the next
 *       spinner starts ("a spinning M that finds work wakes another").
 *   <li>A spinner that finds nothing takes the "delicate dance": it decrements {@code nmspinning}
 *       first ({@code AtomicInteger.decrementAndGet}, a full fence: StoreLoad) and only then
 *       re-checks the global queue and every P's ring (acquire loads). Either the submitter saw
 *       {@code nmspinning == 0} and woke somebody, or the spinner sees the work.
 *   <li>{@code pidlegetSpinning} sets {@code needspinning = 1} when a waker finds no idle P, so the
 *       M about to drop its P spins again instead.
 * </ol>
 *
 * <h3>Parking a goroutine</h3>
 *
 * <p>{@link #gopark} yields the continuation with a reason; the M, back on its own stack (Go's
 * g0), flips the G to waiting and only then runs the unlock function that releases the channel or
 * mutex lock. A waker on another M needs that lock to find the G, so it can never resume a
 * continuation that is still mounted here: there is no lost or early wake-up.
 *
 * <h3>Differences from Go</h3>
 * <ul>
 *   <li>Goroutines are heap-allocated JDK continuations, not segmented/copying stacks; a switch is a
 *       freeze/thaw (~90 ns run+yield here) rather than a register swap.
 *   <li>No asynchronous preemption: {@code Continuation.tryPreempt} is unimplemented on JDK 25.
 *       sysmon sets a per-carrier flag; ASM-injected polls yield at the next poll: under the
 *       default {@code backedge} strategy at loop back-edges (once per 1024 iterations in javac's
 *       counted loops, which the agent strip-mines so that C2 keeps vectorising them) and at the
 *       entry of methods that call others (recursion); or at method entries, or on a budget. JDK
 *       code, native frames and code that holds a Java monitor cannot be preempted (counted, not
 *       hidden).
 *   <li>sysmon wakes at the end of the earliest running slice it has sighted instead of sleeping
 *       a whole back-off step past it (Go's slice can run 15 ms when the step is 10 ms).
 *   <li>A "syscall" is any Java call that blocks its carrier: explicit {@code Syscall.block} calls,
 *       and carriers sysmon sees blocked while holding a P.
 *   <li>No GC. The network poller ({@link Netpoll}) is a Java {@code Selector}, level-triggered
 *       where Go's epoll is edge-triggered: interest is armed when a goroutine parks and disarmed
 *       when reported; until the first network use the last idle M sleeps until the next timer on
 *       a Note (Go creates the poller at the first timer).
 *   <li>Dead Gs are not reused (a continuation runs once); {@code allgs} unlinks them.
 *   <li>{@code sched.lock} is a Java monitor; every lock is released before a continuation yields.
 *   <li>A G may park (or Gosched) while in a syscall: a gort call inside {@code Syscall.block}, or
 *       after sysmon retook the P of its blocked carrier. It yields still {@code _Gsyscall} and its
 *       M ends the syscall without waiting for a P before the unlock function runs
 *       ({@code Syscalls.exitsyscallNoWait}); Go's exitsyscall runs in the syscall wrapper, before
 *       any runtime lock, so Go never parks from {@code _Gsyscall}.
 *   <li>An M that sleeps until its locked or parked-in-place G is runnable counts in
 *       {@code nmidlelocked} once, paired with its waker ({@code idlelockedSleep} /
 *       {@code idlelockedWake}); Go's plain increments can count it twice for an instant.
 *   <li>Several runtimes can live in one JVM: nothing is static; code finds its runtime through the
 *       current carrier ({@link M#current()}). {@code Go.run} inside a goroutine is rejected.
 *   <li>Carriers take the daemon status, group, priority and context class loader of the thread that
 *       called {@link #run} ({@link M.Origin}), because threads goroutines create copy them from the
 *       carrier; shutdown interrupts carriers still running a goroutine so that non-daemon ones do
 *       not keep the JVM alive (docs/adr/0004).
 *   <li>Outside threads that may wake goroutines register ({@link ExternalWaker}); checkdead counts
 *       them as running Ms, as Go counts the extra M of a cgo callback.
 * </ul>
 *
 * <p>Go: proc.go (the whole file; functions keep Go's names)
 */
public final class Scheduler {
    // ---- configuration and global state ----
    final Config config;
    final Sched sched = new Sched();
    public final Stats stats = new Stats();
    /** Syscall, locked-thread and blocked-carrier figures (Syscalls, Retake). */
    public final SyscallStats syscallStats = new SyscallStats();
    /** Preemption settings and figures (PreemptStats via preempt.snapshot()). */
    public final Preempt preempt = new Preempt();
    /** The system monitor thread: started with the runtime, stopped at shutdown. */
    final Sysmon sysmon = new Sysmon(this);

    final AllGs allgs = new AllGs();
    final StealOrder stealOrder = new StealOrder();
    /**
     * The execution tracer: off unless -Dgort.trace, the API or a JFR recording turns it on.
     * Immutable. Built here with the runtime half-built, so its constructor only stores this
     * reference; what it starts (JFR, JMX, the debug server, the dump signal) starts in
     * {@link #start}, through {@link Tracer#onStart}.
     */
    public final Tracer trace = new Tracer(this);
    /** GODEBUG=schedtrace=N,scheddetail=1 (printed by sysmon). */
    public final SchedTrace schedtrace;

    /** Replaced (never mutated in place) by procresize with the world stopped; read volatile. */
    volatile P[] allp = new P[0];
    /** Written by procresize under sched.lock with the world stopped; read anywhere. */
    volatile int gomaxprocs;
    /** STW initiator's request for a new GOMAXPROCS; under sched.lock. Go: newprocs. */
    int newprocs;

    /** Every M ever started, newest first (Go's allm order); under sched.lock. */
    final List<M> allm = new ArrayList<>();

    /** The per-P timer heaps ({@link TimerHeaps}), installed by the constructor; null = no timers. */
    public volatile Timers timers;
    /** Before the network poller exists, the idle M waiting for the next timer sleeps here. */
    final Note netpollNote = new Note();
    /** The network poller (its selector is opened at the first network use). Immutable. */
    public final Netpoll netpoll = new Netpoll(this);

    /**
     * The carriers' group, daemon status, priority and context class loader: those of the thread
     * that called {@link #run} (see {@link M.Origin}). Written once by start() before M0 is created
     * (volatile: Ms are created later by any thread, outside ones included); read by the M
     * constructor. The constructor's thread until then.
     */
    volatile M.Origin origin = M.Origin.of(Thread.currentThread());

    /** Set once main returns or the program dies; read volatile everywhere. */
    volatile boolean exiting;
    /** Go: mainStarted. */
    volatile boolean mainStarted;

    private volatile G mainG;
    private final CountDownLatch done = new CountDownLatch(1);
    /** How the program ended: null (main returned), a panic or a fatal error. Written before done. */
    private volatile Throwable exitCause;

    private volatile String fatalMessage;
    /** Hook for the layers above: called at fatal errors (e.g. to print the goroutine dump). */
    public volatile java.util.function.Consumer<String> fatalHook;

    /**
     * sysmon's reading of System.nanoTime(), refreshed every sysmon round (20 us to 10 ms apart);
     * 0 while sysmon deep-sleeps or does not run. For approximate stamps on hot paths (a parked
     * G's waitsince). Written by sysmon (volatile), read by any M.
     */
    volatile long coarseNanotime;

    /** nanotime at boot. */
    final long startNanos = System.nanoTime();

    public Scheduler(Config config) {
        this.config = config;
        GoDebug dbg = GoDebug.fromEnvironment();
        this.schedtrace = new SchedTrace(this, dbg.schedtrace(), dbg.scheddetail(), System.err);
        this.timers = new TimerHeaps();
        synchronized (sched.lock) {
            sched.runq.trace = trace;
            sched.maxmcount = config.maxThreads();
            procresize(config.gomaxprocs(), null);
        }
    }

    public Config config() {
        return config;
    }

    /** Origin of {@link #nanotime()}: immutable, shared by every runtime in the JVM. */
    private static final long NANOTIME_ORIGIN = System.nanoTime() - 1;

    /**
     * The runtime's monotonic clock, in nanoseconds: always positive (System.nanoTime may be
     * negative), so that 0 can mean "no timer" in timer whens, pollUntil and lastpoll, as in Go.
     *
     * <p>Go: nanotime
     */
    public static long nanotime() {
        return System.nanoTime() - NANOTIME_ORIGIN;
    }

    /**
     * The current goroutine, or null outside a goroutine. Robust across migrations between
     * carriers (see {@link M#current()}). Go: getg().m.curg.
     */
    public static G getg() {
        M m = M.current();
        return m == null ? null : m.curg;
    }

    /** The runtime of the calling goroutine or carrier, or null outside any gort runtime. */
    public static Scheduler current() {
        M m = M.current();
        return m == null ? null : m.sched;
    }

    /** The goroutine running on the calling carrier, or null. Go: getg().m.curg. */
    public static G currentG() {
        return getg();
    }

    // ------------------------------------------------------------------------------------------
    // Program model.

    /**
     * Boots the runtime, runs {@code main} as goroutine 1 and returns when it returns (other
     * goroutines may still be blocked: Go semantics), then shuts the carriers down. A panic in any
     * goroutine or a fatal error ends the program: with {@code config.panicExits()} the JVM halts
     * with status 2 as Go's does; otherwise this method throws ({@link GoPanic} or
     * {@link GortFatalError}).
     */
    public void run(Runnable main) {
        start(main);
        try {
            done.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            shutdown();
            throw new IllegalStateException("gort: interrupted while waiting for main", e);
        }
        shutdown();
        Throwable cause = exitCause;
        if ((cause instanceof GoPanic && config.panicExits()) || (cause instanceof GortFatalError && !Fatal.THROW)) {
            trace.onHalt(); // the JVM halts below (or on the M that failed): -Dgort.trace's file now
        } else {
            trace.onExit(); // -Dgort.trace=<file>: write the trace; JMX and the debug server stop
        }
        if (cause instanceof GoPanic gp) {
            if (config.panicExits()) {
                System.err.flush();
                Runtime.getRuntime().halt(2);
            }
            throw gp;
        }
        if (cause instanceof GortFatalError fe) {
            if (!Fatal.THROW) {
                // The M that reported the error halts with status 2 right after the dump; do not let
                // this thread win the race with an uncaught exception (JVM status 1).
                System.err.flush();
                Runtime.getRuntime().halt(2);
            }
            throw fe;
        }
    }

    /** Boots the runtime with {@code main} as goroutine 1 on P0, without waiting. */
    void start(Runnable main) {
        if (M.current() != null) {
            // The caller's carrier would block in run() without the runtime knowing (its P and its
            // goroutine's peers stall), and the new runtime cannot see the goroutines of the outer
            // one that could wake its main: a false deadlock. A program has one main.
            throw new IllegalStateException(
                    "gort: Go.run called from a goroutine: a program has one main goroutine (use Go.go)");
        }
        if (mainG != null) {
            throw new IllegalStateException("gort: runtime already started");
        }
        origin = M.Origin.of(Thread.currentThread()); // before any M exists
        // The runtime is whole now: JFR, the dump signal, -Dgort.jmx, -Dgort.debug.http, and
        // -Dgort.trace=<file> tracing from here.
        trace.onStart();
        G gp = newG(main, 0, null);
        mainG = gp;
        P p0;
        synchronized (sched.lock) {
            p0 = pidleget(0);
        }
        // Nobody owns P0 yet: the thread start below publishes the queue to M0.
        gp.casgstatus(G._Gidle, G._Grunnable);
        if (trace.on) trace.goCreate(null, p0, gp, null, Ev.W_RUNNEXT);
        p0.runq.runqput(gp, true);
        Runnable hook = startHook;
        if (hook != null) {
            hook.run();
        }
        mainStarted = true;
        schedtrace.start();
        M m0;
        synchronized (sched.lock) {
            m0 = allocm(checkmcountAndReserve());
        }
        m0.nextp = p0;
        m0.thread.start();
        // Go starts sysmon from runtime.main, once M0 exists (its checkdead must count M0).
        sysmon.start();
    }

    /** Installed by layers above (sysmon) to run just before M0 starts. */
    public volatile Runnable startHook;

    /** Ends the program: Ms leave their loops at the next scheduling point. */
    void shutdown() {
        exiting = true;
        List<M> ms;
        synchronized (sched.lock) {
            ms = new ArrayList<>(allm);
            // Goroutines still running (Go would just exit the process): ask them to stop at their
            // next yield point so that their carriers leave; uninstrumented loops keep theirs.
            preemptall();
        }
        for (M mp : ms) {
            mp.park.notewakeup();
            if (mp.curg != null && mp.thread != Thread.currentThread()) {
                // A goroutine still on its carrier may be blocked in a Java call (Go would just
                // exit). Carriers are as non-daemon as the caller of run (M.Origin), so such a
                // carrier would keep the JVM alive: interrupt it, so that an interruptible call
                // (sleep, wait, BlockingQueue.take, Lock.lockInterruptibly, NIO) ends and the
                // carrier leaves at its next scheduling point. A late panic is dropped (gdestroy).
                mp.thread.interrupt();
            }
        }
        netpollBreak();
        netpoll.close();
        sched.stopnote.notewakeup();
        sysmon.stop();
        Runnable h = shutdownHook;
        if (h != null) {
            h.run();
        }
    }

    /** Installed by layers above (sysmon) to stop with the runtime. */
    public volatile Runnable shutdownHook;

    public boolean exiting() {
        return exiting;
    }

    /** Blocks the calling (non-gort) thread until the program ends. */
    public void awaitExit() throws InterruptedException {
        done.await();
    }

    private void finish(Throwable cause) {
        if (done.getCount() == 0) {
            return;
        }
        synchronized (done) {
            if (done.getCount() == 0) {
                return;
            }
            exitCause = cause;
            exiting = true;
            done.countDown();
        }
    }

    /**
     * Called by {@link Fatal#fatal(Scheduler, String)}: prints the goroutine dump (when a hook is
     * installed) and ends the program.
     */
    void onFatal(String msg) {
        fatalMessage = msg;
        if (schedtrace.periodMs > 0 || schedtrace.detailed)
            System.err.print(SchedTrace.format(this, schedtrace.elapsedMs(System.nanoTime()), true));
        java.util.function.Consumer<String> h = fatalHook;
        if (h != null) {
            h.accept(msg);
        } else {
            // Go: a user fatal (the deadlock) dumps at GOTRACEBACK's level, a runtime throw at 2
            int level = msg.endsWith("- deadlock!") ? Traceback.level() : 2;
            if (level > 0) {
                System.err.println();
                System.err.print(Traceback.dumpAll(this, level));
            }
            if (Traceback.crash()) {
                System.err.print(Traceback.jvmThreads());
            }
        }
        // gort beyond Go: which goroutine waits on which channel/mutex, and who could wake it.
        System.err.print(Traceback.waitForGraph(this));
        finish(new GortFatalError(msg));
    }

    /** {@link #onFatal} failed half-way: record the error and end the program without the dump. */
    void onFatalDumpFailed(String msg) {
        fatalMessage = msg;
        finish(new GortFatalError(msg));
    }

    public String fatalMessage() {
        return fatalMessage;
    }

    // ------------------------------------------------------------------------------------------
    // Creating and ending goroutines.

    private G newG(Runnable fn, long parent, StackTraceElement createdAt) {
        long id = sched.goidgen.incrementAndGet();
        G gp = new G(this, id, parent, createdAt, fn);
        allgs.add(gp);
        stats.goroutinesCreated.incrementAndGet();
        return gp;
    }

    /**
     * Creates a goroutine running {@code fn} and puts it in the current P's runnext (kicking the old
     * one to the tail); from a thread outside this runtime, on the global queue. Then wakep.
     *
     * <p>Go: proc.go newproc, newproc1
     */
    public G newproc(Runnable fn) {
        // A pending preemption request is honoured here, as Go honours it in newproc's prologue
        // (its stack check): without this, goroutines that only respawn each other through runnext
        // share one time slice forever and starve the global queue even though sysmon asks them to
        // stop (nothing else in their code polls unless the agent instrumented it).
        // The creator's frame first: a StackWalker walk after a yield in this same compiled method
        // may run with the carrier thread C2 loaded before the yield ("Invalid thread walking this
        // stack stream", RandomizedStressTest traced under the entry strategy); see M.current().
        StackTraceElement createdAt = RECORD_CREATORS || trace.on ? Traceback.callerFrame() : null;
        Poll.poll();
        M mp = M.current();
        G parent = mp == null ? null : mp.curg;
        G newg = newG(fn, parent == null ? 0 : parent.goid, createdAt);
        newg.casgstatus(G._Gidle, G._Grunnable);
        newg.runnableSince = 0;
        P pp = null;
        if (mp != null && mp.sched == this) {
            mp.locks++; // no retake of our P while we use it (Retake.retakeBlocked)
            pp = Syscalls.pForRuntime(mp);
            if (pp != null) {
                if (trace.on) trace.goCreate(mp, pp, newg, parent, Ev.W_RUNNEXT);
                pp.runq.runqput(newg, true);
            }
            mp.locks--;
        }
        if (pp == null) {
            if (trace.on) trace.goCreate(null, null, newg, null, Ev.W_GLOBAL);
            synchronized (sched.lock) {
                sched.runq.globrunqput(newg);
            }
        }
        if (mainStarted) {
            wakep();
        }
        return newg;
    }

    /**
     * Record the exact frame that called go() ({@code -Dgort.creators=stack}): a stack walk per spawn
     * (~1 us), so it is off by default and "created by" then names the function's class.
     */
    static final boolean RECORD_CREATORS = "stack".equals(Config.creatorsSetting());

    /** A G's continuation finished. Go: proc.go gdestroy (no gfput: continuations are not reusable). */
    void gdestroy(G gp) {
        allgs.remove(gp);
        if (gp.panic != null && done.getCount() == 0) {
            // The program has already ended (main returned, or an earlier panic or fatal error):
            // in Go the process is gone and this goroutine never ran on. Drop it silently rather
            // than print a panic and halt after the fact (shutdown may have interrupted it).
            gp.panic = null;
            return;
        }
        if (gp.panic != null) {
            Throwable t = gp.panic;
            gp.panic = null;
            GoPanic p = new GoPanic(gp, t);
            System.err.print(p.goFormat(Traceback.all() ? Traceback.dumpAll(this) : null));
            System.err.flush();
            finish(p);
            if (config.panicExits()) {
                trace.onHalt(); // -Dgort.trace: the trace up to the panic is written before the halt
                System.err.flush();
                Runtime.getRuntime().halt(2);
            }
            return;
        }
        if (gp == mainG && !gp.goexited) {
            finish(null);
        }
    }

    /** Prints every goroutine in Go's format to {@code out}, then the wait-for graph. Go: runtime.Stack(buf, true). */
    public void dumpGoroutines(java.io.PrintStream out) {
        String s = Traceback.dumpAll(this) + Traceback.waitForGraph(this);
        synchronized (out) {
            out.print(s);
            out.flush();
        }
    }

    /** Go: runtime.NumGoroutine. */
    public int numGoroutine() {
        return allgs.count();
    }

    /** All live goroutines in goid order. */
    public List<G> allgs() {
        return allgs.snapshot();
    }

    // ------------------------------------------------------------------------------------------
    // Parking and readying.

    /**
     * Puts the current goroutine into a waiting state and yields to its M, which then calls
     * {@code unlockf(gp, lock)}; if that returns false the goroutine resumes at once.
     * Must be called from a goroutine of this runtime, holding no Java monitor that a
     * waker needs.
     *
     * <p>Go: proc.go gopark
     */
    @SuppressWarnings("unchecked")
    public static <L> void gopark(G.ParkUnlock<L> unlockf, L lock, WaitReason reason, Object waitingOn) {
        G gp = getg();
        if (gp == null) {
            throw new IllegalStateException("gort: gopark called outside a goroutine");
        }
        // A park inside a syscall section (or after sysmon retook the P from this blocked carrier)
        // ends the syscall, but not here: the caller may hold the lock that unlockf releases (a
        // channel's, a semaphore's), and exitsyscall may yield (no P: exitsyscall0 queues the G)
        // or preempt, which would leave that lock held by a G that is not running: every other G
        // touching it spins forever, and the world never stops. A park needs no P: the G yields
        // still _Gsyscall and its M finishes the syscall before unlockf runs (M.run's
        // exitsyscallM, then park_m from _Gsyscall); a G that cannot yield parks in place from
        // _Gsyscall. (Go never gets here: its exitsyscall runs in the syscall wrapper, before any
        // runtime lock is taken.)
        M mp = gp.m;
        gp.waitreason = reason;
        gp.waitingOn = waitingOn;
        G.ParkUnlock<Object> fn = (G.ParkUnlock<Object>) (G.ParkUnlock<?>) unlockf;
        if (gp.monitorDepth != 0) {
            // Holding a Java monitor: a yield would let another G on this carrier enter it (or hang
            // on it). Block the carrier instead, with the G mounted, and hand the P off.
            Syscalls.parkInPlace(mp, gp, fn, lock);
            gp.waitreason = WaitReason.ZERO;
            gp.waitingOn = null;
            return;
        }
        gp.parkUnlockf = fn;
        gp.parkLock = lock;
        gp.yieldReason = G.YIELD_PARK;
        if (!Continuation.yield(G.SCOPE)) {
            // Pinned (native frame, critical section, legacy-locked monitor): same as above.
            gp.yieldReason = G.YIELD_NONE;
            gp.parkUnlockf = null;
            gp.parkLock = null;
            mp.sched.syscallStats.pinnedRefused.incrementAndGet();
            Syscalls.parkInPlace(mp, gp, fn, lock);
        }
        // resumed by goready (or the park was cancelled): back on some M.
        gp.waitreason = WaitReason.ZERO;
        gp.waitingOn = null;
    }

    /** Go: proc.go goready / ready: gp must be waiting; it goes to the current P's runnext. */
    public void goready(G gp) {
        ready(gp, true);
    }

    /** Go: proc.go ready. */
    public void ready(G gp, boolean next) {
        // Parked in place (pinned, or holding a Java monitor)? Read before the CAS: parkedOn was
        // set before the G went waiting, and we found the G through the lock its unlockf released.
        M pm = gp.parkedOn;
        if (pm != null) {
            // It can run only on that carrier, which finds itself a P (Syscalls.parkInPlace). Do as
            // startlockedm does for its count, and BEFORE the CAS: the carrier may see the G
            // runnable at once (its park loop re-checks on any unpark, spurious ones included) and
            // count itself idle-locked again in waitForP; were our decrement still to come, it
            // would be counted twice and checkdead would call a running M idle ("runnable g").
            idlelockedWake(pm);
            gp.casgstatus(G._Gwaiting, G._Grunnable);
            if (trace.on) trace.goUnblock(M.current(), null, gp, Ev.W_GLOBAL);
            java.util.concurrent.locks.LockSupport.unpark(pm.thread);
            return;
        }
        // Mark runnable.
        gp.casgstatus(G._Gwaiting, G._Grunnable);
        M mp = M.current();
        P pp = null;
        if (mp != null && mp.sched == this) {
            mp.locks++; // no retake of our P while we use it (Retake.retakeBlocked)
            pp = Syscalls.pForRuntime(mp);
            if (pp != null) {
                if (trace.on) trace.goUnblock(mp, pp, gp, next ? Ev.W_RUNNEXT : Ev.W_LOCAL);
                pp.runq.runqput(gp, next);
            }
            mp.locks--;
        }
        if (pp == null) {
            if (trace.on) trace.goUnblock(null, null, gp, Ev.W_GLOBAL);
            synchronized (sched.lock) {
                sched.runq.globrunqput(gp);
            }
        }
        wakep();
    }

    /**
     * {@code incidlelocked(1)} for {@code mp} itself: it is about to sleep until its locked G (or
     * the G parked in place on it) is runnable again, so it no longer counts as running, and a
     * deadlock is checked for. Unless that G's waker ({@link #idlelockedWake}) got there first:
     * then the G is already runnable and the M already handed a P or unparked, so it never counts
     * as idle. Go does the increment after the G is published (globrunqput, unlockf) and the
     * waker's decrement unconditionally: when the waker wins, nmidlelocked dips to -1 and the
     * increment's checkdead sees this M idle while its own G is runnable ({@code checkdead:
     * runnable g}, with every other M idle); pairing the two per M closes that window.
     *
     * <p>Go: proc.go incidlelocked(1) in stoplockedm (and exitsyscall0's)
     */
    void idlelockedSleep(M mp) {
        synchronized (sched.lock) {
            if (mp.idlelockedWoken) {
                mp.idlelockedWoken = false;
                return;
            }
            if (mp.idlelocked) {
                System.err.println("runtime: M" + mp.id + " nmidlelocked=" + sched.nmidlelocked);
                throw Fatal.fatal(this, "incidlelocked: m counted idle-locked twice");
            }
            mp.idlelocked = true;
            sched.nmidlelocked++;
            checkdead();
        }
    }

    /**
     * {@code incidlelocked(-1)} for the M that sleeps (or is about to) until {@code mp}'s G runs:
     * called by the waker (startlockedm, ready of a G parked in place) before it hands over.
     *
     * <p>Go: proc.go incidlelocked(-1) in startlockedm
     */
    void idlelockedWake(M mp) {
        synchronized (sched.lock) {
            if (mp.idlelocked) {
                mp.idlelocked = false;
                sched.nmidlelocked--;
            } else {
                mp.idlelockedWoken = true;
            }
        }
    }

    /**
     * Adjusts the count of Ms waiting for their locked G (or parked in place with it), then checks
     * for deadlock when it grows (sysmon's pretend-running decrement around a retake). Go: proc.go
     * incidlelocked.
     */
    void incidlelocked(int v) {
        synchronized (sched.lock) {
            sched.nmidlelocked += v;
            if (v > 0) {
                checkdead();
            }
        }
    }

    /** Go: runtime.Goexit: unwinds the current goroutine (finally blocks run) and ends it. */
    public static void goexit() {
        if (currentG() == null) {
            throw new IllegalStateException("gort: Goexit called outside a goroutine");
        }
        throw G.Goexit.INSTANCE;
    }

    /** Go: runtime.Gosched: the current G goes to the global queue tail; new slice when it runs. */
    public static void gosched() {
        G gp = getg();
        if (gp == null) {
            Thread.yield();
            return;
        }
        if (gp.monitorDepth != 0) {
            return; // a hint: never yield inside a Java monitor (jdk25-continuations.md §5)
        }
        // In a syscall (sysmon retook the P of this blocked carrier): as in gopark, the yield
        // needs no P; the M ends the syscall (M.run's exitsyscallM) and queues the G globally.
        gp.yieldReason = G.YIELD_GOSCHED;
        if (!Continuation.yield(G.SCOPE)) {
            gp.yieldReason = G.YIELD_NONE; // pinned: Gosched is a hint, carry on
        }
    }

    /**
     * Yields the current G to the tail of its P's local run queue (not the global one): the
     * runtime's own yield, used when a G hands a lock directly to a waiter it just readied
     * (semrelease with handoff), so that the waiter, in runnext, runs first.
     *
     * <p>Go: proc.go goyield
     */
    public static void goyield() {
        M mp = M.current();
        G gp = mp == null ? null : mp.curg;
        if (gp == null) {
            Thread.yield();
            return;
        }
        gp.yieldReason = G.YIELD_GOYIELD;
        if (!Continuation.yield(G.SCOPE)) {
            gp.yieldReason = G.YIELD_NONE; // pinned: a hint only
        }
    }

    /**
     * Yields the current G for preemption if it may be preempted here (no Java monitor or counted
     * {@code Lock} held, no class initialiser running, no runtime lock); called by the injected poll's slow path. Returns true if it yielded.
     *
     * <p>Go: preempt.go / stack.go newstack's preemption branch, gopreempt_m
     */
    public static boolean gopreempt() {
        G gp = getg();
        if (gp == null) {
            return false;
        }
        if (gp.readgstatusNoScan() == G._Gsyscall) {
            // The poll was raised by Retake.retakeBlocked after it retook this carrier's P: get
            // one back (this may move the G to another M).
            boolean moved = Syscalls.exitsyscall();
            if (!gp.preemptRequested()) {
                return moved;
            }
        }
        M mp = gp.m;
        Scheduler s = gp.sched;
        // monitorDepth also counts the java.util.concurrent locks seen at their call sites; a
        // class initialiser pins the G and holds its class's init lock (Poll, LockFrames).
        if (mp.locks != 0 || gp.monitorDepth != 0 || gp.clinitDepth != 0) {
            s.stats.preemptRefusedLocked.incrementAndGet();
            return false;
        }
        if (s.trace.on)
            s.trace.preemptYield(
                    mp,
                    mp.p,
                    gp,
                    gp.preemptRequested() && mp.thread.preemptRequestedAt != 0
                            ? System.nanoTime() - mp.thread.preemptRequestedAt
                            : 0);
        gp.yieldReason = G.YIELD_PREEMPT;
        if (!Continuation.yield(G.SCOPE)) {
            gp.yieldReason = G.YIELD_NONE;
            s.stats.preemptRefusedPinned.incrementAndGet();
            return false;
        }
        return true;
    }

    // ------------------------------------------------------------------------------------------
    // M and P management.

    /**
     * Tries to add one more P to execute Gs: called when a G is made runnable.
     *
     * <p>Go: proc.go wakep
     */
    public void wakep() {
        if (!config.spinning()) {
            // No spinning Ms: give every idle P an M while there is queued work.
            if (sched.npidle.get() == 0) {
                return;
            }
            P pp;
            synchronized (sched.lock) {
                pp = pidleget(0);
            }
            if (pp != null) {
                startm(pp, false);
            }
            return;
        }
        // Be conservative about spinning threads, only start one if none exist already.
        if (sched.nmspinning.get() != 0) {
            return;
        }
        // gort: with no idle P and needspinning already set, Go's path below would take sched.lock
        // only to find no P and set needspinning = 1 again. Skip the lock (it is on every goready
        // of a busy program): an M about to drop its P still sees needspinning == 1 under the lock
        // and spins instead, exactly as if we had set it.
        if (sched.npidle.get() == 0 && sched.needspinning.get() == 1) {
            return;
        }
        if (!sched.nmspinning.compareAndSet(0, 1)) {
            return;
        }
        P pp;
        synchronized (sched.lock) {
            pp = pidlegetSpinning();
            if (pp == null) {
                if (sched.nmspinning.decrementAndGet() < 0) {
                    throw Fatal.fatal(this, "wakep: negative nmspinning");
                }
                return;
            }
        }
        startm(pp, true);
    }

    /**
     * Schedules some M to run the P (creating an M if necessary). With a null {@code pp}, tries to
     * get an idle P; if none, does nothing.
     *
     * <p>Go: proc.go startm
     */
    void startm(P pp, boolean spinning) {
        M nmp;
        synchronized (sched.lock) {
            if (pp == null) {
                if (spinning) {
                    // TODO(prattmic): All remaining calls to this function with _p_ == nil could be
                    // cleaned up to find a P before calling startm.
                    throw Fatal.fatal(this, "startm: P required for spinning=true");
                }
                pp = pidleget(0);
                if (pp == null) {
                    return;
                }
            }
            nmp = mget();
            if (nmp == null) {
                // No M is available, we must drop sched.lock and call newm. However, we already own
                // a P to assign to the M.
                long id = checkmcountAndReserve();
                nmp = allocm(id);
                nmp.spinning = spinning;
                nmp.nextp = pp;
            }
        }
        if (nmp.thread.getState() == Thread.State.NEW) {
            stats.mStarts.incrementAndGet();
            nmp.thread.start(); // newm
            return;
        }
        if (nmp.spinning) {
            throw Fatal.fatal(this, "startm: m is spinning");
        }
        if (nmp.nextp != null) {
            throw Fatal.fatal(this, "startm: m has p");
        }
        if (spinning && !pp.runq.runqempty()) {
            throw Fatal.fatal(this, "startm: p has runnable gs");
        }
        // The caller incremented nmspinning, so set m.spinning in the new M.
        nmp.spinning = spinning;
        nmp.nextp = pp;
        nmp.park.notewakeup();
    }

    /** Creates (does not start) a new M; sched.lock held. Go: proc.go allocm/newm. */
    private M allocm(long id) {
        M mp = new M(this, id, config.name());
        if (trace.on) trace.mCreate(id);
        allm.add(0, mp); // newest first
        return mp;
    }

    /**
     * Reserves an M id, enforcing the thread limit; sched.lock held.
     *
     * <p>Go: proc.go mReserveID, checkmcount
     */
    long checkmcountAndReserve() {
        long id = sched.mnext;
        sched.mnext++;
        checkmcount();
        return id;
    }

    /** Go: proc.go checkmcount. Sysmon counts as an M, as in Go. */
    void checkmcount() {
        long count = mcount();
        if (count > sched.maxmcount) {
            System.err.println("runtime: program exceeds " + sched.maxmcount + "-thread limit");
            throw Fatal.fatal(this, "thread exhaustion");
        }
    }

    /** Go: proc.go mcount: threads ever created minus those that exited. */
    long mcount() {
        return sched.mnext - sched.nmfreed;
    }

    /** Reserves an id for a system thread (sysmon), counted against the limit and by nmsys. */
    public long newSystemM() {
        synchronized (sched.lock) {
            long id = checkmcountAndReserve();
            sched.nmsys++;
            if (trace.on) trace.mCreate(id, true);
            return id;
        }
    }

    /** An M's thread ends (runtime exit). */
    void mexit(M mp) {
        if (mp.exitThread && mp.p != null && !exiting) {
            // A G locked to this M ended: the thread exits with it. Release our P (Go: mexit).
            handoffp(mp.releasep());
        }
        synchronized (sched.lock) {
            sched.nmfreed++;
            if (mp.exitThread) {
                allm.remove(mp);
                syscallStats.retire(mp);
                checkdead();
            }
        }
    }

    /** Go: debug.SetMaxThreads. Returns the previous limit. */
    public int setMaxThreads(int n) {
        synchronized (sched.lock) {
            int old = sched.maxmcount;
            sched.maxmcount = n;
            checkmcount();
            return old;
        }
    }

    /** Puts mp on the idle list; sched.lock held. Go: proc.go mput. */
    void mput(M mp) {
        mp.schedlink = sched.midle;
        sched.midle = mp;
        sched.nmidle++;
        checkdead();
    }

    /** Takes an idle M; sched.lock held. Go: proc.go mget. */
    M mget() {
        M mp = sched.midle;
        if (mp != null) {
            sched.midle = mp.schedlink;
            mp.schedlink = null;
            sched.nmidle--;
        }
        return mp;
    }

    /** Puts pp on the idle-P list; sched.lock held. Go: proc.go pidleput. */
    void pidleput(P pp, long now) {
        if (!pp.runq.runqempty()) {
            throw Fatal.fatal(this, "pidleput: P has non-empty run queue");
        }
        pp.link = sched.pidle;
        sched.pidle = pp;
        pp.setIdle(true);
        sched.npidle.incrementAndGet();
    }

    /** Takes an idle P; sched.lock held. Go: proc.go pidleget. */
    P pidleget(long now) {
        P pp = sched.pidle;
        if (pp != null) {
            sched.pidle = pp.link;
            pp.link = null;
            pp.setIdle(false);
            sched.npidle.decrementAndGet();
            if (sched.sysmonwait) {
                // Leaving the all-idle state: sysmon may be in its deep sleep (Go: sysmonwake).
                sched.sysmonwait = false;
                sysmon.wake();
            }
        }
        return pp;
    }

    /**
     * pidleget for a caller about to spin: with no idle P, sets needspinning so that an M about to
     * drop its P spins instead. sched.lock held. Go: proc.go pidlegetSpinning.
     */
    P pidlegetSpinning() {
        P pp = pidleget(0);
        if (pp == null) {
            // See "Delicate dance" comment in findRunnable. We found work that we cannot take, we
            // must synchronize with non-spinning Ms that may be preparing to drop their P.
            sched.needspinning.set(1);
            return null;
        }
        return pp;
    }

    P pidlegetSpinningIfConfigured() {
        return config.spinning() ? pidlegetSpinning() : pidleget(0);
    }

    /**
     * Hands off P from a syscall or locked M: starts an M for it if there is anything it could do,
     * otherwise puts it on the idle list. Always runs without a P.
     *
     * <p>Go: proc.go handoffp
     */
    public void handoffp(P pp) {
        stats.handoffs.incrementAndGet();
        // if it has local work, start it straight away
        if (!pp.runq.runqempty() || !sched.runq.empty()) {
            startm(pp, false);
            return;
        }
        // no local work, check that there are no spinning/idle M's, otherwise our help is not required
        if (config.spinning()
                && sched.nmspinning.get() + sched.npidle.get() == 0
                && sched.nmspinning.compareAndSet(0, 1)) {
            sched.needspinning.set(0);
            startm(pp, true);
            return;
        }
        long when;
        synchronized (sched.lock) {
            if (sched.gcwaiting) {
                pp.setStatus(P._Pgcstop);
                sched.stopwait--;
                if (sched.stopwait == 0) {
                    sched.stopnote.notewakeup();
                }
                return;
            }
            if (!sched.runq.empty()) {
                // fall through to startm outside the lock
                when = -1;
            } else if (sched.npidle.get() == gomaxprocs - 1 && sched.lastpoll.get() != 0) {
                // If this is the last running P and nobody is polling, start an M: someone must
                // wait for the timers (Go: "poll network").
                when = -1;
            } else {
                when = timers == null ? 0 : timers.wakeTime(pp);
                pidleput(pp, 0);
            }
        }
        if (when == -1) {
            startm(pp, false);
            return;
        }
        // If we're handing off a P with timers, wake the poller (Go: wakeNetPoller(when)).
        if (when != 0) {
            wakeNetPoller(when);
        }
    }

    /**
     * A timer at {@code when} was added: make sure some M will look at it. Go: proc.go wakeNetPoller.
     */
    public void wakeNetPoller(long when) {
        if (sched.lastpoll.get() == 0) {
            // An M is sleeping until pollUntil; wake it if the new timer is earlier.
            long pollerPollUntil = sched.pollUntil.get();
            if (pollerPollUntil == 0 || pollerPollUntil > when) {
                netpollBreak();
            }
        } else {
            wakep();
        }
    }

    /** Go: netpoll.go netpollBreak. */
    void netpollBreak() {
        netpoll.netpollBreak();
    }

    /**
     * Checks for deadlock: every M idle and no G runnable, running or in a syscall, and no timer
     * pending. sched.lock held.
     *
     * <p>Go: proc.go checkdead
     */
    void checkdead() {
        if (exiting) {
            return;
        }
        long run = mcount() - sched.nmidle - sched.nmidlelocked - sched.nmsys;
        if (run > 0) {
            return;
        }
        if (externalWakers.get() > 0) {
            // A registered thread outside the runtime (ExternalWaker) may ready a G or start one:
            // it counts as a running M, as Go counts the extra M of a cgo callback (its G may even
            // sit in the global queue already, on its way to wakep).
            return;
        }
        if (netpoll.netpollAnyWaiters() && run == 0) {
            // gort: a goroutine parked on the network can be woken by the poller. In Go the M
            // blocked in netpoll is not idle (run > 0); gort's is not either, and this also covers
            // the moment it has returned from the poll and not yet taken a P.
            return;
        }
        if (run < 0) {
            System.err.println("runtime: checkdead: nmidle=" + sched.nmidle + " nmidlelocked=" + sched.nmidlelocked
                    + " mcount=" + mcount() + " nmsys=" + sched.nmsys);
            throw Fatal.fatal(this, "checkdead: inconsistent counts");
        }
        int grunning = 0;
        for (G gp : allgs.snapshot()) {
            switch (gp.readgstatus()) {
                case G._Gwaiting, G._Gpreempted -> grunning++;
                case G._Grunnable, G._Grunning, G._Gsyscall -> {
                    System.err.println("runtime: checkdead: find g " + gp.goid + " in status " + gp.readgstatus());
                    throw Fatal.fatal(this, "checkdead: runnable g");
                }
                default -> {}
            }
        }
        if (grunning == 0) { // possible if main goroutine calls runtime.Goexit()
            throw Fatal.fatal(this, "no goroutines (main called runtime.Goexit) - deadlock!");
        }
        // There are no goroutines running, so we can look at the P's.
        Timers t = timers;
        if (t != null) {
            for (P pp : allp) {
                if (t.wakeTime(pp) != 0) {
                    return;
                }
            }
        }
        throw Fatal.fatal(this, "all goroutines are asleep - deadlock!");
    }

    /**
     * Open {@link ExternalWaker} registrations: threads outside this runtime that may still ready a
     * goroutine ({@link #goready}) or start one ({@link #newproc}); while it is positive, checkdead
     * does not call "all goroutines are asleep" a deadlock. Any thread increments (externalWaker)
     * and decrements (ExternalWaker.close), atomically; checkdead reads it under sched.lock.
     */
    private final java.util.concurrent.atomic.AtomicInteger externalWakers =
            new java.util.concurrent.atomic.AtomicInteger();

    /**
     * Registers a thread outside this runtime that may still wake a goroutine; see
     * {@link ExternalWaker} for the rule. Any thread; open it before the goroutines it may wake can
     * all block, close it after its last wake-up.
     */
    public ExternalWaker externalWaker() {
        externalWakers.incrementAndGet();
        return new ExternalWaker(this);
    }

    /** Open ExternalWaker registrations (racy, for tests and observers). */
    public int externalWakers() {
        return externalWakers.get();
    }

    /**
     * An ExternalWaker closed: one outside waker fewer, which can leave every M idle and every G
     * asleep with nobody left to wake them, so check for deadlock (Go: "when increasing nmidle ...
     * call checkdead"). Any thread.
     */
    void externalWakerDone() {
        if (externalWakers.decrementAndGet() == 0 && mainStarted) {
            synchronized (sched.lock) {
                checkdead();
            }
        }
    }

    // ------------------------------------------------------------------------------------------
    // GOMAXPROCS and stopping the world.

    /** Go: runtime.GOMAXPROCS: returns the previous setting; n &lt; 1 only reads it. */
    public int gomaxprocs(int n) {
        int ret = gomaxprocs;
        if (n <= 0 || n == ret) {
            return ret;
        }
        M mp = M.current();
        if (mp == null || mp.sched != this || mp.p == null) {
            throw new IllegalStateException("gort: GOMAXPROCS(n) must be called from a goroutine of this runtime");
        }
        stopTheWorld();
        synchronized (sched.lock) {
            newprocs = n;
        }
        startTheWorld();
        return ret;
    }

    public int gomaxprocs() {
        return gomaxprocs;
    }

    /**
     * Stops every P: the caller's at once, idle and syscall ones under the lock, running ones at
     * their next scheduling point (preemptall asks them).
     *
     * <p>Go: proc.go stopTheWorldWithSema
     */
    void stopTheWorld() {
        M mp = M.current();
        mp.locks++;
        boolean wait;
        synchronized (sched.lock) {
            sched.stopwait = gomaxprocs;
            sched.gcwaiting = true;
            preemptall();
            // stop current P
            mp.p.setStatus(P._Pgcstop);
            sched.stopwait--;
            // try to retake all P's in Psyscall status
            for (P pp : allp) {
                if (pp.status() == P._Psyscall && pp.casStatus(P._Psyscall, P._Pgcstop)) {
                    if (trace.on) trace.handoff(pp, null); // Go's trace: ProcSteal
                    pp.incSyscalltick();
                    sched.stopwait--;
                }
            }
            // stop idle P's
            for (; ; ) {
                P pp = pidleget(0);
                if (pp == null) {
                    break;
                }
                pp.setStatus(P._Pgcstop);
                sched.stopwait--;
            }
            wait = sched.stopwait > 0;
        }
        // wait for remaining P's to stop voluntarily
        if (wait) {
            for (; ; ) {
                // wait for 100us, then try to re-preempt in case of any races
                if (sched.stopnote.notetsleep(100_000, mp.thread)) {
                    sched.stopnote.noteclear();
                    break;
                }
                if (exiting) {
                    break;
                }
                synchronized (sched.lock) {
                    preemptall();
                }
            }
        }
        synchronized (sched.lock) {
            if (sched.stopwait != 0 && !exiting) {
                throw Fatal.fatal(this, "stopTheWorld: not stopped (stopwait != 0)");
            }
            for (P pp : allp) {
                if (pp.status() != P._Pgcstop && !exiting) {
                    throw Fatal.fatal(this, "stopTheWorld: not stopped (status != _Pgcstop)");
                }
            }
            if (config.debugChecks() && !exiting) {
                DebugChecks.checkQueues(this, "stopTheWorld");
            }
        }
        mp.locks--;
    }

    /** Go: proc.go startTheWorldWithSema. */
    void startTheWorld() {
        M mp = M.current();
        mp.locks++;
        P p1;
        synchronized (sched.lock) {
            int procs = gomaxprocs;
            if (newprocs != 0) {
                procs = newprocs;
                newprocs = 0;
            }
            p1 = procresize(procs, mp);
            sched.gcwaiting = false;
            if (sched.sysmonwait) {
                sched.sysmonwait = false;
                sysmon.wake();
            }
        }
        while (p1 != null) {
            P pp = p1;
            p1 = p1.link;
            pp.link = null;
            M nmp = pp.m();
            if (nmp != null) {
                pp.setM(null);
                if (nmp.nextp != null) {
                    throw Fatal.fatal(this, "startTheWorld: inconsistent mp->nextp");
                }
                nmp.nextp = pp;
                nmp.park.notewakeup();
            } else {
                // Start M to run P. Do not start another M below.
                M nm;
                synchronized (sched.lock) {
                    nm = allocm(checkmcountAndReserve());
                }
                nm.nextp = pp;
                stats.mStarts.incrementAndGet();
                nm.thread.start();
            }
        }
        // Wakeup an additional proc in case we have excessive runnable goroutines in local queues
        // or in the global queue.
        wakep();
        mp.locks--;
    }

    /**
     * Changes the number of Ps; sched.lock held and the world stopped (or at boot, mp == null).
     * Returns the list of Ps with local work, each with an idle M assigned (p.m) or none.
     *
     * <p>Go: proc.go procresize
     */
    P procresize(int nprocs, M mp) {
        if (!Thread.holdsLock(sched.lock)) {
            throw Fatal.fatal(this, "procresize: sched.lock not held");
        }
        int old = gomaxprocs;
        if (old < 0 || nprocs <= 0) {
            throw Fatal.fatal(this, "procresize: invalid arg");
        }
        // Grow allp if necessary.
        P[] cur = allp;
        if (nprocs > cur.length) {
            P[] na = java.util.Arrays.copyOf(cur, nprocs);
            for (int i = cur.length; i < nprocs; i++) {
                na[i] = new P(this, i, config.runqSize());
            }
            cur = na;
        }
        // initialize new P's
        for (int i = old; i < nprocs; i++) {
            if (cur[i].status() == P._Pdead) {
                cur[i].setStatus(P._Pgcstop);
            }
        }
        P keep = mp == null ? null : mp.p;
        if (keep != null && keep.id < nprocs) {
            // continue to use the current P
            keep.setStatus(P._Prunning);
        } else {
            // release the current P and acquire allp[0].
            if (keep != null) {
                if (trace.on) {
                    // Pretend that we were descheduled and then scheduled again to keep the trace
                    // consistent: the caller leaves its P (which is about to be destroyed) ...
                    trace.goStop(mp, keep, mp.curg, Ev.S_GOSCHED);
                    trace.procStop(mp, keep);
                }
                keep.setM(null);
                mp.p = null;
            }
            if (mp != null) {
                P pp = cur[0];
                pp.setM(null);
                pp.setStatus(P._Pidle);
                mp.acquirep(pp); // traces ProcStart
                if (keep != null && trace.on) {
                    // ... and runs again on P0 ("from the global queue", where its GoSched put it)
                    trace.goStart(mp, pp, mp.curg, Ev.F_GLOBAL, 0, false);
                }
            }
        }
        // release resources from unused P's
        for (int i = nprocs; i < old; i++) {
            destroyP(cur[i], cur[0]);
        }
        if (nprocs < cur.length) {
            cur = java.util.Arrays.copyOf(cur, nprocs);
        }
        allp = cur;
        gomaxprocs = nprocs;
        if (trace.on) trace.gomaxprocs(nprocs);
        stealOrder.reset(nprocs);

        P runnablePs = null;
        for (int i = nprocs - 1; i >= 0; i--) {
            P pp = cur[i];
            if (mp != null && mp.p == pp) {
                continue;
            }
            pp.setStatus(P._Pidle);
            pp.setM(null);
            if (pp.runq.runqempty()) {
                pidleput(pp, 0);
            } else {
                pp.setM(mget());
                pp.link = runnablePs;
                runnablePs = pp;
            }
        }
        return runnablePs;
    }

    /**
     * A P beyond the new GOMAXPROCS: its Gs go to the global queue head (ring from its tail, order
     * kept, then runnext), its timers to {@code to}. Go: proc.go (*p).destroy.
     */
    private void destroyP(P pp, P to) {
        // The owner is stopped (world stopped): take runnext, then the ring, head to tail.
        G runnext = pp.runq.runnext();
        if (runnext != null && !pp.runq.casRunnext(runnext, null)) {
            throw Fatal.fatal(this, "destroy: runnext changed while the world is stopped");
        }
        if (runnext != null && trace.on) trace.runqDestroy(pp, runnext);
        List<G> gs = new ArrayList<>();
        pp.runq.runqdrain(gs);
        for (int i = 0; i < gs.size() && trace.on; i++) trace.runqDestroy(pp, gs.get(i));
        // Move all runnable goroutines to the global queue: the ring from its tail to the global
        // head (so its order is kept), then runnext at the very head.
        for (int i = gs.size() - 1; i >= 0; i--) {
            sched.runq.globrunqputhead(gs.get(i));
        }
        if (runnext != null) {
            sched.runq.globrunqputhead(runnext);
        }
        Timers t = timers;
        if (t != null) {
            t.take(pp, to);
        }
        pp.setStatus(P._Pdead);
    }

    /** This runtime's system monitor (schedtrace hook, statistics). */
    public Sysmon sysmon() {
        return sysmon;
    }

    /**
     * Wakes sysmon if it is in its deep sleep: for layers that make a P busy without pidleget
     * (entersyscall/exitsyscall). One volatile read when sysmon is awake.
     *
     * <p>Go: proc.go entersyscall_sysmon, exitsyscall0's sysmonwake
     */
    public void sysmonwake() {
        if (sched.sysmonwait) {
            synchronized (sched.lock) {
                if (sched.sysmonwait) {
                    sched.sysmonwait = false;
                    sysmon.wake();
                }
            }
        }
    }

    /** Asks every running P's G to stop. sched.lock held. Go: proc.go preemptall. */
    boolean preemptall() {
        boolean res = false;
        for (P pp : allp) {
            if (pp.status() != P._Prunning) {
                continue;
            }
            if (preemptone(pp)) {
                res = true;
            }
        }
        return res;
    }

    /**
     * Asks the G running on pp to stop at its next poll. Best effort.
     *
     * <p>Go: proc.go preemptone
     */
    public boolean preemptone(P pp) {
        M mp = pp.m();
        if (mp == null || mp == M.current()) {
            return false;
        }
        G gp = mp.curg;
        if (gp == null) {
            return false;
        }
        gp.setPreempt(true);
        if (trace.on) trace.preemptRequest(pp, gp);
        pp.preempt = true;
        pp.preemptsRequested++;
        stats.preemptRequests.incrementAndGet();
        if (mp.thread.requestPreempt(pp.schedtick())) {
            preempt.requested.incrementAndGet();
        }
        return true;
    }

    // ------------------------------------------------------------------------------------------
    // Read-only views for observers (schedtrace, dumps, tests).

    public P[] allp() {
        return allp.clone();
    }

    public List<M> allm() {
        synchronized (sched.lock) {
            return new ArrayList<>(allm);
        }
    }

    public int globalRunqSize() {
        return sched.runq.size();
    }

    public G[] globalRunqSnapshot() {
        synchronized (sched.lock) {
            return sched.runq.snapshot();
        }
    }

    public int npidle() {
        return sched.npidle.get();
    }

    public int nmspinning() {
        return sched.nmspinning.get();
    }

    public int needspinning() {
        return sched.needspinning.get();
    }

    public long mcountPublic() {
        synchronized (sched.lock) {
            return mcount();
        }
    }

    public int nmidle() {
        synchronized (sched.lock) {
            return sched.nmidle;
        }
    }

    public long startNanos() {
        return startNanos;
    }
}
