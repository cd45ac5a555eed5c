package dev.gort.runtime;

import java.io.PrintStream;
import java.util.List;

/**
 * {@code GODEBUG=schedtrace=N,scheddetail=1}: the {@code SCHED} lines, byte-compatible with Go 1.25.
 * <pre>
 * SCHED 1004ms: gomaxprocs=4 idleprocs=2 threads=7 spinningthreads=1 needspinning=0 idlethreads=2 runqueue=0 [ 1 0 0 0 ] schedticks=[ 113 57 4 0 ]
 * </pre>
 * With scheddetail the header ends {@code gcwaiting=false nmidlelocked=0 stopwait=0 sysmonwait=false}
 * and is followed by a line per P (allp order), per M (newest first) and per G (goid order: creation order
 * within one P, whose ids come in batches of 16, as in Go).
 *
 * <p>Who prints: sysmon, as in Go. {@link #start} installs {@link #print} with
 * {@link Sysmon#setSchedtrace}; sysmon calls it when {@code lasttrace + N ms <= now} and never
 * deep-sleeps while it is installed. The first line is {@code SCHED 0ms}. A fatal error prints a
 * detailed trace when either flag is set (Go: startpanic_m), from {@code Scheduler.onFatal}.
 *
 * <p>Go: proc.go schedtrace, sysmon's {@code lasttrace} check
 */
public final class SchedTrace {
    private final Scheduler sched;
    /** Period in ms (0: off). Immutable. */
    final int periodMs;
    /** scheddetail. Immutable. */
    final boolean detailed;

    private final PrintStream out;

    SchedTrace(Scheduler sched, int periodMs, boolean detailed, PrintStream out) {
        this.sched = sched;
        this.periodMs = periodMs;
        this.detailed = detailed;
        this.out = out;
    }

    /** Whether periodic printing is on (schedtrace &gt; 0): sysmon must not deep-sleep then. */
    boolean on() {
        return periodMs > 0;
    }

    /** Go's starttime: set by the first print, so the first line is {@code SCHED 0ms}. */
    private volatile long starttime;

    /** Milliseconds since the first print (0 before it). */
    public long elapsedMs(long now) {
        long st = starttime;
        if (st == 0) {
            starttime = st = now;
        }
        return (now - st) / 1_000_000L;
    }

    /** Prints one trace now. */
    void print(long now) {
        String s = format(sched, elapsedMs(now), detailed);
        synchronized (out) {
            out.print(s);
            out.flush();
        }
    }

    /** Called when the runtime starts (before sysmon): hands the periodic print to sysmon. */
    void start() {
        if (periodMs > 0) {
            sched.sysmon.setSchedtrace(periodMs * 1_000_000L, this::print);
        }
    }

    /**
     * Test seam: told each phase of {@link #format} ("header", "ps", "ms" under sched.lock; "gs"
     * while walking allgs; "text" while formatting), so that a test can check which locks each
     * holds. Written by tests only; null otherwise (one volatile read per print).
     */
    static volatile java.util.function.Consumer<String> phaseForTest;

    private static void phase(String name) {
        java.util.function.Consumer<String> f = phaseForTest;
        if (f != null) {
            f.accept(name);
        }
    }

    /**
     * One schedtrace: the SCHED line (and in detailed mode the P, M and G lines), each ending in a
     * newline. A racy snapshot, as Go's ("we must be careful while reading data from P's, M's and
     * G's: even if we hold schedlock, most data can be changed concurrently").
     *
     * <p>Go reads and prints everything, the G lines included (forEachG under allglock), with
     * sched.lock held, so a print of thousands of goroutines stalls every M that needs the lock
     * meanwhile (findRunnable's global queue, idle Ps and Ms) for the whole print. gort reads what
     * Go reads under sched.lock (the header, and each P's and M's fields) into a small snapshot of
     * numbers under it, releases it, then walks allgs under allgs' own stripe locks (a copy of the
     * references, as Go's forEachG iterates under allglock) and formats all text outside every
     * lock: sched.lock is held for O(Ps + Ms) field reads, whatever the number of goroutines, and
     * the output is the same text.
     *
     * <p>Go: proc.go schedtrace
     */
    public static String format(Scheduler s, long ms, boolean detailed) {
        Sched sc = s.sched;
        // what Go reads under sched.lock, copied as numbers (no formatting under the lock)
        int gomaxprocs;
        int idleprocs;
        long threads;
        int spinning;
        int needspinning;
        int idlethreads;
        int runqueue;
        boolean gcwaiting = false;
        int nmidlelocked = 0;
        int stopwait = 0;
        boolean sysmonwait = false;
        int np;
        int[] pStatus;
        int[] pSchedtick;
        int[] pSyscalltick;
        long[] pM;
        int[] pRunq;
        int[] pTimers;
        long[] mId = null;
        int[] mP = null;
        long[] mCurg = null;
        int[] mLocks = null;
        boolean[] mSpinning = null;
        boolean[] mBlocked = null;
        long[] mLockedg = null;
        TimerHeaps timers = s.timers;
        synchronized (sc.lock) {
            phase("header");
            P[] allp = s.allp;
            gomaxprocs = s.gomaxprocs;
            idleprocs = s.idle.npidle.get();
            threads = s.idle.mcount();
            spinning = s.idle.nmspinning.get();
            needspinning = s.idle.needspinning.get();
            idlethreads = s.idle.synced.nmidle;
            runqueue = sc.runq.sizeAcquire();
            if (detailed) {
                gcwaiting = sc.gcwaiting;
                nmidlelocked = s.idle.synced.nmidlelocked;
                stopwait = s.world.synced.stopwait;
                sysmonwait = sc.sysmonwait;
            }
            // We must be careful while reading data from P's, M's and G's.
            // Even if we hold schedlock, most data can be changed concurrently.
            phase("ps");
            np = allp.length;
            pStatus = new int[np];
            pSchedtick = new int[np];
            pSyscalltick = new int[np];
            pM = new long[np];
            pRunq = new int[np];
            pTimers = new int[np];
            for (int i = 0; i < np; i++) {
                P pp = allp[i];
                M mp = pp.mOpaque();
                pStatus[i] = pp.status();
                pSchedtick[i] = pp.schedtickOpaque();
                pSyscalltick[i] = pp.syscalltickOpaque();
                pM[i] = mp == null ? -1 : mp.id;
                pRunq[i] = pp.runq.size();
                pTimers[i] = timers.len(pp);
            }
            if (detailed) {
                phase("ms");
                List<M> allm = s.idle.synced.allm;
                // sysmon's M has no M object: it is listed in id order among allm's (newest first),
                // with no P, no G and nothing held, as Go lists sysmon's M.
                long sysmonM = s.idle.synced.sysmonM;
                int nm = allm.size() + (sysmonM >= 0 ? 1 : 0);
                mId = new long[nm];
                mP = new int[nm];
                mCurg = new long[nm];
                mLocks = new int[nm];
                mSpinning = new boolean[nm];
                mBlocked = new boolean[nm];
                mLockedg = new long[nm];
                for (int i = 0, j = 0; i < nm; i++) {
                    M mp = j < allm.size() ? allm.get(j) : null;
                    if (sysmonM >= 0 && (mp == null || mp.id < sysmonM)) {
                        mId[i] = sysmonM;
                        mP[i] = -1;
                        mCurg[i] = -1;
                        mLockedg[i] = -1;
                        sysmonM = -1;
                        continue;
                    }
                    j++;
                    P pp = mp.p;
                    G curg = mp.curg;
                    G lockedg = mp.lockedg;
                    mId[i] = mp.id;
                    mP[i] = pp == null ? -1 : pp.id;
                    mCurg[i] = curg == null ? -1 : curg.goid;
                    mLocks[i] = mp.locks;
                    mSpinning[i] = mp.spinning;
                    mBlocked[i] = mp.blocked;
                    mLockedg[i] = lockedg == null ? -1 : lockedg.goid;
                }
            }
        }
        // Go's forEachG, after sched.lock: allgs' stripe locks only while copying the references.
        List<G> allgs = null;
        if (detailed) {
            phase("gs");
            allgs = s.allgs();
        }
        phase("text");
        StringBuilder sb = new StringBuilder(detailed ? 128 + 96 * (np + mId.length + allgs.size()) : 256);
        sb.append("SCHED ")
                .append(ms)
                .append("ms: gomaxprocs=")
                .append(gomaxprocs)
                .append(" idleprocs=")
                .append(idleprocs)
                .append(" threads=")
                .append(threads)
                .append(" spinningthreads=")
                .append(spinning)
                .append(" needspinning=")
                .append(needspinning)
                .append(" idlethreads=")
                .append(idlethreads)
                .append(" runqueue=")
                .append(runqueue);
        if (detailed) {
            sb.append(" gcwaiting=")
                    .append(gcwaiting)
                    .append(" nmidlelocked=")
                    .append(nmidlelocked)
                    .append(" stopwait=")
                    .append(stopwait)
                    .append(" sysmonwait=")
                    .append(sysmonwait)
                    .append('\n');
        }
        for (int i = 0; i < np; i++) {
            if (detailed) {
                sb.append("  P")
                        .append(i)
                        .append(": status=")
                        .append(pStatus[i])
                        .append(" schedtick=")
                        .append(Integer.toUnsignedString(pSchedtick[i]))
                        .append(" syscalltick=")
                        .append(Integer.toUnsignedString(pSyscalltick[i]))
                        .append(" m=")
                        .append(pM[i] < 0 ? "nil" : Long.toString(pM[i]))
                        .append(" runqsize=")
                        .append(pRunq[i])
                        .append(" gfreecnt=0")
                        .append(" timerslen=")
                        .append(pTimers[i])
                        .append('\n');
            } else {
                // In non-detailed mode format lengths of per-P run queues as: [ len1 len2 len3 len4 ]
                sb.append(' ');
                if (i == 0) {
                    sb.append("[ ");
                }
                sb.append(pRunq[i]);
                if (i == np - 1) {
                    sb.append(" ]");
                }
            }
        }
        if (!detailed) {
            // Format per-P schedticks as: schedticks=[ tick1 tick2 tick3 tick4 ]
            sb.append(" schedticks=[ ");
            for (int i = 0; i < np; i++) {
                sb.append(Integer.toUnsignedString(pSchedtick[i])).append(' ');
            }
            sb.append("]\n");
            return sb.toString();
        }
        for (int i = 0; i < mId.length; i++) {
            sb.append("  M")
                    .append(mId[i])
                    .append(": p=")
                    .append(mP[i] < 0 ? "nil" : Integer.toString(mP[i]))
                    .append(" curg=")
                    .append(mCurg[i] < 0 ? "nil" : Long.toString(mCurg[i]))
                    .append(" mallocing=0 throwing=0 preemptoff= locks=")
                    .append(mLocks[i])
                    .append(" dying=0 spinning=")
                    .append(mSpinning[i])
                    .append(" blocked=")
                    .append(mBlocked[i])
                    .append(" lockedg=")
                    .append(mLockedg[i] < 0 ? "nil" : Long.toString(mLockedg[i]))
                    .append('\n');
        }
        for (G gp : allgs) {
            M gm = gp.m;
            M lm = gp.lockedm();
            sb.append("  G")
                    .append(gp.goid)
                    .append(": status=")
                    .append(gp.readgstatusRaw())
                    .append('(')
                    .append(gp.waitReason().go())
                    .append(") m=")
                    .append(gm == null ? "nil" : Long.toString(gm.id))
                    .append(" lockedm=")
                    .append(lm == null ? "nil" : Long.toString(lm.id))
                    .append('\n');
        }
        return sb.toString();
    }
}
