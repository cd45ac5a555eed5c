package dev.gort.runtime;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.LongAdder;

/**
 * Event counters for the scheduler's switch paths, for counting tests and for finding where a
 * hand-off goes (issue 19: measure by counting, which load does not change), and three sums of
 * nanoseconds (a P on the idle list, an M asleep in stopm, an M in a blocking poll: issue 14's
 * question whether a runtime with work leaves a core idle; these do depend on load). Off unless the JVM
 * starts with {@code -Dgort.debug.counts=true}: {@link #ON} is a {@code static final} read once, so
 * with it off the JIT folds every {@code if (SchedCounts.ON)} away and the hot paths pay nothing.
 *
 * <p>JVM-wide (static), unlike everything else in the runtime: a debug tool, read by a test or a
 * probe that runs one runtime in its own JVM. Each counter is a {@link LongAdder}: any thread adds,
 * {@link #snapshot} sums racily.
 */
public final class SchedCounts {
    private SchedCounts() {}

    /**
     * Read once at class initialisation from {@code gort.debug.counts}. Public for bench's
     * NetCounts probe, which refuses to run without it.
     */
    public static final boolean ON = Boolean.getBoolean("gort.debug.counts");

    /** Continuation mounts (M.run's cont.run()): one per switch into a goroutine. */
    static final LongAdder contRuns = new LongAdder();
    /** Continuation yields to park (gopark): {@code contRuns} is their sum with the four below and the exits. */
    static final LongAdder yieldPark = new LongAdder();
    /** Continuation yields for Gosched. */
    static final LongAdder yieldGosched = new LongAdder();
    /** Continuation yields for a preemption request. */
    static final LongAdder yieldPreempt = new LongAdder();
    /** Continuation yields for goyield (to the local run queue's tail). */
    static final LongAdder yieldGoyield = new LongAdder();
    /** Continuation yields to enter a blocking syscall's hand-off. */
    static final LongAdder yieldSyscall = new LongAdder();
    /** Scheduler.ready calls: goroutines made runnable by another (a channel hand-off, a wake-up). */
    static final LongAdder readies = new LongAdder();
    /** Idle.wakep calls. */
    static final LongAdder wakep = new LongAdder();
    /** wakep calls that returned at once because an M was spinning already (nmspinning != 0). */
    static final LongAdder wakepSpinning = new LongAdder();
    /** wakep calls that took an idle P and started (woke or created) a spinning M for it. */
    static final LongAdder wakepStartm = new LongAdder();
    /** wakep calls that returned without the lock: no idle P and needspinning set already. */
    static final LongAdder wakepNoIdleP = new LongAdder();
    /** wakep calls that lost the nmspinning 0-to-1 race to another submitter or a spinner. */
    static final LongAdder wakepCasLost = new LongAdder();
    /** wakep calls that won nmspinning but found no idle P under sched.lock (needspinning set). */
    static final LongAdder wakepNoP = new LongAdder();
    /** Idle.startm hand-offs to an idle M (a Note wake-up of a parked carrier). */
    static final LongAdder startmWake = new LongAdder();
    /** startm woke an idle M that last stopped on another CPU than the waker's, passing over the list's head. */
    static final LongAdder mgetOtherCpu = new LongAdder();
    /** LockSupport.unpark of a sleeping carrier by Note.notewakeup. */
    static final LongAdder noteUnparks = new LongAdder();
    /** LockSupport.park calls in Note.notesleep / notetsleep (carrier sleeps, spurious ones included). */
    static final LongAdder noteParks = new LongAdder();
    /** M.stopm: an M went onto the idle list to sleep. */
    static final LongAdder stopm = new LongAdder();
    /** Idle.becomeSpinning: an M started spinning. */
    static final LongAdder becomeSpinning = new LongAdder();
    /** Steals that took a victim's runnext (RunQueue.runqgrab). */
    static final LongAdder runnextSteals = new LongAdder();
    /** runqgrab's back-off before stealing a running P's runnext. */
    static final LongAdder runnextBackoffs = new LongAdder();
    /** Successful steals of any kind (stealWork). */
    static final LongAdder steals = new LongAdder();
    /** Preempt.newSlice calls that had to CAS the carrier's request word. */
    static final LongAdder newSliceCas = new LongAdder();
    /** Netpoll: non-blocking polls (epoll_wait with 0, Selector.selectNow), every caller. */
    static final LongAdder netpollSelectNow = new LongAdder();
    /** Netpoll: blocking polls (the last idle M's). */
    static final LongAdder netpollSelectBlock = new LongAdder();
    /** Netpoll: non-blocking polls that found the poll lock held and returned nothing. */
    static final LongAdder netpollBusy = new LongAdder();
    /** Netpoll: selections (either kind) that made no goroutine runnable. */
    static final LongAdder netpollEmpty = new LongAdder();
    /** Netpoll: ready descriptors reported (epoll's events for a live registration, the selector's keys). */
    static final LongAdder netpollKeys = new LongAdder();
    /** Netpoll: read-ready keys reported whose goroutine a poll had woken already (pdReady). */
    static final LongAdder netpollKeysQueued = new LongAdder();
    /** Netpoll: read-ready keys reported with nobody parked on them and nothing pending (pdNil). */
    static final LongAdder netpollKeysNoReader = new LongAdder();
    /** Netpoll: interest changes (each an epoll_ctl at the next selection). */
    static final LongAdder netpollInterestOps = new LongAdder();
    /** Netpoll: breaks written, every caller (epoll's eventfd, deduplicated; Selector.wakeup calls). */
    static final LongAdder netpollWakeups = new LongAdder();
    /** Sysmon's 10 ms network polls. */
    static final LongAdder sysmonNetpolls = new LongAdder();
    /** Nanoseconds Ps spent on the idle list (pidleput to pidleget). */
    static final LongAdder pIdleNanos = new LongAdder();
    /** Nanoseconds Ms slept in stopm. */
    static final LongAdder stopmNanos = new LongAdder();
    /** Nanoseconds Ms spent in blocking polls (epoll_wait or Selector.select with a timeout or none). */
    static final LongAdder netpollBlockNanos = new LongAdder();
    /** Nanoseconds from startm's wake-up of an idle M (with a P handed to it) to that M running again. */
    static final LongAdder wakeLatencyNanos = new LongAdder();

    private static final String[] NAMES = {
        "contRuns",
        "yieldPark",
        "yieldGosched",
        "yieldPreempt",
        "yieldGoyield",
        "yieldSyscall",
        "readies",
        "wakep",
        "wakepSpinning",
        "wakepStartm",
        "wakepNoIdleP",
        "wakepCasLost",
        "wakepNoP",
        "startmWake",
        "mgetOtherCpu",
        "noteUnparks",
        "noteParks",
        "stopm",
        "becomeSpinning",
        "runnextSteals",
        "runnextBackoffs",
        "steals",
        "newSliceCas",
        "netpollSelectNow",
        "netpollSelectBlock",
        "netpollBusy",
        "netpollEmpty",
        "netpollKeys",
        "netpollKeysQueued",
        "netpollKeysNoReader",
        "netpollInterestOps",
        "netpollWakeups",
        "sysmonNetpolls",
        "pIdleNanos",
        "stopmNanos",
        "netpollBlockNanos",
        "wakeLatencyNanos"
    };

    private static LongAdder[] all() {
        return new LongAdder[] {
            contRuns,
            yieldPark,
            yieldGosched,
            yieldPreempt,
            yieldGoyield,
            yieldSyscall,
            readies,
            wakep,
            wakepSpinning,
            wakepStartm,
            wakepNoIdleP,
            wakepCasLost,
            wakepNoP,
            startmWake,
            mgetOtherCpu,
            noteUnparks,
            noteParks,
            stopm,
            becomeSpinning,
            runnextSteals,
            runnextBackoffs,
            steals,
            newSliceCas,
            netpollSelectNow,
            netpollSelectBlock,
            netpollBusy,
            netpollEmpty,
            netpollKeys,
            netpollKeysQueued,
            netpollKeysNoReader,
            netpollInterestOps,
            netpollWakeups,
            sysmonNetpolls,
            pIdleNanos,
            stopmNanos,
            netpollBlockNanos,
            wakeLatencyNanos
        };
    }

    /** Counts a continuation yield by its reason (M.run, after the G came back). */
    static void countYield(int yieldReason) {
        switch (yieldReason) {
            case G.YIELD_PARK -> yieldPark.increment();
            case G.YIELD_GOSCHED -> yieldGosched.increment();
            case G.YIELD_PREEMPT -> yieldPreempt.increment();
            case G.YIELD_GOYIELD -> yieldGoyield.increment();
            case G.YIELD_SYSCALL -> yieldSyscall.increment();
            default -> {} // none other reaches here: M.run returns for an exit before counting
        }
    }

    /** Every counter by name, in declaration order (racy sums). */
    public static Map<String, Long> snapshot() {
        Map<String, Long> m = new LinkedHashMap<>();
        LongAdder[] a = all();
        for (int i = 0; i < a.length; i++) {
            m.put(NAMES[i], a[i].sum());
        }
        return m;
    }

    /** Zeroes every counter (racy with adders: call it with the runtime quiet). */
    public static void reset() {
        for (LongAdder a : all()) {
            a.reset();
        }
    }
}
