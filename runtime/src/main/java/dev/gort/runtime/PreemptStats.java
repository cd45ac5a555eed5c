package dev.gort.runtime;

import java.util.Map;
import org.HdrHistogram.Histogram;

/**
 * A snapshot of one runtime's preemption figures ({@link Preempt#snapshot()}), as plain Java values
 * for the observability layer (Go-style metric names, MXBean, JFR) and for tests.
 *
 * @param strategy            the strategy named on the command line
 * @param requested           requests raised on a carrier by sysmon / stop-the-world (preemptone)
 * @param honoured            requests that ended in a yield (the G went to the global queue tail)
 * @param honouredInPlace     of those, preemptions in place: the G held a lock or monitor (refused
 *                            sysmon's requests for a whole slice) and stayed mounted on its carrier,
 *                            which slept until the G was scheduled again
 * @param refusedMonitor      the G held a Java monitor (instrumented monitor depth &gt; 0); retried
 *                            when the monitor is released ({@code rearmed}) or at sysmon's next tick
 * @param refusedPinned       the continuation refused to yield ({@code onPinned}); by reason in
 *                            {@code pinnedByReason} ({@code NATIVE}, {@code MONITOR}, {@code CRITICAL_SECTION})
 * @param refusedRuntimeLock  the M held a runtime lock (Go's m.locks)
 * @param refusedLock         the G held a {@code java.util.concurrent.locks.Lock} counted at its
 *                            call sites ({@code G.lockDepth}), or held its carrier's identity
 *                            ({@code G.parkerDepth}): ran an instrumented method that parks its
 *                            carrier, or an instrumented call of {@code ThreadLocal.get} (a first
 *                            get runs {@code initialValue}); re-armed at the last unlock or exit
 * @param refusedJdkLock      a JDK frame on the G's stack holds a lock around the polling code
 *                            ({@code CHM.computeIfAbsent}, {@code StringBuffer.append(Object)}, ...),
 *                            found by a stack walk or, for the callback-taking collection methods
 *                            called from instrumented code, counted at the call ({@code
 *                            G.jdkLockDepth}, re-armed when the call returns); else retried at
 *                            sysmon's next request
 * @param refusedClinit       a class initialiser runs on the G (counted, or found on its stack)
 * @param syscallExitsDeferred polls that found the G in a (sysmon-made) syscall inside a class
 *                            initialiser and left it there instead of waiting for a P
 * @param stale               the request was meant for a G that had already left the carrier
 * @param unhonoured          the G left the carrier (parked, ended, yielded) before reaching a poll:
 *                            never honoured; with strategy {@code none} every request ends here
 * @param budgetYields        yields because the per-slice budget was spent while work was waiting
 * @param threadYieldsInPlace {@code Thread.yield()}s in instrumented code that handed the P to waiting
 *                            work while the G stayed on its carrier (it held a monitor or lock:
 *                            {@code Preempt.yieldInPlace}); not requests, not in the balance
 * @param rearmed             requests re-armed when a refused G released its last monitor
 * @param spuriousPolls       slow-path entries on a carrier with no request of its own (another
 *                            carrier's request was pending: see {@link Poll})
 * @param pinnedByReason      refusedPinned by {@code Continuation.Pinned} name
 * @param sites               honoured preemptions by "class.method" of the poll, most frequent first
 * @param requestToYield      percentiles of request (sysmon's nanotime) to yield, ns
 * @param sliceOverrun        percentiles of yield time minus the slice end (sysmon's first sighting of
 *                            the schedtick + 10 ms), ns: includes sysmon's own sleep
 * @param requestToYieldHistogram the full histogram (a copy)
 * @param sliceOverrunHistogram   the full histogram (a copy)
 */
public record PreemptStats(
        PreemptStrategy strategy,
        long requested,
        long honoured,
        long honouredInPlace,
        long refusedMonitor,
        long refusedPinned,
        long refusedRuntimeLock,
        long refusedLock,
        long refusedJdkLock,
        long refusedClinit,
        long syscallExitsDeferred,
        long stale,
        long unhonoured,
        long budgetYields,
        long threadYieldsInPlace,
        long rearmed,
        long spuriousPolls,
        Map<String, Long> pinnedByReason,
        Map<String, Long> sites,
        Percentiles requestToYield,
        Percentiles sliceOverrun,
        Histogram requestToYieldHistogram,
        Histogram sliceOverrunHistogram) {

    /** Count and p50/p99/p99.9/max of a histogram, in ns. */
    public record Percentiles(long count, long p50, long p99, long p999, long max) {
        static Percentiles of(Histogram h) {
            if (h.getTotalCount() == 0) {
                return new Percentiles(0, 0, 0, 0, 0);
            }
            return new Percentiles(
                    h.getTotalCount(),
                    h.getValueAtPercentile(50),
                    h.getValueAtPercentile(99),
                    h.getValueAtPercentile(99.9),
                    h.getMaxValue());
        }

        @Override
        public String toString() {
            return String.format(
                    "n=%d p50=%.3fms p99=%.3fms p99.9=%.3fms max=%.3fms",
                    count, p50 / 1e6, p99 / 1e6, p999 / 1e6, max / 1e6);
        }
    }

    /**
     * Refused requests, every reason. With {@code honoured + refused() + stale + unhonoured} it
     * accounts for every request once no carrier has one pending (Preempt's class comment).
     */
    public long refused() {
        return refusedMonitor + refusedPinned + refusedRuntimeLock + refusedLock + refusedJdkLock + refusedClinit;
    }

    @Override
    public String toString() {
        return "preempt[" + strategy.id() + "] requested=" + requested + " honoured=" + honoured
                + " (in place " + honouredInPlace + ")"
                + " refused{monitor=" + refusedMonitor + " pinned=" + refusedPinned + pinnedByReason
                + " runtimeLock=" + refusedRuntimeLock + " lock=" + refusedLock + " jdkLock=" + refusedJdkLock
                + " clinit=" + refusedClinit + "} syscallExitsDeferred=" + syscallExitsDeferred + " stale=" + stale
                + " unhonoured=" + unhonoured
                + " budgetYields=" + budgetYields + " yieldsInPlace=" + threadYieldsInPlace + " rearmed=" + rearmed
                + " spurious=" + spuriousPolls
                + " request->yield{" + requestToYield + "} overrun{" + sliceOverrun + "}";
    }
}
