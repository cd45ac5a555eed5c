package dev.gort.runtime;

import dev.gort.runtime.trace.Ev;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.invoke.VarHandle;
import java.util.function.Consumer;
import jdk.internal.vm.Continuation;

/**
 * An M: a carrier platform thread running the scheduling loop. It must hold a P to run a G; the
 * G runs as a {@link jdk.internal.vm.Continuation} mounted on this thread until it yields back
 * (park, Gosched, preemption, exit) and the loop decides what to run next.
 *
 * <p>Everything in this class except the constructor runs on this M's own thread unless its
 * Javadoc says otherwise (Go's "runs on g0").
 *
 * <p>Go: runtime2.go type m; proc.go mstart, schedule, execute, findRunnable, stealWork,
 * park_m, goschedImpl, goexit0, stopm, gcstopm
 */
public sealed class M extends CacheLinePad permits M.Padded {
    /**
     * Tests only: called on the carrier right after a G yielded to its M (or ended), before the M
     * changes the G's status, where a trace flush or a contended lock may block the carrier.
     * Written by a test before its runtime runs and cleared after (plain: a test's own seam).
     */
    static Consumer<G> departHookForTest;

    /** The carrier thread: gives goroutine code a cheap way back to its M (and so its runtime). */
    static sealed class MThread extends Thread permits MThread.Padded {
        /**
         * The carrier the runtime starts: 64 bytes after the fields (budget is written at every
         * poll, and the JDK writes Thread's own fields at every mount), see {@link CacheLinePad}.
         * Nothing can come before the JDK's fields: the padding at the end of the runtime's other
         * per-carrier objects keeps their fields off this one's first line.
         */
        static final class Padded extends MThread {
            long q00, q01, q02, q03, q04, q05, q06, q07;

            Padded(M m, String name, Origin origin) {
                super(m, name, origin);
            }
        }

        final M m;
        /**
         * The preemption request word for whatever G runs on this carrier: its bit layout and
         * transitions are {@link Preempt}'s class comment. Changed only by {@link Preempt} (CAS,
         * any thread; the carrier's exit sets EXITED by getAndBitwiseOr); read volatile/acquire
         * there, opaque by observers.
         */
        @SuppressWarnings("unused")
        volatile long preemptState;
        /** nanotime of the pending request (request-to-yield latency); written before its REQ. */
        volatile long preemptRequestedAt;
        /** sysmon's first sighting of the slice being preempted (0 = not a slice preemption); written before its REQ. */
        volatile long preemptSliceWhen;
        /**
         * Polls left in the running slice under the budget strategy. Only this carrier's thread
         * reads and writes it (refilled by execute on a new slice, decremented by Poll.budget):
         * plain. It is the running G's budget: a G taken from runnext inherits it with the slice.
         */
        int budget;

        MThread(M m, String name, Origin origin) {
            // The group, daemon status, priority and context class loader are the Go.run caller's
            // (origin), never those of whichever thread happens to create this M (another M,
            // sysmon, an outside thread calling newproc): threads that goroutine code creates copy
            // them from this carrier (Thread's constructor reads Thread.currentThread()).
            // Inheritable thread-locals are not copied (a carrier's thread-locals are shared by
            // every goroutine it runs: docs/adr/0004).
            super(origin.group(), m::mstart, name, 0, false);
            this.m = m;
            setDaemon(origin.daemon());
            setPriority(origin.priority());
            setContextClassLoader(origin.contextClassLoader());
        }

        M m() {
            return m;
        }

        /** Whether a request is pending on this carrier (opaque; observers and tests). */
        boolean preemptRequestedOpaque() {
            return Preempt.requestPendingOpaque(this);
        }
    }

    /**
     * What every carrier of a runtime takes from the thread that started it (the caller of
     * {@code Go.run}), so that threads created by goroutine code get what the user expects: that
     * thread's daemon status (a non-daemon caller's program does not lose a thread a goroutine
     * started when main returns), thread group, priority and context class loader. Immutable.
     */
    record Origin(ThreadGroup group, boolean daemon, int priority, ClassLoader contextClassLoader) {
        /** The attributes of {@code t}, which must be alive (its group is null once it ends). */
        static Origin of(Thread t) {
            return new Origin(t.getThreadGroup(), t.isDaemon(), t.getPriority(), t.getContextClassLoader());
        }
    }

    /** Immutable. Go: m.id. */
    public final long id;
    /** Immutable. */
    final Scheduler sched;
    /** Immutable. */
    final MThread thread;
    /** Owner only, plain. */
    final FastRand rand;
    /** Immutable: the runtime's decision trace ({@link Decisions}), or null (the usual case). */
    final Decisions decisions;
    /** Immutable: mount each G with its own ThreadLocal maps ({@link Scheduler#goroutineLocals}). */
    final boolean goroutineLocals;

    /**
     * The P held. Written by this M (acquirep/releasep volatile; the syscall paths with a release
     * store, {@link #setPRelease}) and by sysmon's retakeBlocked for a carrier blocked in user code
     * (while the G's scan bit freezes that carrier's status changes); read by others racily
     * (volatile). Go: m.p.
     */
    volatile P p;
    /**
     * The P to acquire when woken: written by the waker (startm, startTheWorld, startlockedm) before
     * notewakeup or the thread start, read and cleared by this M after it woke; volatile. Go: m.nextp.
     */
    volatile P nextp;

    /** Debug (SchedCounts.ON only): when startm woke this M; written by the waker before notewakeup, read and cleared by this M after its notesleep. */
    long wokenAtDebug;
    /**
     * The P held before a syscall (null if handed off at entry). Plain. Written by this M
     * (entersyscall, exitsyscall) and by sysmon's retakeBlocked (null: the P is retaken at once),
     * which does so while the carrier is blocked and then publishes the G's {@code _Gsyscall} with a
     * release store; this M reads oldp only after it has read that status (volatile), so it sees
     * sysmon's write. Go: m.oldp.
     */
    P oldp;
    /**
     * Written by this M (becomeSpinning, resetspinning, dropspinning) and by startm for the idle or
     * new M it hands a P (before the wake-up or thread start that publishes it); read racily by
     * schedtrace; volatile. Go: m.spinning.
     */
    volatile boolean spinning;
    /**
     * The G running on this M: written by this M with release stores ({@link #setCurgRelease}: no
     * StoreLoad fence, as Go's plain store; execute's store is followed by the G's status CAS and
     * the continuation's mount, full fences, and dropg's clear comes after the status CAS and
     * before the G is queued or its unlock function runs). Read volatile, racily, by sysmon
     * (retake, checkRetaken, preemptone), stop-the-world, stealing Ms (RunQueue.mayRunNextSoon),
     * shutdown and dumps, and by code on this M's own carrier. Go: m.curg.
     */
    volatile G curg;
    /**
     * The park hand-off: gopark, on this M's carrier, stores the unlock function and its lock just
     * before the yield; park_m (or goparkPinned, after a refused yield) takes them and clears them,
     * on the same carrier: program order, plain. On the M, not the G, as in Go: a parked G's
     * object carries neither. Go: m.waitunlockf, m.waitlock.
     */
    G.ParkUnlock<Object> waitunlockf;

    Object waitlock;
    /** Link in the idle-M list; under sched.lock. Go: m.schedlink. */
    M schedlink;

    /**
     * The CPU this M's thread was on when it last went onto the idle-M list ({@link ThreadCpu};
     * -1: unknown), for {@link Idle#mget(int)}. Written by this M in stopm, read by whichever
     * thread runs startm for it (an M, sysmon, a thread outside the runtime readying a goroutine),
     * both under sched.lock (plain).
     */
    int stoppedOnCpu = -1;
    /** Sleep here while idle. Go: m.park. */
    final Note park = new Note();
    /**
     * Locked G (LockOSThread): written by this M's own G (ThreadLock) and by this M (goexit0);
     * volatile (dumps read it). Go: m.lockedg.
     */
    volatile G lockedg;
    /**
     * Critical runtime sections (no preemption, no retake of the P): {@code ++/--} by this M only,
     * plain. Read on purpose by sysmon's retakeBlocked from another thread, plain: only after it saw
     * the carrier blocked (Thread.getState, a volatile read of the state the carrier's thread wrote
     * after its last change of locks; or, for a carrier RUNNABLE but asleep in the kernel, CPU time
     * unchanged between two looks: its last stores came before the context switch that put it to
     * sleep, outside the Java memory model), and again after its scan-bit CAS (a full fence); a
     * stale value can only cost or defer one retake. Go: m.locks.
     */
    int locks;

    /**
     * Epoll's native scratch for a JDK socket wait's {@code epoll_ctl}s ({@link Epoll#openOneShot}),
     * made at this M's first; null before. Plain: written and read only by this M's carrier.
     */
    Object epollScratch;
    /** Blocked in a note, or parked in place with its pinned G: written by this M, read racily by scheddetail (volatile). */
    volatile boolean blocked;
    /**
     * The carrier's kernel thread id ({@link KernelThreads#currentTid}; 0 until it starts, or where
     * unknown). Written once by this M's carrier, first in {@link #mstart}; read by sysmon
     * ({@link Retake}), volatile.
     */
    volatile int tid;
    /**
     * Sysmon's watch of this carrier after it retook its P from a kernel sleep ({@link
     * Retake#stillBlocked}): when it last read the carrier's CPU time (0: retaken from a JVM block,
     * or never), that CPU time, and its verdict (no CPU used since the read before: blocked
     * still). Sysmon only, plain.
     */
    long sysmonAsleepLook;

    long sysmonAsleepCpu;

    boolean sysmonAsleepStill;
    /**
     * The P's syscalltick at syscall entry, plain. Written by this M (entersyscall,
     * entersyscallblock) and by sysmon's retakeBlocked (for a carrier it found blocked: the same
     * release/acquire of the G's status as {@link #oldp} orders it); read by this M in
     * exitsyscallfast. Go: m.syscalltick.
     */
    int syscalltick;
    /** A G locked to this M ended: the thread ends too (Go: mexit). Owner only, plain. */
    boolean exitThread;
    /**
     * Batches of {@link #schedule} rounds this M has finished ({@link #SCHEDULE_ROUNDS}). Owner only,
     * plain: written by this M's carrier in {@link #mstart}, read there and by tests from a goroutine
     * on the same carrier.
     */
    int scheduleBatches;
    /**
     * Counted in {@code sched.nmidlelocked}: this M sleeps until its locked (or parked-in-place) G
     * is runnable. Under sched.lock, plain (Idle.idlelockedSleep/idlelockedWake).
     */
    boolean idlelocked;
    /**
     * That G's waker came before this M counted itself: its next idlelockedSleep must not count.
     * Under sched.lock, plain.
     */
    boolean idlelockedWoken;
    /**
     * Syscall exits that kept the old P / took an idle P (Syscalls.exitsyscallfast): {@code ++} by
     * this M only, plain; read racily by SyscallStats (observer figures, a little stale at most).
     */
    long syscallFastOldP, syscallFastIdleP;

    /**
     * This M's batch of frame tokens ({@link #nextFrameToken}): the next one and the end of the
     * batch (exclusive), both 0 until the first. Owner only, plain: written and read by this M's
     * carrier inside {@code nextFrameToken}, which cannot yield (the runtime's code has no polls).
     */
    private long frameTokenNext, frameTokenEnd;

    /** Frame tokens are taken from here in batches of {@link #FRAME_TOKEN_BATCH}: JVM-wide, atomic. */
    private static final java.util.concurrent.atomic.AtomicLong FRAME_TOKENS =
            new java.util.concurrent.atomic.AtomicLong();

    private static final int FRAME_TOKEN_BATCH = 1024;

    /**
     * A token for one invocation of an instrumented method that reads a JDK stream
     * ({@link Poll#waitFrame}), never 0 and never handed out twice in the JVM: each M takes them in
     * batches from one JVM-wide counter, as Go's Ps take goroutine ids from sched.goidgen
     * (proc.go newproc1, p.goidcache).
     */
    long nextFrameToken() {
        long t = frameTokenNext;
        if (t == frameTokenEnd) {
            t = FRAME_TOKENS.getAndAdd(FRAME_TOKEN_BATCH) + 1;
            frameTokenEnd = t + FRAME_TOKEN_BATCH;
        }
        frameTokenNext = t + 1;
        return t;
    }

    /**
     * This M's trace buffer ({@link dev.gort.runtime.trace.Tracer}, hence public); written and read
     * by this M only, plain.
     */
    public Object traceBuf;

    /**
     * How deep this M is in trace sections ({@link dev.gort.runtime.trace.Tracer#sectionBegin},
     * hence public); written and read by this M only, plain.
     */
    public int traceSectionDepth;
    /**
     * findRunnable's and stealWork's extra results (inheritTime, where the G was found, newWork,
     * pollUntil): one reused holder, see {@link Found} for who writes it. Immutable reference.
     */
    final Found found = new Found.Padded();
    /** Immutable: the runtime's tracer. */
    final dev.gort.runtime.trace.Tracer trace;

    /**
     * The M the runtime makes ({@link Idle#allocm}): 64 bytes after M's fields, so that no object
     * after it in the heap shares a line with them ({@link CacheLinePad}). Tests make plain Ms.
     */
    static final class Padded extends M {
        long q00, q01, q02, q03, q04, q05, q06, q07;

        Padded(Scheduler sched, long id, String name) {
            super(sched, id, name);
        }
    }

    M(Scheduler sched, long id, String name) {
        this.sched = sched;
        this.id = id;
        // Seeded (-Dgort.seed): every M's generator starts from the seed and the M's id, so a
        // GOMAXPROCS=1 run draws the same steal orders and select orders every time (Decisions).
        long seed = sched.config.settings().seed();
        long s0 = (seed != 0 ? seed : System.nanoTime()) ^ (id * 0x9E3779B97F4A7C15L);
        this.decisions = sched.decisions;
        this.goroutineLocals = sched.goroutineLocals;
        this.rand = decisions != null ? new Decisions.Rand(s0, decisions, id) : new FastRand(s0);
        this.trace = sched.trace;
        this.thread = new MThread.Padded(this, name + "-M" + id, sched.origin);
    }

    /**
     * The M running the caller (goroutine code or the M's own code), or null on other threads.
     *
     * <p>This must never be {@code Thread.currentThread()} inlined into goroutine code: C2 loads the
     * current thread from "immutable memory", so a compiled method may compute it before a
     * continuation yield and reuse it after the goroutine resumed on another carrier (seen here: a
     * goroutine parked itself through another goroutine's M).
     *
     * <p>Goroutine code (the common case) asks the JDK for the continuation of gort's scope mounted
     * on the carrier: {@code Continuation.getCurrentContinuation} reads the carrier thread with the
     * {@code currentCarrierThread} intrinsic, which C2 loads as ordinary memory (a call, the yield
     * included, kills it; the JDK's own {@code Continuation.yield} finds its continuation so), and
     * that continuation is the G, whose {@code m} is the M that mounted it. Everything else (the M's
     * own code, threads outside gort) goes through {@link #CARRIER}, a method handle in a non-final
     * field: the JIT cannot treat it as a constant and so cannot inline {@link #onCarrier()} into the
     * caller, and the thread is read afresh inside that callee on every call; that call costs a few
     * nanoseconds more (~4 % of a Gosched, issue 19). (ScopedValue is no way out: raw continuations
     * do not save the carrier's scoped-value bindings, only its cache.)
     */
    public static M current() {
        M mp = ofGoroutine();
        return mp != null ? mp : onCarrierHandle();
    }

    /**
     * The M running the current goroutine, or null outside one (a platform thread, a carrier's own
     * code): {@link #current()}'s first half, without its carrier lookup. The G's {@code m} is set
     * before the mount (execute, park_m's cancelled park) and cleared by dropg after the unmount.
     */
    static M ofGoroutine() {
        return gInitialized && Continuation.getCurrentContinuation(G.SCOPE) instanceof G gp ? gp.m : null;
    }

    /**
     * {@link #onCarrier()} through {@link #CARRIER}, never inlined (see {@link #current()}): the
     * slow path, and the reference MCurrentAcrossYieldTest checks the fast one against.
     */
    static M onCarrierHandle() {
        try {
            return (M) CARRIER.invokeExact();
        } catch (RuntimeException | Error e) {
            throw e; // a StackOverflowError at the call stays one (callers may catch it)
        } catch (Throwable t) {
            throw new AssertionError(t);
        }
    }

    /** Deliberately not final (see {@link #current()}). Written once in the static initializer. */
    @SuppressWarnings("FieldMayBeFinal")
    private static MethodHandle CARRIER;

    private static final VarHandle P_FIELD;

    /**
     * Whether class G has been initialised: set (a volatile store, once) by G's static initialiser,
     * read by {@link #current()}. Until then no goroutine exists, and {@link #current()} must touch
     * neither G nor Continuation: it is called from the start, by Config's and the agent's fatal
     * errors, in a JVM that may not (yet) export jdk.internal.vm to gort (the agent of {@code java
     * -jar} runs before the manifest's Add-Exports), where loading G fails its superclass access
     * check and would leave M unusable. Not a static final: the export can arrive after M's
     * initialisation.
     */
    static volatile boolean gInitialized;

    /**
     * m.curg's handle, in a holder of its own: a handle typed by G loads G, which M's own
     * initialisation must not do (see {@link #gInitialized}); only a running M, with G loaded,
     * gets here.
     */
    private static final class Curg {
        static final VarHandle CURG;

        static {
            try {
                CURG = MethodHandles.lookup().findVarHandle(M.class, "curg", G.class);
            } catch (ReflectiveOperationException e) {
                throw new ExceptionInInitializerError(e);
            }
        }
    }

    static {
        try {
            CARRIER = MethodHandles.lookup().findStatic(M.class, "onCarrier", MethodType.methodType(M.class));
            P_FIELD = MethodHandles.lookup().findVarHandle(M.class, "p", P.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /**
     * m.p with a release store instead of a volatile one: the syscall fast paths (Syscalls) change
     * it on every call, and the P's status word, not m.p, is what other threads synchronise on.
     */
    void setPRelease(P pp) {
        P_FIELD.setRelease(this, pp);
    }

    /** m.curg with a release store (see {@link #curg}). This M only. */
    void setCurgRelease(G gp) {
        Curg.CURG.setRelease(this, gp);
    }

    /**
     * The M whose carrier is the calling thread. Call it directly only from code that never runs
     * inside a goroutine (the scheduling loop, sysmon, timers run by the M); goroutine code uses
     * {@link #current()}.
     */
    static M onCarrier() {
        return Thread.currentThread() instanceof MThread mt ? mt.m : null;
    }

    public P p() {
        return p;
    }

    /** This M's carrier thread (for observers: joins, stack traces). */
    public Thread thread() {
        return thread;
    }

    public G curg() {
        return curg;
    }

    public Scheduler scheduler() {
        return sched;
    }

    // ------------------------------------------------------------------------------------------
    // The thread body.

    /** Go: proc.go mstart/mstart1, then schedule() forever (in batches: {@link #SCHEDULE_ROUNDS}). */
    private void mstart() {
        tid = KernelThreads.currentTid();
        try {
            P np = nextp;
            if (np != null) {
                nextp = null;
                acquirep(np);
                sched.idle.spinningOnWake(this);
            }
            // schedule() returns true after a batch of rounds, to be entered again: see SCHEDULE_ROUNDS.
            while (schedule(scheduleBatches < SCHEDULE_WARM_BATCHES ? SCHEDULE_ROUNDS_WARM : SCHEDULE_ROUNDS)) {
                scheduleBatches++;
            }
        } catch (GortFatalError e) {
            // already reported by Fatal.fatal and recorded on the runtime
        } catch (Throwable t) {
            Fatal.crashed(sched, "M" + id, t);
        } finally {
            sched.preempt.carrierExit(thread); // keep Poll's JVM-wide armed count exact
            sched.idle.mexit(this);
        }
    }

    /**
     * Rounds of {@link #schedule} between two returns to {@link #mstart}, which enters it again at
     * once. A JVM frame keeps running the machine code it was entered with, and a carrier's
     * scheduling loop would otherwise never leave its first frame: when HotSpot replaces the loop's
     * code (an uncommon trap taken on another carrier, C2 code replacing C1's), this carrier stays
     * in the discarded code, and a call from discarded code to a method recompiled meanwhile
     * (findRunnable, run) is not bound again: it goes through the interpreter on every call
     * (HotSpot's {@code SharedRuntime::fixup_callers_callsite} patches no caller that is no
     * longer in use). That was a JVM where creating a goroutine took twice as long for the rest of
     * its life, about one JMH fork in four (bench/results/HISTORY.md, 2026-12-05). Returning
     * bounds such a stretch to one batch: mstart's own loop iterates too rarely to be compiled, so
     * it stays interpreted and always calls schedule's current code. The first batches of each M
     * are short so that schedule is called often enough, early, to be compiled as a method and
     * not only on stack replacement.
     */
    static final int SCHEDULE_ROUNDS = 1 << 18;

    /** Rounds per batch for the first {@link #SCHEDULE_WARM_BATCHES} batches of an M. */
    static final int SCHEDULE_ROUNDS_WARM = 1 << 12;

    /** Short batches at an M's start (see {@link #SCHEDULE_ROUNDS}). */
    static final int SCHEDULE_WARM_BATCHES = 1 << 10;

    /**
     * Rounds of scheduling: find a runnable goroutine and execute it, {@code rounds} times. Returns
     * true when the rounds are done and the caller is to call again (Go's schedule never returns:
     * see {@link #SCHEDULE_ROUNDS}); false when the runtime shuts down, or when a goroutine ended
     * while locked to this M (the thread then ends with it, as in Go).
     *
     * <p>Go: proc.go schedule
     */
    boolean schedule(int rounds) {
        for (; rounds > 0; rounds--) {
            if (sched.exiting || exitThread) {
                return false;
            }
            if (locks != 0) {
                throw Fatal.fatal(sched, "schedule: holding locks");
            }
            G lg = lockedg;
            if (lg != null) {
                // This M is locked to a G that just yielded (parked, Gosched, preempted): it runs
                // nothing else. Hand the P away and wait until that G is runnable again.
                if (!stoplockedm()) {
                    return false; // exiting
                }
                execute(lg, false);
                continue;
            }
            P pp = p;
            if (pp == null) {
                // The M lost its P: a syscall's exitsyscall0 found no idle P, or sysmon retook the P
                // while the carrier was blocked and the G then left. Wait for work like any idle M.
                stopm();
                continue;
            }
            pp.setPreemptRelease(false);
            // Safety check: if we are spinning, the run queue should be empty.
            if (spinning && !pp.runq.runqempty()) {
                throw Fatal.fatal(sched, "schedule: spinning with local work");
            }
            G gp = findRunnable(); // blocks until work is available
            if (gp == null) {
                return false; // exiting
            }
            boolean inherit = found.inheritTime;
            // This thread is going to run a goroutine and is not spinning anymore, so if it was
            // marked as spinning we need to reset it now and potentially start a new spinning M.
            if (spinning) {
                sched.idle.resetspinning(this);
            }
            if (gp.lockedm() != null) {
                // Hands off own p to the locked m, then blocks waiting for a new p.
                startlockedm(gp);
                continue;
            }
            execute(gp, inherit);
            // Not kept in this frame while findRunnable blocks: an interpreted frame would hold
            // it strongly and hide a leak from the goroutine leak profile (GoroutineLeaks).
            gp = null;
        }
        return true;
    }

    /**
     * Runs gp on this M, then whatever its departure hands straight back (a syscall exit that
     * found a P, a locked G woken again); returns when this M must look for work.
     *
     * <p>Go: proc.go execute (the loop replaces Go's "never returns" tail calls into execute)
     */
    void execute(G gp, boolean inheritTime) {
        while (gp != null) {
            P pp = p;
            setCurgRelease(gp);
            gp.setMRelease(this);
            gp.casgstatus(G._Grunnable, G._Grunning); // clears waitsince (the runnable stamp)
            if (!inheritTime) {
                pp.incSchedtickOpaque();
                thread.budget = sched.preempt.budgetQuantum; // a new slice: a new budget (Poll.budget)
            }
            sched.preempt.newSlice(thread, inheritTime); // a new slice starts clean; runnext inherits
            pp.gsRun++;
            if (decisions != null) decisions.run(pp, gp);
            if (trace.on)
                trace.goStart(
                        this,
                        pp,
                        gp,
                        inheritTime && found.from == Ev.F_LOCAL ? Ev.F_RUNNEXT : found.from,
                        found.fromVictim,
                        inheritTime);
            gp = run(gp);
            inheritTime = false;
        }
    }

    /**
     * Mounts gp until it yields, then handles why (on this M's own stack, Go's g0). A park whose
     * unlock function returns false runs the same G again at once with its slice (Go's park_m
     * calling execute(gp, true)). Returns a G to execute next with a new slice, or null.
     *
     * <p>Go: the mcall targets park_m, gosched_m, gopreempt_m, goyield_m, goexit0, exitsyscall0
     */
    private G run(G gp) {
        for (; ; ) {
            gp.yieldReason = G.YIELD_NONE;
            if (SchedCounts.ON) SchedCounts.contRuns.increment();
            G.Rare rare = gp.rareOrNull();
            if (rare != null && rare.interrupted) {
                rare.interrupted = false; // the G's interrupt status becomes the carrier's again
                thread.interrupt();
            }
            if (goroutineLocals) {
                runWithLocals(gp);
            } else {
                gp.runCont();
            }
            if (thread.isInterrupted()) {
                // The status belongs to the goroutine that was mounted (see G.Rare.interrupted):
                // it leaves with it, so that the next goroutine here is not interrupted.
                Thread.interrupted();
                gp.rare().interrupted = true;
            }
            int st = G._Grunning;
            // The G left its carrier in a syscall: it parked or yielded inside one (gopark and
            // Gosched leave the exit to us, since a lock may be held there), or sysmon retook
            // this M's P while the carrier was blocked in user code and the G then ended or
            // yielded without a gort call noticing. Finish the syscall here, never waiting. With
            // no P to be had, the exit's record and the departure's (below) are one trace
            // section: a trace start's snapshot between them would see the G in its syscall and
            // then a stop that never left it.
            boolean section = gp.readgstatusNoScan() == G._Gsyscall && gp.yieldReason != G.YIELD_SYSCALL;
            try {
                if (section) {
                    trace.sectionBegin(this);
                    st = exitsyscallM(gp);
                }
                Consumer<G> hook = departHookForTest;
                if (hook != null) {
                    hook.accept(gp); // a test blocks this carrier here, as a trace flush may
                }
                if (gp.isDone()) {
                    if (trace.on) trace.goStop(this, p, gp, Ev.S_EXIT);
                    goexit0(gp, st);
                    return null;
                }
                if (SchedCounts.ON) SchedCounts.countYield(gp.yieldReason);
                switch (gp.yieldReason) {
                    case G.YIELD_PARK -> {
                        if (trace.on) trace.goStop(this, p, gp, Ev.S_PARK);
                        if (park_m(gp, st)) {
                            if (trace.on) trace.goStart(this, p, gp, Ev.F_RESUME, 0, true);
                            continue; // unlockf said no: run it again, same slice
                        }
                        return null;
                    }
                    case G.YIELD_GOSCHED -> {
                        if (trace.on) trace.goStop(this, p, gp, Ev.S_GOSCHED);
                        goschedImpl(gp, false, st);
                    }
                    case G.YIELD_PREEMPT -> {
                        if (trace.on) trace.goStop(this, p, gp, Ev.S_PREEMPT);
                        goschedImpl(gp, true, st);
                    }
                    case G.YIELD_GOYIELD -> {
                        if (trace.on) trace.goStop(this, p, gp, Ev.S_YIELD);
                        if (st == G._Gsyscall) {
                            goschedImpl(gp, false, st); // no P of our own: the global queue
                        } else {
                            goyield_m(gp);
                        }
                    }
                    case G.YIELD_SYSCALL -> {
                        return exitsyscall0(gp);
                    }
                    default -> {
                        System.err.println("runtime: goroutine " + gp.goid + " yieldReason=" + gp.yieldReason
                                + " status=" + G.gstatusName(gp.readgstatus()) + " pinned=" + gp.pinnedReason());
                        throw Fatal.fatal(sched, "execute: continuation yielded without a reason");
                    }
                }
                return null;
            } finally {
                if (section) trace.sectionEnd(this);
            }
        }
    }

    /**
     * Mounts gp with its own ThreadLocal maps in the carrier's fields (goroutine-scoped ThreadLocals,
     * {@link GoroutineLocals}): the carrier's are set aside, the G's installed (null is fine: the
     * first {@code ThreadLocal.set} creates one in the field), and when the continuation yields, the
     * G takes back what is in the fields then (maybe a map created meanwhile) and the carrier's are
     * restored, so that the M's own code and the next G never see this G's values. A G that stays
     * mounted while its carrier blocks (a park in place, a wait for a P in a syscall, a pinned yield)
     * keeps its maps installed throughout. Eight field accesses, no allocation.
     */
    private void runWithLocals(G gp) {
        MThread t = thread;
        Object carrierTl = GoroutineLocals.threadLocals(t);
        Object carrierItl = GoroutineLocals.inheritableThreadLocals(t);
        G.Rare r = gp.rareOrNull(); // the maps live there (most goroutines have none)
        GoroutineLocals.setThreadLocals(t, r == null ? null : r.threadLocals);
        GoroutineLocals.setInheritableThreadLocals(t, r == null ? null : r.inheritableThreadLocals);
        try {
            gp.runCont();
        } finally {
            Object tl = GoroutineLocals.threadLocals(t);
            Object itl = GoroutineLocals.inheritableThreadLocals(t);
            r = gp.rareOrNull(); // the G may have made one meanwhile
            if (r != null || tl != null || itl != null) {
                r = gp.rare();
                r.threadLocals = tl;
                r.inheritableThreadLocals = itl;
            }
            GoroutineLocals.setThreadLocals(t, carrierTl);
            GoroutineLocals.setInheritableThreadLocals(t, carrierItl);
        }
    }

    /**
     * The G left its carrier in _Gsyscall (parked or yielded in a syscall, or sysmon retook the P
     * while it was blocked): try to get a P back without waiting. Returns the status to leave from: _Grunning with a P, else
     * _Gsyscall (this M has no P; the departure handlers then queue the G globally).
     */
    private int exitsyscallM(G gp) {
        return Syscalls.exitsyscallNoWait(this, gp) ? G._Grunning : G._Gsyscall;
    }

    /**
     * The G has yielded to park: now (and only now, with its continuation unmounted) it becomes
     * waiting and the unlock function runs, so a racing goready on another M can never resume a
     * continuation that is still mounted here. Returns true if the park was cancelled and the G
     * runs again at once. {@code from} is _Grunning, or _Gsyscall when this M has no P.
     *
     * <p>Go: proc.go park_m
     */
    private boolean park_m(G gp, int from) {
        // A bubble stays active until the park is complete: the unlock function may cancel it
        // (Go: park_m's bubble.incActive / decActive).
        Bubble bubble = gp.bubble();
        if (bubble != null) {
            bubble.incActive();
        }
        gp.casgstatus(from, G._Gwaiting);
        G.ParkUnlock<Object> fn = waitunlockf;
        Object lock = waitlock;
        waitunlockf = null;
        waitlock = null;
        if (gp.waitsince == 0) {
            // Approximate, as Go's (which the GC stamps when it first sees the G blocked): sysmon's
            // clock, at most one sysmon period old; a System.nanoTime() per park cost ~45 ns of a
            // ~350 ns channel round trip on the 2-vCPU bench machine (2026-11-30).
            long c = sched.coarseNanotime;
            gp.waitsince = c != 0 ? c : System.nanoTime();
        }
        dropg();
        if (fn != null && !fn.unlock(gp, lock)) {
            gp.casgstatus(G._Gwaiting, G._Grunnable);
            if (p == null) {
                // No P to run it on: queue it, as exitsyscall0 does, and wake an idle P, which
                // exitsyscall0 takes under the same lock (see goschedImpl). The trace has it
                // parked (run's record): it is unblocked into the global queue.
                if (trace.on) trace.goUnblock(this, null, gp, Ev.W_GLOBAL);
                synchronized (sched.sched.lock) {
                    sched.sched.runq.globrunqput(gp);
                }
                sched.idle.wakep();
                if (bubble != null) {
                    bubble.decActive();
                }
                return false;
            }
            if (bubble != null) {
                bubble.decActive();
            }
            setCurgRelease(gp);
            gp.setMRelease(this);
            gp.casgstatus(G._Grunnable, G._Grunning);
            return true; // execute(gp, true): schedule it back, never returning
        }
        if (bubble != null) {
            bubble.decActive();
        }
        return false;
    }

    /**
     * Go: proc.go goschedImpl (Gosched and slice preemption both go to the global tail).
     * {@code from} is _Grunning, or _Gsyscall when this M has no P.
     */
    private void goschedImpl(G gp, boolean preempted, int from) {
        gp.casgstatus(from, G._Grunnable);
        dropg();
        if (preempted) {
            sched.stats.preemptions.incrementAndGet();
        }
        synchronized (sched.sched.lock) {
            sched.sched.runq.globrunqput(gp);
        }
        // Whatever this M holds, as Go's goschedImpl: an M leaving a syscall without a P (from
        // _Gsyscall) found none idle in exitsyscallM, under another hold of sched.lock than the
        // put above, and the M that held one may since have looked at an empty global queue and
        // idled it. Without this wake nobody ran gp (SyscallDepartWakeTest: "checkdead: runnable g").
        sched.idle.wakep();
    }

    /** Go: proc.go goyield_m: like Gosched, but to this P's local tail (a new slice when it runs). */
    private void goyield_m(G gp) {
        P pp = p;
        gp.casgstatus(G._Grunning, G._Grunnable);
        dropg();
        pp.runq.runqput(gp, false);
    }

    /**
     * A uniform random int in [0, n) from the calling carrier's M (its per-M generator, used by
     * select's poll order); {@code ThreadLocalRandom} on a thread that is not an M.
     *
     * <p>Go: rand.go cheaprandn
     */
    public static int cheaprandn(int n) {
        M mp = current();
        return mp != null
                ? mp.rand.nextn(n)
                : java.util.concurrent.ThreadLocalRandom.current().nextInt(n);
    }

    /**
     * The goroutine ended. If it was locked to this M (LockOSThread without a matching unlock),
     * the thread ends with it, as in Go: the goroutine may have left the thread in a state other
     * goroutines must not see (thread-locals, a thread-bound native resource). Its P is handed off
     * by {@link Idle#mexit}.
     *
     * <p>Go: proc.go goexit0/gdestroy
     */
    private void goexit0(G gp, int from) {
        // A bubble goroutine that panicked ends the program: keep its bubble from waking the root
        // (which could then return from Test, and main from the program) before gdestroy has
        // reported the panic. Go's panic never gets as far as _Gdead.
        Bubble panicked = gp.panic() != null ? gp.bubble() : null;
        if (panicked != null) {
            panicked.incActive();
        }
        gp.casgstatus(from, G._Gdead);
        G.Rare rare = gp.rareOrNull();
        if (rare != null) {
            rare.threadLocals = null; // its ThreadLocals die with it (as gdestroy drops gp.labels in Go)
            rare.inheritableThreadLocals = null;
        }
        boolean locked = gp.lockedm() != null;
        if (locked) {
            if (gp.lockedInt() != 0) {
                System.err.println("invalid m->lockedInt = " + gp.lockedInt());
                throw Fatal.fatal(sched, "internal lockOSThread error");
            }
            gp.setLockedm(null);
            gp.rare().lockedExt = 0;
            lockedg = null;
        }
        dropg();
        sched.gdestroy(gp);
        if (panicked != null) {
            panicked.decActive();
        }
        if (locked) {
            exitThread = true;
        }
    }

    /**
     * A syscall ended and exitsyscallfast found no P; the G has yielded to this M (G is still
     * _Gsyscall). Returns the G to execute at once if a P turned up, else null with this M
     * parked and woken with a P (or the locked G's M handed one).
     *
     * <p>Go: proc.go exitsyscall0
     */
    private G exitsyscall0(G gp) {
        trace.sectionBegin(this); // no P: a trace start's snapshot sees the G before or after both
        try {
            gp.casgstatus(G._Gsyscall, G._Grunnable);
            if (trace.on) trace.syscallExit(this, null, gp, Ev.X_NO_P); // the trace has it in global now
        } finally {
            trace.sectionEnd(this);
        }
        dropg();
        P pp;
        boolean locked = false;
        synchronized (sched.sched.lock) {
            pp = sched.idle.pidleget();
            if (pp == null) {
                sched.sched.runq.globrunqput(gp);
                // Below, we stoplockedm if gp is locked. globrunqput releases ownership of gp, so
                // we must check if gp is locked prior to committing the release by unlocking
                // sched.lock, otherwise we could race with another M transitioning gp from
                // unlocked to locked.
                locked = gp.lockedm() != null;
            }
        }
        if (pp != null) {
            acquirep(pp);
            sched.syscallStats.slowIdleP.incrementAndGet();
            found.from = Ev.F_GLOBAL;
            found.fromVictim = 0;
            return gp; // execute(gp, false)
        }
        if (locked) {
            // Wait until another thread schedules gp and so m again.
            // N.B. lockedm must be this M, as this g was running on this M before entersyscall.
            sched.syscallStats.slowLocked.incrementAndGet();
            return stoplockedm() ? gp : null;
        }
        sched.syscallStats.slowGlobal.incrementAndGet();
        stopm();
        return null; // schedule()
    }

    /**
     * Stops execution of this M, which is locked to a G, until the G is runnable again: the P goes
     * to another M, and whoever schedules the G hands this M a P (startlockedm). Returns with the P
     * acquired, or false if the runtime is exiting.
     *
     * <p>Go: proc.go stoplockedm
     */
    boolean stoplockedm() {
        G lg = lockedg;
        if (lg == null || lg.lockedm() != this) {
            throw Fatal.fatal(sched, "stoplockedm: inconsistent locking");
        }
        if (p != null) {
            // Schedule another M to run this p.
            P pp = releasep();
            sched.idle.handoffp(pp);
        }
        sched.preempt.carrierSleeps(thread);
        sched.idle.idlelockedSleep(this);
        // Wait until another thread schedules lockedg again.
        blocked = true;
        park.notesleep();
        park.noteclear();
        blocked = false;
        if (sched.exiting) {
            return false;
        }
        int status = lg.readgstatus();
        if (status != G._Grunnable) {
            System.err.println("runtime:stoplockedm: lockedg (atomicstatus=" + status + ") is not Grunnable");
            throw Fatal.fatal(sched, "stoplockedm: not runnable");
        }
        P np = nextp;
        nextp = null;
        acquirep(np);
        return true;
    }

    /**
     * Schedules the locked M to run the locked gp: hands it this M's P directly, then waits for
     * work like any idle M.
     *
     * <p>Go: proc.go startlockedm
     */
    void startlockedm(G gp) {
        M mp = gp.lockedm();
        if (mp == this) {
            throw Fatal.fatal(sched, "startlockedm: locked to me");
        }
        if (mp.nextp != null) {
            throw Fatal.fatal(sched, "startlockedm: m has p");
        }
        // directly handoff current P to the locked m
        sched.idle.idlelockedWake(mp);
        P pp = releasep();
        mp.found.from = found.from; // where the G was found, for the locked M's trace (published by the note)
        mp.found.fromVictim = found.fromVictim;
        mp.nextp = pp;
        mp.park.notewakeup();
        stopm();
    }

    /** Go: proc.go dropg. */
    private void dropg() {
        curg.setMRelease(null);
        setCurgRelease(null);
    }

    // ------------------------------------------------------------------------------------------
    // Finding work.

    /**
     * Finds a runnable goroutine to execute: local timers, every 61st tick one G from the global
     * queue, runnext and the local ring, a global batch, stealing; else drops the P and sleeps.
     * Sets {@link #inheritTime}. Returns null only when the runtime is exiting.
     *
     * <p>Go: proc.go findRunnable
     */
    G findRunnable() {
        final Sched s = sched.sched;
        final Idle idle = sched.idle;
        top:
        for (; ; ) {
            if (sched.exiting) {
                return null;
            }
            P pp = p;
            if (s.gcwaiting) {
                gcstopm();
                continue;
            }
            long now = 0;
            long pollUntil = 0;
            TimerHeaps timers = sched.timers;
            // Run this P's due timers (readied Gs go to its runnext); nanotime is read only if some
            // timer is pending.
            pollUntil = timers.check(this, pp, 0);

            // Check the global runnable queue once in a while to ensure fairness. Otherwise two
            // goroutines can completely occupy the local runqueue by constantly respawning each other.
            // gort: also when a Java lock's holder waits at its head for this P (Preempt.boostLockHolder;
            // each waiting holder's claim is one findRunnable's, whatever it finds).
            boolean lockHolderWaiting = pp.takeLockHolderWaiting();
            if ((pp.schedtickOpaque() % 61 == 0 || lockHolderWaiting) && !s.runq.empty()) {
                G gp;
                synchronized (s.lock) {
                    gp = s.runq.globrunqget();
                }
                if (gp != null) {
                    found.inheritTime = false;
                    found.from = Ev.F_GLOBAL;
                    return gp;
                }
            }

            // local runq
            G gp = pp.runq.runqget(found);
            if (gp != null) {
                found.from = Ev.F_LOCAL;
                return gp;
            }

            // global runq
            if (!s.runq.empty()) {
                synchronized (s.lock) {
                    gp = s.runq.globrunqgetbatch(pp.runq.capacity() / 2, sched.gomaxprocs, pp.runq);
                }
                if (gp != null) {
                    found.inheritTime = false;
                    found.from = Ev.F_GLOBAL;
                    return gp;
                }
            }

            // Poll network. This netpoll is only an optimization before we resort to stealing. We
            // can safely skip it if there are no waiters or a thread is blocked in netpoll already.
            // If there is any kind of logical race with that blocked thread (e.g. it has already
            // returned from netpoll, but does not set lastpoll yet), this thread will do blocking
            // netpoll below anyway.
            final Netpoll np = sched.netpoll;
            if (np.netpollinited() && np.netpollAnyWaiters() && s.lastpoll.get() != 0) {
                G list = np.netpoll(0); // non-blocking
                if (list != null) {
                    gp = netpollTake(np, pp, list);
                    found.from = Ev.F_LOCAL;
                    found.inheritTime = false;
                    return gp;
                }
            }

            // Spinning Ms: steal work from other Ps.
            //
            // Limit the number of spinning Ms to half the number of busy Ps. This is necessary to
            // prevent excessive CPU consumption when GOMAXPROCS>>1 but the program parallelism is low.
            if (sched.config.stealing()
                    && (spinning
                            || !sched.config.spinning()
                            || 2 * idle.nmspinning.get() < sched.gomaxprocs - idle.npidle.get())) {
                if (!spinning && sched.config.spinning()) {
                    idle.becomeSpinning(this);
                }
                gp = stealWork(pp, timers);
                if (gp != null) {
                    return gp; // inheritTime set by stealWork
                }
                if (found.newWork) {
                    continue top;
                }
                if (found.pollUntil != 0 && (pollUntil == 0 || found.pollUntil < pollUntil)) {
                    pollUntil = found.pollUntil;
                }
            } else if (!sched.config.stealing()) {
                // gort: with work stealing switched off, still run the other Ps' due timers (Go's
                // last steal pass), or the timers of an idle P could wait until someone takes it.
                gp = stealTimersOnly(pp, timers);
                if (gp != null) {
                    return gp;
                }
                if (found.pollUntil != 0 && (pollUntil == 0 || found.pollUntil < pollUntil)) {
                    pollUntil = found.pollUntil;
                }
            }

            // We have nothing to do.
            //
            // Before we drop our P, make a snapshot of the allp slice, which can change underfoot
            // once we no longer block safe-points.
            P[] allpSnap = sched.allp;

            // Return P and block.
            synchronized (s.lock) {
                if (s.gcwaiting) {
                    continue top;
                }
                if (!s.runq.empty()) {
                    gp = s.runq.globrunqgetbatch(pp.runq.capacity() / 2, sched.gomaxprocs, pp.runq);
                    found.inheritTime = false;
                    found.from = Ev.F_GLOBAL;
                    return gp;
                }
                if (!spinning && idle.needspinning.get() == 1) {
                    // See "Delicate dance" comment below.
                    idle.becomeSpinning(this);
                    continue top;
                }
                // Drop our P (the invariant: an M without a P never runs Go code).
                if (releasep() != pp) {
                    throw Fatal.fatal(sched, "findRunnable: wrong p");
                }
                idle.pidleput(pp);
            }

            // Delicate dance: thread transitions from spinning to non-spinning state, potentially
            // concurrently with submission of new work. We must drop nmspinning first and then check
            // all sources again (with a StoreLoad in between: the AtomicInteger decrement is a
            // volatile read-modify-write, and the checks below are volatile/acquire reads). If we do
            // it the other way around, another thread can submit work after we've checked all
            // sources but before we drop nmspinning; as a result nobody will unpark a thread to run
            // the work.
            boolean wasSpinning = spinning;
            if (spinning) {
                idle.dropspinning(this, "findRunnable");

                // Note the for correctness, only the last M transitioning from spinning to
                // non-spinning must perform these rechecks to ensure no missed work. However, the
                // runtime has some cases of transient increments of nmspinning that are decremented
                // without further checks, so gort (as Go) makes every spinning M do the rechecks.

                // Check global and P runqueues again.
                synchronized (s.lock) {
                    P pp2 = idle.recheckGlobal();
                    if (pp2 != null) {
                        acquirep(pp2);
                        gp = s.runq.globrunqgetbatch(pp2.runq.capacity() / 2, sched.gomaxprocs, pp2.runq);
                        // gp may be null only if another M took the work meanwhile; then spin again.
                        idle.becomeSpinning(this);
                        if (gp == null) {
                            continue top;
                        }
                        found.inheritTime = false;
                        found.from = Ev.F_GLOBAL;
                        return gp;
                    }
                }
                // gort: with stealing off another P's queue is no work for this M (only its owner
                // may run it); re-checking it would spin forever while that owner is busy.
                P pp2 = sched.config.stealing() ? checkRunqsNoP(allpSnap) : null;
                if (pp2 != null) {
                    acquirep(pp2);
                    idle.becomeSpinning(this);
                    continue top;
                }
                pollUntil = timers.checkTimersNoP(sched, allpSnap, pollUntil);
            } else if (!sched.config.spinning()) {
                // Without spinning Ms nobody re-checks after we dropped the P; do it ourselves.
                P pp2 = null;
                synchronized (s.lock) {
                    if (!s.runq.empty()) {
                        pp2 = idle.pidleget();
                    }
                }
                if (pp2 == null && sched.config.stealing()) {
                    pp2 = checkRunqsNoP(allpSnap);
                }
                if (pp2 != null) {
                    acquirep(pp2);
                    continue top;
                }
            }

            // Poll network until next timer (before the poller exists, a timed sleep on a Note).
            if (((np.netpollinited() && np.netpollAnyWaiters()) || pollUntil != 0) && s.lastpoll.getAndSet(0) != 0) {
                s.pollUntil.set(pollUntil);
                if (p != null) {
                    throw Fatal.fatal(sched, "findRunnable: netpoll with p");
                }
                if (spinning) {
                    throw Fatal.fatal(sched, "findRunnable: netpoll with spinning");
                }
                long delay = -1;
                if (pollUntil != 0) {
                    now = Scheduler.nanotime();
                    delay = pollUntil - now;
                    if (delay < 0) {
                        delay = 0;
                    }
                }
                if (trace.on) trace.mPark(this);
                blocked = true;
                // A netpollBreak that raced with the lastpoll swap is not lost: the eventfd
                // (epoll's, or Selector.wakeup's; or the Note) makes the next poll return at once.
                // A stale one costs one extra round.
                G list = np.netpoll(delay); // block until new work is available
                blocked = false;
                if (trace.on) trace.mUnpark(this);
                // Refresh now again, after potentially blocking.
                now = Scheduler.nanotime();
                s.pollUntil.set(0);
                s.lastpoll.set(now);
                P pp2;
                synchronized (s.lock) {
                    pp2 = idle.pidleget();
                }
                if (pp2 == null) {
                    np.injectglist(list);
                } else {
                    acquirep(pp2);
                    if (list != null) {
                        gp = netpollTake(np, pp2, list);
                        found.from = Ev.F_LOCAL;
                        found.inheritTime = false;
                        return gp;
                    }
                    if (wasSpinning) {
                        idle.becomeSpinning(this);
                    }
                    continue top;
                }
            } else if (pollUntil != 0) { // gort: also before init (the Note sleeper)
                long pollerPollUntil = s.pollUntil.get();
                if (pollerPollUntil == 0 || pollerPollUntil > pollUntil) {
                    sched.netpollBreak();
                }
            }
            stopm();
        }
    }

    /**
     * findRunnable's share of a netpoll result: the first goroutine runs here (Go: list.pop(),
     * casgstatus, traceGoUnpark), the rest is injected. Traced as an unblock onto this P by no
     * goroutine (the poller), then a start from it.
     */
    private G netpollTake(Netpoll np, P pp, G list) {
        G gp = list;
        G rest = gp.schedlink;
        gp.schedlink = null;
        np.injectglist(rest);
        np.netpollAdjustWaiters(-1);
        gp.casgstatus(G._Gwaiting, G._Grunnable);
        if (trace.on) trace.goUnblock(this, pp, gp, Ev.W_LOCAL);
        return gp;
    }

    /**
     * Tries to steal a runnable goroutine or timer from any P: four passes in a random coprime
     * order; timers and runnext only on the last pass.
     *
     * <p>Go: proc.go stealWork
     */
    private G stealWork(P pp, TimerHeaps timers) {
        found.newWork = false;
        found.pollUntil = 0;
        final int stealTries = 4;
        P[] allp = sched.allp;
        StealOrder order = sched.stealOrder;
        int count = sched.gomaxprocs;
        if (count > allp.length || order.count() != count) {
            found.newWork = true; // procresize under way
            return null;
        }
        for (int i = 0; i < stealTries; i++) {
            boolean stealTimersOrRunNextG = i == stealTries - 1;
            long packed = order.startPacked(rand.next());
            int pos = (int) (packed >>> 32);
            int inc = (int) packed;
            for (int k = 0; k < count; k++, pos = (pos + inc) % count) {
                if (sched.sched.gcwaiting) {
                    // GC work may be available.
                    found.newWork = true;
                    return null;
                }
                P p2 = allp[pos];
                if (pp == p2) {
                    continue;
                }
                // Steal timers from p2. This call to checkTimers is the only place where we might
                // hold a lock on a different P's timers.
                if (stealTimersOrRunNextG && timers.hasTimers(p2)) {
                    long tnow = Scheduler.nanotime();
                    long w = timers.stealTimers(this, pp, p2, tnow);
                    if (w != 0 && (found.pollUntil == 0 || w < found.pollUntil)) {
                        found.pollUntil = w;
                    }
                    // Running the timers may have made an arbitrary number of G's ready and added
                    // them to this P's local run queue.
                    G gp = pp.runq.runqget(found);
                    if (gp != null) {
                        found.from = Ev.F_LOCAL;
                        return gp;
                    }
                }
                // Don't bother to attempt to steal if p2 is idle.
                if (!p2.idleOpaque()) {
                    G gp = pp.runq.runqsteal(p2.runq.steal, stealTimersOrRunNextG, found);
                    if (gp != null) {
                        pp.steals++;
                        p2.stolenFrom++;
                        sched.stats.steals.incrementAndGet();
                        if (SchedCounts.ON) SchedCounts.steals.increment();
                        sched.stats.stolenGs.addAndGet(found.stolen);
                        found.inheritTime = false;
                        found.from = Ev.F_STOLEN;
                        found.fromVictim = p2.id;
                        return gp;
                    }
                }
            }
        }
        // No goroutines found to steal. Regardless, running a timer may have made some goroutine
        // ready that we missed. Indicate the next timer to wait for.
        return null;
    }

    /**
     * Only the timer half of stealWork's last pass (used when work stealing is switched off): runs
     * every other P's due timers on this M; readied Gs land here. Sets {@code found.pollUntil}.
     */
    private G stealTimersOnly(P pp, TimerHeaps timers) {
        found.newWork = false;
        found.pollUntil = 0;
        for (P p2 : sched.allp) {
            if (p2 == pp || !timers.hasTimers(p2)) {
                continue;
            }
            long w = timers.stealTimers(this, pp, p2, 0);
            if (w != 0 && (found.pollUntil == 0 || w < found.pollUntil)) {
                found.pollUntil = w;
            }
            G gp = pp.runq.runqget(found);
            if (gp != null) {
                found.from = Ev.F_LOCAL; // as in stealWork's timer pass (the trace said "from global")
                return gp;
            }
        }
        return null;
    }

    /** Go: proc.go checkRunqsNoP. Returns an idle P (acquired under lock) if some P has work. */
    private P checkRunqsNoP(P[] allpSnap) {
        int n = Math.min(sched.gomaxprocs, allpSnap.length);
        for (int id = 0; id < n; id++) {
            P p2 = allpSnap[id];
            if (!p2.idleOpaque() && !p2.runq.steal.runqempty()) {
                synchronized (sched.sched.lock) {
                    return sched.idle.pidlegetSpinningIfConfigured();
                }
            }
        }
        return null;
    }

    // ------------------------------------------------------------------------------------------
    // P ownership and sleeping.

    /** Go: proc.go acquirep/wirep. */
    void acquirep(P pp) {
        if (p != null) {
            throw Fatal.fatal(sched, "wirep: already in go");
        }
        if (pp.mOpaque() != null || pp.status() != P._Pidle) {
            System.err.println("wirep: p->m=" + pp.mOpaque() + " p->status=" + pp.status());
            throw Fatal.fatal(sched, "wirep: invalid p state");
        }
        p = pp;
        pp.setMOpaque(this);
        pp.setStatus(P._Prunning);
        if (trace.on) trace.procStart(this, pp);
    }

    /** Go: proc.go releasep/releasepNoTrace. */
    P releasep() {
        P pp = p;
        if (pp == null) {
            throw Fatal.fatal(sched, "releasep: invalid arg");
        }
        if (pp.mOpaque() != this || pp.status() != P._Prunning) {
            System.err.println("releasep: m=" + this + " p->m=" + pp.mOpaque() + " p->status=" + pp.status());
            throw Fatal.fatal(sched, "releasep: invalid p state");
        }
        if (trace.on) trace.procStop(this, pp);
        p = null;
        pp.setMOpaque(null);
        pp.setStatus(P._Pidle);
        return pp;
    }

    /**
     * Stops execution of this M until new work is available: onto the idle-M list, sleep, then take
     * the P the waker handed over.
     *
     * <p>Go: proc.go stopm
     */
    void stopm() {
        if (locks != 0) {
            throw Fatal.fatal(sched, "stopm holding locks");
        }
        if (p != null) {
            throw Fatal.fatal(sched, "stopm holding p");
        }
        if (spinning) {
            throw Fatal.fatal(sched, "stopm spinning");
        }
        if (SchedCounts.ON) SchedCounts.stopm.increment();
        sched.preempt.carrierSleeps(thread); // a REQ or NOTICE left here would arm every poll while it sleeps
        int cpu = sched.idle.cpuAware ? ThreadCpu.current() : -1;
        synchronized (sched.sched.lock) {
            stoppedOnCpu = cpu;
            sched.idle.mput(this);
        }
        if (trace.on) trace.mPark(this);
        blocked = true;
        long t0Debug = SchedCounts.ON ? System.nanoTime() : 0;
        park.notesleep();
        park.noteclear();
        if (SchedCounts.ON) {
            long t1Debug = System.nanoTime();
            SchedCounts.stopmNanos.add(t1Debug - t0Debug);
            long w = wokenAtDebug;
            if (w != 0) {
                SchedCounts.wakeLatencyNanos.add(t1Debug - w);
                wokenAtDebug = 0;
            }
        }
        blocked = false;
        if (trace.on) trace.mUnpark(this);
        if (sched.exiting) {
            return;
        }
        P np = nextp;
        nextp = null;
        if (np == null) {
            throw Fatal.fatal(sched, "stopm: woken without a p");
        }
        acquirep(np);
        sched.idle.spinningOnWake(this);
    }

    /**
     * Stops this M for stop-the-world: hands its P to the initiator's count.
     *
     * <p>Go: proc.go gcstopm
     */
    private void gcstopm() {
        if (!sched.sched.gcwaiting) {
            throw Fatal.fatal(sched, "gcstopm: not waiting for gc");
        }
        if (spinning) {
            // OK to just drop nmspinning here, startTheWorld will unpark threads as necessary.
            sched.idle.dropspinning(this, "gcstopm");
        }
        P pp = releasep();
        synchronized (sched.sched.lock) {
            pp.setStatus(P._Pgcstop);
            sched.world.stopwaitDone();
        }
        stopm();
    }

    @Override
    public String toString() {
        return "M" + id;
    }
}
