package dev.gort.runtime.trace;

import dev.gort.runtime.G;
import dev.gort.runtime.Scheduler;
import dev.gort.runtime.WaitReason;
import java.lang.invoke.VarHandle;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.TreeMap;

/**
 * A decoded trace: every event of every buffer merged in timestamp order (ties keep each buffer's
 * order, and the start-state buffer first), timestamps in ns since the session started, plus the
 * goroutine and object tables. Immutable once built; column arrays for compactness.
 */
public final class Trace {
    /**
     * What the trace knows about one goroutine; {@code createTs}: its creation, in ns since the
     * trace started (0 for a goroutine that already existed then). While recording, the session's
     * table holds it in clock units; the decoded trace's table ({@link #goroutines}) in ns.
     */
    public record GInfo(long goid, long parent, String name, String createdAt, long createTs) {
        static GInfo of(G gp, long ts) {
            StackTraceElement at = gp.createdAt();
            String where = at == null
                    ? ""
                    : at.getClassName() + "." + at.getMethodName()
                            + (at.getFileName() == null
                                    ? ""
                                    : " (" + at.getFileName() + ":" + at.getLineNumber() + ")");
            return new GInfo(gp.goid, gp.parentGoid(), startName(gp), where, ts);
        }

        /** Go names a slice after the goroutine's start function: {@code G12 main.worker}. */
        static String startName(G gp) {
            if (gp.goid == 1) {
                return "main";
            }
            Class<?> c = gp.startClass();
            String n = c == null ? "?" : c.getName();
            int lam = n.indexOf("$$Lambda");
            if (lam >= 0) {
                StackTraceElement at = gp.createdAt();
                if (at != null) {
                    return at.getClassName() + "." + at.getMethodName() + ".func";
                }
                return n.substring(0, lam) + ".lambda";
            }
            return n + ".run";
        }
    }

    final int n;
    final long[] ts;
    final int[] code;
    final int[] small;
    final int[] p;
    final long[] m;
    final long[] g;
    final long[] a;
    final long[] x;
    /** goid -> info (every G created while tracing, and those alive when it started). */
    public final Map<Long, GInfo> goroutines;
    /** object id -> description (channels, mutexes... first seen in a park). */
    public final Map<Long, String> objects;

    public final int initialProcs;
    /** Threads (Go's mcount, sysmon included) when the session started; M_CREATE events add to it. */
    public final long initialThreads;

    public final String workload;
    /** True if nothing was dropped (flight-recorder window): the trace starts at the session start. */
    public final boolean complete;

    public final long wallStartMillis;
    public final String config;

    /**
     * {@code units} of a session's clock as ns: exact for nanoTime's (1 ns per unit), rounded for
     * the counter's; monotonic, so the merge order survives the conversion.
     */
    static long toNanos(long units, double nsPerUnit) {
        return nsPerUnit == 1.0 ? units : Math.round(units * nsPerUnit);
    }

    private Trace(int n, Tracer.Session s, String config, boolean complete, double nsPerUnit) {
        this.n = n;
        ts = new long[n];
        code = new int[n];
        small = new int[n];
        p = new int[n];
        m = new long[n];
        g = new long[n];
        a = new long[n];
        x = new long[n];
        TreeMap<Long, GInfo> gs = new TreeMap<>();
        for (Map.Entry<Long, GInfo> e : s.gs.entrySet()) {
            GInfo gi = e.getValue();
            long created = gi.createTs() == 0 ? 0 : toNanos(gi.createTs() - s.t0, nsPerUnit);
            gs.put(e.getKey(), new GInfo(gi.goid(), gi.parent(), gi.name(), gi.createdAt(), created));
        }
        goroutines = Collections.unmodifiableMap(gs);
        objects = Collections.unmodifiableMap(new TreeMap<>(s.objects));
        initialProcs = s.initialProcs;
        initialThreads = s.initialThreads;
        workload = s.workload;
        wallStartMillis = s.wallStartMillis;
        this.config = config;
        this.complete = complete;
    }

    /**
     * One buffer's published records, copied while its writer may go on writing. In a
     * flight-recorder window the writer recycles its oldest chunk as the new tail, so the copy is
     * checked as a seqlock: the walk must go through consecutively numbered chunks up to the tail the
     * writer last announced (else it is retried), and a chunk whose number changed during its copy
     * was recycled under it: it and the chunks before it (older, recycled first) are left out, which
     * leaves a consistent suffix, as if those chunks had been dropped before the read.
     *
     * <p>Whether the copy lost older records is read from the copy itself (its first kept chunk is
     * not the buffer's chunk 1), not from {@link TraceBuf#dropped}: the writer moves {@code first}
     * before it counts the drop, so a count read after the walk can still say 0.
     */
    static Copy copy(TraceBuf b) {
        if (b.first == null) {
            return new Copy(new long[0], false); // a JFR-only buffer records nothing
        }
        List<TraceBuf.Chunk> parts = new ArrayList<>();
        List<Long> seqs = new ArrayList<>();
        for (int attempt = 0; ; attempt++) {
            parts.clear();
            seqs.clear();
            boolean ok = true;
            TraceBuf.Chunk c = b.first;
            while (c != null) {
                long sq = c.seqAcquire();
                if (!seqs.isEmpty() && sq != seqs.get(seqs.size() - 1) + 1) {
                    ok = false; // the previous chunk was recycled after we read its next
                    break;
                }
                TraceBuf.Chunk n = c.next;
                parts.add(c);
                seqs.add(sq);
                c = n;
            }
            if (ok && !seqs.isEmpty() && seqs.get(seqs.size() - 1) == b.lastSeq) {
                break;
            }
            if (attempt >= 10_000) {
                throw new IllegalStateException(
                        "gort: trace buffer " + b.owner + " changes faster than it can be read");
            }
            Thread.onSpinWait();
        }
        long[][] copies = new long[parts.size()][];
        long[] bases = new long[parts.size()];
        long[][] states = new long[parts.size()][];
        int from = 0;
        for (int i = 0; i < parts.size(); i++) {
            TraceBuf.Chunk c = parts.get(i);
            int pub = c.wAcquire();
            bases[i] = c.base; // written before the first record this acquire may have seen
            states[i] = new long[] {c.baseRunnext, c.baseStarted, c.basePark1, c.basePark2, c.baseStopped}; // likewise
            copies[i] = java.util.Arrays.copyOf(c.d, pub);
            VarHandle.acquireFence(); // the copy's reads before the number's re-read
            if (c.seqAcquire() != seqs.get(i)) {
                from = i + 1; // recycled while we copied it
            }
        }
        // each kept chunk decodes on its own: its first record is relative to its base
        TraceBuf.LongList out = new TraceBuf.LongList();
        for (int i = from; i < copies.length; i++) {
            TraceBuf.expand(copies[i], copies[i].length, bases[i], states[i], b.mid, out);
        }
        long[] d = out.toArray();
        return new Copy(d, from == parts.size() || seqs.get(from) != 1);
    }

    /**
     * One buffer's records as {@link #copy} read them, in the five-long layout ({@link
     * TraceBuf#REC}: ts, header, g, a, x; {@link TraceBuf#expand}); {@code lost}: records older than these were
     * recycled (all of them if {@code d} is empty).
     */
    record Copy(long[] d, boolean lost) {}

    /**
     * One buffer's records, {@code len} of them kept by the end cut; {@code windowStart}: if the
     * buffer lost older records, the time (since t0) of its oldest copied one (or, if the writer
     * recycled everything during the copy, of the copy's end), else {@code Long.MIN_VALUE}.
     */
    private record Run(long[] d, int len, int order, long windowStart) {}

    /** Snapshots retried when a writer's window moved past the end cut before its buffer was read. */
    static final int OVERRUN_ATTEMPTS = 4;

    /**
     * Decodes what the session's buffers hold now, cut at the moment decoding starts: events
     * stamped later are left out. Carriers may still be writing (a snapshot, a crash): the buffers
     * are read one after another, so without the cut a later buffer could show the effect of an
     * event that an earlier one published after it was read (a GoStart without its GoUnblock).
     * With it, every event kept has its cause kept: producers stamp and publish their event before
     * the G becomes visible to anyone else, consumers stamp theirs after taking it, so an effect
     * stamped before the cut had its cause published before the cut, i.e. before any buffer was read.
     * In a flight-recorder window, a writer may go round its whole window after the cut and before
     * its buffer is read; the window cut then leaves nothing, and the read is retried (a few times)
     * with a new end cut.
     */
    static Trace decode(Tracer.Session s, Scheduler sched) {
        return decode(s, sched, true);
    }

    /** {@link #decode(Tracer.Session, Scheduler)}; {@code cutNow} false keeps every event (rebuilt traces). */
    static Trace decode(Tracer.Session s, Scheduler sched, boolean cutNow) {
        List<Run> runs = new ArrayList<>();
        boolean windowCut;
        for (int attempt = 1; ; attempt++) {
            runs.clear();
            long end = s.now();
            int order = 0;
            for (TraceBuf b : s.bufs) {
                Copy c = copy(b);
                long[] d = c.d();
                int len = d.length / TraceBuf.REC;
                long windowStart = Long.MIN_VALUE;
                if (c.lost()) {
                    // everything the writer wrote before its oldest copied record is gone, whether
                    // or not the end cut keeps that record
                    windowStart = len > 0 ? d[0] - s.t0 : s.now() - s.t0;
                }
                if (cutNow) {
                    // one writer per buffer, timestamps never decrease in it: the cut is a suffix
                    while (len > 0 && d[(len - 1) * TraceBuf.REC] - end > 0) {
                        len--;
                    }
                }
                runs.add(new Run(d, len, order++, windowStart));
            }
            // Flight-recorder window: buffers lose their old chunks independently, so cut every buffer
            // at the latest "oldest kept event" of those that dropped any; before that, some buffers
            // would still hold history that others have lost (e.g. a G's creation without its runs).
            // A buffer whose kept records all come after the end cut (its writer went round its whole
            // window while the buffers before it were read) counts too: then nothing is left.
            long cut = Long.MIN_VALUE;
            for (Run r : runs) {
                cut = Math.max(cut, r.windowStart());
            }
            if (cutNow && cut > end - s.t0 && attempt < OVERRUN_ATTEMPTS) {
                continue; // that empty trace is consistent but useless: read again, with a new end
            }
            // The window asked for (Options.window): the events of its length up to the last one kept
            // (not up to the end cut, which a runtime's exit precedes by as long as the carriers take to
            // leave), cut at one time across the buffers, as above.
            windowCut = false;
            if (cutNow && s.windowNanos > 0) {
                long last = Long.MIN_VALUE;
                for (Run r : runs) {
                    if (r.len() > 0) {
                        last = Math.max(last, r.d()[(r.len() - 1) * TraceBuf.REC] - s.t0);
                    }
                }
                double units = s.windowNanos / s.nanosPerUnit();
                if (last != Long.MIN_VALUE && units < last) {
                    long wcut = last - (long) units;
                    for (Run r : runs) {
                        windowCut |= r.len() > 0 && r.d()[0] - s.t0 < wcut;
                    }
                    if (windowCut) {
                        cut = Math.max(cut, wcut);
                    }
                }
            }
            if (cut != Long.MIN_VALUE) {
                List<Run> trimmed = new ArrayList<>();
                for (Run r : runs) {
                    int k = 0;
                    while (k < r.len() && r.d()[k * TraceBuf.REC] - s.t0 < cut) {
                        k++;
                    }
                    long[] d = java.util.Arrays.copyOfRange(r.d(), k * TraceBuf.REC, r.len() * TraceBuf.REC);
                    trimmed.add(new Run(d, r.len() - k, r.order(), r.windowStart()));
                }
                runs.clear();
                runs.addAll(trimmed);
            }
            break;
        }
        int total = 0;
        for (Run r : runs) {
            total += r.len;
        }
        String config = sched == null ? "" : sched.config().toString();
        boolean lost = windowCut;
        for (Run r : runs) {
            lost |= r.windowStart() != Long.MIN_VALUE;
        }
        // the copies' own verdict first: the session's count is bumped after the writer moved its first chunk
        // stamps are the session's clock units until here; ns since the start from here on
        double nsPerUnit = s.nanosPerUnit();
        Trace t = new Trace(total, s, config, !lost && s.droppedChunks.get() == 0, nsPerUnit);
        // k-way merge by timestamp; ties: lower buffer order first (the start-state buffer is first).
        int[] pos = new int[runs.size()];
        PriorityQueue<Integer> pq = new PriorityQueue<>((i, j) -> {
            long ti = runs.get(i).d[pos[i] * TraceBuf.REC];
            long tj = runs.get(j).d[pos[j] * TraceBuf.REC];
            int c = Long.compare(ti - s.t0, tj - s.t0);
            return c != 0 ? c : Integer.compare(runs.get(i).order, runs.get(j).order);
        });
        for (int i = 0; i < runs.size(); i++) {
            if (runs.get(i).len > 0) {
                pq.add(i);
            }
        }
        int k = 0;
        while (!pq.isEmpty()) {
            int i = pq.poll();
            Run r = runs.get(i);
            int o = pos[i] * TraceBuf.REC;
            long hdr = r.d[o + 1];
            t.ts[k] = toNanos(r.d[o] - s.t0, nsPerUnit);
            t.code[k] = (int) (hdr & 0xFF);
            t.small[k] = (int) ((hdr >>> 8) & 0xFFFF);
            t.p[k] = (int) ((hdr >>> 24) & 0xFFFF) - 1;
            t.m[k] = (hdr >>> 40) - 1;
            t.g[k] = r.d[o + 2];
            t.a[k] = r.d[o + 3];
            t.x[k] = r.d[o + 4];
            k++;
            pos[i]++;
            if (pos[i] < r.len) {
                pq.add(i);
            }
        }
        return t;
    }

    public int size() {
        return n;
    }

    /**
     * How many Ps the events from index {@code from} on need lanes for: the Ps at the start,
     * every P an event names, every GOMAXPROCS change (at least 1).
     */
    int procs(int from) {
        int procs = Math.max(1, initialProcs);
        for (int i = from; i < n; i++) {
            procs = Math.max(procs, p(i) + 1);
            if (code(i) == Ev.GOMAXPROCS) {
                procs = Math.max(procs, (int) a(i));
            }
        }
        return procs;
    }

    public long ts(int i) {
        return ts[i];
    }

    public int code(int i) {
        return code[i];
    }

    public int small(int i) {
        return small[i];
    }

    /** P id, or -1. */
    public int p(int i) {
        return p[i];
    }

    /** M id, or -1 (not an M). */
    public long m(int i) {
        return m[i];
    }

    public long g(int i) {
        return g[i];
    }

    public long a(int i) {
        return a[i];
    }

    public long x(int i) {
        return x[i];
    }

    /** Time of the last event (ns since start). */
    public long endTs() {
        return n == 0 ? 0 : ts[n - 1];
    }

    public String gname(long goid) {
        GInfo gi = goroutines.get(goid);
        return gi == null ? "G" + goid : "G" + goid + " " + gi.name();
    }

    static String waitReason(long ordinal) {
        WaitReason[] v = WaitReason.values();
        return ordinal >= 0 && ordinal < v.length ? v[(int) ordinal].go() : "?";
    }

    /** Number of events with the given code. */
    public int count(int c) {
        int k = 0;
        for (int i = 0; i < n; i++) {
            if (code[i] == c) {
                k++;
            }
        }
        return k;
    }

    /** A readable line for event i (debugging, validator messages). */
    public String describe(int i) {
        StringBuilder sb = new StringBuilder();
        sb.append(ts[i]).append("ns ").append(Ev.name(code[i]));
        if (p[i] >= 0) {
            sb.append(" P").append(p[i]);
        }
        if (m[i] >= 0) {
            sb.append(" M").append(m[i]);
        }
        if (g[i] != 0) {
            sb.append(" G").append(g[i]);
        }
        switch (code[i]) {
            case Ev.GO_CREATE ->
                sb.append(" parent=G").append(a[i]).append(" to=").append(Ev.where(small[i]));
            case Ev.GO_START ->
                sb.append(" from=")
                        .append(Ev.from(small[i]))
                        .append(small[i] == Ev.F_STOLEN ? "(P" + a[i] + ")" : "")
                        .append(x[i] != 0 ? " inherit" : "");
            case Ev.GO_STOP ->
                sb.append(' ')
                        .append(Ev.stop(small[i]))
                        .append(small[i] == Ev.S_PARK ? " (" + waitReason(a[i]) + ")" : "");
            case Ev.GO_UNBLOCK -> sb.append(" by=G").append(a[i]).append(" to=").append(Ev.where(small[i]));
            case Ev.STEAL -> sb.append(" victim=P").append(a[i]).append(" n=").append(x[i]);
            case Ev.GLOBAL_BATCH -> sb.append(" n=").append(a[i]);
            case Ev.SYSCALL_EXIT -> sb.append(' ').append(Ev.outcome(small[i]));
            case Ev.HANDOFF -> sb.append(" fromM=").append(a[i]);
            case Ev.GOMAXPROCS -> sb.append(" n=").append(a[i]);
            default -> {}
        }
        return sb.toString();
    }
}
