package dev.gort.runtime;

/**
 * sysmon's retake of Ps whose M is stuck: Go 1.25's branch for Ps in a syscall, and gort's own
 * branch for carriers blocked in user code that nobody wrapped in a syscall. Runs on the sysmon
 * thread only (the {@code P.sysmon*} fields are sysmon's, plain); the time-slice check and
 * preemption are Sysmon's.
 *
 * <h2>Blocked carriers (no Go equivalent: Go knows every blocking call)</h2>
 * A goroutine calling {@code Thread.sleep}, {@code LockSupport.park}, {@code Object.wait}, a
 * {@code BlockingQueue.take}, {@code Future.get} or entering a contended {@code synchronized} blocks
 * its carrier while its P still looks {@code _Prunning}. sysmon notices that the carrier's
 * {@link Thread#getState()} is BLOCKED, WAITING or TIMED_WAITING (a volatile read, a few ns) with the
 * same G on it and the P's schedtick unchanged, at two sysmon ticks in a row, and then retakes the P
 * as if the G had entered a syscall at the start of its block:
 * <ol>
 *   <li>CAS the G {@code _Grunning -> _Gscanrunning}. From now on the G's own carrier cannot change
 *       its status (every transition waits for the scan bit, {@code casgstatus}), and runtime code
 *       on that carrier that uses the P ({@code ready}, {@code newproc}) first reads the status,
 *       also waiting for the bit ({@link Syscalls#pForRuntime}).
 *   <li>Re-check, after that CAS (a full fence): same M on the P, same G, same schedtick,
 *       {@code m.locks == 0} (the carrier is not blocked inside runtime code that holds the P, e.g.
 *       on {@code sched.lock} in runqputslow), and the carrier still blocked. If the carrier woke up
 *       meanwhile its state is RUNNABLE again and we let go ({@code _Grunning}).
 *       Why this is enough: a carrier that returns from a JVM block writes its RUNNABLE state and
 *       then passes a full fence before it runs Java code again, and its next status read comes
 *       after that; so either we see RUNNABLE and let go, or it sees our scan bit and waits.
 *   <li>Do what {@code entersyscall} would have done (m.p = nil, m.oldp = nil, p.m = nil), put the
 *       P {@code _Pidle} (nobody else writes a running P's status), bump its syscalltick, publish
 *       the G as {@code _Gsyscall} (release), raise the carrier's preemption flag (its next poll
 *       notices), and {@code handoffp}.
 * </ol>
 * The goroutine notices at its next gort call ({@code gopark}, {@code Gosched}, a preemption poll, a
 * {@code Syscall.block}: they call {@code exitsyscall}), or when it leaves its carrier (the M loop
 * calls exitsyscall for it); {@code ready}/{@code newproc} from such a G use the global queue.
 *
 * <p><b>Not detected</b>: blocking that leaves the thread RUNNABLE: socket and file I/O in native
 * code (java.io / NIO blocking reads and writes, {@code FileChannel}), JNI calls, busy-waiting, and a
 * GC pause. Wrap such calls in {@code Syscall.block}. Also not retaken: a carrier blocked inside
 * gort's own code with {@code m.locks != 0} (short by construction).
 *
 * <p>Go: proc.go retake
 */
public final class Retake {
    /** Go: the 10 ms after which a syscall P is retaken even when there is nothing else to run. */
    static final long SYSCALL_RETAKE_NS = 10_000_000L;

    private Retake() {}

    /**
     * One pass over allp for the syscall and blocked-carrier branches (Sysmon runs the time-slice
     * branch itself). Returns the number of Ps retaken, which drives sysmon's back-off.
     */
    public static int retake(Scheduler s, long now) {
        int n = 0;
        for (P pp : s.allp) {
            int st = pp.status();
            if (st == P._Psyscall) {
                if (retakeSyscall(s, pp, now, false)) {
                    n++;
                }
            } else if (st == P._Prunning) {
                if (retakeBlocked(s, pp, now)) {
                    n++;
                }
            } else {
                pp.sysmonBlockedG = null;
            }
        }
        return n;
    }

    /**
     * Go 1.25's retake for one P seen in {@code _Psyscall}. {@code sysretake}: its time slice ran
     * out (preemptone cannot reach a G in a syscall), so take it now. A P is otherwise taken only
     * once it has been seen in the same syscall at two sysmon ticks, and not at all while it has no
     * local work, other Ps or spinning Ms could take new work, and it has been in the syscall for
     * less than 10 ms.
     *
     * <p>Go: proc.go retake (the {@code s == _Psyscall} branch)
     */
    public static boolean retakeSyscall(Scheduler s, P pp, long now, boolean sysretake) {
        pp.sysmonBlockedG = null;
        int t = pp.syscalltick();
        if (!sysretake && pp.sysmonSyscalltick != t) {
            pp.sysmonSyscalltick = t;
            pp.sysmonSyscallwhen = now;
            return false;
        }
        // On the one hand we don't want to retake Ps if there is no other work to do, but on the
        // other hand we want to retake them eventually because they can prevent the sysmon
        // thread from deep sleep.
        if (pp.runq.runqempty() && s.sched.nmspinning.get() + s.sched.npidle.get() > 0
                && pp.sysmonSyscallwhen + SYSCALL_RETAKE_NS > now) {
            return false;
        }
        // Need to decrement number of idle locked M's (pretending that one more is running) before
        // the CAS. Otherwise the M from which we retake can exit the syscall, increment nmidle and
        // report deadlock.
        s.incidlelocked(-1);
        boolean took = false;
        if (pp.casStatus(P._Psyscall, P._Pidle)) {
            pp.incSyscalltick();
            s.syscallStats.retakes.incrementAndGet();
            s.handoffp(pp);
            took = true;
        }
        s.incidlelocked(1);
        return took;
    }

    /**
     * The blocked-carrier branch for one P seen {@code _Prunning}: see the class comment. Returns
     * true if the P was retaken.
     */
    public static boolean retakeBlocked(Scheduler s, P pp, long now) {
        M mp = pp.m();
        G gp = mp == null ? null : mp.curg;
        if (gp == null || gp.m != mp || mp.locks != 0 || gp.readgstatus() != G._Grunning
                || !carrierBlocked(mp)) {
            pp.sysmonBlockedG = null;
            return false;
        }
        int tick = pp.schedtick();
        if (pp.sysmonBlockedG != gp || pp.sysmonBlockedTick != tick) {
            // First sighting: a block must last at least one sysmon tick to count.
            pp.sysmonBlockedG = gp;
            pp.sysmonBlockedTick = tick;
            pp.sysmonBlockedWhen = now;
            return false;
        }
        // As for a syscall, leave it if there is nothing else to do and capacity exists elsewhere,
        // for up to 10 ms; never while the world is being stopped (the P would never stop).
        if (!s.sched.gcwaiting && pp.runq.runqempty() && s.sched.nmspinning.get() + s.sched.npidle.get() > 0
                && pp.sysmonBlockedWhen + SYSCALL_RETAKE_NS > now) {
            return false;
        }
        if (!gp.tryCasgstatus(G._Grunning, G._Gscanrunning)) {
            return false;
        }
        // The scan bit is ours: the carrier cannot change the G's status now. Re-check everything.
        if (mp.curg != gp || pp.m() != mp || mp.p != pp || pp.status() != P._Prunning || mp.locks != 0
                || pp.schedtick() != tick || !carrierBlocked(mp)) {
            gp.setgstatusRelease(G._Grunning);
            s.syscallStats.blockedAborts.incrementAndGet();
            pp.sysmonBlockedG = null;
            return false;
        }
        // Enter a syscall on the M's behalf (Go: reentersyscall), and retake its P at once.
        mp.syscalltick = pp.syscalltick();
        mp.oldp = null;
        mp.p = null;
        pp.setM(null);
        pp.setStatus(P._Pidle);
        pp.incSyscalltick();
        pp.sysmonBlockedG = null;
        gp.setgstatusRelease(G._Gsyscall);
        mp.thread.requestPreempt(); // its next poll (if instrumented) notices and exits the "syscall"
        s.syscallStats.blockedRetakes.incrementAndGet();
        s.handoffp(pp);
        return true;
    }

    /** The carrier is parked or blocked in the JVM (cheap: a volatile read of the thread status). */
    static boolean carrierBlocked(M mp) {
        Thread.State st = mp.thread.getState();
        return st == Thread.State.BLOCKED || st == Thread.State.WAITING || st == Thread.State.TIMED_WAITING;
    }
}
