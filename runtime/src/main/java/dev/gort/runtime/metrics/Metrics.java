package dev.gort.runtime.metrics;

import dev.gort.runtime.G;
import dev.gort.runtime.Netpoll;
import dev.gort.runtime.P;
import dev.gort.runtime.Scheduler;
import dev.gort.runtime.TimeHistogram;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.ToLongFunction;

/**
 * runtime/metrics for one gort runtime: Go's names ({@code /sched/goroutines:goroutines},
 * {@code /sched/latencies:seconds} ...), gort's own under {@code /gort/}. The API copies Go's:
 * {@link #all()} lists the {@link Description}s, {@link #read(Sample...)} fills samples.
 * <pre>{@code
 * Metrics.Sample s = new Metrics.Sample("/sched/goroutines:goroutines");
 * new Metrics(sched).read(s);
 * long n = s.value.uint64();
 * }</pre>
 * Values are racy snapshots (Go's are too, except where it stops the world).
 *
 * <p>Go: runtime/metrics description.go, sample.go; runtime/metrics.go
 */
public final class Metrics {
    /** Go: metrics.ValueKind. */
    public enum Kind {
        BAD,
        UINT64,
        FLOAT64,
        FLOAT64_HISTOGRAM
    }

    /** Go: metrics.Description. */
    public record Description(String name, String description, Kind kind, boolean cumulative) {}

    /** Go: metrics.Float64Histogram: {@code buckets.length == counts.length + 1}. */
    public record Float64Histogram(long[] counts, double[] buckets) {}

    /** Go: metrics.Value. */
    public static final class Value {
        Kind kind = Kind.BAD;
        long u;
        double f;
        Float64Histogram h;

        public Kind kind() {
            return kind;
        }

        public long uint64() {
            if (kind != Kind.UINT64) {
                throw new IllegalStateException("called uint64 on non-uint64 metric value");
            }
            return u;
        }

        public double float64() {
            if (kind != Kind.FLOAT64) {
                throw new IllegalStateException("called float64 on non-float64 metric value");
            }
            return f;
        }

        public Float64Histogram float64Histogram() {
            if (kind != Kind.FLOAT64_HISTOGRAM) {
                throw new IllegalStateException("called float64Histogram on non-histogram metric value");
            }
            return h;
        }

        @Override
        public String toString() {
            return switch (kind) {
                case UINT64 -> Long.toUnsignedString(u);
                case FLOAT64 -> Double.toString(f);
                case FLOAT64_HISTOGRAM ->
                    "histogram(" + java.util.Arrays.stream(h.counts()).sum() + " samples)";
                default -> "<bad>";
            };
        }
    }

    /** Go: metrics.Sample. */
    public static final class Sample {
        public final String name;
        public final Value value = new Value();

        public Sample(String name) {
            this.name = name;
        }
    }

    private interface Reader {
        void read(Scheduler s, Value v);
    }

    private record Def(Description d, Reader r) {}

    private static final List<Def> DEFS = new ArrayList<>();

    private static void u(String name, String desc, boolean cumulative, ToLongFunction<Scheduler> f) {
        DEFS.add(new Def(new Description(name, desc, Kind.UINT64, cumulative), (s, v) -> {
            v.kind = Kind.UINT64;
            v.u = f.applyAsLong(s);
        }));
    }

    private static long countStatus(Scheduler s, int status) {
        long n = 0;
        for (G gp : s.allgs()) {
            if (gp.readgstatus() == status) {
                n++;
            }
        }
        return n;
    }

    static {
        u(
                "/sched/gomaxprocs:threads",
                "The current runtime.GOMAXPROCS setting, or the number of operating system threads that can execute user-level Go code simultaneously.",
                false,
                Scheduler::gomaxprocs);
        u("/sched/goroutines:goroutines", "Count of live goroutines.", false, Scheduler::numGoroutine);
        u(
                "/sched/goroutines-created:goroutines",
                "Count of goroutines created since program start.",
                true,
                Scheduler::goroutinesCreated);
        u(
                "/sched/goroutines/runnable:goroutines",
                "Approximate count of goroutines ready to execute, but not executing. Not guaranteed to add up to /sched/goroutines:goroutines with other goroutine metrics.",
                false,
                s -> countStatus(s, G._Grunnable));
        u(
                "/sched/goroutines/running:goroutines",
                "Approximate count of goroutines executing. Always less than or equal to /sched/gomaxprocs:threads. Not guaranteed to add up to /sched/goroutines:goroutines with other goroutine metrics.",
                false,
                s -> countStatus(s, G._Grunning));
        u(
                "/sched/goroutines/waiting:goroutines",
                "Approximate count of goroutines waiting on a resource (I/O or sync primitives). Not guaranteed to add up to /sched/goroutines:goroutines with other goroutine metrics.",
                false,
                s -> countStatus(s, G._Gwaiting));
        u(
                "/sched/goroutines/not-in-go:goroutines",
                "Approximate count of goroutines running or blocked in a system call or cgo call (gort: a blocking Java call). Not guaranteed to add up to /sched/goroutines:goroutines with other goroutine metrics.",
                false,
                s -> countStatus(s, G._Gsyscall));
        u(
                "/gort/sched/goroutines/leaked:goroutines",
                "Count of goroutines the goroutineleak profile has found leaked so far (blocked on a channel, select or sync primitive no other goroutine can reach; the JVM reclaimed them, so they are no longer in /sched/goroutines:goroutines). Updated only when the profile runs.",
                true,
                Scheduler::leakedGoroutines);
        u(
                "/gort/sched/goroutines/waiting-network:goroutines",
                "Approximate count of goroutines parked on the network poller (a read, write, accept or dial waiting for its socket); part of /sched/goroutines/waiting:goroutines.",
                false,
                s -> Netpoll.of(s).netpollWaiters());
        u(
                "/sched/threads/total:threads",
                "The current count of live threads that are owned by the Go runtime (carriers and sysmon).",
                false,
                Scheduler::mcountPublic);
        DEFS.add(new Def(
                new Description(
                        "/sched/latencies:seconds",
                        "Distribution of the time goroutines have spent in the scheduler in a runnable state before actually running. Bucket counts increase monotonically. Sampled (one transition in 8).",
                        Kind.FLOAT64_HISTOGRAM,
                        true),
                (s, v) -> {
                    TimeHistogram h = s.stats.schedLatencies;
                    v.kind = Kind.FLOAT64_HISTOGRAM;
                    v.h = new Float64Histogram(h.counts(), h.bucketsSeconds());
                }));
        u("/gort/sched/global-runq:goroutines", "Length of the global run queue.", false, Scheduler::globalRunqSize);
        u(
                "/gort/sched/local-runq:goroutines",
                "Sum of the lengths of the per-P run queues (rings, not runnext).",
                false,
                s -> {
                    long n = 0;
                    for (P pp : s.allp()) {
                        n += pp.runq.size();
                    }
                    return n;
                });
        u("/gort/sched/idle-procs:threads", "Number of idle Ps.", false, Scheduler::npidle);
        u("/gort/sched/spinning:threads", "Number of spinning Ms (looking for work).", false, Scheduler::nmspinning);
        u(
                "/gort/sched/steal-ops:events",
                "Successful steal operations (each takes half of a victim's queue).",
                true,
                s -> s.stats.steals.get());
        u(
                "/gort/sched/steals:events",
                "Goroutines moved by successful steals (each takes half of a victim's run queue, or its runnext).",
                true,
                s -> s.stats.stolenGs.get());
        u(
                "/gort/sched/preempt-requests:events",
                "Preemption requests (sysmon, stop-the-world).",
                true,
                s -> s.preempt.requests());
        u(
                "/gort/sched/preemptions:events",
                "Preemptions honoured at a yield point.",
                true,
                s -> s.stats.preemptions.get());
        u(
                "/gort/sched/preempt-refused:events",
                "Preemption requests a goroutine could not honour (monitor, lock, class initialiser, pinned, ...).",
                true,
                s -> s.preempt.refusals());
        u(
                "/gort/sched/handoffs:events",
                "P handoffs (syscall, blocking call, locked M).",
                true,
                s -> s.stats.handoffs.get());
        u(
                "/gort/sched/thread-starts:events",
                "Carrier threads started (M0 included).",
                true,
                s -> s.stats.mStarts.get());
        u(
                "/gort/sched/pinned-yields:events",
                "Yields refused because the continuation was pinned.",
                true,
                s -> s.stats.pinnedYields.get());
    }

    private static final Map<String, Def> BY_NAME;

    static {
        Map<String, Def> m = new java.util.LinkedHashMap<>();
        for (Def d : DEFS) {
            m.put(d.d().name(), d);
        }
        BY_NAME = java.util.Collections.unmodifiableMap(m);
    }

    private final Scheduler sched;

    public Metrics(Scheduler sched) {
        this.sched = sched;
    }

    /** Go: metrics.All. */
    public static List<Description> all() {
        return DEFS.stream().map(Def::d).toList();
    }

    /** Go: metrics.Read. Unknown names get {@link Kind#BAD}, as in Go. */
    public void read(Sample... samples) {
        for (Sample sm : samples) {
            Def d = BY_NAME.get(sm.name);
            if (d == null) {
                sm.value.kind = Kind.BAD;
            } else {
                d.r().read(sched, sm.value);
            }
        }
    }

    /** Convenience: one metric's value as a number (histograms: the number of samples). */
    public double value(String name) {
        Sample s = new Sample(name);
        read(s);
        return switch (s.value.kind) {
            case UINT64 -> s.value.u;
            case FLOAT64 -> s.value.f;
            case FLOAT64_HISTOGRAM ->
                java.util.Arrays.stream(s.value.h.counts()).sum();
            default -> throw new IllegalArgumentException("unknown metric " + name);
        };
    }
}
