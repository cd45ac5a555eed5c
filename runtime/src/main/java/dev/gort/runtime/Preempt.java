package dev.gort.runtime;

import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import jdk.internal.vm.Continuation;
import org.HdrHistogram.Histogram;

/**
 * One runtime's preemption settings and accounting: what sysmon asked for, what the injected polls
 * did about it, and how long it took. Everything here is off the hot paths: it is touched by sysmon
 * (at most once per P per sysmon tick), by the poll's slow path and by the M when a G leaves its
 * carrier with a request still pending. The counters are plain {@link AtomicLong}s: they are bumped
 * at most a few thousand times per second, so Agrona's padded counters would not earn their place.
 *
 * <p>Accounting identity (modulo requests still pending):
 * {@code requested = honoured + refused(monitor, pinned, runtime lock, lock, JDK lock, clinit) + stale +
 * unhonoured}.
 *
 * <p>Go: runtime/metrics has no preemption metrics; these follow preemption-strategies.md §8.
 */
public final class Preempt {
    /** Go: proc.go forcePreemptNS, the time slice before sysmon asks a G to stop. */
    public static final long forcePreemptNS = 10_000_000L;

    /** Default budget (polls per slice) for {@link PreemptStrategy#BUDGET}; see {@link #budgetQuantum}. */
    public static final int DEFAULT_BUDGET = 1 << 22;

    /** Immutable: the family of the strategy named on the command line (the agent decides where polls go). */
    final PreemptStrategy strategy;
    /** Immutable: that strategy's name as registered (a family's id, or an agent strategy's name). */
    final String strategyName;
    /**
     * Immutable: polls (back-edges + entries) a G may pass in one slice under the budget strategy
     * before it yields to waiting work ({@code -Dgort.preempt.budget}, {@code GORT_PREEMPT_BUDGET}).
     * The default, 4 Mi polls, is meant as a few ms of an instrumented tight loop (about 1-3 ns per
     * iteration once compiled); it is not calibrated: on a loaded machine sysmon's 10 ms slice often
     * comes first, which is why sysmon stays the backstop.
     */
    final int budgetQuantum;
    /** Immutable: record the class/method of each preemption ({@code -Dgort.preempt.sites}, default on). */
    final boolean recordSites;

    // ---- counters: any thread, atomic add ----
    final AtomicLong requested = new AtomicLong();
    final AtomicLong honoured = new AtomicLong();
    final AtomicLong refusedMonitor = new AtomicLong();
    final AtomicLong refusedRuntimeLock = new AtomicLong();
    final AtomicLong refusedLock = new AtomicLong();
    final AtomicLong refusedJdkLock = new AtomicLong();
    final AtomicLong refusedClinit = new AtomicLong();
    final AtomicLong syscallExitsDeferred = new AtomicLong();
    final AtomicLong stale = new AtomicLong();
    final AtomicLong unhonoured = new AtomicLong();
    final AtomicLong budgetYields = new AtomicLong();
    final AtomicLong rearmed = new AtomicLong();
    final AtomicLong spuriousPolls = new AtomicLong();
    /** Refusals because the continuation could not yield, by {@code onPinned} reason; guarded by itself. */
    private final EnumMap<Continuation.Pinned, Long> refusedPinned = new EnumMap<>(Continuation.Pinned.class);

    /** request (sysmon's nanotime) to the yield, ns. Guarded by {@code this}. */
    private final Histogram requestToYield = new Histogram(3);
    /** yield time minus the end of the slice (sysmon's first sighting + 10 ms), ns. Guarded by {@code this}. */
    private final Histogram sliceOverrun = new Histogram(3);

    private static final int MAX_SITES = 4096;
    /** "class.method" of each honoured preemption; any thread. Bounded: beyond MAX_SITES, "(other)". */
    private final ConcurrentHashMap<String, LongAdder> sites = new ConcurrentHashMap<>();

    Preempt() {
        this(
                PreemptStrategy.nameFromEnvironment(),
                budgetFromEnvironment(),
                Config.boolSetting("gort.preempt.sites", "GORT_PREEMPT_SITES", true));
    }

    private Preempt(String strategyName, int budgetQuantum, boolean recordSites) {
        this(PreemptStrategy.familyOf(strategyName), strategyName, budgetQuantum, recordSites);
    }

    /** {@code -Dgort.preempt.budget} / {@code GORT_PREEMPT_BUDGET}: polls per slice (budget strategy), >= 1. */
    public static int budgetFromEnvironment() {
        return Config.intSetting("gort.preempt.budget", "GORT_PREEMPT_BUDGET", DEFAULT_BUDGET, 1, Integer.MAX_VALUE);
    }

    Preempt(PreemptStrategy strategy, int budgetQuantum, boolean recordSites) {
        this(strategy, strategy.id(), budgetQuantum, recordSites);
    }

    Preempt(PreemptStrategy strategy, String strategyName, int budgetQuantum, boolean recordSites) {
        this.strategy = strategy;
        this.strategyName = strategyName;
        this.budgetQuantum = budgetQuantum;
        this.recordSites = recordSites;
    }

    public PreemptStrategy strategy() {
        return strategy;
    }

    /** The strategy's name ({@code -Dgort.preempt}): a family's id or a registered strategy's. */
    public String strategyName() {
        return strategyName;
    }

    public int budgetQuantum() {
        return budgetQuantum;
    }

    /**
     * Requests a poll refused because a lock was held (a monitor, a counted Lock, a JDK frame's
     * lock, a runtime lock) or a class initialiser ran; the pinned refusals are counted by
     * {@link Scheduler#gopreempt} in {@link Stats#preemptRefusedPinned}.
     */
    public long refusedHeld() {
        return refusedMonitor.get()
                + refusedRuntimeLock.get()
                + refusedLock.get()
                + refusedJdkLock.get()
                + refusedClinit.get();
    }

    void recordPinned(Continuation.Pinned reason) {
        synchronized (refusedPinned) {
            refusedPinned.merge(reason == null ? Continuation.Pinned.NATIVE : reason, 1L, Long::sum);
        }
    }

    /** Records an honoured preemption that yielded at {@code yieldAt}. */
    void recordYield(long requestedAt, long sliceWhen, long yieldAt, String site) {
        honoured.incrementAndGet();
        synchronized (this) {
            if (requestedAt != 0 && yieldAt >= requestedAt) {
                requestToYield.recordValue(yieldAt - requestedAt);
            }
            if (sliceWhen != 0) {
                long over = yieldAt - (sliceWhen + forcePreemptNS);
                sliceOverrun.recordValue(Math.max(0, over));
            }
        }
        if (site != null) {
            LongAdder a = sites.get(site);
            if (a == null) {
                if (sites.size() >= MAX_SITES) {
                    site = "(other)";
                }
                a = sites.computeIfAbsent(site, k -> new LongAdder());
            }
            a.increment();
        }
    }

    /** A consistent-enough copy of every figure, for the observability layer and tests. */
    public PreemptStats snapshot() {
        Histogram lat;
        Histogram over;
        synchronized (this) {
            lat = requestToYield.copy();
            over = sliceOverrun.copy();
        }
        Map<String, Long> pinned = new LinkedHashMap<>();
        synchronized (refusedPinned) {
            refusedPinned.forEach((k, v) -> pinned.put(k.name(), v));
        }
        Map<String, Long> siteCounts = new LinkedHashMap<>();
        List<Map.Entry<String, LongAdder>> es = new java.util.ArrayList<>(sites.entrySet());
        es.sort((a, b) -> Long.compare(b.getValue().sum(), a.getValue().sum()));
        for (Map.Entry<String, LongAdder> e : es) {
            siteCounts.put(e.getKey(), e.getValue().sum());
        }
        long pinnedTotal = pinned.values().stream().mapToLong(Long::longValue).sum();
        return new PreemptStats(
                strategy,
                requested.get(),
                honoured.get(),
                refusedMonitor.get(),
                pinnedTotal,
                refusedRuntimeLock.get(),
                refusedLock.get(),
                refusedJdkLock.get(),
                refusedClinit.get(),
                syscallExitsDeferred.get(),
                stale.get(),
                unhonoured.get(),
                budgetYields.get(),
                rearmed.get(),
                spuriousPolls.get(),
                Map.copyOf(pinned),
                java.util.Collections.unmodifiableMap(siteCounts),
                PreemptStats.Percentiles.of(lat),
                PreemptStats.Percentiles.of(over),
                lat,
                over);
    }
}
