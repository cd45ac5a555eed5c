package dev.gort.runtime.trace;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Replays a trace and checks the simulator's invariants (reference 004: "every goroutine runs to
 * completion, the CPU time used equals the work requested, and no goroutine is ever in two places
 * at once"), plus the ones a real run adds:
 * <ul>
 *   <li><b>No G in two places</b>: every G has exactly one location (runnext or ring of one P, the
 *       global queue, running on one P, waiting, in a syscall on one M, dead, or taken: see below)
 *       and every event that moves it names where it must come from; a move from anywhere else is a
 *       violation.
 *   <li><b>One G in a P's runnext</b>, as the HTML timeline's card shows it: a G put into a runnext
 *       that the replay still fills moves the G there to <i>taken</i>. Either the put's own
 *       RunqKick (or RunqToGlobal) of that G follows, or a thief emptied the runnext before the put:
 *       runqsteal's runnext steal records no event, only the thief's GoStart (from stolen), which
 *       may come much later when the thief's carrier is descheduled in between.
 *   <li><b>Queue operations conserve Gs</b>: kick, spill, global batch, steal, start and stop each
 *       move named Gs between locations, so the number of Gs per location always adds up
 *       (created = runnable + running + waiting + in syscall + dead), checked at every event.
 *   <li><b>P lanes never overlap</b>: a P starts a G only when it runs none; an M runs one G at a
 *       time; a P is held by one M at a time.
 *   <li><b>Spins pair up per M</b>: an M's SpinStop follows a SpinStart of that M, it starts no
 *       spin while spinning, and it parks or wakes up only between spins (Go's stopm and the
 *       idle netpoll refuse a spinning M). An M is known to be idle from its MCreate or its first
 *       park or wake-up on; before that (a trace that starts mid-spin) its first SpinStop passes.
 *   <li><b>Completion</b>: at the end every G is dead or blocked (waiting), when asked for.
 *   <li><b>CPU time vs work</b>: for workloads that declare busy work per G, the G's run slices add
 *       up to at least the work it did (a real P cannot do W ns of work in less than W ns); the
 *       ratio is reported. (In the simulator time is virtual and the two are equal; on a real
 *       machine the slices also hold scheduling and OS noise, so only the lower bound is exact.)
 * </ul>
 * Traces that start mid-run (the API on a running runtime, a flight-recorder window) begin with
 * status events; a G first seen in a later event is placed where that event says it was.
 */
public final class TraceValidator {
    // locations
    static final int NONE = -1;
    static final int RUNNEXT = 0;
    static final int LOCAL = 1;
    static final int GLOBAL = 2;
    static final int RUNNING = 3;
    static final int WAITING = 4;
    static final int SYSCALL = 5;
    static final int DEAD = 6;
    /** Out of its P's runnext without an event yet: kicked (the kick follows) or stolen (see the class doc). */
    static final int TAKEN = 7;

    static final String[] LOC = {"runnext", "local", "global", "running", "waiting", "syscall", "dead", "taken"};

    /** Per-G state. */
    public static final class GState {
        final long goid;
        int loc = NONE;
        int p = -1;
        long m = -1;
        long runStart;
        /** ns spent running (sum of its slices). */
        public long cpu;

        public int slices;
        public boolean created;

        GState(long goid) {
            this.goid = goid;
        }
    }

    private final Trace t;
    private final Map<Long, GState> gs = new HashMap<>();
    private final List<String> errors = new ArrayList<>();
    private final long[] pRunning;
    private final long[] pOwner;
    private final Map<Long, Long> mRunning = new HashMap<>();
    /** Per M, whether the replay has it spinning; absent until an event tells (see the class doc). */
    private final Map<Long, Boolean> mSpinning = new HashMap<>();

    private final int[] perLoc = new int[LOC.length];
    /** Per P, the G the replay has in its runnext (0: none). */
    private final long[] pRunnext;

    private final boolean lenientStart;
    private int maxErrors = 50;

    private TraceValidator(Trace t) {
        this.t = t;
        int maxP = 1;
        for (int i = 0; i < t.size(); i++) {
            maxP = Math.max(maxP, t.p(i) + 1);
            if (t.code(i) == Ev.GOMAXPROCS) {
                maxP = Math.max(maxP, (int) t.a(i));
            }
        }
        pRunning = new long[maxP];
        pOwner = new long[maxP];
        pRunnext = new long[maxP];
        java.util.Arrays.fill(pOwner, -1);
        lenientStart = !t.complete;
    }

    /** The result of a replay. */
    public static final class Result {
        public final List<String> errors;
        public final Map<Long, GState> goroutines;
        public final int events;

        Result(List<String> errors, Map<Long, GState> gs, int events) {
            this.errors = errors;
            this.goroutines = gs;
            this.events = events;
        }

        public boolean ok() {
            return errors.isEmpty();
        }

        /** Total running time of all Gs, ns. */
        public long cpu() {
            long c = 0;
            for (GState s : goroutines.values()) {
                c += s.cpu;
            }
            return c;
        }

        public long count(int loc) {
            return goroutines.values().stream().filter(s -> s.loc == loc).count();
        }

        @Override
        public String toString() {
            return errors.isEmpty()
                    ? "ok (" + events + " events, " + goroutines.size() + " goroutines)"
                    : errors.size() + " violations:\n  " + String.join("\n  ", errors);
        }
    }

    /** Replays {@code t}: location and lane invariants only. */
    public static Result validate(Trace t) {
        return validate(t, false, Map.of());
    }

    /**
     * Replays {@code t}. With {@code requireDoneOrBlocked}, every G must end dead or waiting;
     * {@code workNanos} maps goids to the busy work each declared (their slices must cover it).
     */
    public static Result validate(Trace t, boolean requireDoneOrBlocked, Map<Long, Long> workNanos) {
        TraceValidator v = new TraceValidator(t);
        v.run();
        if (requireDoneOrBlocked) {
            for (Map.Entry<Long, GState> e : v.gs.entrySet()) {
                int loc = e.getValue().loc;
                if (loc != DEAD && loc != WAITING) {
                    v.err(-1, "G" + e.getKey() + " neither finished nor blocked at the end: " + locName(e.getValue()));
                }
            }
        }
        for (Map.Entry<Long, Long> w : workNanos.entrySet()) {
            GState s = v.gs.get(w.getKey());
            if (s == null) {
                v.err(-1, "G" + w.getKey() + " declared work but never appears in the trace");
            } else if (s.loc != DEAD) {
                v.err(-1, "G" + w.getKey() + " declared work but did not finish: " + locName(s));
            } else if (s.cpu < w.getValue()) {
                v.err(-1, "G" + w.getKey() + " ran " + s.cpu + " ns but declared " + w.getValue() + " ns of work");
            }
        }
        return new Result(v.errors, v.gs, t.size());
    }

    private static String locName(GState s) {
        return s.loc < 0
                ? "never placed"
                : LOC[s.loc] + (s.p >= 0 ? " P" + s.p : "") + (s.m >= 0 && s.loc >= RUNNING ? " M" + s.m : "");
    }

    private void err(int i, String msg) {
        if (errors.size() < maxErrors) {
            errors.add(i < 0 ? msg : msg + "  @ " + t.describe(i));
        }
    }

    private GState g(long goid) {
        return gs.computeIfAbsent(goid, GState::new);
    }

    private void move(int i, GState s, int loc, int p, long m) {
        if (s.loc >= 0) {
            perLoc[s.loc]--;
        }
        if (s.loc == RUNNEXT && s.p >= 0 && pRunnext[s.p] == s.goid) {
            pRunnext[s.p] = 0;
        }
        if (loc == RUNNEXT && p >= 0) {
            long held = pRunnext[p];
            GState old = held != 0 && held != s.goid ? gs.get(held) : null;
            if (old != null && old.loc == RUNNEXT && old.p == p) {
                move(i, old, TAKEN, p, old.m); // keeps its P: the kick or the thief's start names it
            }
            pRunnext[p] = s.goid;
        }
        s.loc = loc;
        s.p = p;
        s.m = m;
        perLoc[loc]++;
    }

    /** The G must be at one of the given locations (and on P {@code p} for per-P ones, if p >= 0). */
    private boolean expect(int i, long goid, GState s, int p, int... locs) {
        if (s.loc == NONE && lenientStart) {
            return true; // first sight of a G in a windowed trace
        }
        for (int l : locs) {
            if (s.loc == l && (p < 0 || (l != RUNNEXT && l != LOCAL && l != RUNNING && l != TAKEN) || s.p == p)) {
                return true;
            }
        }
        StringBuilder want = new StringBuilder();
        for (int l : locs) {
            want.append(want.length() == 0 ? "" : "|").append(LOC[l]);
        }
        err(i, "G" + goid + " expected in " + want + (p >= 0 ? " of P" + p : "") + " but is " + locName(s));
        return false;
    }

    /**
     * The replayed state after every event with a timestamp &lt;= {@code ts} (what the HTML timeline
     * shows with its cursor at {@code ts}): per-G locations only, no end-of-trace checks.
     */
    public static Result stateAt(Trace t, long ts) {
        TraceValidator v = new TraceValidator(t);
        int last = -1;
        for (int i = 0; i < t.size() && t.ts(i) <= ts; i++) {
            last = i;
        }
        v.limit = last + 1;
        v.run();
        return new Result(v.errors, v.gs, v.limit);
    }

    private int limit = Integer.MAX_VALUE;

    /**
     * Location of a G in a result: "running", "runnext", "local", "global", "waiting", "syscall",
     * "dead", or "taken" (out of its P's runnext, kicked or stolen, the event saying which to come).
     */
    public static String loc(GState s) {
        return s.loc < 0 ? "none" : LOC[s.loc];
    }

    /** P of a G in a result (runnext/local/running/taken), or -1. */
    public static int p(GState s) {
        return s.p;
    }

    private void run() {
        int n = Math.min(t.size(), limit);
        long created = 0;
        for (int i = 0; i < n; i++) {
            int code = t.code(i);
            int p = t.p(i);
            long m = t.m(i);
            long goid = t.g(i);
            long ts = t.ts(i);
            switch (code) {
                case Ev.GO_STATUS -> {
                    GState s = g(goid);
                    if (s.loc != NONE) {
                        err(i, "G" + goid + " has two start statuses");
                    }
                    s.created = true;
                    created++;
                    int loc = switch (t.small(i)) {
                        case Ev.L_RUNNEXT -> RUNNEXT;
                        case Ev.L_LOCAL -> LOCAL;
                        case Ev.L_GLOBAL -> GLOBAL;
                        case Ev.L_RUNNING -> RUNNING;
                        case Ev.L_SYSCALL -> SYSCALL;
                        default -> WAITING;
                    };
                    move(i, s, loc, p, m);
                    if (loc == RUNNING) {
                        s.runStart = ts;
                        if (p >= 0) {
                            pRunning[p] = goid;
                        }
                        mRunning.put(m, goid);
                    }
                }
                case Ev.GO_CREATE -> {
                    GState s = g(goid);
                    if (s.created || s.loc != NONE) {
                        err(i, "G" + goid + " created twice");
                    }
                    s.created = true;
                    created++;
                    move(i, s, placed(t.small(i)), p, -1);
                }
                case Ev.GO_START -> {
                    GState s = g(goid);
                    int from = t.small(i);
                    switch (from) {
                        case Ev.F_RUNNEXT -> expect(i, goid, s, p, RUNNEXT);
                        case Ev.F_LOCAL -> expect(i, goid, s, p, LOCAL);
                        case Ev.F_GLOBAL -> expect(i, goid, s, -1, GLOBAL);
                        case Ev.F_STOLEN -> expect(i, goid, s, (int) t.a(i), RUNNEXT, LOCAL, TAKEN);
                        case Ev.F_RESUME -> expect(i, goid, s, -1, WAITING);
                        default -> err(i, "unknown start source");
                    }
                    if (p < 0) {
                        err(i, "G" + goid + " started without a P");
                    } else {
                        if (pRunning[p] != 0) {
                            err(i, "P lanes overlap: P" + p + " starts G" + goid + " while running G" + pRunning[p]);
                        }
                        pRunning[p] = goid;
                        if (pOwner[p] != m && pOwner[p] != -1) {
                            err(i, "G" + goid + " starts on P" + p + " held by M" + pOwner[p] + ", not M" + m);
                        }
                    }
                    Long other = mRunning.get(m);
                    if (other != null && other != 0) {
                        err(i, "M" + m + " starts G" + goid + " while running G" + other);
                    }
                    mRunning.put(m, goid);
                    move(i, s, RUNNING, p, m);
                    s.runStart = ts;
                    s.slices++;
                }
                case Ev.GO_STOP -> {
                    GState s = g(goid);
                    if (expect(i, goid, s, p, RUNNING)) {
                        if (s.loc == RUNNING) {
                            s.cpu += ts - s.runStart;
                        }
                    }
                    if (p >= 0) {
                        if (pRunning[p] != goid && !(lenientStart && pRunning[p] == 0)) {
                            err(i, "P" + p + " stops G" + goid + " but runs G" + pRunning[p]);
                        }
                        pRunning[p] = 0;
                    }
                    mRunning.put(m, 0L);
                    int loc = switch (t.small(i)) {
                        case Ev.S_PARK -> WAITING;
                        case Ev.S_GOSCHED, Ev.S_PREEMPT -> GLOBAL;
                        case Ev.S_YIELD -> LOCAL;
                        default -> DEAD;
                    };
                    move(i, s, loc, loc == LOCAL ? p : -1, -1);
                }
                case Ev.GO_UNBLOCK -> {
                    GState s = g(goid);
                    expect(i, goid, s, -1, WAITING);
                    move(i, s, placed(t.small(i)), p, -1);
                }
                case Ev.RUNQ_KICK -> {
                    GState s = g(goid);
                    expect(i, goid, s, p, RUNNEXT, TAKEN);
                    move(i, s, LOCAL, p, -1);
                }
                case Ev.RUNQ_TO_GLOBAL -> {
                    GState s = g(goid);
                    expect(i, goid, s, p, RUNNEXT, LOCAL, TAKEN);
                    move(i, s, GLOBAL, -1, -1);
                }
                case Ev.GLOBAL_BATCH -> {
                    if (goid != 0) {
                        expect(i, goid, g(goid), -1, GLOBAL);
                    }
                    if (t.a(i) > perLoc[GLOBAL] && !lenientStart) {
                        err(i, "global batch of " + t.a(i) + " from a global queue of " + perLoc[GLOBAL]);
                    }
                }
                case Ev.GLOBAL_TO_LOCAL -> {
                    GState s = g(goid);
                    expect(i, goid, s, -1, GLOBAL);
                    move(i, s, LOCAL, p, -1);
                }
                case Ev.STEAL -> {
                    GState s = g(goid);
                    expect(i, goid, s, (int) t.a(i), RUNNEXT, LOCAL);
                    move(i, s, LOCAL, p, -1);
                }
                case Ev.SYSCALL_ENTER -> {
                    GState s = g(goid);
                    if (expect(i, goid, s, p, RUNNING) && s.loc == RUNNING) {
                        s.cpu += ts - s.runStart;
                    }
                    if (p >= 0 && pRunning[p] == goid) {
                        pRunning[p] = 0;
                    }
                    mRunning.put(m, 0L);
                    move(i, s, SYSCALL, -1, m);
                }
                case Ev.SYSCALL_EXIT -> {
                    GState s = g(goid);
                    expect(i, goid, s, -1, SYSCALL);
                    if (t.small(i) == Ev.X_NO_P) {
                        move(i, s, GLOBAL, -1, -1);
                    } else {
                        if (p >= 0) {
                            if (pRunning[p] != 0) {
                                err(
                                        i,
                                        "P lanes overlap: P" + p + " resumes G" + goid
                                                + " from a syscall while running G" + pRunning[p]);
                            }
                            pRunning[p] = goid;
                        }
                        mRunning.put(m, goid);
                        move(i, s, RUNNING, p, m);
                        s.runStart = ts;
                        s.slices++;
                    }
                }
                case Ev.PROC_START -> {
                    if (p >= 0 && pOwner[p] != -1 && pOwner[p] != m) {
                        err(i, "P" + p + " acquired by M" + m + " while held by M" + pOwner[p]);
                    }
                    if (p >= 0) {
                        pOwner[p] = m;
                    }
                }
                case Ev.PROC_STOP -> {
                    if (p >= 0 && pOwner[p] != m && pOwner[p] != -1) {
                        err(i, "P" + p + " released by M" + m + " but held by M" + pOwner[p]);
                    }
                    if (p >= 0) {
                        if (pRunning[p] != 0) {
                            err(i, "P" + p + " released while running G" + pRunning[p]);
                        }
                        pOwner[p] = -1;
                    }
                }
                case Ev.HANDOFF -> {
                    if (p >= 0) {
                        pOwner[p] = -1;
                    }
                }
                case Ev.PROC_STATUS -> {
                    if (p >= 0) {
                        pOwner[p] = m;
                    }
                }
                case Ev.SPIN_START -> {
                    if (Boolean.TRUE.equals(mSpinning.put(m, Boolean.TRUE))) {
                        err(i, "M" + m + " starts spinning while it spins");
                    }
                }
                case Ev.SPIN_STOP -> {
                    if (Boolean.FALSE.equals(mSpinning.put(m, Boolean.FALSE))) {
                        err(i, "M" + m + " stops spinning with no SpinStart");
                    }
                }
                case Ev.M_PARK, Ev.M_UNPARK -> {
                    if (Boolean.TRUE.equals(mSpinning.put(m, Boolean.FALSE))) {
                        err(i, "M" + m + (code == Ev.M_PARK ? " parks" : " wakes up") + " while it spins");
                    }
                }
                // the new M's own events may sort before its creator's MCreate: it only tells what is unknown
                case Ev.M_CREATE -> mSpinning.putIfAbsent(t.a(i), Boolean.FALSE);
                default -> {
                    // preempt request/yield, timers, gomaxprocs: no G moves
                }
            }
        }
        // conservation: the Gs created (or present at the start) are exactly the Gs placed somewhere
        long placedGs = 0;
        for (int c : perLoc) {
            placedGs += c;
        }
        long seen = gs.values().stream().filter(s -> s.loc != NONE).count();
        if (placedGs != seen || (!lenientStart && created != seen)) {
            err(-1, "conservation broken: created=" + created + " placed=" + placedGs + " seen=" + seen);
        }
    }

    private static int placed(int where) {
        return switch (where) {
            case Ev.W_RUNNEXT -> RUNNEXT;
            case Ev.W_LOCAL -> LOCAL;
            default -> GLOBAL;
        };
    }
}
