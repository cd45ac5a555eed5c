package dev.gort.runtime;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import jdk.internal.vm.Continuation;
import jdk.internal.vm.ContinuationScope;

/**
 * A goroutine: its own {@link Continuation} (the G is the continuation, a subclass: one object and
 * no reference between them, issue 19) plus Go's scheduling state. The continuation's public
 * methods are the runtime's alone: only the G's M runs it ({@link #runCont}), and only under the
 * G's scan bit does anyone else read its frozen stack.
 *
 * <p>The status moves only through {@link #casgstatus}, which fails the Go way on an illegal
 * transition. Fields below say who writes them and with which access mode.
 *
 * <p>Go: runtime2.go type g
 */
public final class G extends Continuation {
    /*
     * Status transitions (atomicstatus; every change goes through casgstatus or tryCasgstatus, and
     * every one waits for a scan bit to clear). "gort" marks an edge Go does not have.
     *
     *   _Gidle     -> _Grunnable    newproc, start (the creator, before the G is published)
     *   _Grunnable -> _Grunning     execute (the M that took it from a queue, or was handed it)
     *   _Grunning  -> _Grunnable    goschedImpl, goyield_m, preemption (its M, after the yield)
     *   _Grunning  -> _Gwaiting     park_m (its M, after the yield: only then can a waker see it)
     *                               parkInPlace (gort: the G itself, pinned or in a Java monitor; its
     *                               carrier blocks with it mounted, the P handed off first)
     *   _Grunning  -> _Gsyscall     entersyscall, entersyscallblock (the G itself)
     *   _Grunning  -> _Gscanrunning retakeBlocked (gort: sysmon, CAS; a carrier blocked in user code)
     *   _Gscanrunning -> _Grunning  retakeBlocked gives up (sysmon, release store)
     *   _Gscanrunning -> _Gsyscall  retakeBlocked took the P (gort: sysmon, release store): a syscall
     *                               entered on the G's behalf, with no P (m.oldp == null)
     *   _Gsyscall  -> _Grunning     exitsyscall's fast path (the G itself, a P acquired)
     *   _Gsyscall  -> _Grunnable    exitsyscall0 (its M, after the yield, no P: global queue);
     *                               goschedImpl from a syscall (gort: a Gosched after a retake)
     *   _Gsyscall  -> _Gwaiting     park_m / parkInPlace from a syscall (gort: a park inside
     *                               Syscall.block or after a retake; the M ends the syscall without
     *                               waiting for a P, exitsyscallNoWait)
     *   _Gsyscall  -> _Gdead        goexit0 (gort: the G ended in a syscall, e.g. after a retake)
     *   _Gwaiting  -> _Grunnable    ready (any thread: the waker that found it under the lock its
     *                               unlockf released; the netpoller; a timer); park_m's cancelled park
     *   _Gwaiting  -> _Grunning or _Gsyscall   parkInPlace's cancelled park (gort: back where it was)
     *   _Grunning  -> _Gdead        goexit0 (its M). A dead G is never reused (a continuation runs once).
     *   _Grunnable, _Gwaiting, _Gpreempted -> | _Gscan -> back   a dump reading the frozen stack
     *
     * _Gpreempted is declared for Go's numbering and counted by checkdead, but nothing enters it:
     * gort has no suspendG (no asynchronous preemption; a preempted G is _Grunnable in the global
     * queue, as after Go's gopreempt_m).
     */

    // Go's numeric status values (runtime2.go), so that scheddetail prints the same numbers.
    /** Just allocated, not yet initialised. */
    static final int _Gidle = 0;
    /** On a run queue (runnext, a ring, the global queue). Not executing user code; the stack is not owned. */
    public static final int _Grunnable = 1;
    /**
     * May execute user code; its continuation is mounted and owned by this G. Not on a run queue;
     * assigned an M and a P (g.m and g.m.p are valid).
     */
    public static final int _Grunning = 2;
    /**
     * Executing a system call (gort: a Java call that may block the carrier). Not on a run queue;
     * assigned an M (its continuation is still mounted there). Go 1.26+: the M still holds its P
     * ({@code _Prunning}) until a thief takes it through this G's scan bit
     * ({@code Syscalls.setBlockOnExitSyscall}); Go 1.25 (GODEBUG=psyscall=1): the M holds no P, which
     * is {@link P#_Psyscall} (m.oldp) or already taken by another M. Either way code on the carrier
     * does not use the P ({@code Syscalls.pForRuntime}).
     */
    public static final int _Gsyscall = 3;
    /**
     * Blocked in the runtime. Not executing user code, not on a run queue, but recorded somewhere
     * (a channel's wait queue, a semaphore, a timer, the poller) so that it can be readied; its
     * continuation is unmounted, except while parked in place on its carrier ({@link Rare#parkedOn}).
     */
    public static final int _Gwaiting = 4;
    /** Exited. Not reused in gort (Go puts dead Gs on a free list). */
    static final int _Gdead = 6;
    /** Go: stopped itself for a suspendG preemption; never entered in gort (see the table above). */
    public static final int _Gpreempted = 9;
    /**
     * {@code _Gscan | _Grunning}: sysmon holds it for a few instructions while it decides whether
     * to retake the P of a carrier blocked in user code (Retake.retakeBlocked); every other status
     * change of that G waits for it to clear (casgstatus spins, as for a dump's scan bit).
     */
    static final int _Gscanrunning = 0x1000 | _Grunning;

    /** One scope for every goroutine of every runtime in this JVM. */
    static final ContinuationScope SCOPE = new ContinuationScope("gort");

    static {
        M.gInitialized = true; // M.current() may now look for a mounted G
    }

    // Why the continuation last yielded to its M. Written by the G just before yield (and at the
    // end of its body), reset to YIELD_NONE by the M just before Continuation.run: same carrier
    // thread, program order, plain. YIELD_NONE therefore also means "the G is on its carrier,
    // running its own code"; anything else, "the G has left (or never reached) it and its M's
    // code runs" (Go's g0). Sysmon reads it too (Retake.retakeBlocked, after its scan-bit CAS and
    // the carrier's volatile thread state, or its CPU time unchanged since a look at which the
    // kernel had it asleep; the unmount's volatile store publishes the G's write):
    // it never retakes the P of an M whose G is not YIELD_NONE. A byte, as is trackingSeq: with
    // both narrowed from int a G was 152 bytes instead of 160 (JOL; 160 since the two
    // ThreadLocal map references).
    static final byte YIELD_NONE = 0;
    static final byte YIELD_PARK = 1;
    static final byte YIELD_GOSCHED = 2;
    static final byte YIELD_PREEMPT = 3;
    static final byte YIELD_SYSCALL = 4;
    static final byte YIELD_GOEXIT = 5;
    static final byte YIELD_GOYIELD = 6;
    /** A new G, never run yet (its M's execute has not mounted it). */
    static final byte YIELD_NEW = 7;

    private static final VarHandle STATUS;
    private static final VarHandle SELECT_DONE;
    private static final VarHandle RARE;
    private static final VarHandle M_;
    private static final VarHandle WAITREASON;
    private static final VarHandle WAITING_ON;

    static {
        try {
            MethodHandles.Lookup l = MethodHandles.lookup();
            STATUS = l.findVarHandle(G.class, "atomicstatus", int.class);
            SELECT_DONE = l.findVarHandle(G.class, "selectDone", boolean.class);
            RARE = l.findVarHandle(G.class, "rare", Rare.class);
            M_ = l.findVarHandle(G.class, "m", M.class);
            WAITREASON = l.findVarHandle(G.class, "waitreason", byte.class);
            WAITING_ON = l.findVarHandle(G.class, "waitingOn", Object.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** Immutable: the goroutine id (main is 1). */
    public final long goid;
    /** Immutable: the runtime this G belongs to. */
    final Scheduler sched;
    /**
     * Immutable: the goroutine's function, the continuation's target (its class names the creator
     * when createdAt is null; the JDK keeps its own copy private).
     */
    final Runnable fn;
    /** Immutable: goid of the creator (0 for main or a G started from a non-gort thread). */
    final long parentGoid;

    /** Any thread, CAS through {@link #casgstatus}; read volatile. */
    private volatile int atomicstatus;

    /**
     * Why the G waits, as the {@link WaitReason}'s ordinal (0: {@link WaitReason#ZERO}; a byte, as
     * Go's uint8 waitReason, not a reference: 3 bytes less on every G, issue 19): written by the G
     * itself with release stores (gopark sets it before the yield and clears it when it resumes;
     * {@link #setWaitreasonRelease}); read volatile, because dumps and the wait-for graph read it
     * from other threads ({@link #waitReason()}). Release suffices: a reader that must see the
     * reason of a wait (a waker's casgstatus, for the bubble's count) found the G through the status
     * CAS that made it waiting, which follows the store; a racy reader (a dump) may see the previous
     * wait's reason.
     */
    private volatile byte waitreason;
    /**
     * What the G waits on (a channel, mutex...) for dumps and the wait-for chain; same writers and
     * modes as waitreason ({@link #setWaitingOnRelease}).
     */
    volatile Object waitingOn;
    /**
     * A nanotime stamp whose meaning follows the status: one field for Go's two (g.waitsince and
     * g.trackingStamp), since a G is never waiting and runnable at once (issue 19: 8 bytes off
     * every G, 128 -> 120).
     *
     * <ul>
     *   <li>{@code _Gwaiting}: when the G started waiting, 0 until stamped (Go: g.waitsince).
     *       Written by its M (park_m) or the G (parkInPlace) after the CAS to waiting and before
     *       the unlock function lets a waker find it.
     *   <li>{@code _Grunnable}: when it became runnable if that transition is one of the timed
     *       ones (one in 8, {@link #trackingSeq}), else 0 (Go: g.trackingStamp). Written in
     *       {@link #casgstatus}, before the CAS, by whoever makes the G runnable (a waker,
     *       newproc, gosched, goyield, a syscall exit); read and cleared by the casgstatus that
     *       takes it out of runnable.
     *   <li>Otherwise 0 (parkInPlace's cancelled park, which goes from waiting straight back,
     *       clears the wait's stamp itself).
     * </ul>
     *
     * Plain: dumps read it racily ({@link #waitSinceNanos()}, "N minutes"), where a stale value
     * only misdates a wait: a {@code _Gwaiting} G briefly holds 0 or its runnable stamp between a
     * waker's store and the waker's CAS (longer while a dump or leak scan holds the scan bit, which
     * the CAS waits out). How long a G waited is not read from here once it is readied (JFR's
     * Unblock keeps its own park time, {@link Rare#jfrParkNanos}).
     */
    long waitsince;

    /**
     * The M running this G: written by that M (execute, park_m's cancelled park) and cleared by
     * dropg, with release stores ({@link #setMRelease}: no StoreLoad fence, as Go's plain store; the
     * set is followed by the status CAS and the mount, the clear follows the status CAS and precedes
     * the G's queueing or unlock function). Read volatile from other threads by sysmon
     * (retakeBlocked), the syscall exit's block check (Syscalls.setBlockOnExitSyscall: sysmon,
     * stop-the-world, other Ms), the leak scan, the tracer's start snapshot and dumps, each after a
     * status read or CAS or racily; and by the G's own code on its carrier ({@link M#current()}).
     */
    volatile M m;

    /** Link in the global run queue or a gQueue: written under sched.lock or by the queue's owner, plain. */
    G schedlink;

    /** Link in {@link AllGs}: written under that stripe's lock, plain. */
    G allprev, allnext;

    /**
     * Set by a waker before {@code goready} (e.g. the chosen sudog of a select); read by the G after
     * it resumes. The run-queue publication (release/acquire) orders it. Plain. Public for the
     * layers above, whose parker ({@code dev.gort.internal.GoParker}) writes and reads it.
     */
    public Object param;

    /**
     * select: wakers CAS false -> true to win the right to wake this G; the G clears it when it
     * resumes. Volatile, CAS. A boolean, as Go's atomic.Bool (it was an int: 3 bytes, issue 19). Go:
     * g.selectDone.
     */
    @SuppressWarnings("unused")
    private volatile boolean selectDone;

    // ---- the park/yield hand-off, G -> M on the same carrier (plain, program order) ----
    // (the unlock function and its lock are the M's waitunlockf/waitlock, as in Go)
    byte yieldReason;

    /**
     * Depth of carrier-owned locks held, maintained by instrumented code: Java monitors
     * ({@link Poll#monitorEnter}) plus the {@code java.util.concurrent.locks.Lock}s counted at their
     * call sites ({@link Poll#lockAcquired}, also in {@link Rare#lockDepth}) plus the running
     * activations of methods that park their carrier ({@link Poll#parkerEnter}) and calls of
     * {@code ThreadLocal.get} ({@link Poll#threadLocalGet}) (both also in {@link Rare#parkerDepth}:
     * they hold the carrier's identity) plus the running calls of JDK
     * methods that hold a lock around a callback ({@link Poll#jdkCallbackEnter}, also in
     * {@link Rare#jdkLockDepth}). Neither preemption nor a park
     * may yield while it is non-zero (the lock belongs to the carrier thread). Plain, own G (other
     * packages read it through {@link #monitorDepth()}).
     */
    int monitorDepth;

    /**
     * Who entered the G's current {@code _Gsyscall}: {@link #SYSCALL_OWN} (its own {@code
     * entersyscall}: {@code Syscall.block}), {@link #SYSCALL_RETAKE} (sysmon, {@link
     * Retake#retakeBlocked}: its carrier was blocked in unwrapped user code) or {@link
     * #SYSCALL_HOOK} (the agent's hook around a JDK call known to block, {@link
     * Poll#blockingEnter}). Only an implicit one (not OWN) is left by a preemption poll, a gort
     * call or the hook after a blocking call ({@link Poll}): a poll inside a call the G wrapped
     * itself must not leave it, or the G would go on into its blocking call holding a P, out of
     * sysmon's sight. RETAKE is written by sysmon while it holds the G's scan bit, before the
     * release store of {@code _Gsyscall}; HOOK by the G itself before its CAS to {@code
     * _Gsyscall}; OWN by the G's own entersyscall or entersyscallblock (only when not OWN
     * already; also when the G is already in an implicit {@code _Gsyscall}, which then becomes
     * its own) and by the hook's exit. Volatile (a byte: the boolean it replaced took the same
     * padding).
     */
    volatile byte syscallImplicit;

    /** {@link #syscallImplicit}: the G's own syscall, or none. */
    static final byte SYSCALL_OWN = 0;

    /** {@link #syscallImplicit}: sysmon made a syscall of a blocked carrier ({@link Retake#retakeBlocked}). */
    static final byte SYSCALL_RETAKE = 1;

    /** {@link #syscallImplicit}: the agent's hook before a JDK call known to block ({@link Poll#blockingEnter}). */
    static final byte SYSCALL_HOOK = 2;

    /**
     * Counts runnable transitions; every 8th is timed (Go: g.trackingSeq, gTrackingPeriod),
     * starting at a pseudo-random phase. Same writers. A byte, as Go's uint8 (only its low 3 bits
     * matter).
     */
    byte trackingSeq;

    /**
     * Free for the layers above (sudog-like waiting lists, timers); owner-defined: written and read
     * by this G's own code (the api's {@code GoParker} keeps the G's sudog here), plain.
     */
    public Object waiting;

    /**
     * The rarely used fields ({@link Rare}), or null while none has been written: allocated by the
     * first writer and never replaced ({@link #rare()}, a CAS: the writers of different fields are
     * different threads); read plainly or volatile through the field's accessor, whose null check
     * stands for the fields' zero values.
     */
    private volatile Rare rare;

    /**
     * What only some goroutines ever use, off the G so that every parked goroutine does not pay for
     * it (issue 19: a G was 168 bytes; each field here is read through an accessor that treats a
     * missing Rare as zero). Each field says who writes it and how, as on G. gort's own: Go keeps
     * all of these on its g (or m).
     */
    static final class Rare {
        /** Immutable (the creator, before the G is published): the frame that called go(); null unless
         * -Dgort.creators=stack. */
        StackTraceElement createdAt;

        /**
         * The goroutine leak profile has unlinked this G from {@link AllGs} and holds it only weakly
         * ({@link GoroutineLeaks}); {@link AllGs#remove} and the profile's re-link both read and clear
         * it. Written under this G's AllGs stripe lock, plain.
         */
        boolean allDetached;

        /**
         * The leak profile holds this G's scan bit and is clearing stale references to it (run-queue
         * slots, schedlinks). Written and read only by the profiling thread, plain.
         */
        boolean leakScan;

        /** The goroutine ended through runtime.Goexit. Same hand-off as panic. */
        boolean goexited;

        /** The panic that ended this goroutine, if any. Written by the G before it ends, read by its M. */
        Throwable panic;

        /**
         * The part of {@link G#monitorDepth} that is {@code Lock}s (lock/tryLock/lockInterruptibly call
         * sites minus unlock call sites, clamped at 0 on its own so that an unlock of a lock taken in
         * uninstrumented code cannot eat a monitor's count). Plain, own G.
         */
        int lockDepth;

        /**
         * The part of {@link G#monitorDepth} that holds the carrier's identity: running activations
         * of instrumented methods that call {@code LockSupport.park*} ({@link Poll#parkerEnter}) and
         * running instrumented calls of {@code ThreadLocal.get} ({@link Poll#threadLocalGet}), kept
         * apart from {@link #lockDepth} so that an unlock of an uncounted lock cannot eat it. Plain,
         * own G.
         */
        int parkerDepth;

        /**
         * The part of {@link G#monitorDepth} that is calls, from instrumented code, of JDK methods
         * that hold a lock while they run a callback ({@link Poll#jdkCallbackEnter}:
         * {@code ConcurrentHashMap.computeIfAbsent}, a {@code Collections.synchronizedList}'s
         * {@code forEach}, ...), kept apart from {@link #lockDepth} and {@link #parkerDepth} likewise.
         * Plain, own G.
         */
        int jdkLockDepth;

        /**
         * Instrumented class initialisers running on this G ({@link Poll#clinitEnter}); a class
         * initialiser pins the continuation and holds the class's init lock, so the G may neither be
         * preempted nor wait for a P while it runs. Plain, own G.
         */
        int clinitDepth;

        /**
         * A poll found this G in a syscall state inside a class initialiser and left it there rather
         * than wait for a P ({@link Poll}); the last {@link Poll#clinitExit} re-arms its carrier's
         * request so that the next poll outside the initialiser exits the syscall. Plain, own G.
         */
        boolean syscallExitDeferred;

        /**
         * The goroutine's Java interrupt status while it is not mounted: its M takes the carrier's
         * status here when the continuation yields and gives it back at the next mount
         * ({@link M}'s run), so that an interrupt a goroutine set on itself (the
         * {@code Thread.currentThread().interrupt()} idiom) stays its own, as a virtual thread's
         * does, instead of reaching the next goroutine on that carrier. Written and read by the G's
         * M between mounts, plain (the continuation's mount orders it).
         */
        boolean interrupted;

        /** time.Sleep's timer, kept for the next sleep; written and read by the G itself, plain. Go: g.timer. */
        Object timer;

        /**
         * Locked to an M (LockOSThread). Written by the G's own M, plain; read by the M that dequeues
         * the G (after the queue's hand-off) and racily by dumps. Go: g.lockedm.
         */
        M lockedm;
        /**
         * LockOSThread nesting: {@code lockedExt} counts the user's calls (Go.lockOSThread), {@code
         * lockedInt} the runtime's own (a pinned G waiting for a P on its carrier). Go keeps both on the
         * M; a locked G and its M are 1:1, so here they live on the G. Own G/M only, plain.
         */
        int lockedExt, lockedInt;

        /**
         * This goroutine's {@code Thread.threadLocals} and {@code Thread.inheritableThreadLocals} maps
         * ({@code ThreadLocal.ThreadLocalMap}, or null: none yet) under goroutine-scoped ThreadLocals
         * ({@link GoroutineLocals}): installed in its carrier while the continuation is mounted and taken
         * back when it yields, by the M that runs it ({@link M}'s run; plain: an M mounts a G only after
         * the run-queue publication or the goready that handed it over, which orders the last M's
         * writes); the inheritable one is first written by the creator before the G is published
         * (newproc). Cleared when the G ends (goexit0), so that a dead G held on to (a leak profile, a
         * user's reference) keeps no values alive.
         */
        Object threadLocals, inheritableThreadLocals;

        /**
         * The synctest bubble this G belongs to, or null (Go: g.bubble). Written by the creator before
         * the G is published (newproc inherits the creator's), or by the root on itself for the length
         * of a Test; plain: the run-queue publication orders it for everyone else.
         */
        Bubble bubble;

        /**
         * The trace buffer that recorded this G's latest event ({@code dev.gort.runtime.trace.Tracer}'s
         * stamp reuse; only a traced goroutine has one, issue 19): written plainly by whichever M (or
         * foreign thread) records an event about the G, when it is not that buffer already; read
         * plainly by the next one. Consecutive events of a G are recorded by threads that hand the G
         * over through its status CAS, a run queue CAS or a lock (sched.lock, a channel's), which
         * orders these accesses: the next recorder reads what the previous one wrote.
         */
        Object traceBuf;

        /**
         * nanotime of the G's latest park while JFR recorded gort.Unblock (0: none), the start of
         * the Unblock event's blockedNanos: written by the parking M before the G can be found
         * (the park's hook), read and cleared by the waker's unblock hook, which runs before the
         * G can run again (after the ready's CAS but before the run-queue put that publishes it,
         * or, for a G parked in place, before the CAS). Only a G parked under such a recording
         * has one ({@link G#waitsince} no longer holds the wait's start once the ready's CAS has
         * run). A G parked under one recording and woken while none runs keeps it, so that an
         * Unblock of a later wait that began with no recording running over-states that wait (the
         * event's field then counts from the earlier park). Plain.
         */
        long jfrParkNanos;

        /**
         * The carrier this G is blocked on while parked "in place" (it could not yield: pinned, or
         * holding a Java monitor); null otherwise. Set by the parking G before its release CAS to
         * _Gwaiting; read by the waker (ready, or a netpoll that returned the G) before its CAS to
         * _Grunnable; cleared by that waker once casgstatus has returned, which is the hand-over the
         * carrier's park loop waits for (Syscalls.parkInPlace), or by the G itself when its park is
         * cancelled. Volatile.
         */
        volatile M parkedOn;

        /** Last pinned reason seen by this G's continuation ({@link G#onPinned}); written on the carrier, plain. */
        Continuation.Pinned pinnedReason;

        /**
         * The invocation ({@link M#nextFrameToken}) of the instrumented method whose stack the last
         * lock-frame look before a JDK socket wait found clean ({@code Poll.awaitReadable}): the
         * frames below a live invocation do not change, so its next waits need no look. 0: none.
         * Plain, own G. Here, not on G: a goroutine that waited for a JDK socket gets a Rare (one
         * more object per connection goroutine), where a field on G would cost every G 8 bytes.
         */
        long cleanWaitFrame;
    }

    /** This G's rarely used fields, allocated on first use. */
    Rare rare() {
        Rare r = rare;
        return r != null ? r : installRare();
    }

    private Rare installRare() {
        Rare r = new Rare();
        Rare won = (Rare) RARE.compareAndExchange(this, (Rare) null, r);
        return won != null ? won : r;
    }

    /** The rarely used fields, or null if none was ever written (readers: null means all zero). */
    Rare rareOrNull() {
        return rare;
    }

    /** {@link Rare#lockedm}. */
    M lockedm() {
        Rare r = rare;
        return r == null ? null : r.lockedm;
    }

    /** Sets {@link Rare#lockedm}; clearing it on a G that has none allocates nothing. */
    void setLockedm(M mp) {
        if (mp != null || rare != null) {
            rare().lockedm = mp;
        }
    }

    /** {@link Rare#lockedExt}. */
    int lockedExt() {
        Rare r = rare;
        return r == null ? 0 : r.lockedExt;
    }

    /** {@link Rare#lockedInt}. */
    int lockedInt() {
        Rare r = rare;
        return r == null ? 0 : r.lockedInt;
    }

    /** {@link Rare#lockDepth}. */
    int lockDepth() {
        Rare r = rare;
        return r == null ? 0 : r.lockDepth;
    }

    /** {@link Rare#parkerDepth}. */
    int parkerDepth() {
        Rare r = rare;
        return r == null ? 0 : r.parkerDepth;
    }

    /** {@link Rare#jdkLockDepth}. */
    int jdkLockDepth() {
        Rare r = rare;
        return r == null ? 0 : r.jdkLockDepth;
    }

    /** {@link Rare#clinitDepth}. */
    int clinitDepth() {
        Rare r = rare;
        return r == null ? 0 : r.clinitDepth;
    }

    /** {@link Rare#panic}. */
    Throwable panic() {
        Rare r = rare;
        return r == null ? null : r.panic;
    }

    /** {@link Rare#goexited}. */
    boolean goexited() {
        Rare r = rare;
        return r != null && r.goexited;
    }

    /** {@link Rare#allDetached}. */
    boolean allDetached() {
        Rare r = rare;
        return r != null && r.allDetached;
    }

    /** {@link Rare#leakScan}. */
    boolean leakScan() {
        Rare r = rare;
        return r != null && r.leakScan;
    }

    /** {@link Rare#pinnedReason}. */
    Continuation.Pinned pinnedReason() {
        Rare r = rare;
        return r == null ? null : r.pinnedReason;
    }

    /** {@link Rare#parkedOn}: the carrier this G is parked in place on, or null. */
    M parkedOn() {
        Rare r = rare;
        return r == null ? null : r.parkedOn;
    }

    /** Sets {@link Rare#parkedOn}; clearing it on a G that has none allocates nothing. */
    void setParkedOn(M mp) {
        if (mp != null || rare != null) {
            rare().parkedOn = mp;
        }
    }

    /** {@link Rare#jfrParkNanos}, or 0. For the tracer's JFR events; plain. */
    public long jfrParkNanos() {
        Rare r = rare;
        return r == null ? 0 : r.jfrParkNanos;
    }

    /** Sets {@link Rare#jfrParkNanos} (allocating the Rare). For the tracer's JFR events; plain. */
    public void setJfrParkNanos(long t) {
        rare().jfrParkNanos = t;
    }

    /**
     * {@link Rare#traceBuf}: the trace buffer that recorded this G's latest event, or null. For the
     * tracer ({@code dev.gort.runtime.trace}); plain.
     */
    public Object traceBuf() {
        Rare r = rare;
        return r == null ? null : r.traceBuf;
    }

    /** Sets {@link Rare#traceBuf} (the tracer's, plain: see there). */
    public void setTraceBuf(Object b) {
        if (b != null || rare != null) {
            rare().traceBuf = b;
        }
    }

    /**
     * The goroutine's function is the continuation's target: no wrapper frame of the runtime's lies
     * between the continuation's entry and the user's code, so none is frozen into a parked
     * goroutine's stack chunk ({@link #runCont} deals with how the function ends, on the M).
     */
    G(Scheduler sched, long goid, long parentGoid, StackTraceElement createdAt, Runnable fn) {
        super(SCOPE, fn);
        this.sched = sched;
        this.goid = goid;
        this.parentGoid = parentGoid;
        if (createdAt != null) {
            rare().createdAt = createdAt; // before the G is published, as the final fields
        }
        this.fn = fn;
        this.yieldReason = YIELD_NEW; // published with the status below
        // Go starts the sampling phase at random (newproc1: trackingSeq = uint8(cheaprand())) so
        // that goroutines that become runnable once are sampled too, one in 8: here a mix of the
        // goid (splitmix64's finaliser), as cheap and as uniform mod 8, without a generator.
        long z = (goid + 0x9E3779B97F4A7C15L) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        this.trackingSeq = (byte) (z ^ (z >>> 31));
        STATUS.setRelease(this, _Gidle);
    }

    /** Go: readgstatus. */
    public int readgstatus() {
        return atomicstatus & ~_Gscan;
    }

    /** The status with the scan bit (scheddetail prints {@code +0x1000} while a dump reads the stack). */
    int readgstatusRaw() {
        return atomicstatus;
    }

    /**
     * Go's _Gscan bit: set while a goroutine dump reads this G's parked continuation, so nobody can
     * mount it meanwhile (every status change spins in {@link #casgstatus} until it is cleared).
     */
    static final int _Gscan = 0x1000;

    /** Sets the scan bit if the G is parked (waiting, runnable or preempted). Go: castogscanstatus. */
    boolean castogscanstatus() {
        int s = atomicstatus;
        return (s == _Gwaiting || s == _Grunnable || s == _Gpreempted) && STATUS.compareAndSet(this, s, s | _Gscan);
    }

    /** Sets the scan bit only if the G is {@code _Gwaiting} (the leak profile's candidates). */
    boolean castogscanWaiting() {
        return atomicstatus == _Gwaiting && STATUS.compareAndSet(this, _Gwaiting, _Gwaiting | _Gscan);
    }

    /** Clears the scan bit. Go: casfrom_Gscanstatus. */
    void casfromgscanstatus() {
        int s = atomicstatus;
        if ((s & _Gscan) == 0 || !STATUS.compareAndSet(this, s, s & ~_Gscan)) {
            throw Fatal.fatal(sched, "casfrom_Gscanstatus: gp->status is not in scan state");
        }
    }

    /**
     * The only way a G's status changes: CAS {@code oldval -> newval}; an illegal transition or a
     * status that is not {@code oldval} is fatal, as in Go.
     *
     * <p>Go: proc.go casgstatus
     */
    void casgstatus(int oldval, int newval) {
        if (oldval == newval) {
            throw Fatal.fatal(sched, "casgstatus: bad incoming values: oldval=" + oldval + " newval=" + newval);
        }
        if (newval == _Grunnable) {
            // Go: casgstatus's scheduling-latency tracking, one transition in 8; the stamp
            // replaces the wait's (see waitsince)
            waitsince = (++trackingSeq & 7) == 0 ? System.nanoTime() : 0;
        } else if (oldval == _Grunnable && waitsince != 0) {
            // Go: the time spent runnable, recorded when the G runs; only a transition out of
            // runnable reads the stamp (a cancelled park goes from waiting to running with the
            // wait's stamp here)
            if (newval == _Grunning) {
                sched.stats.schedLatencies.record(System.nanoTime() - waitsince);
            }
            waitsince = 0;
        }
        // A bubble's accounting needs the wait reason of the wait being left or entered: read it
        // before the CAS, while the G cannot run (after it, a readied G may run and clear it). The
        // count itself comes after the CAS, as in Go, and before the G can run again: a yielded G
        // is queued only after this returns, and a G parked in place waits for its waker's
        // hand-over, which follows this call (Scheduler.ready; without it, SynctestParkInPlaceTest's
        // repeats saw "deadlock: all goroutines in bubble are blocked" while main ran).
        Bubble bubble = bubble();
        WaitReason bubbleReason = bubble != null ? waitReason() : null;
        while (!STATUS.compareAndSet(this, oldval, newval)) {
            int cur = atomicstatus;
            if (cur == (oldval | _Gscan) || cur == oldval) {
                // a goroutine dump is reading our stack, or has just finished (Go: loop while
                // gp->atomicstatus is in a scan state)
                Thread.onSpinWait();
                continue;
            }
            System.err.println("runtime: casgstatus: oldval=" + gstatusName(oldval) + " newval=" + gstatusName(newval)
                    + " goid=" + goid + " status=" + gstatusName(atomicstatus));
            throw Fatal.fatal(sched, "casgstatus: bad incoming values");
        }
        if (bubble != null) {
            java.util.function.ObjIntConsumer<G> hook = bubbleCasForTest;
            if (hook != null) {
                hook.accept(this, newval); // a test stands for a waker descheduled right here
            }
            bubble.changegstatus(this, oldval, newval, bubbleReason);
        }
    }

    /**
     * Run by casgstatus between the CAS of a bubble goroutine's status and the bubble's count of
     * it, with the G and its new status; null in production. Written by a test while only its own
     * goroutines run; read by casgstatus.
     */
    static volatile java.util.function.ObjIntConsumer<G> bubbleCasForTest;

    /** The synctest bubble of this goroutine, or null ({@link Rare#bubble}). Go: g.bubble. */
    Bubble bubble() {
        Rare r = rare;
        return r == null ? null : r.bubble;
    }

    /** Sets {@link Rare#bubble}; clearing it on a G that has none allocates nothing. */
    void setBubble(Bubble b) {
        if (b != null || rare != null) {
            rare().bubble = b;
        }
    }

    /**
     * The status, waiting out sysmon's scan bit: what code running on this G's carrier uses to
     * decide whether its M still holds a P ({@code _Grunning}) or not ({@code _Gsyscall}).
     */
    int readgstatusNoScan() {
        int s = atomicstatus;
        for (int i = 0; (s & _Gscan) != 0; i++) {
            if (i < 64) {
                Thread.onSpinWait();
            } else {
                Thread.yield();
            }
            s = atomicstatus;
        }
        return s;
    }

    /** Store-release of a status only its current holder may change (scan bit owner, syscall exit). */
    void setgstatusRelease(int newval) {
        STATUS.setRelease(this, newval);
    }

    /** Non-failing CAS, for the places Go also tries (e.g. syscall retake). */
    boolean tryCasgstatus(int oldval, int newval) {
        return STATUS.compareAndSet(this, oldval, newval);
    }

    /**
     * Go's g.preempt: whether this G, running on a carrier, owes a preemption (a request it has not
     * honoured). It lives in the carrier's request word ({@link Preempt}'s OWED bit): only the G on
     * the carrier can owe one. Any thread (racy, opaque).
     */
    boolean preemptRequestedOpaque() {
        M mp = m;
        return mp != null && mp.curg == this && Preempt.owedOpaque(mp);
    }

    /** select's wake-once guard. Go: g.selectDone.CompareAndSwap(false, true). */
    public boolean casSelectDone(boolean expect, boolean update) {
        return SELECT_DONE.compareAndSet(this, expect, update);
    }

    /** Go: g.selectDone.Store(v). */
    public void setSelectDone(boolean v) {
        selectDone = v;
    }

    /** Java monitors and counted locks this G holds now ({@link #monitorDepth}); plain, racy from another thread. */
    public int monitorDepth() {
        return monitorDepth;
    }

    /** Why the G waits ({@link WaitReason#ZERO} when it does not); volatile read. Go: gp.waitreason. */
    public WaitReason waitReason() {
        return WaitReason.of(waitreason);
    }

    /** Sets why the G waits: the G itself, a release store (see the field). */
    void setWaitreasonRelease(WaitReason r) {
        WAITREASON.setRelease(this, (byte) r.ordinal());
    }

    /** Sets what the G waits on: the G itself, a release store (see {@link #waitingOn}). */
    void setWaitingOnRelease(Object on) {
        WAITING_ON.setRelease(this, on);
    }

    /** g.m with a release store (see {@link #m}): the M that runs or ran this G, only. */
    void setMRelease(M mp) {
        M_.setRelease(this, mp);
    }

    /** {@link #waitReason()}'s ordinal, without the table look-up (the tracer's park record); volatile read. */
    public int waitReasonOrdinal() {
        return waitreason;
    }

    public Object waitingOn() {
        return waitingOn;
    }

    public long parentGoid() {
        return parentGoid;
    }

    public StackTraceElement createdAt() {
        Rare r = rare;
        return r == null ? null : r.createdAt;
    }

    /** The class of the function this goroutine runs. */
    public Class<?> startClass() {
        return fn.getClass();
    }

    /** The M running this G, or null (racy read). */
    public M m() {
        return m;
    }

    /** Next G in the queue or batch this G is linked into (read by its owner only). */
    public G schedlink() {
        return schedlink;
    }

    /**
     * nanotime when the G started waiting, 0 if it is not waiting or not stamped yet (racy: the
     * status and the stamp are read one after the other; see {@link #waitsince}).
     */
    public long waitSinceNanos() {
        return readgstatus() == _Gwaiting ? waitsince : 0;
    }

    /** The runtime this goroutine belongs to. */
    public Scheduler scheduler() {
        return sched;
    }

    /** Stack of a parked continuation (empty while it runs on an M). */
    StackTraceElement[] stackTrace() {
        try {
            return getStackTrace();
        } catch (Throwable t) {
            return new StackTraceElement[0];
        }
    }

    static String gstatusName(int s) {
        return switch (s) {
            case _Gidle -> "idle";
            case _Grunnable -> "runnable";
            case _Grunning -> "running";
            case _Gsyscall -> "syscall";
            case _Gwaiting -> "waiting";
            case _Gdead -> "dead";
            case _Gpreempted -> "preempted";
            case _Gscanrunning -> "scanrunning";
            default -> "unknown(" + s + ")";
        };
    }

    @Override
    public String toString() {
        return "G" + goid;
    }

    /** What a parking goroutine runs on its M after it has yielded (Go's unlockf on g0). */
    @FunctionalInterface
    public interface ParkUnlock<L> {
        /** Return false to cancel the park: the G runs again at once (inheriting its slice). */
        boolean unlock(G gp, L lock);
    }

    /**
     * The continuation refused a yield (a native frame, a critical section): records why, instead of
     * throwing (the JDK default). On the carrier, inside the refused yield, so this G is its M's
     * curg.
     */
    @Override
    protected void onPinned(Continuation.Pinned reason) {
        rare().pinnedReason = reason;
        sched.stats.pinnedYields.incrementAndGet();
    }

    /**
     * Mounts this G's continuation on the calling M until it yields or its function ends. What the
     * function throws leaves the continuation (the JDK unmounts it, done) and ends the goroutine
     * here, on the M: runtime.Goexit ends it normally, a fatal error goes on dying, anything else is
     * its panic (read by goexit0/gdestroy). A wrapper frame inside the continuation would do the
     * same, but every parked goroutine's frozen stack would carry it. After an end the yield reason
     * is {@link #YIELD_GOEXIT}: off its carrier from here on, the M's goexit0 (see YIELD_NONE); a
     * yield has always set its own reason first.
     *
     * <p>Go: proc.go goexit1 (where a goroutine's function returns to) and gopanic's end
     */
    void runCont() {
        try {
            run();
        } catch (GortFatalError e) {
            yieldReason = YIELD_GOEXIT;
            throw e; // the runtime is dying; not this goroutine's panic
        } catch (Goexit e) {
            yieldReason = YIELD_GOEXIT;
            rare().goexited = true; // runtime.Goexit: the goroutine ends normally
        } catch (Throwable t) {
            yieldReason = YIELD_GOEXIT;
            rare().panic = t;
            sched.panicking.incrementAndGet(); // before this G leaves _Grunning (main's end waits: gdestroy)
        }
        if (yieldReason == YIELD_NONE && isDone()) {
            yieldReason = YIELD_GOEXIT; // the function returned
        }
    }

    /**
     * Thrown by {@code Goexit} to unwind a goroutine; never escapes the goroutine. An {@link Error}
     * (as {@code ThreadDeath} was), so that the handlers programs write for failures ({@code catch
     * (Exception)}) let it pass, as Go's recover does; only a {@code catch (Throwable)} or
     * {@code catch (Error)} that does not rethrow stops it.
     */
    static final class Goexit extends Error {
        static final Goexit INSTANCE = new Goexit();

        private Goexit() {
            super("runtime.Goexit", null, false, false);
        }
    }
}
