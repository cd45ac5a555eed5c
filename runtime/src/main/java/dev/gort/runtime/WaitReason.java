package dev.gort.runtime;

/**
 * Why a goroutine is waiting, with Go's strings so that dumps and scheddetail read like Go's.
 *
 * <p>Go: runtime2.go waitReason, waitReasonStrings
 */
public enum WaitReason {
    ZERO(""),
    GC_ASSIST_MARKING("GC assist marking"),
    IO_WAIT("IO wait"),
    CHAN_RECEIVE_NIL_CHAN("chan receive (nil chan)"),
    CHAN_SEND_NIL_CHAN("chan send (nil chan)"),
    DUMPING_HEAP("dumping heap"),
    GARBAGE_COLLECTION("garbage collection"),
    GARBAGE_COLLECTION_SCAN("garbage collection scan"),
    PANIC_WAIT("panicwait"),
    SELECT("select"),
    SELECT_NO_CASES("select (no cases)"),
    GC_ASSIST_WAIT("GC assist wait"),
    GC_SWEEP_WAIT("GC sweep wait"),
    GC_SCAVENGE_WAIT("GC scavenge wait"),
    CHAN_RECEIVE("chan receive"),
    CHAN_SEND("chan send"),
    FINALIZER_WAIT("finalizer wait"),
    FORCE_GC_IDLE("force gc (idle)"),
    SEMACQUIRE("semacquire"),
    SLEEP("sleep"),
    SYNC_COND_WAIT("sync.Cond.Wait"),
    SYNC_MUTEX_LOCK("sync.Mutex.Lock"),
    SYNC_RWMUTEX_RLOCK("sync.RWMutex.RLock"),
    SYNC_RWMUTEX_LOCK("sync.RWMutex.Lock"),
    SYNC_WAITGROUP_WAIT("sync.WaitGroup.Wait"),
    TRACE_READER_BLOCKED("trace reader (blocked)"),
    WAIT_FOR_GC_CYCLE("wait for GC cycle"),
    GC_WORKER_IDLE("GC worker (idle)"),
    PREEMPTED("preempted"),
    DEBUG_CALL("debug call"),
    GC_MARK_TERMINATION("GC mark termination"),
    STOPPING_THE_WORLD("stopping the world"),
    LOCK_OS_THREAD("locked to thread"),
    SYNCTEST_RUN("synctest.Run"),
    SYNCTEST_WAIT("synctest.Wait"),
    SYNCTEST_CHAN_RECEIVE("chan receive (durable)"),
    SYNCTEST_CHAN_SEND("chan send (durable)"),
    SYNCTEST_SELECT("select (durable)"),
    SYNCTEST_WAITGROUP_WAIT("sync.WaitGroup.Wait (durable)");

    private final String go;

    WaitReason(String go) {
        this.go = go;
    }

    /**
     * Whether a goroutine waiting for this reason waits on a concurrency primitive only (a channel,
     * a select, a nil channel, {@code select {}}, a sync.Mutex/RWMutex/Cond/WaitGroup): the only
     * waits the goroutine leak profile may report. Every other reason (sleep, IO wait, a syscall, a
     * locked thread, the runtime's own) has a waker the runtime holds and counts as maybe runnable.
     *
     * <p>Go: mgc.go (*g).isMaybeRunnable (the wait reasons it does not treat as runnable)
     */
    public boolean leakable() {
        return switch (this) {
            case CHAN_RECEIVE,
                    CHAN_SEND,
                    CHAN_RECEIVE_NIL_CHAN,
                    CHAN_SEND_NIL_CHAN,
                    SELECT,
                    SELECT_NO_CASES,
                    SYNC_COND_WAIT,
                    SYNC_MUTEX_LOCK,
                    SYNC_RWMUTEX_RLOCK,
                    SYNC_RWMUTEX_LOCK,
                    SYNC_WAITGROUP_WAIT,
                    SYNCTEST_CHAN_RECEIVE,
                    SYNCTEST_CHAN_SEND,
                    SYNCTEST_SELECT,
                    SYNCTEST_WAITGROUP_WAIT -> true;
            default -> false;
        };
    }

    /**
     * Whether a goroutine of a synctest bubble waiting for this reason is durably blocked: only
     * another goroutine of the bubble, or a bubble timer, can wake it (a bubble's channel, a
     * select over bubble channels only, a nil channel, {@code select {}}, a sleep, sync.Cond, a
     * bubble's WaitGroup, the root and Wait themselves). A mutex, a semaphore, a syscall, IO or a
     * channel from outside the bubble are not durable: something outside may end them.
     *
     * <p>Go: runtime2.go isIdleInSynctest
     */
    boolean isIdleInSynctest() {
        return switch (this) {
            case CHAN_RECEIVE_NIL_CHAN,
                    CHAN_SEND_NIL_CHAN,
                    SELECT_NO_CASES,
                    SLEEP,
                    SYNC_COND_WAIT,
                    SYNCTEST_WAITGROUP_WAIT,
                    SYNCTEST_RUN,
                    SYNCTEST_WAIT,
                    SYNCTEST_CHAN_SEND,
                    SYNCTEST_CHAN_RECEIVE,
                    SYNCTEST_SELECT -> true;
            default -> false;
        };
    }

    /** Every reason, by ordinal: G keeps a reason as its ordinal, a byte (Go: waitReason is a uint8). */
    private static final WaitReason[] VALUES = values();

    /** The reason whose ordinal is {@code ordinal} (what {@link G} stores). */
    static WaitReason of(byte ordinal) {
        return VALUES[ordinal];
    }

    /** Go's spelling, e.g. {@code chan receive}. */
    public String go() {
        return go;
    }

    @Override
    public String toString() {
        return go;
    }
}
