package dev.gort.runtime.trace;

import java.io.IOException;
import java.io.Writer;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;

/**
 * Writes a trace as Chrome/Perfetto Trace Event JSON laid out like {@code go tool trace}'s "view by
 * proc" (cmd/trace/procgen.go): {@code pid 1} "PROCS" with a row per P ({@code Proc N}, tid N+1) holding one
 * {@code X} slice per run of a G named {@code G<id> <start function>}, instants {@code proc start} /
 * {@code proc stop} / {@code preempt request}, flow arrows {@code go} and {@code unblock (<reason>)}
 * from the waker's slice to the wakee's next start, and a pseudo row "Syscalls" (async slices, one
 * per G in a syscall, named with its M); {@code pid 2} "STATS" counters Goroutines {Running,
 * Runnable, Waiting}, Threads {Running, InSyscall, Spinning, Idle}, Procs {Idle}, Global runq {Len}
 * and Local runqs {P0..}, each written when it changes; {@code pid 3} "THREADS" a row per M (tid id+1) with the P it holds, and async
 * "spinning" / "syscall" spans. Timestamps are microseconds with ns fractions; {@code
 * displayTimeUnit} is ns. Every event has a {@code cat}; flows are bound to their enclosing slices
 * ({@code bp:e}) and written only with both ends. Opens in ui.perfetto.dev and chrome://tracing.
 */
public final class ChromeTraceWriter {
    private final Trace t;
    private final Writer w;
    private boolean first = true;

    private ChromeTraceWriter(Trace t, Writer w) {
        this.t = t;
        this.w = w;
    }

    public static void write(Trace t, Writer w) throws IOException {
        new ChromeTraceWriter(t, w).run();
    }

    // Processes and threads are numbered from 1 (pid 0 / tid 0 are the idle process and swapper to
    // Perfetto, and some loaders drop them): P n is tid n+1, M n is tid n+1 under THREADS.
    private static final int PID_PROCS = 1;
    private static final int PID_STATS = 2;
    private static final int PID_THREADS = 3;
    private static final int TID_STATS = 1;
    private static final int TID_SYSCALLS = 100_000;

    private static int ptid(int p) {
        return p + 1;
    }

    private static long mtid(long m) {
        return m + 1;
    }

    private static String us(long ns) {
        long q = ns / 1000;
        long r = Math.abs(ns % 1000);
        String rs = r < 10 ? "00" + r : r < 100 ? "0" + r : Long.toString(r);
        return (ns < 0 && q == 0 ? "-" : "") + q + "." + rs;
    }

    static String str(String s) {
        StringBuilder sb = new StringBuilder(s.length() + 2).append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> sb.append("\\\"");
                case '\\' -> sb.append("\\\\");
                case '\n' -> sb.append("\\n");
                case '\r' -> sb.append("\\r");
                case '\t' -> sb.append("\\t");
                case '<' -> sb.append("\\u003c"); // safe inside <script> too
                default -> {
                    if (c < 0x20) {
                        sb.append(String.format("\\u%04x", (int) c));
                    } else {
                        sb.append(c);
                    }
                }
            }
        }
        return sb.append('"').toString();
    }

    private void ev(String json) throws IOException {
        if (!first) {
            w.write(",\n");
        }
        first = false;
        w.write(json);
    }

    private void meta(String name, int pid, Integer tid, String key, Object value) throws IOException {
        ev("{\"ph\":\"M\",\"name\":\"" + name + "\",\"cat\":\"__metadata\",\"pid\":" + pid
                + (tid == null ? "" : ",\"tid\":" + tid) + ",\"args\":{\"" + key + "\":"
                + (value instanceof String s ? str(s) : value) + "}}");
    }

    /** A flow's start, held until the wakee's slice starts. */
    private record Flow(String name, long id, long ts, int tid) {}

    /** A flow half ({@code s} or {@code f}) bound to the enclosing slice ({@code bp:e}) on a P's row. */
    private static String flow(String ph, String name, long id, long ts, int tid) {
        return "{\"ph\":\"" + ph + "\",\"bp\":\"e\",\"name\":" + str(name) + ",\"cat\":\"sched\",\"id\":" + id
                + ",\"ts\":" + us(ts) + ",\"pid\":" + PID_PROCS + ",\"tid\":" + tid + "}";
    }

    /** A counter sample, written only when its values differ from its previous sample. */
    private void counter(Map<String, String> last, String name, long ts, String args) throws IOException {
        if (args.equals(last.get(name))) {
            return;
        }
        last.put(name, args);
        ev("{\"ph\":\"C\",\"name\":" + str(name) + ",\"cat\":\"stats\",\"ts\":" + us(ts) + ",\"pid\":" + PID_STATS
                + ",\"tid\":" + TID_STATS + ",\"args\":{" + args + "}}");
    }

    private void run() throws IOException {
        int np = t.procs(0);
        w.write("{\"displayTimeUnit\":\"ns\",\"otherData\":{\"generator\":\"gort\",\"workload\":"
                + str(t.workload) + ",\"config\":" + str(t.config) + ",\"complete\":" + t.complete
                + ",\"jdk\":" + str(System.getProperty("java.version", "")) + "},\n\"traceEvents\":[\n");
        meta("process_name", PID_PROCS, null, "name", "PROCS");
        meta("process_sort_index", PID_PROCS, null, "sort_index", 2);
        meta("process_name", PID_STATS, null, "name", "STATS");
        meta("process_sort_index", PID_STATS, null, "sort_index", 1);
        meta("process_name", PID_THREADS, null, "name", "THREADS");
        meta("process_sort_index", PID_THREADS, null, "sort_index", 3);
        for (int p = 0; p < np; p++) {
            meta("thread_name", PID_PROCS, ptid(p), "name", "Proc " + p);
            meta("thread_sort_index", PID_PROCS, ptid(p), "sort_index", p);
        }
        meta("thread_name", PID_PROCS, TID_SYSCALLS, "name", "Syscalls");
        meta("thread_sort_index", PID_PROCS, TID_SYSCALLS, "sort_index", -1);
        meta("thread_name", PID_STATS, TID_STATS, "name", "counters");

        // replay state
        long[] runG = new long[np];
        long[] runStart = new long[np];
        String[] runFrom = new String[np];
        boolean[] runInherit = new boolean[np];
        Map<Long, String> lastReason = new HashMap<>();
        // A flow starts in the waker's open slice and ends at the wakee's next slice: both halves
        // are written when that slice starts, so no arrow dangles; a waker outside any G slice
        // (a timer, sysmon, another thread) draws none.
        Map<Long, Flow> pendingFlow = new HashMap<>();
        Map<Long, Integer> gloc = new HashMap<>(); // 0 runnable, 1 running, 2 waiting, 3 syscall
        int[] local = new int[np];
        int global = 0;
        Map<Long, Integer> mHeldP = new HashMap<>();
        Map<Long, Long> mHeldSince = new HashMap<>();
        Set<Long> spinning = new HashSet<>();
        Set<Long> parked = new HashSet<>();
        Set<Long> inSyscall = new HashSet<>();
        Set<Long> ms = new HashSet<>();
        long flowIds = 0;
        Map<String, String> lastCounter = new HashMap<>();

        for (int i = 0; i < t.size(); i++) {
            int code = t.code(i);
            int p = t.p(i);
            long m = t.m(i);
            long g = t.g(i);
            long ts = t.ts(i);
            if (m >= 0 && ms.add(m)) {
                meta("thread_name", PID_THREADS, (int) mtid(m), "name", "M" + m);
            }
            switch (code) {
                case Ev.GO_STATUS -> {
                    int s = t.small(i);
                    if (s == Ev.L_RUNNING && p >= 0) {
                        runG[p] = g;
                        runStart[p] = ts;
                        runFrom[p] = "start";
                        gloc.put(g, 1);
                    } else if (s == Ev.L_WAITING) {
                        gloc.put(g, 2);
                    } else if (s == Ev.L_SYSCALL) {
                        gloc.put(g, 3);
                    } else {
                        gloc.put(g, 0);
                        if (s == Ev.L_GLOBAL) {
                            global++;
                        } else if (s == Ev.L_LOCAL && p >= 0) {
                            local[p]++;
                        }
                    }
                }
                case Ev.GO_CREATE -> {
                    gloc.put(g, 0);
                    if (t.small(i) == Ev.W_LOCAL && p >= 0) {
                        local[p]++;
                    } else if (t.small(i) >= Ev.W_GLOBAL) {
                        global++;
                    }
                    if (p >= 0 && runG[p] != 0) {
                        long id = ++flowIds;
                        pendingFlow.put(g, new Flow("go", id, ts, ptid(p)));
                    }
                }
                case Ev.GO_UNBLOCK -> {
                    gloc.put(g, 0);
                    if (t.small(i) == Ev.W_LOCAL && p >= 0) {
                        local[p]++;
                    } else if (t.small(i) >= Ev.W_GLOBAL) {
                        global++;
                    }
                    String name = "unblock (" + lastReason.getOrDefault(g, "?") + ")";
                    if (p >= 0 && runG[p] != 0) {
                        long id = ++flowIds;
                        pendingFlow.put(g, new Flow(name, id, ts, ptid(p)));
                    } else {
                        pendingFlow.remove(g);
                    }
                }
                case Ev.RUNQ_KICK -> {
                    if (p >= 0) {
                        local[p]++;
                    }
                }
                case Ev.RUNQ_TO_GLOBAL -> {
                    // from runnext or the ring: we do not know which without tracking; ring is the common case
                    if (p >= 0 && local[p] > 0) {
                        local[p]--;
                    }
                    global++;
                }
                case Ev.GLOBAL_TO_LOCAL -> {
                    global = Math.max(0, global - 1);
                    if (p >= 0) {
                        local[p]++;
                    }
                }
                case Ev.STEAL -> {
                    int v = (int) t.a(i);
                    if (v >= 0 && v < np && local[v] > 0) {
                        local[v]--;
                    }
                    if (p >= 0) {
                        local[p]++;
                    }
                    if (v >= 0 && t.x(i) > 0) {
                        ev("{\"ph\":\"i\",\"s\":\"t\",\"name\":\"steal " + t.x(i) + " from P" + v
                                + "\",\"cat\":\"sched\",\"ts\":" + us(ts) + ",\"pid\":" + PID_PROCS + ",\"tid\":"
                                + ptid(p) + "}");
                    }
                }
                case Ev.GO_START -> {
                    int from = t.small(i);
                    if (from == Ev.F_LOCAL && p >= 0 && local[p] > 0) {
                        local[p]--;
                    } else if (from == Ev.F_GLOBAL) {
                        global = Math.max(0, global - 1);
                    } else if (from == Ev.F_STOLEN) {
                        int v = (int) t.a(i);
                        if (v >= 0 && v < np && local[v] > 0) {
                            local[v]--;
                        }
                    }
                    gloc.put(g, 1);
                    if (p >= 0) {
                        runG[p] = g;
                        runStart[p] = ts;
                        runFrom[p] = from == Ev.F_STOLEN ? "stolen-from-P" + t.a(i) : Ev.from(from);
                        runInherit[p] = t.x(i) != 0;
                        Flow f = pendingFlow.remove(g);
                        if (f != null) {
                            ev(flow("s", f.name, f.id, f.ts, f.tid));
                            ev(flow("f", f.name, f.id, ts, ptid(p)));
                        }
                    }
                }
                case Ev.GO_STOP, Ev.SYSCALL_ENTER -> {
                    String stop;
                    if (code == Ev.SYSCALL_ENTER) {
                        stop = "syscall";
                        gloc.put(g, 3);
                        inSyscall.add(m);
                        ev("{\"ph\":\"b\",\"name\":" + str("G" + g + " syscall (M" + m + ")")
                                + ",\"cat\":\"syscall\",\"id\":" + g + ",\"ts\":" + us(ts) + ",\"pid\":" + PID_PROCS
                                + ",\"tid\":" + TID_SYSCALLS + "}");
                    } else {
                        int why = t.small(i);
                        stop = why == Ev.S_PARK ? "blocked: " + Trace.waitReason(t.a(i)) : Ev.stop(why);
                        if (why == Ev.S_PARK) {
                            lastReason.put(g, Trace.waitReason(t.a(i)));
                            gloc.put(g, 2);
                        } else if (why == Ev.S_EXIT) {
                            gloc.remove(g);
                        } else {
                            gloc.put(g, 0);
                            if (why == Ev.S_YIELD && p >= 0) {
                                local[p]++;
                            } else {
                                global++;
                            }
                        }
                    }
                    if (p >= 0 && runG[p] == g && g != 0) {
                        String name = t.gname(g);
                        ev("{\"ph\":\"X\",\"name\":" + str(name) + ",\"cat\":\"g\",\"ts\":" + us(runStart[p])
                                + ",\"dur\":"
                                + us(ts - runStart[p]) + ",\"pid\":" + PID_PROCS + ",\"tid\":" + ptid(p)
                                + ",\"args\":{\"goid\":" + g
                                + ",\"from\":"
                                + str(runFrom[p]) + ",\"inheritTime\":" + runInherit[p] + ",\"stop\":" + str(stop)
                                + "}}");
                        runG[p] = 0;
                    }
                }
                case Ev.SYSCALL_EXIT -> {
                    inSyscall.remove(m);
                    ev("{\"ph\":\"e\",\"name\":" + str("G" + g + " syscall (M" + m + ")")
                            + ",\"cat\":\"syscall\",\"id\":" + g
                            + ",\"ts\":" + us(ts) + ",\"pid\":" + PID_PROCS + ",\"tid\":" + TID_SYSCALLS
                            + ",\"args\":{\"outcome\":"
                            + str(Ev.outcome(t.small(i))) + "}}");
                    if (t.small(i) == Ev.X_NO_P) {
                        gloc.put(g, 0);
                        global++;
                    } else if (p >= 0) {
                        gloc.put(g, 1);
                        runG[p] = g;
                        runStart[p] = ts;
                        runFrom[p] = "syscall";
                        runInherit[p] = false;
                    }
                }
                case Ev.PROC_START, Ev.PROC_STATUS -> {
                    if (p >= 0 && m >= 0) {
                        mHeldP.put(m, p);
                        mHeldSince.put(m, ts);
                    }
                    if (code == Ev.PROC_START) {
                        ev("{\"ph\":\"i\",\"s\":\"t\",\"name\":\"proc start\",\"cat\":\"proc\",\"ts\":" + us(ts)
                                + ",\"pid\":" + PID_PROCS + ",\"tid\":" + ptid(p) + ",\"args\":{\"m\":" + m + "}}");
                    }
                }
                case Ev.PROC_STOP, Ev.HANDOFF -> {
                    long holder = code == Ev.HANDOFF ? t.a(i) : m;
                    Integer held = mHeldP.remove(holder);
                    Long since = mHeldSince.remove(holder);
                    if (held != null && since != null && holder >= 0) {
                        ev("{\"ph\":\"X\",\"name\":\"P" + held + "\",\"cat\":\"m\",\"ts\":" + us(since) + ",\"dur\":"
                                + us(ts - since) + ",\"pid\":" + PID_THREADS + ",\"tid\":" + mtid(holder) + "}");
                    }
                    ev("{\"ph\":\"i\",\"s\":\"t\",\"name\":\""
                            + (code == Ev.HANDOFF ? "handoff from M" + holder : "proc stop")
                            + "\",\"cat\":\"proc\",\"ts\":" + us(ts) + ",\"pid\":" + PID_PROCS + ",\"tid\":"
                            + ptid(p) + "}");
                }
                case Ev.SPIN_START -> {
                    spinning.add(m);
                    ev("{\"ph\":\"b\",\"name\":\"spinning\",\"cat\":\"spin\",\"id\":" + mtid(m) + ",\"ts\":" + us(ts)
                            + ",\"pid\":" + PID_THREADS + ",\"tid\":" + mtid(m) + "}");
                }
                case Ev.SPIN_STOP -> {
                    if (spinning.remove(m)) {
                        ev("{\"ph\":\"e\",\"name\":\"spinning\",\"cat\":\"spin\",\"id\":" + mtid(m) + ",\"ts\":"
                                + us(ts) + ",\"pid\":" + PID_THREADS + ",\"tid\":" + mtid(m) + "}");
                    }
                }
                case Ev.M_PARK -> parked.add(m);
                case Ev.M_UNPARK -> parked.remove(m);
                case Ev.PREEMPT_REQ ->
                    ev("{\"ph\":\"i\",\"s\":\"t\",\"name\":\"preempt request\",\"cat\":\"preempt\",\"ts\":" + us(ts)
                            + ",\"pid\":" + PID_PROCS + ",\"tid\":" + ptid(Math.max(p, 0)) + ",\"args\":{\"goid\":" + g
                            + "}}");
                case Ev.TIMER_FIRE ->
                    ev("{\"ph\":\"i\",\"s\":\"t\",\"name\":\"timer fire\",\"cat\":\"timer\",\"ts\":" + us(ts)
                            + ",\"pid\":" + PID_PROCS + ",\"tid\":" + ptid(Math.max(p, 0)) + ",\"args\":{\"goid\":" + g
                            + "}}");
                default -> {}
            }
            // counters, once per distinct timestamp and only on change
            if (i + 1 == t.size() || t.ts(i + 1) != ts) {
                int running = 0;
                int runnable = 0;
                int waiting = 0;
                for (int v : gloc.values()) {
                    switch (v) {
                        case 0 -> runnable++;
                        case 1 -> running++;
                        case 2 -> waiting++;
                        default -> {}
                    }
                }
                int idleP = np - mHeldP.size();
                StringBuilder lq = new StringBuilder();
                for (int k = 0; k < np; k++) {
                    lq.append(k == 0 ? "" : ",")
                            .append("\"P")
                            .append(k)
                            .append("\":")
                            .append(local[k]);
                }
                int threadsRunning = ms.size() - parked.size() - inSyscall.size();
                counter(
                        lastCounter,
                        "Goroutines",
                        ts,
                        "\"Running\":" + running + ",\"Runnable\":" + runnable + ",\"Waiting\":" + waiting);
                counter(
                        lastCounter,
                        "Threads",
                        ts,
                        "\"Running\":" + Math.max(0, threadsRunning) + ",\"InSyscall\":" + inSyscall.size()
                                + ",\"Spinning\":" + spinning.size() + ",\"Idle\":" + parked.size());
                counter(lastCounter, "Procs", ts, "\"Idle\":" + Math.max(0, idleP));
                counter(lastCounter, "Global runq", ts, "\"Len\":" + global);
                counter(lastCounter, "Local runqs", ts, lq.toString());
            }
        }
        // close slices still open at the end
        long end = t.endTs();
        for (int p = 0; p < np; p++) {
            if (runG[p] != 0) {
                ev("{\"ph\":\"X\",\"name\":" + str(t.gname(runG[p])) + ",\"cat\":\"g\",\"ts\":" + us(runStart[p])
                        + ",\"dur\":"
                        + us(end - runStart[p]) + ",\"pid\":" + PID_PROCS + ",\"tid\":" + ptid(p)
                        + ",\"args\":{\"goid\":" + runG[p]
                        + ",\"from\":" + str(runFrom[p]) + ",\"stop\":\"(trace end)\"}}");
            }
        }
        w.write("\n]}\n");
        w.flush();
    }
}
