package dev.gort.internal;

import dev.gort.runtime.WaitReason;

/**
 * The park/unpark abstraction the channel, select and semaphore algorithms are written against
 * (style guide rule 7, tokio's {@code loom} idea). A <i>waiter</i> is the opaque handle of whoever
 * blocks: a {@link dev.gort.runtime.G} in production ({@link GoParker}: {@code gopark} /
 * {@code goready}), a thread in the model-checking tests (real threads and {@code LockSupport},
 * which lincheck can explore and continuations cannot).
 *
 * <p>Production binds every channel to the one {@link GoParker#INSTANCE}, so each call site sees a
 * single receiver class and the JIT inlines it behind one type check.
 */
public interface Parker {
    /** The calling waiter, or null when the caller cannot block (not a goroutine). Go: getg(). */
    Object current();

    /** A sudog for {@code w} to block with; production recycles one per goroutine. Go: acquireSudog. */
    Sudog acquireSudog(Object w);

    /**
     * Blocks {@code w} (the caller) until {@link #ready}; {@code commit.commit(lock)} runs once the
     * waiter is committed to sleep and must release the queue's lock. A null commit parks forever
     * (nil channel, {@code select {}}).
     *
     * <p>Go: proc.go gopark
     */
    <L> void park(Object w, ParkCommit<L> commit, L lock, WaitReason reason, Object waitingOn);

    /** Makes a parked waiter runnable (production: the current P's runnext). Go: proc.go goready. */
    void ready(Object w);

    /** Go: g.param (set by the waker before ready, read by the waiter after it resumes). */
    Object param(Object w);

    void setParam(Object w, Object v);

    /** select's wake-once guard. Go: gp.selectDone.CompareAndSwap(0, 1). */
    boolean casSelectDone(Object w);

    /** Go: gp.selectDone.Store(0). */
    void clearSelectDone(Object w);

    /** A uniform int in [0, n). Go: cheaprandn (per M). */
    int cheaprandn(int n);

    /** Whether a sync.Mutex waiter should spin at iteration {@code iter}. Go: sync_runtime_canSpin. */
    boolean canSpin(int iter);

    /** Yields the caller to the tail of its local run queue. Go: goyield. */
    void goyield();

    /** Monotonic nanoseconds. Go: nanotime. */
    long nanotime();

    /**
     * The block profile's rate (0: off) in the runtime of waiter {@code w}: the one check a
     * blocking path makes. Go: blockprofilerate.
     */
    default long blockProfileRate(Object w) {
        return 0;
    }

    /** The mutex profile's fraction (0: off) in the runtime of waiter {@code w}. Go: mutexprofilerate. */
    default long mutexProfileRate(Object w) {
        return 0;
    }

    /** Records, sampled, that the caller was blocked {@code cycles} ns. Go: mprof.go blockevent. */
    default void blockevent(long cycles, int skip) {}

    /** Records, sampled, the delay a contended unlock ended. Go: mprof.go mutexevent. */
    default void mutexevent(long cycles, int skip) {}
}
