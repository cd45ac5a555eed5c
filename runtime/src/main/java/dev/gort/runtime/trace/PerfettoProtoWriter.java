package dev.gort.runtime.trace;

import com.google.protobuf.CodedOutputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;

/**
 * Writes a trace in Perfetto's protobuf trace format ({@code perfetto.protos.Trace}: a stream of
 * {@code TracePacket}s), which Perfetto's maintainers recommend over JSON for synthetic traces; ~10x
 * smaller than the JSON (see {@code docs/observability.md} for measured bytes per event). Written with
 * protobuf-java's {@link CodedOutputStream}, field by field (the messages used are listed below; their
 * field numbers are Perfetto's, which are stable by contract).
 *
 * <p>The layout follows {@link ChromeTraceWriter}'s: process "PROCS" (pid 1) with a thread track per
 * P ({@code Proc N}, tid N+1) holding a slice per run of a G named {@code G<id> <start function>},
 * instants for proc start/stop, hand-offs, steals, preemption requests and timer fires, and an
 * instant in the waker's slice ({@code go} or {@code unblock (<reason>)}) with a flow to the
 * wakee's next slice (only when that slice is in the trace: no flow has one end); a track per M for its syscalls; process "STATS" (pid 2) with counter tracks
 * (Goroutines running/runnable/waiting, Threads running/in syscall/spinning/idle, Procs idle, Global
 * runq), each sample written only when its value changes; process "THREADS" (pid 3) with a track
 * per M (tid id+1) showing the P it holds and a child track for its spinning.
 *
 * <p>Packets are written in timestamp order, on one sequence (trusted_packet_sequence_id 1) whose
 * event names and categories are interned (InternedData, the first packet clears the incremental
 * state). A slice's arguments are not written (JSON has them as {@code args}: from, inheritTime,
 * stop): the name, flows and instants carry the scheduling story; the JSON stays for args.
 *
 * <p>Messages and fields used: Trace.packet=1; TracePacket.timestamp=8, trusted_packet_sequence_id=10,
 * track_event=11, interned_data=12, sequence_flags=13, track_descriptor=60; TrackDescriptor.uuid=1,
 * name=2, process=3, thread=4, parent_uuid=5, counter=8; ProcessDescriptor.pid=1, process_name=6;
 * ThreadDescriptor.pid=1, tid=2, thread_name=5; TrackEvent.category_iids=3, type=9, name_iid=10,
 * track_uuid=11, counter_value=30, flow_ids=47 (fixed64), terminating_flow_ids=48 (fixed64);
 * InternedData.event_categories=1, event_names=2 (iid=1, name=2).
 */
public final class PerfettoProtoWriter {
    // TracePacket
    static final int PACKET = 1;
    static final int TIMESTAMP = 8;
    static final int SEQ_ID = 10;
    static final int TRACK_EVENT = 11;
    static final int INTERNED_DATA = 12;
    static final int SEQUENCE_FLAGS = 13;
    static final int TRACK_DESCRIPTOR = 60;
    static final int SEQ_INCREMENTAL_STATE_CLEARED = 1;
    static final int SEQ_NEEDS_INCREMENTAL_STATE = 2;
    // TrackDescriptor
    static final int TD_UUID = 1;
    static final int TD_NAME = 2;
    static final int TD_PROCESS = 3;
    static final int TD_THREAD = 4;
    static final int TD_PARENT = 5;
    static final int TD_COUNTER = 8;
    // TrackEvent
    static final int TE_CATEGORY_IIDS = 3;
    static final int TE_TYPE = 9;
    static final int TE_NAME_IID = 10;
    static final int TE_TRACK_UUID = 11;
    static final int TE_COUNTER_VALUE = 30;
    static final int TE_FLOW_IDS = 47;
    static final int TE_TERMINATING_FLOW_IDS = 48;
    static final int SLICE_BEGIN = 1;
    static final int SLICE_END = 2;
    static final int INSTANT = 3;
    static final int COUNTER = 4;

    // track uuids (global to the trace): processes 1..3, P n at 1000+n, M n at 1_000_000+n (+ 2^40 for
    // its syscalls, + 2^41 for its spinning), counters at 100+k
    static final long PROCS = 1;
    static final long STATS = 2;
    static final long THREADS = 3;

    static long pTrack(int p) {
        return 1000 + p;
    }

    static long mTrack(long m) {
        return 1_000_000 + m;
    }

    static long mSyscallTrack(long m) {
        return (1L << 40) + m;
    }

    static long mSpinTrack(long m) {
        return (1L << 41) + m;
    }

    private static final String[] COUNTERS = {
        "Goroutines Running",
        "Goroutines Runnable",
        "Goroutines Waiting",
        "Threads Running",
        "Threads InSyscall",
        "Threads Spinning",
        "Threads Idle",
        "Procs Idle",
        "Global runq Len"
    };

    /** A byte buffer whose contents a CodedOutputStream can write out without a copy. */
    private static final class Buf extends ByteArrayOutputStream {
        final CodedOutputStream c = CodedOutputStream.newInstance(this, 256);

        Buf() {
            super(256);
        }

        void clear() {
            reset();
        }

        /** Writes this message (flushed) as field {@code field} of {@code out}. */
        void writeTo(int field, CodedOutputStream out) throws IOException {
            c.flush();
            out.writeByteArray(field, buf, 0, count);
        }
    }

    private final Trace t;
    private final CodedOutputStream out;
    private final Buf packet = new Buf();
    private final Buf msg = new Buf();
    private final Buf sub = new Buf();
    private final Buf interned = new Buf();
    private final Map<String, Integer> names = new HashMap<>();
    private final Map<String, Integer> cats = new HashMap<>();
    private boolean firstInterned = true;
    private final long base;
    private long packets;

    private PerfettoProtoWriter(Trace t, OutputStream os) {
        this.t = t;
        this.out = CodedOutputStream.newInstance(os, 1 << 16);
        long min = 0;
        for (int i = 0; i < t.size(); i++) {
            min = Math.min(min, t.ts(i));
        }
        base = min; // timestamps are unsigned: shift if the trace starts before the session's t0
    }

    /** Writes {@code t} to {@code os} (not closed); returns the number of packets written. */
    public static long write(Trace t, OutputStream os) throws IOException {
        PerfettoProtoWriter w = new PerfettoProtoWriter(t, os);
        w.run();
        w.out.flush();
        return w.packets;
    }

    // ---- packets ----

    private void emitPacket() throws IOException {
        packet.writeTo(PACKET, out);
        packet.clear();
        packets++;
    }

    private void track(long uuid, long parent, String name, int pid, long tid, boolean process, boolean counter)
            throws IOException {
        msg.clear();
        CodedOutputStream m = msg.c;
        m.writeUInt64(TD_UUID, uuid);
        if (parent != 0 && tid == 0 && !process) { // thread tracks belong to their process by pid
            m.writeUInt64(TD_PARENT, parent);
        }
        m.writeString(TD_NAME, name);
        if (process) {
            sub.clear();
            sub.c.writeInt32(1, pid);
            sub.c.writeString(6, name);
            sub.writeTo(TD_PROCESS, m);
        } else if (tid != 0) {
            sub.clear();
            sub.c.writeInt32(1, pid);
            sub.c.writeInt32(2, (int) tid);
            sub.c.writeString(5, name);
            sub.writeTo(TD_THREAD, m);
        }
        if (counter) {
            m.writeTag(TD_COUNTER, com.google.protobuf.WireFormat.WIRETYPE_LENGTH_DELIMITED);
            m.writeUInt32NoTag(0); // an empty CounterDescriptor marks a counter track
        }
        msg.writeTo(TRACK_DESCRIPTOR, packet.c);
        emitPacket();
    }

    private int intern(Map<String, Integer> table, int field, String s) throws IOException {
        Integer iid = table.get(s);
        if (iid != null) {
            return iid;
        }
        int id = table.size() + 1;
        table.put(s, id);
        sub.clear();
        sub.c.writeUInt64(1, id);
        sub.c.writeString(2, s);
        sub.writeTo(field, interned.c);
        return id;
    }

    /** One TrackEvent packet; {@code name} null for a slice end or a counter. */
    private void event(
            long ts, long trackUuid, int type, String cat, String name, long value, long flowOut, long flowIn)
            throws IOException {
        interned.clear();
        int catIid = cat == null ? 0 : intern(cats, 1, cat);
        int nameIid = name == null ? 0 : intern(names, 2, name);
        msg.clear();
        CodedOutputStream m = msg.c;
        if (catIid != 0) {
            m.writeUInt64(TE_CATEGORY_IIDS, catIid);
        }
        m.writeEnum(TE_TYPE, type);
        if (nameIid != 0) {
            m.writeUInt64(TE_NAME_IID, nameIid);
        }
        m.writeUInt64(TE_TRACK_UUID, trackUuid);
        if (type == COUNTER) {
            m.writeInt64(TE_COUNTER_VALUE, value);
        }
        if (flowOut != 0) {
            m.writeFixed64(TE_FLOW_IDS, flowOut);
        }
        if (flowIn != 0) {
            m.writeFixed64(TE_TERMINATING_FLOW_IDS, flowIn);
        }
        CodedOutputStream p = packet.c;
        p.writeUInt64(TIMESTAMP, ts - base);
        p.writeUInt32(SEQ_ID, 1);
        msg.writeTo(TRACK_EVENT, p);
        interned.c.flush();
        if (interned.size() > 0) {
            interned.writeTo(INTERNED_DATA, p);
        }
        p.writeUInt32(
                SEQUENCE_FLAGS,
                firstInterned
                        ? SEQ_INCREMENTAL_STATE_CLEARED | SEQ_NEEDS_INCREMENTAL_STATE
                        : SEQ_NEEDS_INCREMENTAL_STATE);
        firstInterned = false;
        emitPacket();
    }

    private void begin(long ts, long track, String cat, String name, long flowIn) throws IOException {
        event(ts, track, SLICE_BEGIN, cat, name, 0, 0, flowIn);
    }

    private void end(long ts, long track) throws IOException {
        event(ts, track, SLICE_END, null, null, 0, 0, 0);
    }

    private void instant(long ts, long track, String cat, String name, long flowOut) throws IOException {
        event(ts, track, INSTANT, cat, name, 0, flowOut, 0);
    }

    // ---- the replay (ChromeTraceWriter's, written in time order) ----

    private void run() throws IOException {
        int np = t.procs(0);
        String wl = t.workload == null || t.workload.isEmpty() ? "" : " (" + t.workload + ")";
        track(PROCS, 0, "PROCS" + wl, 1, 0, true, false);
        track(STATS, 0, "STATS", 2, 0, true, false);
        track(THREADS, 0, "THREADS", 3, 0, true, false);
        for (int p = 0; p < np; p++) {
            track(pTrack(p), PROCS, "Proc " + p, 1, p + 1, false, false);
        }
        for (int k = 0; k < COUNTERS.length; k++) {
            track(100 + k, STATS, COUNTERS[k], 0, 0, false, true);
        }
        long[] last = new long[COUNTERS.length];
        java.util.Arrays.fill(last, -1);

        long[] runG = new long[np];
        Map<Long, String> lastReason = new HashMap<>();
        Map<Long, Long> pendingFlow = new HashMap<>();
        Map<Long, Integer> gloc = new HashMap<>(); // 0 runnable, 1 running, 2 waiting, 3 syscall
        int[] counts = new int[4];
        int global = 0;
        Map<Long, Integer> mHeldP = new HashMap<>();
        Set<Long> spinning = new HashSet<>();
        Set<Long> parked = new HashSet<>();
        Set<Long> inSyscall = new HashSet<>();
        Set<Long> ms = new HashSet<>();
        Set<Long> syscallTracks = new HashSet<>();
        long flowIds = 0;
        // A flow is written only if the wakee starts again in the trace (as the JSON's): which wake-ups
        // have their start is known from a backward pass, so the forward pass can stay in time order.
        java.util.BitSet started = new java.util.BitSet(t.size());
        Set<Long> startsLater = new HashSet<>();
        for (int i = t.size() - 1; i >= 0; i--) {
            int c = t.code(i);
            if (c == Ev.GO_START) {
                startsLater.add(t.g(i));
            } else if (c == Ev.GO_CREATE || c == Ev.GO_UNBLOCK) {
                if (startsLater.remove(t.g(i))) {
                    started.set(i);
                }
            }
        }

        for (int i = 0; i < t.size(); i++) {
            int code = t.code(i);
            int p = t.p(i);
            long m = t.m(i);
            long g = t.g(i);
            long ts = t.ts(i);
            if (m >= 0 && ms.add(m)) {
                track(mTrack(m), THREADS, "M" + m, 3, m + 1, false, false);
                track(mSpinTrack(m), mTrack(m), "M" + m + " spinning", 0, 0, false, false);
            }
            switch (code) {
                case Ev.GO_STATUS -> {
                    int s = t.small(i);
                    if (s == Ev.L_RUNNING && p >= 0) {
                        move(gloc, counts, g, 1);
                        runG[p] = g;
                        begin(ts, pTrack(p), "g", t.gname(g), 0);
                    } else if (s == Ev.L_WAITING) {
                        move(gloc, counts, g, 2);
                    } else if (s == Ev.L_SYSCALL) {
                        move(gloc, counts, g, 3);
                    } else {
                        move(gloc, counts, g, 0);
                        if (s == Ev.L_GLOBAL) {
                            global++;
                        }
                    }
                }
                case Ev.GO_CREATE, Ev.GO_UNBLOCK -> {
                    move(gloc, counts, g, 0);
                    if (t.small(i) >= Ev.W_GLOBAL) {
                        global++;
                    }
                    if (p >= 0 && runG[p] != 0 && started.get(i)) {
                        long id = ++flowIds;
                        String name = code == Ev.GO_CREATE ? "go" : "unblock (" + lastReason.getOrDefault(g, "?") + ")";
                        instant(ts, pTrack(p), "sched", name, id);
                        pendingFlow.put(g, id);
                    } else {
                        pendingFlow.remove(g);
                    }
                }
                case Ev.RUNQ_TO_GLOBAL -> global++;
                case Ev.GLOBAL_TO_LOCAL -> global = Math.max(0, global - 1);
                case Ev.STEAL -> {
                    int v = (int) t.a(i);
                    if (v >= 0 && t.x(i) > 0 && p >= 0) {
                        instant(ts, pTrack(p), "sched", "steal " + t.x(i) + " from P" + v, 0);
                    }
                }
                case Ev.GO_START -> {
                    if (t.small(i) == Ev.F_GLOBAL) {
                        global = Math.max(0, global - 1);
                    }
                    move(gloc, counts, g, 1);
                    if (p >= 0) {
                        if (runG[p] != 0) {
                            end(ts, pTrack(p)); // a start without a stop (never in a valid trace)
                        }
                        runG[p] = g;
                        Long f = pendingFlow.remove(g);
                        begin(ts, pTrack(p), "g", t.gname(g), f == null ? 0 : f);
                    }
                }
                case Ev.GO_STOP, Ev.SYSCALL_ENTER -> {
                    if (code == Ev.SYSCALL_ENTER) {
                        move(gloc, counts, g, 3);
                        inSyscall.add(m);
                        if (m >= 0) {
                            if (syscallTracks.add(m)) {
                                track(mSyscallTrack(m), PROCS, "Syscalls M" + m, 0, 0, false, false);
                            }
                            begin(ts, mSyscallTrack(m), "syscall", "G" + g + " syscall", 0);
                        }
                    } else {
                        int why = t.small(i);
                        if (why == Ev.S_PARK) {
                            lastReason.put(g, Trace.waitReason(t.a(i)));
                            move(gloc, counts, g, 2);
                        } else if (why == Ev.S_EXIT) {
                            move(gloc, counts, g, -1);
                        } else {
                            move(gloc, counts, g, 0);
                            if (why != Ev.S_YIELD) {
                                global++;
                            }
                        }
                    }
                    if (p >= 0 && runG[p] == g && g != 0) {
                        end(ts, pTrack(p));
                        runG[p] = 0;
                    }
                }
                case Ev.SYSCALL_EXIT -> {
                    if (inSyscall.remove(m) && syscallTracks.contains(m)) {
                        end(ts, mSyscallTrack(m));
                    }
                    if (t.small(i) == Ev.X_NO_P) {
                        move(gloc, counts, g, 0);
                        global++;
                    } else if (p >= 0) {
                        move(gloc, counts, g, 1);
                        if (runG[p] != 0) {
                            end(ts, pTrack(p));
                        }
                        runG[p] = g;
                        begin(ts, pTrack(p), "g", t.gname(g), 0);
                    }
                }
                case Ev.PROC_START, Ev.PROC_STATUS -> {
                    if (p >= 0 && m >= 0) {
                        if (mHeldP.put(m, p) != null) {
                            end(ts, mTrack(m));
                        }
                        begin(ts, mTrack(m), "m", "P" + p, 0);
                    }
                    if (code == Ev.PROC_START && p >= 0) {
                        instant(ts, pTrack(p), "proc", "proc start (M" + m + ")", 0);
                    }
                }
                case Ev.PROC_STOP, Ev.HANDOFF -> {
                    long holder = code == Ev.HANDOFF ? t.a(i) : m;
                    if (holder >= 0 && mHeldP.remove(holder) != null) {
                        end(ts, mTrack(holder));
                    }
                    if (p >= 0) {
                        instant(ts, pTrack(p), "proc", code == Ev.HANDOFF ? "handoff from M" + holder : "proc stop", 0);
                    }
                }
                case Ev.SPIN_START -> {
                    if (spinning.add(m)) {
                        begin(ts, mSpinTrack(m), "spin", "spinning", 0);
                    }
                }
                case Ev.SPIN_STOP -> {
                    if (spinning.remove(m)) {
                        end(ts, mSpinTrack(m));
                    }
                }
                case Ev.M_PARK -> parked.add(m);
                case Ev.M_UNPARK -> parked.remove(m);
                case Ev.PREEMPT_REQ -> instant(ts, pTrack(Math.max(p, 0)), "preempt", "preempt request", 0);
                case Ev.TIMER_FIRE -> instant(ts, pTrack(Math.max(p, 0)), "timer", "timer fire", 0);
                default -> {}
            }
            // counters, once per distinct timestamp and only on change
            if (i + 1 == t.size() || t.ts(i + 1) != ts) {
                long threadsRunning = Math.max(0, ms.size() - parked.size() - inSyscall.size());
                long[] v = {
                    counts[1],
                    counts[0],
                    counts[2],
                    threadsRunning,
                    inSyscall.size(),
                    spinning.size(),
                    parked.size(),
                    Math.max(0, np - mHeldP.size()),
                    global
                };
                for (int k = 0; k < v.length; k++) {
                    if (v[k] != last[k]) {
                        last[k] = v[k];
                        event(ts, 100 + k, COUNTER, null, null, v[k], 0, 0);
                    }
                }
            }
        }
        // close what is still open at the end
        long endTs = Math.max(t.endTs(), t.size() == 0 ? 0 : t.ts(t.size() - 1));
        for (int p = 0; p < np; p++) {
            if (runG[p] != 0) {
                end(endTs, pTrack(p));
            }
        }
        for (long m : inSyscall) {
            if (syscallTracks.contains(m)) {
                end(endTs, mSyscallTrack(m));
            }
        }
        for (long m : mHeldP.keySet()) {
            end(endTs, mTrack(m));
        }
        for (long m : spinning) {
            end(endTs, mSpinTrack(m));
        }
    }

    /** g moves to location {@code to} (-1: gone), keeping the per-location counts. */
    private static void move(Map<Long, Integer> gloc, int[] counts, long g, int to) {
        Integer from = to < 0 ? gloc.remove(g) : gloc.put(g, to);
        if (from != null) {
            counts[from]--;
        }
        if (to >= 0) {
            counts[to]++;
        }
    }
}
