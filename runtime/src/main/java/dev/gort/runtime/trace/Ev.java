package dev.gort.runtime.trace;

/**
 * Event codes (at most 30: {@link TraceBuf}'s compact head has five bits, and 31 is its one-long
 * unblock, {@code TraceBuf.CODE_UNBLOCK_LAST}) and their small-field
 * values. {@link TraceBuf} writes records packed; decoded ({@link TraceBuf#expand}), every record
 * is five longs:
 * <pre>
 *   [0] ts      TraceClock units (made ns since the session start when decoded)
 *   [1] header  bits 0-7 code | bits 8-23 small | bits 24-39 p+1 (0 = no P) | bits 40-63 m+1 (0 = not an M)
 *   [2] g       the goroutine the event is about (0 = none)
 *   [3] a       first argument (see each code)
 *   [4] x       second argument
 * </pre>
 * Level 1 events are Go's (GoCreate, GoStart, GoStop/GoBlock, GoUnblock, syscalls, ProcStart/Stop);
 * level 2 adds the queue-level ones Go's trace lacks (kick, spill, global batch, steal with the
 * Gs moved, spinning, M park/unpark, preempt request).
 *
 * <p>Go: internal/trace/tracev2/events.go (the model), extended as observability.md §7 asks
 */
public final class Ev {
    private Ev() {}

    /** g created; a = parent goid (0: none); small = where it was put (W_*). */
    public static final int GO_CREATE = 1;
    /** g starts running on (p, m); small = from (F_*); a = victim P for F_STOLEN; x = 1 if it inherits the slice. */
    public static final int GO_START = 2;
    /** g stops running; small = why (S_*); a = wait reason ordinal for S_PARK; x = id of the object waited on. */
    public static final int GO_STOP = 3;
    /** g made runnable by goroutine a (0: not a goroutine); small = where it was put (W_*). */
    public static final int GO_UNBLOCK = 4;
    /** g moved from p's runnext to the tail of p's ring (displaced by a newer runnext). */
    public static final int RUNQ_KICK = 5;
    /** g moved from p's runnext or ring to the global queue; small = R_SPILL or R_DESTROY. */
    public static final int RUNQ_TO_GLOBAL = 6;
    /** g moved from the global queue to p's ring (the rest of a global batch). */
    public static final int GLOBAL_TO_LOCAL = 7;
    /** g moved from victim a's runnext/ring to p's ring by a steal of x Gs in all. */
    public static final int STEAL = 8;
    /** m acquires p. */
    public static final int PROC_START = 9;
    /** m releases p. */
    public static final int PROC_STOP = 10;
    /** m goes to sleep (stopm / the idle poll). */
    public static final int M_PARK = 11;
    /** m wakes up. */
    public static final int M_UNPARK = 12;
    /** m starts spinning. */
    public static final int SPIN_START = 13;
    /** m stops spinning. */
    public static final int SPIN_STOP = 14;
    /** An M (the new M's id in a) is created; x = 1 for a system thread (sysmon), which Go's mcount also counts. */
    public static final int M_CREATE = 15;
    /** Preemption of g on p requested (by sysmon or stop-the-world). */
    public static final int PREEMPT_REQ = 16;
    /** g enters a syscall on (p, m). */
    public static final int SYSCALL_ENTER = 17;
    /** g leaves its syscall; small = outcome (X_*); p = the P it continues on (X_SAME_P / X_OTHER_P). */
    public static final int SYSCALL_EXIT = 18;
    /** p is taken from m a (blocked in a syscall) and handed off (sysmon retake or blocking entersyscall). */
    public static final int HANDOFF = 19;
    /** A timer fires on (p, m); g = the goroutine it will ready (a sleep), if known. */
    public static final int TIMER_FIRE = 20;
    /** GOMAXPROCS is now a. */
    public static final int GOMAXPROCS = 21;
    /** p took a batch of a Gs from the global queue (one to run, the rest to its ring). */
    public static final int GLOBAL_BATCH = 22;
    /** The G running on p yielded at a preemption poll (a = request-to-yield latency ns, or 0). */
    public static final int PREEMPT_YIELD = 23;
    /** Status of g when tracing started: small = L_*, p/m where it is; a = wait reason ordinal. */
    public static final int GO_STATUS = 24;
    /** Status of p when tracing started: small = P status, m = its M. */
    public static final int PROC_STATUS = 25;

    public static final int MAX = 25;

    // GO_STATUS locations: L_*
    public static final int L_RUNNEXT = 0;
    public static final int L_LOCAL = 1;
    public static final int L_GLOBAL = 2;
    public static final int L_RUNNING = 3;
    public static final int L_WAITING = 4;
    public static final int L_SYSCALL = 5;

    // where a G was put: W_*
    public static final int W_RUNNEXT = 0;
    public static final int W_LOCAL = 1;
    public static final int W_GLOBAL = 2;
    public static final int W_GLOBAL_HEAD = 3;

    // where a starting G came from: F_*
    public static final int F_RUNNEXT = 0;
    public static final int F_LOCAL = 1;
    public static final int F_GLOBAL = 2;
    public static final int F_STOLEN = 3;
    /** The park was cancelled by its unlock function: the same G runs again at once. */
    public static final int F_RESUME = 4;

    // why a G stopped: S_*
    public static final int S_PARK = 0;
    public static final int S_GOSCHED = 1;
    public static final int S_PREEMPT = 2;
    public static final int S_EXIT = 3;
    /** goyield: to the local tail. */
    public static final int S_YIELD = 4;

    // RUNQ_TO_GLOBAL causes
    public static final int R_SPILL = 0;
    public static final int R_DESTROY = 1;

    // syscall exit outcomes: X_*
    public static final int X_SAME_P = 0;
    public static final int X_OTHER_P = 1;
    public static final int X_NO_P = 2;

    static final String[] NAMES = {
        "?",
        "GoCreate",
        "GoStart",
        "GoStop",
        "GoUnblock",
        "RunqKick",
        "RunqToGlobal",
        "GlobalToLocal",
        "Steal",
        "ProcStart",
        "ProcStop",
        "MPark",
        "MUnpark",
        "SpinStart",
        "SpinStop",
        "MCreate",
        "PreemptRequest",
        "SyscallEnter",
        "SyscallExit",
        "Handoff",
        "TimerFire",
        "Gomaxprocs",
        "GlobalBatch",
        "PreemptYield",
        "GoStatus",
        "ProcStatus",
    };

    public static String name(int code) {
        return code > 0 && code < NAMES.length ? NAMES[code] : "?" + code;
    }

    public static String where(int w) {
        return switch (w) {
            case W_RUNNEXT -> "runnext";
            case W_LOCAL -> "local";
            case W_GLOBAL -> "global";
            case W_GLOBAL_HEAD -> "global-head";
            default -> "?";
        };
    }

    public static String from(int f) {
        return switch (f) {
            case F_RUNNEXT -> "runnext";
            case F_LOCAL -> "local";
            case F_GLOBAL -> "global";
            case F_STOLEN -> "stolen";
            case F_RESUME -> "resume";
            default -> "?";
        };
    }

    public static String stop(int s) {
        return switch (s) {
            case S_PARK -> "blocked";
            case S_GOSCHED -> "gosched";
            case S_PREEMPT -> "preempted";
            case S_EXIT -> "exit";
            case S_YIELD -> "yield";
            default -> "?";
        };
    }

    public static String outcome(int x) {
        return switch (x) {
            case X_SAME_P -> "same P";
            case X_OTHER_P -> "idle P";
            case X_NO_P -> "no P: global queue";
            default -> "?";
        };
    }
}
