package dev.gort.runtime;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A P: the licence to run Go code, with its local run queue. There are exactly GOMAXPROCS Ps.
 *
 * <p>Go: runtime2.go type p
 */
public sealed class P extends CacheLinePad permits P.Padded {
    /*
     * Status transitions. "gort" marks an edge Go does not have.
     *
     *   _Pgcstop   -> _Pidle        procresize (world stopped, sched.lock): then pidleput, or handed
     *                               to an M with its run queue (startTheWorld)
     *   _Pgcstop   -> _Prunning     procresize: the stop-the-world initiator keeps its P
     *   _Pidle     -> _Prunning     acquirep (the M that took it off the idle list or was handed it)
     *   _Prunning  -> _Pidle        releasep (its M)
     *                               retakeBlocked (gort: sysmon, for a carrier blocked in user code,
     *                               after the G's scan-bit CAS has frozen that carrier's status changes)
     *   _Prunning  -> _Pidle        Go 1.26+: a thief holding the scan bit of the P's G in _Gsyscall
     *                               (setBlockOnExitSyscall + takeP: sysmon's retake, another syscall's
     *                               exit taking its old P back); the P stays _Prunning with its M for
     *                               the whole syscall until then
     *   _Prunning  -> _Pgcstop      Go 1.26+: stopTheWorld the same way (gcstopP), and
     *                               entersyscallHandleGCWait (its M, before the G is _Gsyscall)
     *   _Prunning  -> _Psyscall     Go 1.25 model only (GODEBUG=psyscall=1): entersyscall (its M; a
     *                               volatile store, the Dekker half against stopTheWorld's gcwaiting)
     *   _Prunning  -> _Pgcstop      gcstopm (its M), stopTheWorld (the initiator's own P)
     *   _Psyscall  -> _Prunning     (1.25) exitsyscallfast (the old M, CAS)
     *   _Psyscall  -> _Pidle        sysmon's retake (CAS), then handoffp
     *   _Psyscall  -> _Pgcstop      stopTheWorld, entersyscall_gcwait (CAS)
     *   _Pidle     -> _Pgcstop      stopTheWorld (off the idle list, sched.lock); handoffp while
     *                               gcwaiting (a released P nobody else owns)
     *   _Pgcstop   -> _Pdead        procresize's destroyP (world stopped: GOMAXPROCS shrank)
     *   _Pdead     -> _Pgcstop      procresize (GOMAXPROCS grew again)
     *
     * Go 1.25: whoever wins a CAS out of _Psyscall owns the P; no other status is changed by a CAS.
     * Go 1.26+: whoever holds the scan bit of the P's G in _Gsyscall may take the P (Go: "a P is
     * identified as 'in a system call' by looking at the goroutine's state").
     */

    /**
     * Not used to run user code or the scheduler: typically on the idle list, but may be between
     * other states. Owned by the idle list or by whoever is changing its status. Its run queue is
     * empty.
     */
    static final int _Pidle = 0;
    /**
     * Owned by an M and used to run user code or the scheduler, or (Go 1.26+) held by an M whose G is
     * in a syscall. Only the owning M changes it (to _Pidle, _Psyscall or _Pgcstop, or hands the P
     * directly to another M, startlockedm); the exceptions are a thief holding the scan bit of the
     * P's G in _Gsyscall (Go 1.26+) and gort's blocked-carrier retake (see the table).
     */
    static final int _Prunning = 1;
    /**
     * Not running user code: affinity to an M in a syscall (m.oldp), not owned by it; may be taken by
     * sysmon's retake or a stop-the-world (CAS). Go: _Psyscall (Go 1.25's model, GODEBUG=psyscall=1;
     * Go 1.26+ calls it _Psyscall_unused and never uses it).
     */
    static final int _Psyscall = 2;
    /**
     * Halted for a stop-the-world, owned by the M that stopped the world (which keeps using its own
     * P in this status). Keeps its run queue: startTheWorld restarts Ps with work.
     */
    static final int _Pgcstop = 3;
    /** Beyond GOMAXPROCS: no longer used, stripped of its Gs and timers (destroyP); reused if GOMAXPROCS grows. */
    static final int _Pdead = 4;

    private static final VarHandle STATUS;
    private static final VarHandle SCHEDTICK;
    private static final VarHandle SYSCALLTICK;
    private static final VarHandle M_;
    private static final VarHandle IDLE;
    private static final VarHandle CREATED;
    private static final VarHandle PREEMPT;
    private static final VarHandle LOCK_HOLDERS_WAITING;

    static {
        try {
            MethodHandles.Lookup l = MethodHandles.lookup();
            STATUS = l.findVarHandle(P.class, "status", int.class);
            SCHEDTICK = l.findVarHandle(P.class, "schedtick", int.class);
            SYSCALLTICK = l.findVarHandle(P.class, "syscalltick", int.class);
            M_ = l.findVarHandle(P.class, "m", M.class);
            IDLE = l.findVarHandle(P.class, "idle", boolean.class);
            CREATED = l.findVarHandle(P.class, "goroutinesCreated", long.class);
            PREEMPT = l.findVarHandle(P.class, "preempt", boolean.class);
            LOCK_HOLDERS_WAITING = l.findVarHandle(P.class, "lockHoldersWaiting", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /**
     * Goroutine ids this P hands out before it takes the next batch from {@code sched.goidgen} (the
     * rest of the aligned block of {@link Sched#GOID_CACHE_BATCH} that the next id falls in):
     * {@code [goidcache, goidcacheend)}. Written and read by the M that owns this P, plain (a new
     * owner sees them through the acquirep that gave it the P). Go: p.goidcache, p.goidcacheend.
     */
    long goidcache, goidcacheend;

    /** The owning M only: the next id of this P's cache, refilled from {@code goidgen} when empty. */
    long nextGoid(AtomicLong goidgen) {
        if (goidcache == goidcacheend) {
            refillGoidcache(goidgen); // out of line: once per block, and newproc inlines the rest
        }
        return goidcache++;
    }

    /** Go: proc.go newproc1 (its goidcache refill; Go's batch is 16 ids wherever goidgen stands). */
    private void refillGoidcache(AtomicLong goidgen) {
        // goidgen is the last id handed out: this batch is the rest of the aligned block of
        // GOID_CACHE_BATCH ids that the next one falls in, [goidgen + 1, end of that block]
        long last = goidgen.getAndUpdate(P::lastOfBlock);
        goidcache = last + 1;
        goidcacheend = lastOfBlock(last) + 1;
    }

    /** The last id of the aligned block of {@link Sched#GOID_CACHE_BATCH} ids that {@code last + 1} is in. */
    private static long lastOfBlock(long last) {
        return (last + 1) | (Sched.GOID_CACHE_BATCH - 1);
    }

    /**
     * Goroutines created on this P (newproc with this P): incremented by the owning M (setOpaque),
     * read racily by {@link Scheduler#goroutinesCreated()} (getOpaque); folded into {@code
     * stats.goroutinesCreated} when procresize destroys the P. Go: p.goroutinesCreated.
     */
    @SuppressWarnings("unused")
    private long goroutinesCreated;

    long goroutinesCreatedOpaque() {
        return (long) CREATED.getOpaque(this);
    }

    /** The owning M only. */
    void incGoroutinesCreatedOpaque() {
        CREATED.setOpaque(this, (long) CREATED.get(this) + 1);
    }

    /** World only, with the world stopped: takes this P's count for the runtime-wide one. */
    long takeGoroutinesCreated() {
        long n = (long) CREATED.get(this);
        CREATED.setOpaque(this, 0L);
        return n;
    }

    /** Debug (SchedCounts.ON only): when pidleput listed it; written and read under sched.lock. */
    long idleSinceDebug;

    /** Immutable: index in allp. */
    public final int id;
    /** Immutable. */
    final Scheduler sched;
    /** Immutable: runnext + the ring. */
    public final RunQueue runq;

    /**
     * Volatile. Written by the owning M (acquirep, releasep, entersyscall, gcstopm), by CAS out of
     * _Psyscall (the old M's exitsyscallfast, sysmon's retake, stopTheWorld, entersyscall_gcwait), by
     * sysmon's retakeBlocked (a plain volatile store, see the table above) and, with the world
     * stopped, by World; read anywhere.
     */
    @SuppressWarnings("unused")
    private volatile int status;

    /** Incremented by the owning M on every non-inherited execute (setOpaque); sysmon reads getOpaque. */
    @SuppressWarnings("unused")
    private int schedtick;
    /** Incremented on every syscall exit by the owning M (setOpaque); sysmon reads getOpaque. */
    @SuppressWarnings("unused")
    private int syscalltick;

    /**
     * The M holding this P (setOpaque/getOpaque): written by the M taking or leaving it (acquirep,
     * releasep, entersyscall), by sysmon's retakeBlocked, and by World with the world stopped; read
     * racily by sysmon and observers. The status word, not this field, is what threads
     * synchronise on.
     */
    @SuppressWarnings("unused")
    private M m;

    /**
     * Link in the idle-P list (under sched.lock), or in procresize's list of Ps with work, which
     * startTheWorld then walks outside the lock as its only owner; plain. Go: p.link.
     */
    P link;

    /** This P's bit of idlepMask: written under sched.lock (setOpaque), read by thieves (getOpaque). */
    @SuppressWarnings("unused")
    private boolean idle;

    /**
     * Go's p.preempt: sysmon's mark that this P's slice ran out, answered by its G's syscall exit on
     * this P. Written by {@link Preempt} (preemptone, markSyscall: sysmon / stop-the-world, any
     * thread; volatile stores, so that markSyscall's re-read of the tick follows its store) and
     * cleared by the owner M at the top of schedule with a release store ({@link #setPreemptRelease}:
     * no fence of its own; the tick increment that markSyscall pairs the clear with comes after
     * execute's status CAS, a full fence, in the M's program order); read volatile.
     */
    volatile boolean preempt;

    /**
     * How many goroutines holding a Java lock wait at the global queue's head for this P
     * ({@link Preempt#boostLockHolder}): each of this P's next findRunnables takes the global
     * queue's head before its own queue, one per holder, so that a second holder that asks while
     * the first is still on its way to this P (or runs on it) gets the P when the first leaves it,
     * not after the goroutines queued here. Added to (getAndAdd) by a holder's carrier, any thread,
     * under sched.lock; taken one at a time (getAndAdd, without the lock) by the M that owns the P
     * at the top of its findRunnable: only the owner subtracts, so the count never goes below 0,
     * and the read-modify-writes, volatile, order the holder's global queue put before the owner's
     * look at the queue. Read (getOpaque) by the owner, where a stale 0 costs one look at its own
     * queue first, and by boostLockHolder. A holder another M took first leaves a count that costs
     * one early look at the global queue. gort only.
     */
    @SuppressWarnings("unused")
    private int lockHoldersWaiting;

    // ---- sysmon's view of this P (sysmon thread only, plain). Go: sysmontick ----
    int sysmonSchedtick;
    long sysmonSchedwhen;
    int sysmonSyscalltick;
    long sysmonSyscallwhen;
    /** Retake.retakeBlocked's first sighting of a blocked carrier: the G, its slice, when. */
    G sysmonBlockedG;

    int sysmonBlockedTick;
    long sysmonBlockedWhen;
    /** When retakeBlocked last sampled that carrier's stack (0: not yet), and the verdict. */
    long sysmonBlockedChecked;

    boolean sysmonBlockedInRuntime;
    /** The sighting above was of a carrier RUNNABLE but asleep in the kernel (else: blocked in the JVM). */
    boolean sysmonBlockedViaKernel;
    /**
     * When retakeBlocked last looked at the CPU time of this P's RUNNABLE carrier past its time
     * slice (0: no look in progress; reset when the carrier is seen in a time slice, or not
     * RUNNABLE and not blocked), and that CPU time.
     */
    long sysmonSleepChecked;

    long sysmonSleepCpu;

    /** Immutable: this P's timer heap (its own monitor guards it). Go: p.timers. */
    final TimerHeap timers = new TimerHeap(this);

    // ---- statistics: plain ++, read racily by observers (a racing increment may be lost) ----
    // steals, gsRun: the owning M. stolenFrom: the thief's M (several thieves may race).
    long steals, stolenFrom, gsRun;

    /**
     * The P the runtime makes (procresize): 64 bytes after P's fields, so that no object after it
     * in the heap shares a line with them ({@link CacheLinePad}).
     */
    static final class Padded extends P {
        long q00, q01, q02, q03, q04, q05, q06, q07;

        Padded(Scheduler sched, int id, int runqSize) {
            super(sched, id, runqSize);
        }
    }

    P(Scheduler sched, int id, int runqSize) {
        this.sched = sched;
        this.id = id;
        this.runq = new RunQueue.Padded(runqSize, this, sched.sched.runq);
        STATUS.setVolatile(this, _Pgcstop);
    }

    public int status() {
        return status;
    }

    void setStatus(int s) {
        status = s;
    }

    boolean casStatus(int from, int to) {
        return STATUS.compareAndSet(this, from, to);
    }

    public int schedtickOpaque() {
        return (int) SCHEDTICK.getOpaque(this);
    }

    /** p.preempt with a release store (see {@link #preempt}): the owner M's clear. */
    void setPreemptRelease(boolean v) {
        PREEMPT.setRelease(this, v);
    }

    void incSchedtickOpaque() {
        SCHEDTICK.setOpaque(this, (int) SCHEDTICK.get(this) + 1);
    }

    int syscalltickOpaque() {
        return (int) SYSCALLTICK.getOpaque(this);
    }

    void incSyscalltickOpaque() {
        SYSCALLTICK.setOpaque(this, (int) SYSCALLTICK.getOpaque(this) + 1);
    }

    int lockHoldersWaitingOpaque() {
        return (int) LOCK_HOLDERS_WAITING.getOpaque(this);
    }

    /** A lock holder waits for this P ({@link #lockHoldersWaiting}). sched.lock held. */
    void addLockHolderWaiting() {
        LOCK_HOLDERS_WAITING.getAndAdd(this, 1);
    }

    /**
     * The owner M, at the top of findRunnable: takes one waiting lock holder's claim if there is
     * one ({@link #lockHoldersWaiting}). Returns whether it took one.
     */
    boolean takeLockHolderWaiting() {
        if ((int) LOCK_HOLDERS_WAITING.getOpaque(this) == 0) {
            return false;
        }
        LOCK_HOLDERS_WAITING.getAndAdd(this, -1);
        return true;
    }

    public M mOpaque() {
        return (M) M_.getOpaque(this);
    }

    void setMOpaque(M mp) {
        M_.setOpaque(this, mp);
    }

    boolean idleOpaque() {
        return (boolean) IDLE.getOpaque(this);
    }

    void setIdleOpaque(boolean v) {
        IDLE.setOpaque(this, v);
    }

    long steals() {
        return steals;
    }

    long gsRun() {
        return gsRun;
    }

    static String statusName(int s) {
        return switch (s) {
            case _Pidle -> "idle";
            case _Prunning -> "running";
            case _Psyscall -> "syscall";
            case _Pgcstop -> "gcstop";
            case _Pdead -> "dead";
            default -> "?";
        };
    }

    @Override
    public String toString() {
        return "P" + id;
    }
}
