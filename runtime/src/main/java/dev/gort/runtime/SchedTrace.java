package dev.gort.runtime;

import java.io.PrintStream;
import java.util.List;

/**
 * {@code GODEBUG=schedtrace=N,scheddetail=1}: the {@code SCHED} lines, byte-compatible with Go 1.25.
 * <pre>
 * SCHED 1004ms: gomaxprocs=4 idleprocs=2 threads=7 spinningthreads=1 needspinning=0 idlethreads=2 runqueue=0 [ 1 0 0 0 ] schedticks=[ 113 57 4 0 ]
 * </pre>
 * With scheddetail the header ends {@code gcwaiting=false nmidlelocked=0 stopwait=0 sysmonwait=false}
 * and is followed by a line per P (allp order), per M (newest first) and per G (creation order).
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
     * One schedtrace: the SCHED line (and in detailed mode the P, M and G lines), each ending in a
     * newline. A racy snapshot, as Go's ("we must be careful while reading data from P's, M's and
     * G's: even if we hold schedlock, most data can be changed concurrently").
     *
     * <p>Go: proc.go schedtrace
     */
    public static String format(Scheduler s, long ms, boolean detailed) {
        StringBuilder sb = new StringBuilder(256);
        Sched sc = s.sched;
        P[] allp;
        List<M> allm;
        synchronized (sc.lock) {
            allp = s.allp;
            sb.append("SCHED ")
                    .append(ms)
                    .append("ms: gomaxprocs=")
                    .append(s.gomaxprocs)
                    .append(" idleprocs=")
                    .append(s.idle.npidle.get())
                    .append(" threads=")
                    .append(s.idle.mcount())
                    .append(" spinningthreads=")
                    .append(s.idle.nmspinning.get())
                    .append(" needspinning=")
                    .append(s.idle.needspinning.get())
                    .append(" idlethreads=")
                    .append(s.idle.synced.nmidle)
                    .append(" runqueue=")
                    .append(sc.runq.sizeAcquire());
            if (detailed) {
                sb.append(" gcwaiting=")
                        .append(sc.gcwaiting)
                        .append(" nmidlelocked=")
                        .append(s.idle.synced.nmidlelocked)
                        .append(" stopwait=")
                        .append(s.world.synced.stopwait)
                        .append(" sysmonwait=")
                        .append(sc.sysmonwait)
                        .append('\n');
            }
            allm = List.copyOf(s.idle.synced.allm);
        }
        // We must be careful while reading data from P's, M's and G's.
        // Even if we hold schedlock, most data can be changed concurrently.
        TimerHeaps timers = s.timers;
        for (int i = 0; i < allp.length; i++) {
            P pp = allp[i];
            M mp = pp.mOpaque();
            int runqsize = pp.runq.size();
            if (detailed) {
                sb.append("  P")
                        .append(i)
                        .append(": status=")
                        .append(pp.status())
                        .append(" schedtick=")
                        .append(Integer.toUnsignedString(pp.schedtickOpaque()))
                        .append(" syscalltick=")
                        .append(Integer.toUnsignedString(pp.syscalltickOpaque()))
                        .append(" m=")
                        .append(mp == null ? "nil" : Long.toString(mp.id))
                        .append(" runqsize=")
                        .append(runqsize)
                        .append(" gfreecnt=0")
                        .append(" timerslen=")
                        .append(timers.len(pp))
                        .append('\n');
            } else {
                // In non-detailed mode format lengths of per-P run queues as: [ len1 len2 len3 len4 ]
                sb.append(' ');
                if (i == 0) {
                    sb.append("[ ");
                }
                sb.append(runqsize);
                if (i == allp.length - 1) {
                    sb.append(" ]");
                }
            }
        }
        if (!detailed) {
            // Format per-P schedticks as: schedticks=[ tick1 tick2 tick3 tick4 ]
            sb.append(" schedticks=[ ");
            for (P pp : allp) {
                sb.append(Integer.toUnsignedString(pp.schedtickOpaque())).append(' ');
            }
            sb.append("]\n");
            return sb.toString();
        }
        for (M mp : allm) {
            P pp = mp.p;
            G curg = mp.curg;
            G lockedg = mp.lockedg;
            sb.append("  M")
                    .append(mp.id)
                    .append(": p=")
                    .append(pp == null ? "nil" : Integer.toString(pp.id))
                    .append(" curg=")
                    .append(curg == null ? "nil" : Long.toString(curg.goid))
                    .append(" mallocing=0 throwing=0 preemptoff= locks=")
                    .append(mp.locks)
                    .append(" dying=0 spinning=")
                    .append(mp.spinning)
                    .append(" blocked=")
                    .append(mp.blocked)
                    .append(" lockedg=")
                    .append(lockedg == null ? "nil" : Long.toString(lockedg.goid))
                    .append('\n');
        }
        for (G gp : s.allgs()) {
            M gm = gp.m;
            M lm = gp.lockedm;
            sb.append("  G")
                    .append(gp.goid)
                    .append(": status=")
                    .append(gp.readgstatusRaw())
                    .append('(')
                    .append(gp.waitreason.go())
                    .append(") m=")
                    .append(gm == null ? "nil" : Long.toString(gm.id))
                    .append(" lockedm=")
                    .append(lm == null ? "nil" : Long.toString(lm.id))
                    .append('\n');
        }
        return sb.toString();
    }
}
