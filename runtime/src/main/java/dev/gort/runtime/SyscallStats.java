package dev.gort.runtime;

import java.util.concurrent.atomic.AtomicLong;

/**
 * How syscalls ended, how Ps were retaken, and what pinned or locked goroutines did. The two fast
 * paths are counted per M with plain increments (no atomic on a path whose budget is tens of ns)
 * and summed here on demand; everything else is rare and counted with atomics.
 *
 * <p>Go: nothing equivalent in runtime/metrics; the trace has GoSyscallEnd / GoSyscallEndBlocked.
 */
public final class SyscallStats {
    /** exitsyscall0 found an idle P on the M's own stack (Go: exitsyscall0's pidleget). */
    final AtomicLong slowIdleP = new AtomicLong();
    /** exitsyscall0 found no P: the G went to the global queue and the M parked (stopm). */
    final AtomicLong slowGlobal = new AtomicLong();
    /** exitsyscall0 for a locked G: global queue, then stoplockedm. */
    final AtomicLong slowLocked = new AtomicLong();
    /** The G could not yield (pinned, monitor held, locked): it waited for a P on its carrier. */
    final AtomicLong slowInPlace = new AtomicLong();
    /**
     * A G waiting for a P on its carrier held a Java lock and claimed a running P (its G asked to
     * stop, sysmon hurried, or neither: Preempt.boostLockHolder).
     */
    final AtomicLong lockHolderBoosts = new AtomicLong();
    /** entersyscallblock: P handed off at entry. */
    final AtomicLong handoffAtEntry = new AtomicLong();
    /** Syscall Ps retaken by sysmon (retake's syscall branch, either model). */
    final AtomicLong retakes = new AtomicLong();
    /** Ps retaken from carriers blocked in user code (BlockedCarriers). */
    final AtomicLong blockedRetakes = new AtomicLong();
    /** Blocked-carrier retakes abandoned after the scan bit was taken (the carrier moved). */
    final AtomicLong blockedAborts = new AtomicLong();
    /** Parks that blocked the carrier instead of yielding (pinned or monitor held). */
    final AtomicLong pinnedParks = new AtomicLong();
    /** ... of which the yield was refused by the JVM (onPinned). */
    final AtomicLong pinnedRefused = new AtomicLong();
    /** Threads that ended with their locked goroutine. */
    final AtomicLong lockedExits = new AtomicLong();

    // Fast-path counts of Ms that have exited (their own fields are gone with them).
    private final AtomicLong retiredFastOldP = new AtomicLong();
    private final AtomicLong retiredFastIdleP = new AtomicLong();

    SyscallStats() {}

    /** Folds an exiting M's plain counters in. sched.lock held. */
    void retire(M mp) {
        mp.sched.sched.assertLockHeld(mp.sched, "mexit");
        retiredFastOldP.addAndGet(mp.syscallFastOldP);
        retiredFastIdleP.addAndGet(mp.syscallFastIdleP);
        lockedExits.incrementAndGet();
    }

    /** A consistent-enough copy (per-M counters are read racily). */
    public Snapshot snapshot(Scheduler s) {
        long oldP = retiredFastOldP.get();
        long idleP = retiredFastIdleP.get();
        for (M mp : s.allm()) {
            oldP += mp.syscallFastOldP;
            idleP += mp.syscallFastIdleP;
        }
        return new Snapshot(
                oldP,
                idleP,
                slowIdleP.get(),
                slowGlobal.get(),
                slowLocked.get(),
                slowInPlace.get(),
                lockHolderBoosts.get(),
                handoffAtEntry.get(),
                retakes.get(),
                blockedRetakes.get(),
                blockedAborts.get(),
                pinnedParks.get(),
                pinnedRefused.get(),
                lockedExits.get());
    }

    /**
     * @param fastOldP       exitsyscall kept (re-took) the P it had before the syscall
     * @param fastIdleP      exitsyscall took another idle P
     * @param slowIdleP      exitsyscall0 found an idle P after the G yielded
     * @param slowGlobal     the G went to the global queue and its M parked
     * @param slowLocked     as slowGlobal for a locked G (its M waits for it)
     * @param slowInPlace    the G waited for a P on its carrier (could not yield)
     * @param lockHolderBoosts a G waiting for a P on its carrier (slowInPlace, or woken from a park
     *                       in place) held a Java lock and claimed a running P
     *                       ({@code Preempt.boostLockHolder})
     * @param handoffAtEntry entersyscallblock handed the P off at once
     * @param retakes        sysmon retook a P in a syscall
     * @param blockedRetakes sysmon retook a P from a carrier blocked in user code
     * @param blockedAborts  a blocked-carrier retake was abandoned (the carrier moved)
     * @param pinnedParks    parks that blocked the carrier (pinned or monitor held)
     * @param pinnedRefused  ... of which the JVM refused the yield
     * @param lockedExits    threads that ended with their locked goroutine
     */
    public record Snapshot(
            long fastOldP,
            long fastIdleP,
            long slowIdleP,
            long slowGlobal,
            long slowLocked,
            long slowInPlace,
            long lockHolderBoosts,
            long handoffAtEntry,
            long retakes,
            long blockedRetakes,
            long blockedAborts,
            long pinnedParks,
            long pinnedRefused,
            long lockedExits) {}
}
