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
 * <p>Where things are: this class boots and ends a runtime, creates, parks and readies goroutines;
 * {@link M} is the scheduling loop (schedule, findRunnable, stealWork); {@link Idle} is the
 * spinning protocol with the idle Ps and Ms and checkdead; {@link World} is stop-the-world and
 * GOMAXPROCS; {@link Preempt} is preemption; {@link Netpoll} is the network poller; {@link RunQueue}
 * and {@link GlobalRunQueue} are the queues; {@link TimerHeap} (one per P, seen by the scheduler
 * through {@link TimerHeaps}) the timers; {@link Syscalls} and {@link Retake} the syscall paths;
 * {@link Sysmon} the monitor. runtime/HACKING.md has the table.
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
 * <h3>Where the protocols live</h3>
 * <ul>
 *   <li>Preemption: {@link Preempt} (the request word per carrier and its transition table,
 *       preemptone/preemptall, the one refusal rule, gopreempt, the counters); {@link Poll} is only
 *       the agent's target.
 *   <li>Settings: {@link Config} and its {@link Config.Settings}, read once by
 *       {@link Config#fromEnvironment()} and passed in; JVM-wide facts say so where declared.
 *   <li>Layers: this package and the recording half of the tracer ({@code trace.Tracer},
 *       {@code TraceBuf}, {@code Ev}, {@code Trace}, {@code JfrEvents}) are the core; the
 *       consumers (validator, Perfetto/HTML writers, trace files, debug server, metrics, pprof,
 *       {@code observe}) depend on it, and the core reaches the ones that start with a runtime
 *       only through {@link RuntimeObserver} (LayersTest checks it). Users get
 *       {@code dev.gort.GoRuntime}, not this class. What this package lets other packages use is
 *       the checked-in list {@code runtime/src/test/resources/public-surface.txt}
 *       (PublicSurfaceTest): anything else is package-private.
 * </ul>
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
 *       then calls {@link Idle#wakep}: it reads {@code nmspinning} (volatile: the StoreLoad of the
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
 * All of it is in {@link Idle} (the M loop calls it at each step); {@code IdleProtocolTest} drives
 * it with threads.
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
 *   <li>The syscall model is Go 1.26+'s ({@code _Psyscall_unused}; Go 1.25's {@code _Psyscall} with
 *       {@code GODEBUG=psyscall=1}), with three gort additions: a G whose exit finds no P at all
 *       goes back to {@code _Gsyscall} without one and departs from there (Go's exitsyscallNoP
 *       starts from {@code _Grunning}); entersyscall looks at gcwaiting again after its switch to
 *       {@code _Gsyscall} and stops its own P if a stop-the-world missed it (Go's would wait for
 *       the syscall to return; gort's may block on a goroutine the stopped world does not run);
 *       and a P whose G is in a syscall when its slice runs out is marked (as in gort's 1.25
 *       port) so that an exit that beats the retake yields.
 *   <li>Goroutines are heap-allocated JDK continuations, not segmented/copying stacks; a switch is a
 *       freeze/thaw of the frames that changed rather than a register swap (bench/ measures it).
 *   <li>No asynchronous preemption: {@code Continuation.tryPreempt} is unimplemented on JDK 25.
 *       sysmon sets a per-carrier flag; ASM-injected polls yield at the next poll: under the
 *       default {@code backedge} strategy at loop back-edges (once per 1024 iterations in javac's
 *       counted loops, which the agent strip-mines so that C2 keeps vectorising them) and at the
 *       entry of methods that call others (recursion); or at method entries, or on a budget. JDK
 *       code, native frames and code that holds a Java monitor cannot be preempted (counted, not
 *       hidden).
 *   <li>sysmon wakes at the end of the earliest running slice it has sighted instead of sleeping
 *       a whole back-off step past it (Go's slice can run 15 ms when the step is 10 ms).
 *   <li>startm wakes an idle M that stopped on another CPU than the waker's when the M that stopped
 *       last (Go's choice) stopped on the waker's own CPU ({@link Idle#mget(int)}; {@code
 *       GODEBUG=midlecpu=0} restores Go's): Linux would queue that M behind the still-running waker
 *       while the other CPU stays idle.
 *   <li>A "syscall" is any Java call that blocks its carrier: explicit {@code Syscall.block} calls,
 *       and carriers sysmon sees blocked while holding a P.
 *   <li>Which Go it follows, per feature: syscalls follow Go 1.26+ (the P stays {@code _Prunning}
 *       with its M, taken through the G's scan bit: {@link Syscalls}), with Go 1.25's
 *       {@code _Psyscall} model selectable ({@code GODEBUG=psyscall=1}, a gort name); the scheduler
 *       core, sysmon, timers, channels/select/sync and schedtrace follow Go 1.25 otherwise; GOMAXPROCS's
 *       default and its periodic update follow Go 1.25 ({@code updatemaxprocs},
 *       {@code containermaxprocs}); the goroutine leak profile follows Go 1.27's
 *       {@code goroutineleak}; runtime/metrics' names and descriptions are Go 1.27's where Go has
 *       the metric.
 *   <li>The goroutine leak profile asks the JVM's collector ({@link GoroutineLeaks}): candidates
 *       are held weakly for a few {@code System.gc()}s; a leaked goroutine is reclaimed by the JVM
 *       (Go keeps it forever as {@code _Gleaked}), so it leaves NumGoroutine and goroutine dumps,
 *       while the profile keeps listing what it captured of it. Main, locked and parked-in-place
 *       goroutines are never candidates; {@code -XX:+DisableExplicitGC} finds nothing.
 *   <li>GOMAXPROCS's default is the CPU count (affinity) lowered to the CPU limit the JVM sees
 *       ({@link Runtime#availableProcessors()}: the cgroup quota rounded up, or
 *       {@code -XX:ActiveProcessorCount}), not below 2, as Go 1.25; sysmon re-checks it once a
 *       second and a short-lived goroutine applies a change (Go keeps one parked system goroutine,
 *       updateMaxProcsG, which NumGoroutine does not count; gort's counts while it runs).
 *   <li>No GC. The network poller ({@link Netpoll}) is Go's edge-triggered epoll through the FFM
 *       API where it is available, else a Java {@code Selector}, level-triggered (interest armed
 *       when a goroutine parks, disarmed when reported); until the first network use the last idle
 *       M sleeps until the next timer on a Note (Go creates the poller at the first timer).
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
    /** Idle Ps and Ms, the spinning protocol, M accounting and checkdead. Immutable (built first in the constructor). */
    final Idle idle;
    /** Stop-the-world and procresize. Immutable. */
    final World world = new World(this);

    public final Stats stats = new Stats();
    /** Syscall, locked-thread and blocked-carrier figures (Syscalls, Retake). */
    public final SyscallStats syscallStats = new SyscallStats();
    /** Preemption settings and figures (PreemptStats via preempt.snapshot()). */
    public final Preempt preempt;
    /** The system monitor thread: started with the runtime, stopped at shutdown. */
    final Sysmon sysmon;

    final AllGs allgs = new AllGs();
    /** The goroutine leak profile's state (what it found so far). Immutable reference. */
    final GoroutineLeaks leaks = new GoroutineLeaks(this);
    /** The block and mutex profiles (off until their rates are set). Immutable reference. */
    public final BlockProfiles blockprof = new BlockProfiles();

    final StealOrder stealOrder = new StealOrder();
    /**
     * The execution tracer: off unless -Dgort.trace, the API or a JFR recording turns it on.
     * Immutable, built by the constructor; it only stores this reference there. What starts with
     * a runtime (JFR, the dump signal, the observers above the core: JMX, the debug server) starts
     * in {@link #start}, through {@link Tracer#onStart}, once the runtime is whole.
     */
    public final Tracer trace;
    /** GODEBUG=schedtrace=N,scheddetail=1 (printed by sysmon). */
    public final SchedTrace schedtrace;

    /** Replaced (never mutated in place) by procresize with the world stopped; read volatile. */
    volatile P[] allp = new P[0];
    /** Written by procresize under sched.lock with the world stopped; read anywhere. */
    volatile int gomaxprocs;
    /** STW initiator's request for a new GOMAXPROCS; under sched.lock. Go: newprocs. */
    int newprocs;

    /**
     * GOMAXPROCS was set explicitly (the configuration's, or {@link #gomaxprocs(int)}): sysmon no
     * longer follows the default. Set by the configuration and gomaxprocs(n), cleared by
     * {@link #setDefaultGOMAXPROCS}; volatile. Go: sched.customGOMAXPROCS.
     */
    volatile boolean customGOMAXPROCS;

    /**
     * The default GOMAXPROCS sysmon found different from the current one, for the goroutine that
     * applies it (sysmon cannot stop the world); 0: none pending. CAS by sysmon (0 -> n) and the
     * goroutine (n -> 0). Go: updateMaxProcsNewProcs.
     */
    private final java.util.concurrent.atomic.AtomicInteger updateMaxProcsNewProcs =
            new java.util.concurrent.atomic.AtomicInteger();

    /** Immutable: the scheduler's view of the per-P timer heaps. */
    final TimerHeaps timers;
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

    /**
     * Goroutines whose function ended with an uncaught panic (G.runCont, on their M, while they are
     * still {@code _Grunning}); never decremented. Main's end waits for it ({@link #awaitPanics}).
     * Go: panic.go panicking (set by startpanic_m), here counted a little earlier.
     */
    final java.util.concurrent.atomic.AtomicInteger panicking = new java.util.concurrent.atomic.AtomicInteger();
    /** Go: mainStarted. */
    volatile boolean mainStarted;

    private volatile G mainG;
    private final CountDownLatch done = new CountDownLatch(1);
    /** How the program ended: null (main returned), a panic or a fatal error. Written before done. */
    private volatile Throwable exitCause;

    private volatile String fatalMessage;
    /**
     * The thread that reports a fatal error (onFatal, before it ends the program; it goes on to
     * write the trace and halt the JVM), which {@link #shutdown} must not interrupt. Written by
     * onFatal, volatile.
     */
    private volatile Thread fatalReporter;

    /**
     * sysmon's reading of System.nanoTime(), refreshed every sysmon round (20 us to 10 ms apart);
     * 0 while sysmon deep-sleeps or does not run. For approximate stamps on hot paths (a parked
     * G's waitsince). Written by sysmon (volatile), read by any M.
     */
    volatile long coarseNanotime;

    /** nanotime at boot. */
    final long startNanos = System.nanoTime();

    /**
     * The decision trace to record or replay ({@link Decisions}), or null: set by
     * {@link #recordDecisions} before the runtime starts (the M threads' start publishes it), then
     * immutable.
     */
    Decisions decisions;

    /**
     * Goroutines are {@code jdk.internal.vm.Continuation}s, which {@code java.base} exports to no
     * one unless the JVM is told to: without the export, a runtime cannot start, and this says how
     * to give it (it was an {@code IllegalAccessError} naming class {@code G}, from the class
     * loader). A fatal error, as a setting gort cannot use is ({@code -Dgort.threadlocals}'s
     * missing {@code --add-opens}).
     */
    static void requireContinuations() {
        if (!Object.class.getModule().isExported("jdk.internal.vm", Scheduler.class.getModule())) {
            throw Fatal.fatal("goroutines are jdk.internal.vm.Continuations, which java.base does not export to"
                    + " gort: run with gort's agent (-javaagent:gort-agent.jar, or a jar whose manifest has"
                    + " Launcher-Agent-Class: dev.gort.agent.GortAgent), or add --add-exports"
                    + " java.base/jdk.internal.vm=ALL-UNNAMED to the JVM's flags (Add-Exports:"
                    + " java.base/jdk.internal.vm in an executable jar's manifest)");
        }
    }

    /**
     * A seed is set ({@link Config.Settings#seed()}), or a decision trace is replayed: sysmon never
     * preempts on the wall clock (see {@link Decisions}). Set by the constructor and
     * {@link #recordDecisions} before the runtime starts (the threads' start publishes it), then
     * immutable.
     */
    boolean seeded;

    public Scheduler(Config config) {
        // before any field initialiser loads a Continuation subclass (G): a clear message, not an
        // IllegalAccessError from the class loader
        requireContinuations();
        super();
        this.config = config;
        this.idle = new Idle(this, config.settings().godebug());
        this.trace = new Tracer(this);
        this.preempt = new Preempt(this, config.settings());
        this.sysmon = new Sysmon(this, config.settings().sysmonMaxDelayUs());
        this.recordCreators = config.settings().recordCreators();
        this.psyscall = config.settings().psyscall();
        this.goroutineLocals = config.settings().goroutineThreadLocals();
        this.seeded = config.settings().seed() != 0;
        GoDebug dbg = config.settings().godebug();
        this.customGOMAXPROCS = config.maxprocs().custom();
        this.schedtrace = new SchedTrace(this, dbg.schedtrace(), dbg.scheddetail(), System.err);
        this.timers = new TimerHeaps();
        synchronized (sched.lock) {
            sched.runq.trace = trace;
            idle.synced.maxmcount = config.maxThreads();
            world.procresize(config.gomaxprocs(), null);
        }
    }

    /**
     * Records this runtime's scheduling decisions into {@code d}, or, for a replaying {@code d},
     * forces and checks them; before {@link #run}.
     */
    public void recordDecisions(Decisions d) {
        if (mainG != null) {
            throw new IllegalStateException("gort: recordDecisions after the runtime started");
        }
        if (d.replaying() && config.gomaxprocs() != 1) {
            // With more Ps the carriers interleave as the OS schedules them: the replay would stop
            // at a divergence that says nothing of why (an M's steal pass where a run was recorded).
            throw new IllegalArgumentException("gort: a decision trace replays only at GOMAXPROCS=1, this runtime has "
                    + config.gomaxprocs() + " (Config.withGomaxprocs(1))");
        }
        d.attach(this);
        if (d.replaying()) {
            // The recording decides every draw; what it cannot force is a wall-clock preemption,
            // so a replay runs as a seeded runtime does, whatever its seed.
            seeded = true;
        }
        this.decisions = d;
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
    static long nanotime() {
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
        if ((cause instanceof GoPanic && config.panicExits())
                || (cause instanceof GortFatalError && !config.settings().fatalThrow())) {
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
            if (!config.settings().fatalThrow()) {
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
        JitDirectives.install(); // once per JVM; where jdk.management is not open to gort, without it
        // The runtime is whole now: JFR, the dump signal, -Dgort.jmx, -Dgort.debug.http, and
        // -Dgort.trace=<file> tracing from here.
        trace.onStart();
        // main inherits what the caller's thread would give a thread it starts (newproc's rule)
        Object inherited = goroutineLocals ? GoroutineLocals.inheritedFrom(Thread.currentThread()) : null;
        G gp = newG(main, 0, null, null);
        if (inherited != null) {
            gp.rare().inheritableThreadLocals = inherited;
        }
        mainG = gp;
        P p0;
        synchronized (sched.lock) {
            p0 = idle.pidleget();
        }
        // Nobody owns P0 yet: the thread start below publishes the queue to M0.
        gp.casgstatus(G._Gidle, G._Grunnable);
        if (trace.on) trace.goCreate(null, p0, gp, null, Ev.W_RUNNEXT);
        p0.runq.runqput(gp, true);
        mainStarted = true;
        schedtrace.start();
        M m0; // not counted in stats.mStarts
        synchronized (sched.lock) {
            m0 = idle.allocm(idle.checkmcountAndReserve());
        }
        m0.nextp = p0;
        // Go starts sysmon from runtime.main before main.main runs, once M0 exists (its checkdead
        // must count M0, which allocm has): before M0's thread, so that main never sees a
        // runtime without it (/sched/threads/total:threads).
        sysmon.start();
        stats.mStarts.incrementAndGet();
        idle.ms.newm(m0);
    }

    /** Ends the program: Ms leave their loops at the next scheduling point. */
    void shutdown() {
        exiting = true;
        List<M> ms;
        synchronized (sched.lock) {
            ms = new ArrayList<>(idle.synced.allm);
            // Goroutines still running (Go would just exit the process): ask them to stop at their
            // next yield point so that their carriers leave; uninstrumented loops keep theirs.
            preemptall();
        }
        for (M mp : ms) {
            mp.park.notewakeup();
            if (mp.curg != null && mp.thread != Thread.currentThread() && mp.thread != fatalReporter) {
                // A goroutine still on its carrier may be blocked in a Java call (Go would just
                // exit). Carriers are as non-daemon as the caller of run (M.Origin), so such a
                // carrier would keep the JVM alive: interrupt it, so that an interruptible call
                // (sleep, wait, BlockingQueue.take, Lock.lockInterruptibly, NIO) ends and the
                // carrier leaves at its next scheduling point. A late panic is dropped (gdestroy).
                // Not the carrier reporting a fatal error: it writes -Dgort.trace's file and halts.
                mp.thread.interrupt();
            }
        }
        netpollBreak();
        netpoll.close();
        world.stopnote.notewakeup();
        sysmon.stop();
    }

    public boolean exiting() {
        return exiting;
    }

    /** Blocks the calling (non-gort) thread until the program ends. */
    void awaitExit() throws InterruptedException {
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
     * Called by {@link Fatal#fatal(Scheduler, String)}: prints the goroutine dump at GOTRACEBACK's
     * level and the wait-for graph, and ends the program.
     */
    void onFatal(String msg, boolean user) {
        fatalReporter = Thread.currentThread(); // before finish: the shutdown must not interrupt it
        fatalMessage = msg;
        if (schedtrace.periodMs > 0 || schedtrace.detailed)
            System.err.print(SchedTrace.format(this, schedtrace.elapsedMs(System.nanoTime()), true));
        // Go: a user fatal (Fatal.userFatal) dumps at GOTRACEBACK's level, the failing goroutine
        // alone unless GOTRACEBACK=all (a deadlock has none: every goroutine); a runtime throw at 2
        int level = user ? Traceback.level() : 2;
        if (level > 0) {
            // a deadlock is everybody's (checkdead may run on a carrier parking in place: its G
            // is no more the failing one than any other)
            // (Go's dopanic_m: the failing goroutine, then with GOTRACEBACK=all tracebackothers)
            G cur = user && !msg.endsWith("- deadlock!") ? getg() : null;
            String dump = cur != null && !Traceback.all()
                    ? Traceback.dump(cur, System.nanoTime(), level)
                    : Traceback.dumpAll(this, level, cur);
            if (!dump.isEmpty()) { // none left (main called Goexit): Go prints nothing after the line
                System.err.println();
                System.err.print(dump);
            }
        }
        if (Traceback.crash()) {
            System.err.print(Traceback.jvmThreads());
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

    String fatalMessage() {
        return fatalMessage;
    }

    // ------------------------------------------------------------------------------------------
    // Creating and ending goroutines.

    /**
     * A new G with the next id of {@code pp}'s cache (a batch of 16 from {@code sched.goidgen} when
     * it is empty), counted on {@code pp}: its owner's own fields, so that two Ps spawning at once
     * share no cache line here. Without a P (the cases {@code Sched.goidgen} lists): one id from
     * {@code sched.goidgen}, counted in {@code stats}.
     *
     * <p>Go: proc.go newproc1 (its goidcache and goroutinesCreated lines)
     */
    private G newG(Runnable fn, long parent, StackTraceElement createdAt, P pp) {
        long id;
        if (pp != null) {
            id = pp.nextGoid(sched.goidgen);
            pp.incGoroutinesCreatedOpaque();
        } else {
            id = sched.goidgen.incrementAndGet();
            stats.goroutinesCreated.incrementAndGet();
        }
        G gp = new G(this, id, parent, createdAt, fn);
        allgs.add(gp);
        return gp;
    }

    /**
     * Goroutines created since the runtime started (runtime/metrics'
     * {@code /sched/goroutines-created:goroutines}): the Ps' own counts plus those created without
     * a P and those of destroyed Ps. Read under sched.lock, which procresize holds while it folds a
     * destroyed P's count into {@code stats} and shrinks allp, so the sum never loses nor doubles
     * a P's count and never goes down; it may miss goroutines being created at that moment.
     *
     * <p>Go: metrics.go schedStatsAggregate (gCreated)
     */
    public long goroutinesCreated() {
        synchronized (sched.lock) {
            long n = stats.goroutinesCreated.get();
            for (P pp : allp) {
                n += pp.goroutinesCreatedOpaque();
            }
            return n;
        }
    }

    /**
     * Creates a goroutine running {@code fn} and puts it in the current P's runnext (kicking the old
     * one to the tail); from a thread outside this runtime, on the global queue. Then wakep.
     *
     * <p>Go: proc.go newproc, newproc1
     */
    public G newproc(Runnable fn) {
        if (fn == null) {
            // Go: a fatal error at the go statement; here the caller's exception, before anything
            // is created (its goroutine would have died of it later, far from the mistake).
            throw new NullPointerException("go of nil func value");
        }
        // A pending preemption request is honoured here, as Go honours it in newproc's prologue
        // (its stack check): without this, goroutines that only respawn each other through runnext
        // share one time slice forever and starve the global queue even though sysmon asks them to
        // stop (nothing else in their code polls unless the agent instrumented it).
        // The creator's frame first: a StackWalker walk after a yield in this same compiled method
        // may run with the carrier thread C2 loaded before the yield ("Invalid thread walking this
        // stack stream", RandomizedStressTest traced under the entry strategy); see M.current().
        StackTraceElement createdAt = recordCreators || trace.on ? Traceback.callerFrame() : null;
        Poll.poll();
        M mp = M.current();
        G parent = mp == null ? null : mp.curg;
        // As Thread's constructor, and a virtual thread's: the creator's inheritable values (a
        // goroutine's own while it runs, or the outside thread's), copied only when there are some;
        // before the G exists, since InheritableThreadLocal.childValue is user code that may throw.
        // Published with the G by the run-queue put below.
        Object inherited =
                goroutineLocals ? GoroutineLocals.inheritedFrom(mp != null ? mp.thread : Thread.currentThread()) : null;
        boolean ours = mp != null && mp.sched == this;
        P pp = null;
        if (ours) {
            mp.locks++; // no retake of our P while we use it (Retake.retakeBlocked); undone below
            pp = Syscalls.pForRuntime(mp);
        }
        G newg;
        try {
            newg = newprocLocked(fn, parent, createdAt, inherited, mp, pp);
        } finally {
            if (ours) {
                mp.locks--; // even if building the G threw (an OutOfMemoryError): never leave the M unretakeable
            }
        }
        if (mainStarted) {
            wakep();
        }
        return newg;
    }

    /** newproc's part under {@code mp.locks}: builds the G with pp's next id and queues it. */
    private G newprocLocked(Runnable fn, G parent, StackTraceElement createdAt, Object inherited, M mp, P pp) {
        G newg = newG(fn, parent == null ? 0 : parent.goid, createdAt, pp);
        if (inherited != null) {
            newg.rare().inheritableThreadLocals = inherited;
        }
        if (parent != null && parent.bubble() != null) {
            // Go: newproc1's newg.bubble = callergp.bubble; the root's first goroutine is the
            // bubble's main (synctestRun records it), before anyone can see the G.
            Bubble b = parent.bubble();
            newg.setBubble(b);
            if (b.root == parent && b.main == null) {
                b.main = newg;
            }
        }
        newg.casgstatus(G._Gidle, G._Grunnable); // one new G in 8 has its first wait timed, as in Go
        if (pp != null) {
            if (trace.on) trace.goCreate(mp, pp, newg, parent, Ev.W_RUNNEXT);
            pp.runq.runqput(newg, true);
        } else {
            if (trace.on) trace.goCreate(null, null, newg, null, Ev.W_GLOBAL);
            synchronized (sched.lock) {
                sched.runq.globrunqput(newg);
            }
        }
        return newg;
    }

    /**
     * Record the exact frame that called go() ({@code -Dgort.creators=stack}): a stack walk per spawn
     * (far dearer than the spawn itself), so it is off by default and "created by" then names the
     * function's class.
     */
    final boolean recordCreators;

    /**
     * Immutable: Go 1.25's syscall model ({@code _Psyscall}, {@code GODEBUG=psyscall=1}) instead of
     * Go 1.26+'s (the P stays {@code _Prunning} with its M; see {@link Syscalls}).
     */
    final boolean psyscall;

    /**
     * Immutable: each goroutine has its own ThreadLocals ({@code -Dgort.threadlocals=goroutine}):
     * its M swaps them into the carrier around every mount ({@link M}'s run, {@link GoroutineLocals}),
     * and {@code go} copies the creator's inheritable ones into the new G.
     */
    final boolean goroutineLocals;

    /** A G's continuation finished. Go: proc.go gdestroy (no gfput: continuations are not reusable). */
    void gdestroy(G gp) {
        allgs.remove(gp);
        G.Rare rare = gp.rareOrNull();
        if (rare != null && rare.panic != null && done.getCount() == 0) {
            // The program has already ended (main returned, or an earlier panic or fatal error):
            // in Go the process is gone and this goroutine never ran on. Drop it silently rather
            // than print a panic and halt after the fact (shutdown may have interrupted it).
            rare.panic = null;
            return;
        }
        if (rare != null && rare.panic != null) {
            Throwable t = rare.panic;
            rare.panic = null;
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
        if (gp == mainG && !gp.goexited()) {
            if (awaitPanics()) {
                return; // that goroutine's report ends the program (gdestroy above: halt or finish)
            }
            Decisions d = decisions;
            if (d != null && done.getCount() != 0) {
                d.endOfRun(); // a replay with steps left over diverged: a fatal error, not a clean exit
            }
            finish(null);
        }
    }

    /**
     * Main has returned: before the program ends, lets a goroutine that is panicking at the same
     * moment report its panic (Go: "Make racy client program work: if panicking on another
     * goroutine at the same time as main returns, let the other goroutine finish printing the panic
     * trace"). Go counts the goroutines running a panic's deferred calls (runningPanicDefers) and
     * Goscheds up to 1000 times while any does; a Java panic unwinds through {@code finally} blocks
     * that gort cannot see (one that closes the channel main waits on wakes main mid-unwind), so
     * main's end waits, at most {@link #PANIC_WAIT_NS}, while a goroutine other than main runs on
     * another M, until it parks, yields, ends or is seen panicking ({@link #panicking}). A
     * goroutine descheduled mid-unwind is not waited for, nor one that takes longer than the bound. Returns true if a panic is being
     * reported: then the program ends with it (Go: gopark(waitReasonPanicWait)), not with main.
     * On main's M, after main's continuation ended.
     *
     * <p>Go: proc.go main (the runningPanicDefers loop and the panicking check before exit(0))
     */
    private boolean awaitPanics() {
        long deadline = System.nanoTime() + PANIC_WAIT_NS;
        while (panicking.get() == 0 && othersRunning() && System.nanoTime() < deadline) {
            java.util.concurrent.locks.LockSupport.parkNanos(20_000);
        }
        return panicking.get() != 0;
    }

    /**
     * {@link #awaitPanics}' bound: 10 ms, a slice. A panic's unwinding takes microseconds (its
     * carrier may wait for a core); a goroutine merely busy at main's end is waited for too, since
     * gort cannot tell the two apart: a program that ends with busy goroutines exits up to 10 ms
     * later than Go's would.
     */
    static final long PANIC_WAIT_NS = 10_000_000L;

    /** Whether a goroutine other than main is running on some P's M now (racy reads: a hint). */
    private boolean othersRunning() {
        G main = mainG;
        for (P pp : allp) {
            M mp = pp.mOpaque();
            G g = mp == null ? null : mp.curg;
            if (g != null && g != main && g.readgstatusNoScan() == G._Grunning) {
                return true;
            }
        }
        return false;
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

    /** The main goroutine (null before {@link #run}). */
    G mainG() {
        return mainG;
    }

    /**
     * Runs goroutine leak detection (a few full collections: the program may pause as for a GC)
     * and returns every goroutine found leaked so far, this run's last: what Go 1.27's
     * {@code pprof.Lookup("goroutineleak")} reports. Any thread; one profile at a time.
     *
     * <p>Go: mgc.go findGoroutineLeaks; runtime/pprof goroutineleak
     */
    public List<LeakedGoroutine> goroutineLeakProfile() {
        return leaks.profile();
    }

    /** How many goroutines the leak profile has found leaked so far (runs nothing). */
    public int leakedGoroutines() {
        return leaks.count();
    }

    /**
     * The last leak profile's figures: {candidates, found, collections, whole pause ns, capture ns,
     * collections ns}.
     */
    public long[] lastLeakProfileStats() {
        GoroutineLeaks.Stats st = leaks.lastStats();
        return new long[] {
            st.candidates(), st.found(), st.rounds(), st.pauseNanos(), st.captureNanos(), st.collectNanos()
        };
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
    public static <L> void gopark(G.ParkUnlock<L> unlockf, L lock, WaitReason reason, Object waitingOn) {
        gopark(getg(), unlockf, lock, reason, waitingOn);
    }

    /**
     * {@link #gopark(G.ParkUnlock, Object, WaitReason, Object)} for a caller that already has the
     * current goroutine ({@code getg()}; the api's parker has it as the waiter): {@code gp} must be
     * the calling goroutine, or null outside one. With the lookup of the current M made before the
     * call, no argument has to survive a call in this frame, which a parked goroutine's stack chunk
     * keeps (compiled, it is spill slots).
     *
     * <p>Go: proc.go gopark
     */
    @SuppressWarnings("unchecked")
    public static <L> void gopark(G gp, G.ParkUnlock<L> unlockf, L lock, WaitReason reason, Object waitingOn) {
        // A park inside a syscall section (or after sysmon retook the P from this blocked carrier)
        // ends the syscall, but not here: the caller may hold the lock that unlockf releases (a
        // channel's, a semaphore's), and exitsyscall may yield (no P: exitsyscall0 queues the G)
        // or preempt, which would leave that lock held by a G that is not running: every other G
        // touching it spins forever, and the world never stops. A park needs no P: the G yields
        // still _Gsyscall and its M finishes the syscall before unlockf runs (M.run's
        // exitsyscallM, then park_m from _Gsyscall); a G that cannot yield parks in place from
        // _Gsyscall. (Go never gets here: its exitsyscall runs in the syscall wrapper, before any
        // runtime lock is taken.)
        //
        // This frame is frozen into every parked goroutine's stack chunk (compiled, usually inlined
        // into the caller's): it does the yield and nothing else (the rare cases are in
        // goparkInPlace), so that only gp is live across the yield (the pinned path re-reads the
        // rest from it).
        if (gp == null || gp.monitorDepth != 0) {
            goparkInPlace(gp, (G.ParkUnlock<Object>) (G.ParkUnlock<?>) unlockf, lock, reason, waitingOn);
            return;
        }
        M mp = gp.m; // the G runs: its M is this carrier's
        gp.setWaitreasonRelease(reason);
        gp.setWaitingOnRelease(waitingOn);
        mp.waitunlockf = (G.ParkUnlock<Object>) (G.ParkUnlock<?>) unlockf;
        mp.waitlock = lock;
        gp.yieldReason = G.YIELD_PARK;
        if (!Continuation.yield(G.SCOPE)) {
            goparkPinned(gp);
        }
        // resumed by goready (or the park was cancelled): back on some M.
        gp.setWaitreasonRelease(WaitReason.ZERO);
        gp.setWaitingOnRelease(null);
    }

    /**
     * gopark outside a goroutine (a misuse), or holding a Java monitor: a yield would let another
     * G on this carrier enter it (or hang on it). Block the carrier instead, with the G mounted,
     * and hand the P off.
     */
    private static void goparkInPlace(
            G gp, G.ParkUnlock<Object> unlockf, Object lock, WaitReason reason, Object waitingOn) {
        if (gp == null) {
            throw new IllegalStateException("gort: gopark called outside a goroutine");
        }
        gp.setWaitreasonRelease(reason);
        gp.setWaitingOnRelease(waitingOn);
        parkInPlace(gp.m, gp, unlockf, lock);
        gp.setWaitreasonRelease(WaitReason.ZERO);
        gp.setWaitingOnRelease(null);
    }

    /**
     * {@link Syscalls#parkInPlace}, holding a bubble goroutine's bubble active until the park is
     * complete (or cancelled), as park_m does for a yielded park.
     */
    private static void parkInPlace(M mp, G gp, G.ParkUnlock<Object> fn, Object lock) {
        Bubble b = gp.bubble();
        if (b == null) {
            Syscalls.parkInPlace(mp, gp, fn, lock);
            return;
        }
        boolean[] cancelled = {false};
        b.incActive();
        Syscalls.parkInPlace(
                mp,
                gp,
                (g, l) -> {
                    if (fn == null || fn.unlock(g, l)) {
                        b.decActive(); // parked: the bubble may be idle now
                        return true;
                    }
                    cancelled[0] = true;
                    return false;
                },
                lock);
        if (cancelled[0]) {
            b.decActive(); // running again
        }
    }

    /**
     * gopark's yield was refused (native frame, critical section, legacy-locked monitor): park in
     * place, as for a G holding a Java monitor. Still on the same carrier, so gp.m is the M that
     * holds the unlock function.
     */
    private static void goparkPinned(G gp) {
        M mp = gp.m;
        G.ParkUnlock<Object> fn = mp.waitunlockf;
        Object lock = mp.waitlock;
        gp.yieldReason = G.YIELD_NONE;
        mp.waitunlockf = null;
        mp.waitlock = null;
        mp.sched.syscallStats.pinnedRefused.incrementAndGet();
        parkInPlace(mp, gp, fn, lock); // the bubble-aware park in place above
    }

    /** Go: proc.go goready / ready: gp must be waiting; it goes to the current P's runnext. */
    public void goready(G gp) {
        ready(gp, true);
    }

    /** Go: proc.go ready. */
    void ready(G gp, boolean next) {
        if (SchedCounts.ON) SchedCounts.readies.increment();
        // Parked in place (pinned, or holding a Java monitor)? Read before the CAS: parkedOn was
        // set before the G went waiting, and we found the G through the lock its unlockf released.
        M pm = gp.parkedOn();
        if (pm != null) {
            readyInPlace(gp, pm);
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
        } else {
            mp = null; // another runtime's carrier, or no carrier
        }
        if (pp == null) {
            readyGlobal(gp, mp);
        }
        wakep();
    }

    /**
     * ready's path for a waker without a P ({@code mp}: its M, or null on a thread outside this
     * runtime), the G runnable already: its record is a trace section (Tracer.sectionBegin), and
     * the G goes to the global queue only after it. A trace start's snapshot then sees the G
     * waiting, and the unblock follows; or runnable in no queue, for which it records no status
     * (the first event places it: the unblock, or the G's start); never waiting with the unblock
     * lost, nor queued with an unblock after. Out of line: ready's common path stays small.
     */
    private void readyGlobal(G gp, M mp) {
        trace.sectionBegin(mp);
        try {
            if (trace.on) trace.goUnblock(null, null, gp, Ev.W_GLOBAL);
        } finally {
            trace.sectionEnd(mp);
        }
        synchronized (sched.lock) {
            sched.runq.globrunqput(gp);
        }
    }

    /**
     * ready's path for a G parked in place on carrier {@code pm} ({@link Syscalls#parkInPlace}):
     * it can run only there, and that carrier finds itself a P.
     */
    private void readyInPlace(G gp, M pm) {
        // Do as startlockedm does for its count, and BEFORE the hand-over: the carrier may see it at
        // once (its park loop re-checks on any unpark, spurious ones included) and count itself
        // idle-locked again in waitForP; were our decrement still to come, it would be counted
        // twice and checkdead would call a running M idle ("runnable g").
        idle.idlelockedWake(pm);
        // Traced before the hand-over too: after it, the G may run and park again on its
        // carrier before the hook ran (its next park's record, and JFR's park stamp, would come
        // first). Before the CAS, as the stamps of a yielded G's unblock are. The waker may
        // hold no P: the record and the CAS are one trace section (Tracer.sectionBegin).
        M wm = M.current();
        if (wm != null && wm.sched != this) {
            wm = null; // another runtime's carrier: a thread outside this one
        }
        trace.sectionBegin(wm);
        try {
            if (trace.on) trace.goUnblock(wm, null, gp, Ev.W_GLOBAL);
            gp.casgstatus(G._Gwaiting, G._Grunnable);
        } finally {
            trace.sectionEnd(wm);
        }
        // The hand-over, after casgstatus has returned: the carrier waits for parkedOn to
        // clear, not for the status, because casgstatus counts the G running in its bubble
        // only after its CAS. Woken by the CAS alone, the G could run, park again and uncount
        // itself before our count landed: the bubble would look idle while the waker runs
        // (Go's ready cannot race so: the G runs only once runqput has queued it).
        gp.setParkedOn(null);
        java.util.concurrent.locks.LockSupport.unpark(pm.thread);
    }

    /** Go: runtime.Goexit: unwinds the current goroutine (finally blocks run) and ends it. */
    public static void goexit() {
        if (currentG() == null) {
            throw new IllegalStateException("gort: Goexit called outside a goroutine");
        }
        throw G.Goexit.INSTANCE;
    }

    /** Whether {@code t} is the unwinding of {@link #goexit()} (a normal end of a goroutine), not a panic. */
    public static boolean isGoexit(Throwable t) {
        return t instanceof G.Goexit;
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
     * Pins the calling goroutine to its P until {@link #procUnpin}: the M's {@code locks} count is
     * raised, so the goroutine is not preempted (Preempt refuses while locks != 0) and sysmon does
     * not retake the P (Retake backs off), and the id returned stays this goroutine's P's until the
     * unpin; no other goroutine runs on that P meanwhile. The caller must not park, yield or call
     * unknown code while pinned. Returns the P's id, or -1 if the caller has no P it may use
     * (outside every goroutine, or inside a syscall); every call must be paired with a procUnpin,
     * -1 or not. For per-P caches in the api (sync.Pool).
     *
     * <p>Go: proc.go procPin (sync.runtime_procPin)
     */
    public static int procPin() {
        M mp = M.current();
        if (mp == null) {
            return -1;
        }
        mp.locks++;
        P pp = Syscalls.pForRuntime(mp);
        return pp == null ? -1 : pp.id;
    }

    /**
     * Ends a {@link #procPin}: lowers the M's {@code locks} count again.
     *
     * <p>Go: proc.go procUnpin (sync.runtime_procUnpin)
     */
    public static void procUnpin() {
        M mp = M.current();
        if (mp != null) {
            mp.locks--;
        }
    }

    /**
     * Yields the current G to the tail of its P's local run queue (not the global one): the
     * runtime's own yield, used when a G hands a lock directly to a waiter it just readied
     * (semrelease with handoff), so that the waiter, in runnext, runs first. A hint, as
     * {@link #gosched}: inside a Java monitor or a counted lock ({@code G.monitorDepth}) it does
     * nothing, since a yield there would leave the lock with the carrier.
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
        if (gp.monitorDepth != 0) {
            return; // a hint, as Gosched: never yield inside a Java monitor or a counted lock
        }
        gp.yieldReason = G.YIELD_GOYIELD;
        if (!Continuation.yield(G.SCOPE)) {
            gp.yieldReason = G.YIELD_NONE; // pinned: a hint only
        }
    }

    // ------------------------------------------------------------------------------------------
    // M and P management: the spinning protocol, idle Ps and Ms are in Idle.

    /**
     * Tries to add one more P to execute Gs: called when a G is made runnable. See
     * {@link Idle#wakep}.
     *
     * <p>Go: proc.go wakep
     */
    void wakep() {
        idle.wakep();
    }

    /** Go: debug.SetMaxThreads. Returns the previous limit. */
    public int setMaxThreads(int n) {
        return idle.setMaxThreads(n);
    }

    /**
     * A timer at {@code when} was added: make sure some M will look at it. Go: proc.go wakeNetPoller.
     */
    void wakeNetPoller(long when) {
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
     * Registers a thread outside this runtime that may still wake a goroutine; see
     * {@link ExternalWaker} for the rule (checkdead, in {@link Idle}, counts it as a running M). Any
     * thread; open it before the goroutines it may wake can all block, close it after its last
     * wake-up.
     */
    public ExternalWaker externalWaker() {
        idle.externalWakers.incrementAndGet();
        return new ExternalWaker(this);
    }

    /** Open ExternalWaker registrations (racy, for tests and observers). */
    public int externalWakers() {
        return idle.externalWakers.get();
    }

    // ------------------------------------------------------------------------------------------
    // GOMAXPROCS (stop-the-world is in World).

    /**
     * Runs {@code body} with the world stopped (see {@link World}): every P but the one running
     * it in {@code _Pgcstop}, so that no goroutine or P changes state under it, then starts the
     * world again. From a goroutine of this runtime it runs there; from a thread outside it, on a
     * goroutine created for it, the caller waiting until it has run. Before {@link #run} has
     * started main, and once the runtime is exiting, it runs {@code body} at once on the caller
     * (nothing runs then to race it). What the tracer's start uses for its snapshot, as Go's
     * StartTrace stops the world for its statuses. {@code body} must not park.
     *
     * <p>Go: proc.go stopTheWorld, startTheWorld (around traceAdvance's status snapshot)
     */
    public void withWorldStopped(Runnable body) {
        M mp = M.current();
        if (mp != null && mp.sched == this && mp.curg != null) {
            // A goroutine of this runtime, whose P sysmon may have retaken (a carrier it saw
            // blocked): World takes one back first. Waiting for another goroutine here instead
            // would hold this carrier's P against the stop.
            world.withWorldStopped(body);
            return;
        }
        if (!mainStarted || exiting) {
            body.run();
            return;
        }
        CountDownLatch ran = new CountDownLatch(1);
        RuntimeException[] failed = new RuntimeException[1];
        newproc(() -> {
            try {
                world.withWorldStopped(body);
            } catch (RuntimeException e) {
                failed[0] = e;
            } finally {
                ran.countDown();
            }
        });
        boolean interrupted = false;
        while (true) {
            try {
                ran.await();
                break;
            } catch (InterruptedException e) {
                interrupted = true; // the body runs regardless: wait for it, then restore the status
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
        if (failed[0] != null) {
            throw failed[0];
        }
    }

    /**
     * Go: runtime.GOMAXPROCS: returns the previous setting; n &lt; 1 only reads it. A set (even to
     * the current value) is explicit: sysmon stops following the default (Go 1.25). See {@link
     * World#gomaxprocs}.
     */
    public int gomaxprocs(int n) {
        if (n > 1) {
            refuseMoreProcsInReplay("GOMAXPROCS(" + n + ")");
        }
        return world.gomaxprocs(n);
    }

    /**
     * A replay runs at GOMAXPROCS=1 to its end ({@link #recordDecisions} refuses more at the
     * start): a change to more Ps mid-run would diverge at a step that says nothing of why.
     */
    private void refuseMoreProcsInReplay(String what) {
        Decisions d = decisions;
        if (d != null && d.replaying()) {
            throw new IllegalStateException(
                    "gort: " + what + " during a decision trace replay: a replay runs at GOMAXPROCS=1");
        }
    }

    /**
     * Go 1.25's runtime.SetDefaultGOMAXPROCS: back to the default ({@link
     * Config.MaxProcs#defaultGOMAXPROCS}), which sysmon then follows again (unless
     * {@code updatemaxprocs=0}). From a goroutine of this runtime.
     *
     * <p>Go: debug.go SetDefaultGOMAXPROCS
     */
    public void setDefaultGOMAXPROCS() {
        M mp = Syscalls.currentLeavingRetake();
        if (mp == null || mp.sched != this || mp.p == null) {
            throw new IllegalStateException(
                    "gort: SetDefaultGOMAXPROCS must be called from a goroutine of this runtime");
        }
        int procs = config.maxprocs().defaultGOMAXPROCS();
        if (!customGOMAXPROCS && procs == gomaxprocs) {
            return;
        }
        if (procs > 1) {
            refuseMoreProcsInReplay("SetDefaultGOMAXPROCS (" + procs + ")");
        }
        customGOMAXPROCS = false;
        world.setprocs(procs);
    }

    /**
     * sysmon, at most once a second: if GOMAXPROCS follows the default and the default changed
     * (the CPU limit or affinity did), has a goroutine apply it (sysmon cannot stop the world).
     *
     * <p>Go: proc.go sysmonUpdateGOMAXPROCS
     */
    void sysmonUpdateGOMAXPROCS() {
        if (customGOMAXPROCS || exiting || !mainStarted) {
            return;
        }
        int procs = config.maxprocs().defaultGOMAXPROCS();
        if (procs == gomaxprocs || !updateMaxProcsNewProcs.compareAndSet(0, procs)) {
            return;
        }
        // Go keeps one parked updateMaxProcsG, a system goroutine; gort starts one per change.
        newproc(this::updateMaxProcsGoroutine);
    }

    /** Go: proc.go updateMaxProcsGoroutine (one update, then it ends). */
    private void updateMaxProcsGoroutine() {
        int procs = updateMaxProcsNewProcs.get();
        try {
            if (!customGOMAXPROCS) { // an explicit GOMAXPROCS since sysmon looked wins
                world.setprocs(procs);
            }
        } finally {
            updateMaxProcsNewProcs.set(0);
        }
    }

    public int gomaxprocs() {
        return gomaxprocs;
    }

    /** This runtime's system monitor (schedtrace hook, statistics). */
    Sysmon sysmon() {
        return sysmon;
    }

    /**
     * Wakes sysmon if it is in its deep sleep: for layers that make a P busy without pidleget
     * (entersyscall/exitsyscall). One volatile read when sysmon is awake.
     *
     * <p>Go: proc.go entersyscall_sysmon, exitsyscall0's sysmonwake
     */
    void sysmonwake() {
        if (sched.sysmonwait) {
            synchronized (sched.lock) {
                if (sched.sysmonwait) {
                    sched.sysmonwait = false;
                    sysmon.wake();
                }
            }
        }
    }

    /** Asks every running P's G to stop. sched.lock held. Go: proc.go preemptall ({@link Preempt#preemptall}). */
    boolean preemptall() {
        sched.assertLockHeld(this, "preemptall");
        return preempt.preemptall();
    }

    // ------------------------------------------------------------------------------------------
    // Read-only views for observers (schedtrace, dumps, tests).

    public P[] allp() {
        return allp.clone();
    }

    public List<M> allm() {
        synchronized (sched.lock) {
            return new ArrayList<>(idle.synced.allm);
        }
    }

    /** How many Ms Go's allm would hold: this runtime's carriers and sysmon's M once it has started. */
    public int allmWithSysmon() {
        synchronized (sched.lock) {
            return idle.synced.allm.size() + (idle.synced.sysmonM >= 0 ? 1 : 0);
        }
    }

    /**
     * After {@link #run} returned: waits (at most {@code timeoutNanos}) until every carrier of this
     * runtime has ended, so that figures read next (preemption outcomes, syscall counts) are final:
     * a request raised at the very end (shutdown's preemptall) is answered when its carrier ends.
     * Returns whether they all ended.
     */
    public boolean awaitCarriers(long timeoutNanos) throws InterruptedException {
        long deadline = System.nanoTime() + timeoutNanos;
        for (M m : allm()) {
            long left = deadline - System.nanoTime();
            if (left > 0) {
                m.thread.join(Math.max(1, left / 1_000_000));
            }
            if (m.thread.isAlive()) {
                return false;
            }
        }
        return true;
    }

    public int globalRunqSize() {
        return sched.runq.sizeAcquire();
    }

    public G[] globalRunqSnapshot() {
        synchronized (sched.lock) {
            return sched.runq.snapshot();
        }
    }

    public int npidle() {
        return idle.npidle.get();
    }

    public int nmspinning() {
        return idle.nmspinning.get();
    }

    int needspinning() {
        return idle.needspinning.get();
    }

    public long mcountPublic() {
        synchronized (sched.lock) {
            return idle.mcount();
        }
    }

    public int nmidle() {
        synchronized (sched.lock) {
            return idle.synced.nmidle;
        }
    }

    long startNanos() {
        return startNanos;
    }
}
