package dev.gort.runtime;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * A P: the licence to run Go code, with its local run queue. There are exactly GOMAXPROCS Ps.
 *
 * <p>Go: runtime2.go type p
 */
public final class P {
    public static final int _Pidle = 0;
    public static final int _Prunning = 1;
    public static final int _Psyscall = 2;
    public static final int _Pgcstop = 3;
    public static final int _Pdead = 4;

    private static final VarHandle STATUS;
    private static final VarHandle SCHEDTICK;
    private static final VarHandle SYSCALLTICK;
    private static final VarHandle M_;
    private static final VarHandle IDLE;

    static {
        try {
            MethodHandles.Lookup l = MethodHandles.lookup();
            STATUS = l.findVarHandle(P.class, "status", int.class);
            SCHEDTICK = l.findVarHandle(P.class, "schedtick", int.class);
            SYSCALLTICK = l.findVarHandle(P.class, "syscalltick", int.class);
            M_ = l.findVarHandle(P.class, "m", M.class);
            IDLE = l.findVarHandle(P.class, "idle", boolean.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** Immutable: index in allp. */
    public final int id;
    /** Immutable. */
    final Scheduler sched;
    /** Immutable: runnext + the ring. */
    public final RunQueue runq;

    /** Any thread CAS (syscall retake), otherwise written by the owning M; volatile. */
    @SuppressWarnings("unused")
    private volatile int status;

    /** Incremented by the owning M on every non-inherited execute (setOpaque); sysmon reads getOpaque. */
    @SuppressWarnings("unused")
    private int schedtick;
    /** Incremented on every syscall exit by the owning M (setOpaque); sysmon reads getOpaque. */
    @SuppressWarnings("unused")
    private int syscalltick;

    /** The M holding this P: written by that M in acquirep/releasep (setOpaque), read by sysmon (getOpaque). */
    @SuppressWarnings("unused")
    private M m;

    /** Link in the idle-P list: under sched.lock, plain. Go: p.link. */
    P link;

    /** This P's bit of idlepMask: written under sched.lock (setOpaque), read by thieves (getOpaque). */
    @SuppressWarnings("unused")
    private boolean idle;

    /**
     * Go's p.preempt: sysmon's mark that this P's slice ran out, answered by its G's syscall exit on
     * this P. Written by {@link Preempt} (preemptone, markSyscall: sysmon / stop-the-world, any
     * thread) and cleared by the owner M at the top of schedule; volatile.
     */
    volatile boolean preempt;

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

    /** Immutable: this P's timer heap (its own monitor guards it). Go: p.timers. */
    final TimerHeap timers = new TimerHeap(this);

    // ---- statistics (owner M writes plain; racy reads for observers) ----
    long steals, stolenFrom, gsRun;

    P(Scheduler sched, int id, int runqSize) {
        this.sched = sched;
        this.id = id;
        this.runq = new RunQueue(runqSize, this, sched.sched.runq);
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

    public int schedtick() {
        return (int) SCHEDTICK.getOpaque(this);
    }

    void incSchedtick() {
        SCHEDTICK.setOpaque(this, (int) SCHEDTICK.get(this) + 1);
    }

    public int syscalltick() {
        return (int) SYSCALLTICK.getOpaque(this);
    }

    void incSyscalltick() {
        SYSCALLTICK.setOpaque(this, (int) SYSCALLTICK.getOpaque(this) + 1);
    }

    public M m() {
        return (M) M_.getOpaque(this);
    }

    void setM(M mp) {
        M_.setOpaque(this, mp);
    }

    boolean idle() {
        return (boolean) IDLE.getOpaque(this);
    }

    void setIdle(boolean v) {
        IDLE.setOpaque(this, v);
    }

    public long steals() {
        return steals;
    }

    public long gsRun() {
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
