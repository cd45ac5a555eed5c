package dev.gort.runtime.trace;

import dev.gort.runtime.WaitReason;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Writes a {@link Trace} in Go 1.19's binary execution-trace format, the one {@code go tool trace}
 * reads: Go 1.19's tool reads it natively, and every later one (1.22+ converts it, {@code
 * internal/trace/oldtrace.go}) still does. So {@code go tool trace run.trace} shows gort's run: "View
 * trace by proc", the goroutine analysis, {@code -pprof=sched|sync|syscall}.
 *
 * <p><b>Layout</b> (as Go's {@code ReadTrace} writes it): the 16-byte header {@code "go 1.19
 * trace\0\0\0"}; one batch per P ({@code EvBatch [pid, ticks]}, then the events that P's M wrote,
 * each {@code type | nargs<<6}, a timestamp delta and base-128 arguments), and one for P -1 (Go's
 * {@code traceGlobProc}: events written without a P); {@code EvFrequency}; a last batch with the
 * string ({@code EvString}) and stack ({@code EvStack}) tables. A tick is a nanosecond (frequency
 * 1e9). Go's reader merges the batches by timestamp and by each goroutine's sequence number, so
 * every event gets a tick of its own, strictly after the previous event of the merged trace (gort's
 * events that share a stamp are a nanosecond apart): the reader's merge then reproduces gort's order
 * exactly, which {@link TraceValidator} checked.
 *
 * <p><b>What maps to what</b>: GoCreate → {@code EvGoCreate} (its new stack: the goroutine's start
 * function; its stack: where it was created); GoStart → {@code EvGoStart} with the goroutine's
 * sequence number, or {@code EvGoStartLocal} where Go writes one (the goroutine's previous event was
 * on the same P); GoStop by reason: a park by wait reason (chan receive → {@code EvGoBlockRecv}, chan
 * send → {@code EvGoBlockSend}, select → {@code EvGoBlockSelect}, sync.Mutex/RWMutex/WaitGroup and
 * semaphores → {@code EvGoBlockSync}, sync.Cond → {@code EvGoBlockCond}, sleep → {@code EvGoSleep},
 * IO wait → {@code EvGoBlockNet}, a nil channel or {@code select {}} → {@code EvGoStop} as Go's,
 * anything else {@code EvGoBlock}), Gosched → {@code EvGoSched}, preemption and goyield → {@code
 * EvGoPreempt} (as Go 1.19's goyield_m), exit → {@code EvGoEnd}; GoUnblock → {@code EvGoUnblock} /
 * {@code EvGoUnblockLocal}; a cancelled park (its goroutine runs on at once) → {@code
 * EvGoUnblockLocal} + {@code EvGoStartLocal}, as Go's park_m; SyscallEnter → {@code EvGoSysCall}; a
 * hand-off of the P of a goroutine in a syscall (sysmon's retake, a stop-the-world, {@code
 * entersyscallblock}) → {@code EvGoSysBlock} + {@code EvProcStop}; the syscall's exit after a
 * hand-off → {@code EvGoSysExit} (with the exit's time) + {@code EvGoStart} on the P it runs on next,
 * nothing when the goroutine kept its P (Go's fast path); ProcStart/ProcStop → {@code
 * EvProcStart [M id]} / {@code EvProcStop}; GOMAXPROCS → {@code EvGomaxprocs}. Goroutines alive
 * when the trace starts (its status events, or in a flight-recorder window the first event naming
 * each) get {@code EvGoCreate}, then {@code EvGoWaiting} or {@code EvGoInSyscall}, or {@code
 * EvGoStart} on their P, and Ps running then an {@code EvProcStart}, before the first {@code
 * EvGomaxprocs}, as Go's StartTrace writes them; a goroutine still running when it ends gets an {@code
 * EvGoSched} there, as Go's StopTrace gives its caller (Go's tools take every run to end).
 *
 * <p><b>Left out</b>: what Go's format has no event for (run-queue kicks, spills, global batches,
 * steals, spinning, M park/unpark/creation, preemption requests and yields, timer firings), and
 * GC, heap and user annotation events, which gort does not record. <b>Differs</b>: gort records no
 * stack at a park, an unblock or a syscall; those events get a one-frame stack, the goroutine's start
 * function (an unblock: its waker's; none from outside a goroutine), so the {@code -pprof} profiles
 * attribute time per goroutine function, not per call site. A goroutine that parks inside a syscall
 * after losing its P (gort's Gs may; Go's may not) stays in the syscall for Go's tools until its
 * unblock; one that exits there has no {@code EvGoEnd}.
 *
 * <p>Go: runtime/trace.go (Go 1.19: traceEvent, traceFlush, traceString, (*traceStackTable).dump,
 * StartTrace, traceGoStart, traceGoUnpark, traceGoSysExit), internal/trace/parser.go and order.go
 * (the reader's rules)
 */
public final class GoTraceWriter {
    private GoTraceWriter() {}

    /** The file header. */
    static final byte[] HEADER = "go 1.19 trace\0\0\0".getBytes(StandardCharsets.US_ASCII);

    // Go 1.19's event types (runtime/trace.go traceEv*).
    static final int EV_BATCH = 1;
    static final int EV_FREQUENCY = 2;
    static final int EV_STACK = 3;
    static final int EV_GOMAXPROCS = 4;
    static final int EV_PROC_START = 5;
    static final int EV_PROC_STOP = 6;
    static final int EV_GO_CREATE = 13;
    static final int EV_GO_START = 14;
    static final int EV_GO_END = 15;
    static final int EV_GO_STOP = 16;
    static final int EV_GO_SCHED = 17;
    static final int EV_GO_PREEMPT = 18;
    static final int EV_GO_SLEEP = 19;
    static final int EV_GO_BLOCK = 20;
    static final int EV_GO_UNBLOCK = 21;
    static final int EV_GO_BLOCK_SEND = 22;
    static final int EV_GO_BLOCK_RECV = 23;
    static final int EV_GO_BLOCK_SELECT = 24;
    static final int EV_GO_BLOCK_SYNC = 25;
    static final int EV_GO_BLOCK_COND = 26;
    static final int EV_GO_BLOCK_NET = 27;
    static final int EV_GO_SYS_CALL = 28;
    static final int EV_GO_SYS_EXIT = 29;
    static final int EV_GO_SYS_BLOCK = 30;
    static final int EV_GO_WAITING = 31;
    static final int EV_GO_IN_SYSCALL = 32;
    static final int EV_STRING = 37;
    static final int EV_GO_START_LOCAL = 38;
    static final int EV_GO_UNBLOCK_LOCAL = 39;
    static final int EV_GO_BLOCK_GC = 42;
    static final int EV_COUNT = 50;

    /** Go's names of the event types this writer emits (internal/trace EventDescriptions). */
    static final Map<Integer, String> NAMES = Map.ofEntries(
            Map.entry(EV_BATCH, "Batch"),
            Map.entry(EV_FREQUENCY, "Frequency"),
            Map.entry(EV_STACK, "Stack"),
            Map.entry(EV_GOMAXPROCS, "Gomaxprocs"),
            Map.entry(EV_PROC_START, "ProcStart"),
            Map.entry(EV_PROC_STOP, "ProcStop"),
            Map.entry(EV_GO_CREATE, "GoCreate"),
            Map.entry(EV_GO_START, "GoStart"),
            Map.entry(EV_GO_END, "GoEnd"),
            Map.entry(EV_GO_STOP, "GoStop"),
            Map.entry(EV_GO_SCHED, "GoSched"),
            Map.entry(EV_GO_PREEMPT, "GoPreempt"),
            Map.entry(EV_GO_SLEEP, "GoSleep"),
            Map.entry(EV_GO_BLOCK, "GoBlock"),
            Map.entry(EV_GO_UNBLOCK, "GoUnblock"),
            Map.entry(EV_GO_BLOCK_SEND, "GoBlockSend"),
            Map.entry(EV_GO_BLOCK_RECV, "GoBlockRecv"),
            Map.entry(EV_GO_BLOCK_SELECT, "GoBlockSelect"),
            Map.entry(EV_GO_BLOCK_SYNC, "GoBlockSync"),
            Map.entry(EV_GO_BLOCK_COND, "GoBlockCond"),
            Map.entry(EV_GO_BLOCK_NET, "GoBlockNet"),
            Map.entry(EV_GO_BLOCK_GC, "GoBlockGC"),
            Map.entry(EV_GO_SYS_CALL, "GoSysCall"),
            Map.entry(EV_GO_SYS_EXIT, "GoSysExit"),
            Map.entry(EV_GO_SYS_BLOCK, "GoSysBlock"),
            Map.entry(EV_GO_WAITING, "GoWaiting"),
            Map.entry(EV_GO_IN_SYSCALL, "GoInSyscall"),
            Map.entry(EV_STRING, "String"),
            Map.entry(EV_GO_START_LOCAL, "GoStartLocal"),
            Map.entry(EV_GO_UNBLOCK_LOCAL, "GoUnblockLocal"));

    /** Go's traceGlobProc: the batch of events written without a P. */
    static final int GLOB_PROC = -1;

    /**
     * What a write produced: events per Go type (the Local forms under their own type), and the
     * gort events the writer could not map as they were (it adjusted the Go model, or dropped the
     * event, to keep the trace one that Go's reader accepts; none for a trace the validator accepts,
     * up to the differences listed in the class doc); {@code closed}: the goroutines still running at
     * the end, whose run an {@code EvGoSched} ends there (Go's StopTrace does so for its caller).
     */
    public record Stats(Map<Integer, Integer> counts, int adjusted, List<String> adjustments, int closed) {
        /** Events of Go type {@code ev} written. */
        public int count(int ev) {
            return counts.getOrDefault(ev, 0);
        }
    }

    /** Writes {@code t} to {@code out} in Go 1.19's format; returns what it wrote. Does not close {@code out}. */
    public static Stats write(Trace t, OutputStream out) throws IOException {
        Writer w = new Writer(t);
        w.run();
        return w.finish(out);
    }

    // ------------------------------------------------------------------------------------------

    /** Go-model goroutine states (internal/trace order.go's, with a syscall split out). */
    private static final int G_NONE = 0;

    private static final int G_RUNNABLE = 1;
    private static final int G_RUNNING = 2;
    private static final int G_WAITING = 3;
    /** In a syscall, still holding its P: Go's model has it running (EvGoSysCall, no EvGoSysBlock yet). */
    private static final int G_SYSCALL = 4;
    /** In a syscall that lost its P (EvGoSysBlock or EvGoInSyscall): Go's model has it waiting. */
    private static final int G_SYSBLOCKED = 5;

    private static final int G_DEAD = 6;

    private static final class GState {
        int st = G_NONE;
        /** The P it runs on (G_RUNNING, G_SYSCALL). */
        int p = -1;
        /** Go's sequence number as the reader counts it (1 after EvGoCreate). */
        long seq;
        /** Go's g.tracelastp: the batch of its last create, start, unblock, sched, preempt or sysexit. */
        int lastP = Integer.MIN_VALUE;
        /** The tick of its syscall exit without a P, waiting for the EvGoSysExit before its next start; -1 none. */
        long pendingExit = -1;
        /** It parked while in a blocked syscall (still in the syscall for Go's tools). */
        boolean parkedInSyscall;
    }

    /** One P's batch (or P -1's). */
    private static final class Batch {
        final Buf buf = new Buf();
        long lastTick = -1;
        boolean running;
        /** Go's lastG of the batch: the goroutine its last EvGoStart started, 0 after it stopped. */
        long g;
    }

    /** A growable byte buffer with Go's base-128 varints. */
    static final class Buf extends ByteArrayOutputStream {
        void varint(long v) {
            while ((v & ~0x7FL) != 0) {
                write((int) ((v & 0x7F) | 0x80));
                v >>>= 7;
            }
            write((int) v);
        }

        void bytes(byte[] b) {
            write(b, 0, b.length);
        }
    }

    private record Frame(String fn, String file, int line) {}

    private static final class Writer {
        final Trace t;
        final Map<Long, GState> gs = new HashMap<>();
        final TreeMap<Integer, Batch> batches = new TreeMap<>();
        final Map<Integer, Integer> counts = new TreeMap<>();
        final List<String> adjustments = new ArrayList<>();
        int adjusted;
        /** Goroutines given an EvGoSched at the end (still running). */
        int closed;
        /** The last tick given out; ticks start at 1 (Go's reader takes a syscall's block at tick 0 for none). */
        long lastTick;

        final Map<String, Long> strings = new LinkedHashMap<>();
        final Map<Frame, Long> pcs = new LinkedHashMap<>();
        final Map<List<Frame>, Long> stacks = new LinkedHashMap<>();
        final Map<Long, Long> startStack = new HashMap<>();
        final Map<Long, Long> createStack = new HashMap<>();

        Writer(Trace t) {
            this.t = t;
        }

        /**
         * The file: header, the batches (P -1's first), EvFrequency, then a batch with the string and
         * stack tables, as Go's ReadTrace ends with (*traceStackTable).dump.
         */
        Stats finish(OutputStream out) throws IOException {
            Buf f = new Buf();
            f.bytes(HEADER);
            for (Batch b : batches.values()) {
                b.buf.writeTo(f);
            }
            f.write(EV_FREQUENCY);
            f.varint(1_000_000_000L); // a tick is a nanosecond
            f.write(EV_BATCH | 1 << 6);
            f.varint(0);
            f.varint(lastTick + 1);
            for (Frame fr : pcs.keySet()) { // the frames' strings: Go's traceFrameForPC, before their stack
                string(fr.fn());
                string(fr.file());
            }
            for (Map.Entry<String, Long> e : strings.entrySet()) {
                byte[] b = e.getKey().getBytes(StandardCharsets.UTF_8);
                f.write(EV_STRING);
                f.varint(e.getValue());
                f.varint(b.length);
                f.bytes(b);
            }
            for (Map.Entry<List<Frame>, Long> e : stacks.entrySet()) {
                Buf body = new Buf();
                body.varint(e.getValue());
                body.varint(e.getKey().size());
                for (Frame fr : e.getKey()) {
                    body.varint(pcs.get(fr));
                    body.varint(string(fr.fn()));
                    body.varint(string(fr.file()));
                    body.varint(fr.line());
                }
                f.write(EV_STACK | 3 << 6);
                f.varint(body.size());
                f.bytes(body.toByteArray());
            }
            f.writeTo(out);
            return new Stats(Map.copyOf(counts), adjusted, List.copyOf(adjustments), closed);
        }

        // ---- ticks, batches, encoding

        /** The tick of an event at {@code ns}: strictly after the previous one of the trace. */
        long tick(long ns) {
            lastTick = Math.max(ns, lastTick + 1);
            return lastTick;
        }

        Batch batch(int p) {
            return batches.computeIfAbsent(p, k -> new Batch());
        }

        /**
         * Appends an event to P {@code p}'s batch: {@code type | narg<<6} (narg: the arguments after
         * the timestamp, 3 meaning "length-prefixed"), the tick delta, the arguments (a stack id last
         * for the types that have one). Go: traceEventLocked.
         */
        void emit(int p, int type, long tick, long... args) {
            Batch b = batch(p);
            if (b.lastTick < 0) {
                b.buf.write(EV_BATCH | 1 << 6);
                b.buf.varint(p); // -1 is traceGlobProc, as uint64(int32(-1))
                b.buf.varint(tick);
                b.lastTick = tick;
            }
            int narg = Math.min(args.length, 3);
            b.buf.write(type | narg << 6);
            if (narg == 3) {
                Buf body = new Buf();
                body.varint(tick - b.lastTick);
                for (long a : args) {
                    body.varint(a);
                }
                b.buf.varint(body.size());
                b.buf.bytes(body.toByteArray());
            } else {
                b.buf.varint(tick - b.lastTick);
                for (long a : args) {
                    b.buf.varint(a);
                }
            }
            b.lastTick = tick;
            counts.merge(type, 1, Integer::sum);
            switch (type) {
                case EV_GO_START, EV_GO_START_LOCAL -> b.g = args[0];
                case EV_GO_END,
                        EV_GO_STOP,
                        EV_GO_SCHED,
                        EV_GO_PREEMPT,
                        EV_GO_SLEEP,
                        EV_GO_BLOCK,
                        EV_GO_BLOCK_SEND,
                        EV_GO_BLOCK_RECV,
                        EV_GO_BLOCK_SELECT,
                        EV_GO_BLOCK_SYNC,
                        EV_GO_BLOCK_COND,
                        EV_GO_BLOCK_NET,
                        EV_GO_SYS_BLOCK -> b.g = 0;
                case EV_PROC_START -> b.running = true;
                case EV_PROC_STOP -> b.running = false;
                default -> {}
            }
        }

        void adjust(int i, String what) {
            adjusted++;
            if (adjustments.size() < 20) {
                adjustments.add(what + (i >= 0 ? "  @ " + t.describe(i) : ""));
            }
        }

        long string(String s) {
            if (s == null || s.isEmpty()) {
                return 0;
            }
            return strings.computeIfAbsent(s, k -> (long) strings.size() + 1);
        }

        /** A stack id for these frames (0 for none); each distinct frame gets a PC of its own. */
        long stack(List<Frame> frames) {
            if (frames.isEmpty()) {
                return 0;
            }
            for (Frame f : frames) {
                pcs.computeIfAbsent(f, k -> 0x1000L + 0x10L * pcs.size());
            }
            return stacks.computeIfAbsent(List.copyOf(frames), k -> (long) stacks.size() + 1);
        }

        /** The goroutine's start function as a one-frame stack (never 0: Go's goroutine analysis needs it). */
        long startStack(long goid) {
            return startStack.computeIfAbsent(goid, id -> {
                Trace.GInfo gi = t.goroutines.get(id);
                String name = gi == null || gi.name() == null || gi.name().isEmpty() ? "G" + id : gi.name();
                Frame at = gi == null ? null : parseFrame(gi.createdAt());
                // a lambda's start function is where it was written: gort's name for it is the creating
                // method's (Trace.GInfo.startName), and the creation site is its best line
                boolean lambda = name.endsWith(".func") && at != null;
                return stack(List.of(new Frame(name, lambda ? at.file() : "", lambda ? at.line() : 0)));
            });
        }

        /** Where the goroutine was created, as a one-frame stack (0: unknown). */
        long createStack(long goid) {
            return createStack.computeIfAbsent(goid, id -> {
                Trace.GInfo gi = t.goroutines.get(id);
                Frame at = gi == null ? null : parseFrame(gi.createdAt());
                return at == null ? 0L : stack(List.of(at));
            });
        }

        /** The stack of an event done by goroutine {@code goid} (its start function), 0 for none. */
        long gStack(long goid) {
            return goid == 0 ? 0 : startStack(goid);
        }

        GState g(long goid) {
            return gs.computeIfAbsent(goid, k -> new GState());
        }

        // ---- the trace

        void run() {
            int n = t.size();
            long t0 = n == 0 ? 0 : t.ts(0);
            // The status prefix: the start-state buffer's records (GOMAXPROCS, then PROC_STATUS and GO_STATUS).
            int procs = Math.max(1, t.initialProcs);
            int from = 0;
            if (n > 0 && t.code(0) == Ev.GOMAXPROCS) {
                procs = (int) t.a(0);
                from = 1;
            }
            Map<Integer, Long> pInit = new TreeMap<>(); // P -> its M (running at the start)
            Map<Long, long[]> gInit = new TreeMap<>(); // goid -> {G_* state, P}
            Map<Integer, Boolean> pSeen = new HashMap<>();
            for (int i = 0; i < n; i++) {
                int c = t.code(i);
                int p = t.p(i);
                if (c == Ev.PROC_STATUS) {
                    pSeen.put(p, true);
                    if (t.small(i) == 1 || t.small(i) == 2) { // _Prunning, _Psyscall: held by an M
                        pInit.put(p, t.m(i));
                    }
                    continue;
                }
                if (c == Ev.GO_STATUS) {
                    int st = switch (t.small(i)) {
                        case Ev.L_RUNNING -> G_RUNNING;
                        case Ev.L_WAITING -> G_WAITING;
                        case Ev.L_SYSCALL -> G_SYSBLOCKED;
                        default -> G_RUNNABLE;
                    };
                    gInit.putIfAbsent(t.g(i), new long[] {st, p});
                    continue;
                }
                // first sight of a P or G (a flight-recorder window has no status events for them)
                if (p >= 0 && c != Ev.GOMAXPROCS && pSeen.putIfAbsent(p, true) == null && c != Ev.PROC_START) {
                    pInit.put(p, t.m(i));
                }
                long goid = t.g(i);
                if (goid != 0 && !gInit.containsKey(goid)) {
                    int st = switch (c) {
                        case Ev.GO_CREATE -> G_NONE;
                        case Ev.GO_STOP, Ev.SYSCALL_ENTER, Ev.PREEMPT_REQ, Ev.PREEMPT_YIELD ->
                            p >= 0 ? G_RUNNING : G_SYSBLOCKED;
                        case Ev.GO_UNBLOCK, Ev.TIMER_FIRE -> G_WAITING;
                        case Ev.SYSCALL_EXIT -> G_SYSBLOCKED;
                        default -> G_RUNNABLE;
                    };
                    gInit.put(goid, new long[] {st, p});
                }
            }
            // Go's StartTrace: a GoCreate for every goroutine (with its GoWaiting / GoInSyscall), the Ps'
            // ProcStart and the running goroutines' GoStart, then (startTheWorld's procresize) the first
            // Gomaxprocs. Go 1.22+'s reader takes what precedes that Gomaxprocs for the state at the start,
            // and dates a goroutine running then from the trace's first event: a GoCreate, which it drops.
            for (Map.Entry<Long, long[]> e : gInit.entrySet()) {
                long goid = e.getKey();
                int st = (int) e.getValue()[0];
                if (st == G_NONE) {
                    continue;
                }
                GState s = g(goid);
                emit(GLOB_PROC, EV_GO_CREATE, tick(t0), goid, startStack(goid), createStack(goid));
                s.seq = 1;
                s.lastP = GLOB_PROC;
                s.st = G_RUNNABLE;
                if (st == G_WAITING || st == G_SYSBLOCKED) {
                    emit(GLOB_PROC, st == G_WAITING ? EV_GO_WAITING : EV_GO_IN_SYSCALL, tick(t0), goid);
                    s.seq = 2;
                    s.st = st;
                }
            }
            for (Map.Entry<Integer, Long> e : pInit.entrySet()) {
                emit(e.getKey(), EV_PROC_START, tick(t0), Math.max(0, e.getValue()));
            }
            for (Map.Entry<Long, long[]> e : gInit.entrySet()) {
                int p = (int) e.getValue()[1];
                if (e.getValue()[0] == G_RUNNING && p >= 0 && batch(p).g == 0) {
                    if (!batch(p).running) {
                        emit(p, EV_PROC_START, tick(t0), 0);
                    }
                    start(p, e.getKey(), tick(t0));
                }
            }
            emit(GLOB_PROC, EV_GOMAXPROCS, tick(t0), procs, 0);
            for (int i = from; i < n; i++) {
                event(i);
            }
            // Go's StopTrace ends the slice of the goroutine still running (traceGoSched): Go's tools take
            // every run to end (Go 1.19's viewer fails on one that does not). Here: every goroutine still
            // running, or in a syscall that kept its P.
            long end = n == 0 ? t0 : t.ts(n - 1);
            for (Map.Entry<Integer, Batch> e : batches.entrySet()) {
                long x = e.getValue().g;
                if (e.getKey() != GLOB_PROC && x != 0) {
                    emit(e.getKey(), EV_GO_SCHED, tick(end), gStack(x));
                    g(x).st = G_RUNNABLE;
                    g(x).lastP = e.getKey();
                    closed++;
                }
            }
        }

        /** Go's traceGoStart: EvGoStartLocal where the goroutine's last event was on this P, else EvGoStart. */
        void start(int p, long goid, long tick) {
            GState s = g(goid);
            if (s.lastP == p) {
                emit(p, EV_GO_START_LOCAL, tick, goid);
            } else {
                emit(p, EV_GO_START, tick, goid, s.seq);
                s.lastP = p;
            }
            s.seq++;
            s.st = G_RUNNING;
            s.p = p;
            s.parkedInSyscall = false;
        }

        /** Go's traceGoUnpark from batch {@code p} (by its current goroutine, or none). */
        void unblock(int p, long goid, long stk, long tick) {
            GState s = g(goid);
            if (s.lastP == p && p != GLOB_PROC) {
                emit(p, EV_GO_UNBLOCK_LOCAL, tick, goid, stk);
            } else {
                emit(p, EV_GO_UNBLOCK, tick, goid, s.seq, stk);
                s.lastP = p;
            }
            s.seq++;
            s.st = G_RUNNABLE;
            s.parkedInSyscall = false;
        }

        /** Go's traceGoSysExit: the goroutine leaves its syscall (it runs next on P p's batch). */
        void sysExit(int p, long goid, long exitTick, long tick) {
            GState s = g(goid);
            emit(p, EV_GO_SYS_EXIT, tick, goid, s.seq, exitTick);
            s.seq++;
            s.lastP = p;
            s.st = G_RUNNABLE;
            s.pendingExit = -1;
            s.parkedInSyscall = false;
        }

        /**
         * The batch for an event done by goroutine {@code actor} (0: none) on P {@code p}: Go's
         * reader takes the doer from the batch's current goroutine, so an event goes where its doer
         * runs, else to a P running no goroutine (a timer's unblock), else to P -1.
         */
        int batchFor(int p, long actor) {
            if (p >= 0 && batch(p).g == actor) {
                return p;
            }
            if (actor != 0) {
                GState a = gs.get(actor);
                if (a != null && (a.st == G_RUNNING || a.st == G_SYSCALL) && batch(a.p).g == actor) {
                    return a.p;
                }
            }
            if (p >= 0 && batch(p).g == 0) {
                return p;
            }
            return GLOB_PROC;
        }

        /** P p is started (Go: acquirep's ProcStart), for a G that runs on it. */
        void ensureProc(int i, int p, long m) {
            if (!batch(p).running) {
                adjust(i, "P" + p + " runs a goroutine without a ProcStart: ProcStart added");
                emit(p, EV_PROC_START, tick(t.ts(i)), Math.max(0, m));
            }
        }

        /** P p runs goroutine x in Go's model, where gort's event needs it free: x is preempted. */
        void clearP(int i, int p) {
            long x = batch(p).g;
            if (x != 0) {
                adjust(i, "P" + p + " still runs G" + x + ": GoPreempt added");
                GState s = g(x);
                emit(p, EV_GO_PREEMPT, tick(t.ts(i)), gStack(x));
                s.st = G_RUNNABLE;
                s.lastP = p;
            }
        }

        void event(int i) {
            int c = t.code(i);
            int p = t.p(i);
            long goid = t.g(i);
            long ns = t.ts(i);
            switch (c) {
                case Ev.GO_CREATE -> {
                    GState s = g(goid);
                    if (s.st != G_NONE) {
                        adjust(i, "G" + goid + " created twice: dropped");
                        return;
                    }
                    int b = batchFor(p, t.a(i));
                    long stk = createStack(goid);
                    emit(b, EV_GO_CREATE, tick(ns), goid, startStack(goid), stk);
                    s.st = G_RUNNABLE;
                    s.seq = 1;
                    s.lastP = b;
                }
                case Ev.GO_START -> goStart(i, p, goid, ns);
                case Ev.GO_STOP -> goStop(i, p, goid, ns);
                case Ev.GO_UNBLOCK -> {
                    GState s = g(goid);
                    if (s.st != G_WAITING) {
                        adjust(i, "G" + goid + " unblocked while " + s.st + ": dropped");
                        return;
                    }
                    long waker = t.a(i);
                    int b = batchFor(p, waker);
                    long stk = waker != 0 && batch(b).g == waker ? gStack(waker) : 0;
                    unblock(b, goid, stk, tick(ns));
                }
                case Ev.SYSCALL_ENTER -> {
                    GState s = g(goid);
                    if (s.st == G_SYSCALL || s.st == G_SYSBLOCKED) {
                        return; // nested, or sysmon's "syscall" of a carrier whose G entered one itself
                    }
                    if (s.st != G_RUNNING) {
                        adjust(i, "G" + goid + " enters a syscall while " + s.st + ": dropped");
                        return;
                    }
                    emit(s.p, EV_GO_SYS_CALL, tick(ns), gStack(goid));
                    s.st = G_SYSCALL;
                }
                case Ev.SYSCALL_EXIT -> sysExitEvent(i, p, goid, ns);
                case Ev.HANDOFF, Ev.PROC_STOP -> {
                    if (p < 0) {
                        return;
                    }
                    Batch b = batch(p);
                    if (b.g != 0) {
                        GState x = g(b.g);
                        if (x.st != G_SYSCALL) {
                            adjust(i, "P" + p + " stops with G" + b.g + " running: GoPreempt added");
                            clearP(i, p);
                        } else { // Go: traceGoSysBlock(pp) where the P is taken from the syscall
                            emit(p, EV_GO_SYS_BLOCK, tick(ns));
                            x.st = G_SYSBLOCKED;
                        }
                    }
                    if (b.running) {
                        emit(p, EV_PROC_STOP, tick(ns));
                    } else if (c == Ev.PROC_STOP) {
                        adjust(i, "P" + p + " stopped twice: dropped");
                    }
                }
                case Ev.PROC_START -> {
                    if (p < 0) {
                        return;
                    }
                    if (batch(p).running) {
                        adjust(i, "P" + p + " started twice: dropped");
                        return;
                    }
                    emit(p, EV_PROC_START, tick(ns), Math.max(0, t.m(i)));
                }
                case Ev.GOMAXPROCS -> emit(GLOB_PROC, EV_GOMAXPROCS, tick(ns), t.a(i), 0);
                default -> {
                    // no Go event: kicks, spills, batches, steals, spinning, Ms, preemption requests, timers
                }
            }
        }

        void goStart(int i, int p, long goid, long ns) {
            GState s = g(goid);
            if (p < 0) {
                if (s.st == G_WAITING && s.parkedInSyscall) {
                    s.st = G_SYSBLOCKED; // a cancelled park in a syscall without a P: still in it
                    return;
                }
                adjust(i, "G" + goid + " starts without a P: dropped");
                return;
            }
            if (s.st == G_RUNNING && s.p == p) {
                adjust(i, "G" + goid + " started twice: dropped");
                return;
            }
            ensureProc(i, p, t.m(i));
            if (batch(p).g != 0) {
                clearP(i, p);
            }
            switch (s.st) {
                case G_RUNNABLE -> {}
                case G_WAITING -> {
                    if (t.small(i) != Ev.F_RESUME) {
                        adjust(i, "G" + goid + " starts while waiting: GoUnblock added");
                    }
                    // Go's park_m when the unlock function cancels the park: traceGoUnpark, then execute
                    unblock(p, goid, 0, tick(ns));
                }
                case G_SYSBLOCKED -> {
                    // Go's execute after exitsyscall0: traceGoSysExit(the exit's ticks), then traceGoStart
                    long exit = s.pendingExit;
                    if (exit < 0) {
                        adjust(i, "G" + goid + " starts from a syscall it did not leave: GoSysExit added");
                        exit = 0;
                    }
                    sysExit(p, goid, exit, tick(ns));
                }
                default -> {
                    adjust(i, "G" + goid + " starts while " + s.st + ": dropped");
                    return;
                }
            }
            start(p, goid, tick(ns));
        }

        void goStop(int i, int p, long goid, long ns) {
            GState s = g(goid);
            int why = t.small(i);
            if (s.st == G_SYSCALL) {
                adjust(i, "G" + goid + " stops in a syscall it did not leave: its syscall ends here");
                s.st = G_RUNNING;
            }
            if (s.st == G_SYSBLOCKED) {
                // gort only: a G that left its syscall without getting a P parks or yields from there
                switch (why) {
                    case Ev.S_PARK -> {
                        s.st = G_WAITING;
                        s.parkedInSyscall = true;
                    }
                    case Ev.S_EXIT -> s.st = G_DEAD;
                    default -> s.pendingExit = tick(ns); // to a run queue: GoSysExit before its next start
                }
                return;
            }
            if (s.st != G_RUNNING) {
                adjust(i, "G" + goid + " stops while " + s.st + ": dropped");
                return;
            }
            int q = s.p;
            if (p >= 0 && p != q) {
                adjust(i, "G" + goid + " stops on P" + p + " but runs on P" + q + ": written on P" + q);
            }
            long stk = gStack(goid);
            switch (why) {
                case Ev.S_PARK -> {
                    int ev = blockEvent(t.a(i));
                    emit(q, ev, tick(ns), stk);
                    s.st = ev == EV_GO_STOP ? G_DEAD : G_WAITING;
                }
                case Ev.S_GOSCHED -> {
                    emit(q, EV_GO_SCHED, tick(ns), stk);
                    s.st = G_RUNNABLE;
                    s.lastP = q;
                }
                case Ev.S_PREEMPT, Ev.S_YIELD -> {
                    emit(q, EV_GO_PREEMPT, tick(ns), stk);
                    s.st = G_RUNNABLE;
                    s.lastP = q;
                }
                default -> {
                    emit(q, EV_GO_END, tick(ns));
                    s.st = G_DEAD;
                }
            }
            s.p = -1;
        }

        void sysExitEvent(int i, int p, long goid, long ns) {
            GState s = g(goid);
            if (s.st == G_SYSCALL) {
                if (p == s.p) {
                    s.st = G_RUNNING; // kept its P: Go's exitsyscall writes nothing
                    return;
                }
                adjust(i, "G" + goid + " left P" + s.p + " without a hand-off: GoSysBlock added");
                emit(s.p, EV_GO_SYS_BLOCK, tick(ns));
                s.st = G_SYSBLOCKED;
            }
            if (s.st != G_SYSBLOCKED) {
                adjust(i, "G" + goid + " leaves a syscall while " + s.st + ": dropped");
                return;
            }
            if (p >= 0) {
                ensureProc(i, p, t.m(i));
                if (batch(p).g != 0) {
                    clearP(i, p);
                }
                long exit = tick(ns);
                sysExit(p, goid, exit, tick(ns));
                start(p, goid, tick(ns));
            } else if (t.small(i) == Ev.X_NO_P) {
                s.pendingExit = tick(ns); // queued: its EvGoSysExit comes with its next start
            }
            // else gort's "running on no P for an instant" before it parks or yields (see goStop)
        }
    }

    /** Go 1.19's trace event for a park with this wait reason (its gopark call sites). */
    static int blockEvent(long reasonOrdinal) {
        WaitReason[] v = WaitReason.values();
        if (reasonOrdinal < 0 || reasonOrdinal >= v.length) {
            return EV_GO_BLOCK;
        }
        return switch (v[(int) reasonOrdinal]) {
            case CHAN_RECEIVE, SYNCTEST_CHAN_RECEIVE -> EV_GO_BLOCK_RECV;
            case CHAN_SEND, SYNCTEST_CHAN_SEND -> EV_GO_BLOCK_SEND;
            case SELECT, SYNCTEST_SELECT -> EV_GO_BLOCK_SELECT;
            case SEMACQUIRE,
                    SYNC_MUTEX_LOCK,
                    SYNC_RWMUTEX_LOCK,
                    SYNC_RWMUTEX_RLOCK,
                    SYNC_WAITGROUP_WAIT,
                    SYNCTEST_WAITGROUP_WAIT -> EV_GO_BLOCK_SYNC;
            case SYNC_COND_WAIT -> EV_GO_BLOCK_COND;
            case SLEEP -> EV_GO_SLEEP;
            case IO_WAIT -> EV_GO_BLOCK_NET;
            case GC_ASSIST_WAIT -> EV_GO_BLOCK_GC;
            case CHAN_RECEIVE_NIL_CHAN, CHAN_SEND_NIL_CHAN, SELECT_NO_CASES -> EV_GO_STOP;
            default -> EV_GO_BLOCK;
        };
    }

    /** "pkg.Class.method (File.java:12)" (GInfo.createdAt) as a frame; null for none. */
    static Frame parseFrame(String at) {
        if (at == null || at.isEmpty()) {
            return null;
        }
        int open = at.lastIndexOf(" (");
        if (open < 0 || !at.endsWith(")")) {
            return new Frame(at, "", 0);
        }
        String fn = at.substring(0, open);
        String loc = at.substring(open + 2, at.length() - 1);
        int colon = loc.lastIndexOf(':');
        int line = 0;
        String file = loc;
        if (colon >= 0) {
            try {
                line = Integer.parseInt(loc.substring(colon + 1));
                file = loc.substring(0, colon);
            } catch (NumberFormatException e) {
                // not a line number: all of it is the file
            }
        }
        return new Frame(fn, sourcePath(fn, file), line);
    }

    /** A Java source file as a path from the class's package ({@code dev/gort/examples/PrimeSieve.java}). */
    private static String sourcePath(String fn, String file) {
        int lastDot = fn.lastIndexOf('.');
        String cls = lastDot < 0 ? "" : fn.substring(0, lastDot);
        int pkgEnd = cls.lastIndexOf('.');
        return pkgEnd < 0 || file.isEmpty() ? file : cls.substring(0, pkgEnd).replace('.', '/') + "/" + file;
    }
}
