package dev.gort.runtime.trace;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The tests' reader of Go 1.19's binary trace format, written from Go's reader
 * (internal/trace/parser.go readTrace, parseEvents, postProcessTrace; order.go order1007) so that
 * the format's rules are checked without a Go toolchain: the header, the event framing (argument
 * counts, length-prefixed events), strings and stacks, the batches (each event's P and goroutine come
 * from its batch), the merge of the batches by goroutine sequence numbers and timestamps, and the
 * goroutine and P state machine. Throws {@link IOException} with Go's wording where Go's reader
 * would fail.
 */
final class GoTraceDecoder {
    /** One event after the merge. {@code type}: the Local forms turned into their plain ones, as Go's. */
    static final class Event {
        int off;
        int type;
        int rawType;
        long ts;
        int p;
        long g;
        long stk;
        long[] args = new long[3];
        Event link;
    }

    final List<Event> events = new ArrayList<>();
    final Map<Long, String> strings = new HashMap<>();
    final Map<Long, List<String>> stacks = new HashMap<>();
    long ticksPerSec;
    /** Events per type as written (Local forms under their own type). */
    final Map<Integer, Integer> rawCounts = new TreeMap<>();
    /** Events per type after the merge (as {@code go tool trace -d} prints them). */
    final Map<Integer, Integer> counts = new TreeMap<>();

    /** Argument names after the timestamp, and whether a stack id follows (EventDescriptions). */
    private static final Map<Integer, int[]> DESC = new HashMap<>();

    static {
        // {number of args, has stack}
        d(GoTraceWriter.EV_GOMAXPROCS, 1, true);
        d(GoTraceWriter.EV_PROC_START, 1, false);
        d(GoTraceWriter.EV_PROC_STOP, 0, false);
        d(GoTraceWriter.EV_GO_CREATE, 2, true);
        d(GoTraceWriter.EV_GO_START, 2, false);
        d(GoTraceWriter.EV_GO_END, 0, false);
        for (int t = GoTraceWriter.EV_GO_STOP; t <= GoTraceWriter.EV_GO_BLOCK; t++) {
            d(t, 0, true);
        }
        d(GoTraceWriter.EV_GO_UNBLOCK, 2, true);
        for (int t = GoTraceWriter.EV_GO_BLOCK_SEND; t <= GoTraceWriter.EV_GO_SYS_CALL; t++) {
            d(t, 0, true);
        }
        d(GoTraceWriter.EV_GO_SYS_EXIT, 3, false);
        d(GoTraceWriter.EV_GO_SYS_BLOCK, 0, false);
        d(GoTraceWriter.EV_GO_WAITING, 1, false);
        d(GoTraceWriter.EV_GO_IN_SYSCALL, 1, false);
        d(GoTraceWriter.EV_GO_START_LOCAL, 1, false);
        d(GoTraceWriter.EV_GO_UNBLOCK_LOCAL, 1, true);
        d(GoTraceWriter.EV_GO_BLOCK_GC, 0, true);
    }

    private static void d(int type, int nargs, boolean stack) {
        DESC.put(type, new int[] {nargs, stack ? 1 : 0});
    }

    private final byte[] data;
    private int pos;

    private GoTraceDecoder(byte[] data) {
        this.data = data;
    }

    static GoTraceDecoder decode(byte[] data) throws IOException {
        GoTraceDecoder d = new GoTraceDecoder(data);
        d.parse();
        return d;
    }

    private long readVal() throws IOException {
        long v = 0;
        for (int i = 0; i < 10; i++) {
            if (pos >= data.length) {
                throw new IOException("failed to read trace at offset " + pos);
            }
            int b = data[pos++] & 0xFF;
            v |= (long) (b & 0x7F) << (7 * i);
            if ((b & 0x80) == 0) {
                return v;
            }
        }
        throw new IOException("bad value at offset 0x" + Integer.toHexString(pos));
    }

    private record Raw(int off, int type, long[] args) {}

    private void parse() throws IOException {
        // readTrace
        if (data.length < 16) {
            throw new IOException("failed to read header");
        }
        String header = new String(data, 0, 16, StandardCharsets.US_ASCII);
        if (!header.equals("go 1.19 trace\0\0\0")) {
            throw new IOException("not a trace file: " + header);
        }
        pos = 16;
        List<Raw> raws = new ArrayList<>();
        while (pos < data.length) {
            int off = pos;
            int b = data[pos++] & 0xFF;
            int type = b & 0x3F;
            int narg = (b >> 6) + 1;
            if (type == 0 || type >= GoTraceWriter.EV_COUNT) {
                throw new IOException("unknown event type " + type + " at offset 0x" + Integer.toHexString(off));
            }
            if (type == GoTraceWriter.EV_STRING) {
                long id = readVal();
                if (id == 0) {
                    throw new IOException("string has invalid id 0");
                }
                if (strings.containsKey(id)) {
                    throw new IOException("string has duplicate id " + id);
                }
                long len = readVal();
                if (len == 0 || len > 1e6) {
                    throw new IOException("string has invalid length " + len);
                }
                strings.put(id, new String(data, pos, (int) len, StandardCharsets.UTF_8));
                pos += (int) len;
                continue;
            }
            List<Long> args = new ArrayList<>();
            if (narg < 4) {
                for (int i = 0; i < narg; i++) {
                    args.add(readVal());
                }
            } else {
                long len = readVal();
                int start = pos;
                while (len > pos - start) {
                    args.add(readVal());
                }
                if (len != pos - start) {
                    throw new IOException("event has wrong length at offset 0x" + Integer.toHexString(off));
                }
            }
            raws.add(new Raw(off, type, args.stream().mapToLong(Long::longValue).toArray()));
        }
        // parseEvents
        long lastTs = 0;
        long lastG = 0;
        int lastP = 0;
        Map<Integer, Long> lastGs = new HashMap<>();
        Map<Integer, List<Event>> batches = new TreeMap<>();
        for (Raw r : raws) {
            switch (r.type) {
                case GoTraceWriter.EV_BATCH -> {
                    if (r.args.length != 2) {
                        throw new IOException("Batch has wrong number of arguments");
                    }
                    lastGs.put(lastP, lastG);
                    lastP = (int) r.args[0];
                    lastG = lastGs.getOrDefault(lastP, 0L);
                    lastTs = r.args[1];
                }
                case GoTraceWriter.EV_FREQUENCY -> {
                    ticksPerSec = r.args[0];
                    if (ticksPerSec <= 0) {
                        throw new IOException("time stamps out of order");
                    }
                }
                case GoTraceWriter.EV_STACK -> {
                    long size = r.args[1];
                    if (r.args.length != 2 + 4 * size) {
                        throw new IOException("EvStack has wrong number of arguments at offset 0x" + r.off);
                    }
                    List<String> frames = new ArrayList<>();
                    for (int i = 0; i < size; i++) {
                        String fn = strings.get(r.args[2 + 4 * i + 1]);
                        String file = strings.getOrDefault(r.args[2 + 4 * i + 2], "");
                        if (fn == null) {
                            throw new IOException("frame function string " + r.args[2 + 4 * i + 1] + " undefined");
                        }
                        frames.add(fn + " " + file + ":" + r.args[2 + 4 * i + 3]);
                    }
                    stacks.put(r.args[0], frames);
                }
                default -> {
                    int[] desc = DESC.get(r.type);
                    if (desc == null) {
                        throw new IOException("unexpected event type " + r.type);
                    }
                    int want = 1 + desc[0] + desc[1];
                    if (r.args.length != want) {
                        throw new IOException(
                                GoTraceWriter.NAMES.get(r.type) + " has wrong number of arguments at offset 0x"
                                        + Integer.toHexString(r.off) + ": want " + want + ", got " + r.args.length);
                    }
                    Event e = new Event();
                    e.off = r.off;
                    e.type = r.type;
                    e.rawType = r.type;
                    e.p = lastP;
                    e.g = lastG;
                    e.ts = lastTs + r.args[0];
                    lastTs = e.ts;
                    for (int i = 1; i < r.args.length; i++) {
                        if (i == r.args.length - 1 && desc[1] == 1) {
                            e.stk = r.args[i];
                        } else {
                            e.args[i - 1] = r.args[i];
                        }
                    }
                    switch (r.type) {
                        case GoTraceWriter.EV_GO_START, GoTraceWriter.EV_GO_START_LOCAL -> {
                            lastG = e.args[0];
                            e.g = lastG;
                        }
                        case GoTraceWriter.EV_GO_END,
                                GoTraceWriter.EV_GO_STOP,
                                GoTraceWriter.EV_GO_SCHED,
                                GoTraceWriter.EV_GO_PREEMPT,
                                GoTraceWriter.EV_GO_SLEEP,
                                GoTraceWriter.EV_GO_BLOCK,
                                GoTraceWriter.EV_GO_BLOCK_SEND,
                                GoTraceWriter.EV_GO_BLOCK_RECV,
                                GoTraceWriter.EV_GO_BLOCK_SELECT,
                                GoTraceWriter.EV_GO_BLOCK_SYNC,
                                GoTraceWriter.EV_GO_BLOCK_COND,
                                GoTraceWriter.EV_GO_BLOCK_NET,
                                GoTraceWriter.EV_GO_SYS_BLOCK,
                                GoTraceWriter.EV_GO_BLOCK_GC -> lastG = 0;
                        case GoTraceWriter.EV_GO_SYS_EXIT,
                                GoTraceWriter.EV_GO_WAITING,
                                GoTraceWriter.EV_GO_IN_SYSCALL -> e.g = e.args[0];
                        default -> {}
                    }
                    rawCounts.merge(r.type, 1, Integer::sum);
                    batches.computeIfAbsent(lastP, k -> new ArrayList<>()).add(e);
                }
            }
        }
        if (batches.isEmpty()) {
            throw new IOException("trace is empty");
        }
        if (ticksPerSec == 0) {
            throw new IOException("no EvFrequency event");
        }
        order(batches);
        for (Event e : events) {
            counts.merge(e.type, 1, Integer::sum);
        }
        postProcess();
    }

    // order.go
    private static final int DEAD = 0;
    private static final int RUNNABLE = 1;
    private static final int RUNNING = 2;
    private static final int WAITING = 3;
    private static final long NOSEQ = -1;
    private static final long SEQINC = -2;
    private static final long UNORDERED = -1;

    private record Transition(long g, long initSeq, int initStatus, long nextSeq, int nextStatus) {}

    private static Transition transition(Event e) {
        return switch (e.type) {
            case GoTraceWriter.EV_GO_CREATE -> new Transition(e.args[0], 0, DEAD, 1, RUNNABLE);
            case GoTraceWriter.EV_GO_WAITING, GoTraceWriter.EV_GO_IN_SYSCALL ->
                new Transition(e.g, 1, RUNNABLE, 2, WAITING);
            case GoTraceWriter.EV_GO_START -> new Transition(e.g, e.args[1], RUNNABLE, e.args[1] + 1, RUNNING);
            case GoTraceWriter.EV_GO_START_LOCAL -> new Transition(e.g, NOSEQ, RUNNABLE, SEQINC, RUNNING);
            case GoTraceWriter.EV_GO_BLOCK,
                    GoTraceWriter.EV_GO_BLOCK_SEND,
                    GoTraceWriter.EV_GO_BLOCK_RECV,
                    GoTraceWriter.EV_GO_BLOCK_SELECT,
                    GoTraceWriter.EV_GO_BLOCK_SYNC,
                    GoTraceWriter.EV_GO_BLOCK_COND,
                    GoTraceWriter.EV_GO_BLOCK_NET,
                    GoTraceWriter.EV_GO_SLEEP,
                    GoTraceWriter.EV_GO_SYS_BLOCK,
                    GoTraceWriter.EV_GO_BLOCK_GC -> new Transition(e.g, NOSEQ, RUNNING, NOSEQ, WAITING);
            case GoTraceWriter.EV_GO_SCHED, GoTraceWriter.EV_GO_PREEMPT ->
                new Transition(e.g, NOSEQ, RUNNING, NOSEQ, RUNNABLE);
            case GoTraceWriter.EV_GO_UNBLOCK, GoTraceWriter.EV_GO_SYS_EXIT ->
                new Transition(e.args[0], e.args[1], WAITING, e.args[1] + 1, RUNNABLE);
            case GoTraceWriter.EV_GO_UNBLOCK_LOCAL -> new Transition(e.args[0], NOSEQ, WAITING, SEQINC, RUNNABLE);
            default -> new Transition(UNORDERED, 0, 0, 0, 0);
        };
    }

    private void order(Map<Integer, List<Event>> m) throws IOException {
        List<List<Event>> batches = new ArrayList<>(m.values());
        int[] next = new int[batches.size()];
        Map<Long, long[]> gs = new HashMap<>(); // g -> {seq, status}
        int pending = 0;
        for (List<Event> b : batches) {
            pending += b.size();
        }
        for (; pending > 0; pending--) {
            Event best = null;
            int bestBatch = -1;
            Transition bestTr = null;
            for (int i = 0; i < batches.size(); i++) {
                if (next[i] >= batches.get(i).size()) {
                    continue;
                }
                Event e = batches.get(i).get(next[i]);
                Transition tr = transition(e);
                if (!ready(tr, gs)) {
                    continue;
                }
                if (best == null || e.ts < best.ts) {
                    best = e;
                    bestBatch = i;
                    bestTr = tr;
                }
            }
            if (best == null) {
                throw new IOException("no consistent ordering of events possible");
            }
            next[bestBatch]++;
            switch (best.type) {
                case GoTraceWriter.EV_GO_START_LOCAL -> best.type = GoTraceWriter.EV_GO_START;
                case GoTraceWriter.EV_GO_UNBLOCK_LOCAL -> best.type = GoTraceWriter.EV_GO_UNBLOCK;
                default -> {}
            }
            if (bestTr.g() != UNORDERED) {
                long[] cur = gs.getOrDefault(bestTr.g(), new long[] {0, DEAD});
                long seq =
                        bestTr.nextSeq() == NOSEQ ? cur[0] : bestTr.nextSeq() == SEQINC ? cur[0] + 1 : bestTr.nextSeq();
                gs.put(bestTr.g(), new long[] {seq, bestTr.nextStatus()});
            }
            events.add(best);
        }
        for (int i = 1; i < events.size(); i++) {
            if (events.get(i).ts < events.get(i - 1).ts) {
                throw new IOException("time stamps out of order");
            }
        }
        Map<Long, Long> lastSysBlock = new HashMap<>();
        for (Event e : events) {
            if (e.type == GoTraceWriter.EV_GO_SYS_BLOCK || e.type == GoTraceWriter.EV_GO_IN_SYSCALL) {
                lastSysBlock.put(e.g, e.ts);
            } else if (e.type == GoTraceWriter.EV_GO_SYS_EXIT && e.args[2] != 0) {
                long block = lastSysBlock.getOrDefault(e.g, 0L);
                if (block == 0) {
                    throw new IOException("stray syscall exit");
                }
                if (e.args[2] < block) {
                    throw new IOException("time stamps out of order");
                }
                e.ts = e.args[2];
            }
        }
        events.sort((a, b) -> Long.compare(a.ts, b.ts)); // stable
    }

    private static boolean ready(Transition tr, Map<Long, long[]> gs) {
        if (tr.g() == UNORDERED) {
            return true;
        }
        long[] cur = gs.getOrDefault(tr.g(), new long[] {0, DEAD});
        return (tr.initSeq() == NOSEQ || tr.initSeq() == cur[0]) && tr.initStatus() == cur[1];
    }

    // parser.go postProcessTrace
    private static final class GDesc {
        int state = DEAD;
        Event ev;
        Event evStart;
        Event evCreate;
    }

    private void postProcess() throws IOException {
        Map<Long, GDesc> gs = new HashMap<>();
        Map<Integer, long[]> ps = new HashMap<>(); // p -> {running 0/1, g}
        GDesc g0 = new GDesc();
        g0.state = RUNNING;
        gs.put(0L, g0);
        for (Event ev : events) {
            GDesc g = gs.computeIfAbsent(ev.g, k -> new GDesc());
            long[] p = ps.computeIfAbsent(ev.p, k -> new long[2]);
            String name = GoTraceWriter.NAMES.getOrDefault(ev.type, "?" + ev.type);
            switch (ev.type) {
                case GoTraceWriter.EV_PROC_START -> {
                    if (p[0] != 0) {
                        throw err("p " + ev.p + " is running before start", ev);
                    }
                    p[0] = 1;
                }
                case GoTraceWriter.EV_PROC_STOP -> {
                    if (p[0] == 0) {
                        throw err("p " + ev.p + " is not running before stop", ev);
                    }
                    if (p[1] != 0) {
                        throw err("p " + ev.p + " is running a goroutine " + p[1] + " during stop", ev);
                    }
                    p[0] = 0;
                }
                case GoTraceWriter.EV_GO_WAITING, GoTraceWriter.EV_GO_IN_SYSCALL -> {
                    if (g.state != RUNNABLE) {
                        throw err("g " + ev.g + " is not runnable before " + name, ev);
                    }
                    g.state = WAITING;
                    g.ev = ev;
                }
                case GoTraceWriter.EV_GO_CREATE -> {
                    checkRunning(p, g, ev, true);
                    if (gs.containsKey(ev.args[0])) {
                        throw err("g " + ev.args[0] + " already exists", ev);
                    }
                    GDesc ng = new GDesc();
                    ng.state = RUNNABLE;
                    ng.ev = ev;
                    ng.evCreate = ev;
                    gs.put(ev.args[0], ng);
                }
                case GoTraceWriter.EV_GO_START -> {
                    if (g.state != RUNNABLE) {
                        throw err("g " + ev.g + " is not runnable before start", ev);
                    }
                    if (p[1] != 0) {
                        throw err("p " + ev.p + " is already running g " + p[1] + " while start g " + ev.g, ev);
                    }
                    g.state = RUNNING;
                    g.evStart = ev;
                    p[1] = ev.g;
                    if (g.evCreate != null) {
                        ev.stk = g.evCreate.args[1];
                        g.evCreate = null;
                        // internal/trace GoroutineStats reads ev.Stk[0] of a goroutine's first start
                        if (!stacks.containsKey(ev.stk) || stacks.get(ev.stk).isEmpty()) {
                            throw err("g " + ev.g + "'s first start has no stack (goroutine analysis needs one)", ev);
                        }
                    }
                    if (g.ev != null) {
                        g.ev.link = ev;
                        g.ev = null;
                    }
                }
                case GoTraceWriter.EV_GO_END, GoTraceWriter.EV_GO_STOP -> {
                    checkRunning(p, g, ev, false);
                    g.evStart.link = ev;
                    g.evStart = null;
                    g.state = DEAD;
                    p[1] = 0;
                }
                case GoTraceWriter.EV_GO_SCHED, GoTraceWriter.EV_GO_PREEMPT -> {
                    checkRunning(p, g, ev, false);
                    g.state = RUNNABLE;
                    g.evStart.link = ev;
                    g.evStart = null;
                    p[1] = 0;
                    g.ev = ev;
                }
                case GoTraceWriter.EV_GO_UNBLOCK -> {
                    if (g.state != RUNNING) {
                        throw err("g " + ev.g + " is not running while unpark", ev);
                    }
                    if (p[1] != ev.g) {
                        throw err("p " + ev.p + " is not running g " + ev.g + " while unpark", ev);
                    }
                    GDesc g1 = gs.computeIfAbsent(ev.args[0], k -> new GDesc());
                    if (g1.state != WAITING) {
                        throw err("g " + ev.args[0] + " is not waiting before unpark", ev);
                    }
                    if (g1.ev != null) {
                        g1.ev.link = ev;
                    }
                    g1.state = RUNNABLE;
                    g1.ev = ev;
                }
                case GoTraceWriter.EV_GO_SYS_CALL -> {
                    checkRunning(p, g, ev, false);
                    g.ev = ev;
                }
                case GoTraceWriter.EV_GO_SYS_BLOCK -> {
                    checkRunning(p, g, ev, false);
                    g.state = WAITING;
                    g.evStart.link = ev;
                    g.evStart = null;
                    p[1] = 0;
                }
                case GoTraceWriter.EV_GO_SYS_EXIT -> {
                    if (g.state != WAITING) {
                        throw err("g " + ev.g + " is not waiting during syscall exit", ev);
                    }
                    if (g.ev != null && g.ev.type == GoTraceWriter.EV_GO_SYS_CALL) {
                        g.ev.link = ev;
                    }
                    g.state = RUNNABLE;
                    g.ev = ev;
                }
                case GoTraceWriter.EV_GO_SLEEP,
                        GoTraceWriter.EV_GO_BLOCK,
                        GoTraceWriter.EV_GO_BLOCK_SEND,
                        GoTraceWriter.EV_GO_BLOCK_RECV,
                        GoTraceWriter.EV_GO_BLOCK_SELECT,
                        GoTraceWriter.EV_GO_BLOCK_SYNC,
                        GoTraceWriter.EV_GO_BLOCK_COND,
                        GoTraceWriter.EV_GO_BLOCK_NET,
                        GoTraceWriter.EV_GO_BLOCK_GC -> {
                    checkRunning(p, g, ev, false);
                    g.state = WAITING;
                    g.ev = ev;
                    g.evStart.link = ev;
                    g.evStart = null;
                    p[1] = 0;
                }
                default -> {}
            }
        }
        // cmd/trace (Go 1.19's generateTrace, makeSlice) reads the end of every run: ev.Link of its EvGoStart
        for (Map.Entry<Long, GDesc> e : gs.entrySet()) {
            if (e.getKey() != 0 && e.getValue().state == RUNNING && e.getValue().evStart != null) {
                throw err("g " + e.getKey() + " still runs at the end: its run has no end", e.getValue().evStart);
            }
        }
    }

    private static void checkRunning(long[] p, GDesc g, Event ev, boolean allowG0) throws IOException {
        String name = GoTraceWriter.NAMES.getOrDefault(ev.type, "?");
        if (g.state != RUNNING) {
            throw err("g " + ev.g + " is not running while " + name, ev);
        }
        if (p[1] != ev.g) {
            throw err("p " + ev.p + " is not running g " + ev.g + " while " + name, ev);
        }
        if (!allowG0 && ev.g == 0) {
            throw err("g 0 did " + name, ev);
        }
    }

    private static IOException err(String msg, Event ev) {
        return new IOException(msg + " (offset " + ev.off + ", time " + ev.ts + ")");
    }

    /** Events of (merged) type {@code type}. */
    int count(int type) {
        return counts.getOrDefault(type, 0);
    }
}
