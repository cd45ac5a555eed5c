package dev.gort.bench;

import dev.gort.Go;
import dev.gort.runtime.SchedCounts;
import dev.gort.sync.WaitGroup;
import java.util.Map;

/**
 * Counts, rather than times, what one switch-bound operation costs the runtime (issue 19): runs
 * {@link PingPong}'s gort round trips or a two-goroutine {@code Gosched} loop in one long-lived
 * runtime, warms up, resets the counters, runs again and prints every {@link SchedCounts} counter
 * per operation (per round trip, per Gosched), with the CPU per operation of the whole process
 * and of each kind of thread ({@link NetCounts#threadCpu}: the carriers together, sysmon, the JIT).
 * At GOMAXPROCS=2 the lines to read are the idle M's: {@code noteUnparks} (carrier wake-ups, each
 * a futex wake of a sleeping thread), {@code runnextBackoffs} (runqgrab's timed sleeps) and
 * {@code runnextSteals} (a split pair); the CPUs busy beyond the one that runs the pair; and the
 * kernel's context switches of each kind of thread ({@link NetCounts#threadSwitches}: voluntary, a
 * park or timed sleep; involuntary, preempted while runnable, as when a woken carrier lands on the
 * CPU of the carrier running the pair).
 *
 * <p>Unlike {@link Gosched}, which starts a runtime per invocation (so its two goroutines may start
 * on two Ps or on one), the Gosched loop here runs inside {@link GortHost}'s runtime, like the ping-pong.
 *
 * <p>Run (the counters are compiled in only with {@code gort.debug.counts}):
 *
 * <pre>
 * $(./gort jdk)/bin/java -Dgort.debug.counts=true --add-exports java.base/jdk.internal.vm=ALL-UNNAMED \
 *     -cp bench/target/benchmarks.jar dev.gort.bench.SwitchCounts pingpong 2 [invocations]
 * </pre>
 *
 * <p>Arguments: {@code pingpong}, {@code gosched}, {@code manypairs}, {@code createchain} or
 * {@code sieve} (one line per invocation, see {@link #sieve}), GOMAXPROCS, and the invocations to
 * count (each {@link PingPong#N} round trips, {@link PingPong#N} Gosched calls in all,
 * {@link ManyPairs}'s 10,000 pairs of 100 messages: counted per message, or {@link CreateChain}'s
 * GOMAXPROCS chains of {@link CreateChain#N} goroutines in all: counted per goroutine created).
 */
public final class SwitchCounts {
    private SwitchCounts() {}

    public static void main(String[] args) throws Exception {
        String what = args[0];
        int procs = Integer.parseInt(args[1]);
        int reps = args.length > 2 ? Integer.parseInt(args[2]) : 20;
        if (!SchedCounts.ON) {
            System.err.println("SwitchCounts: run with -Dgort.debug.counts=true (the counters are off)");
        }
        if (what.equals("sieve")) {
            sieve(procs, reps);
            return;
        }
        Runnable job = switch (what) {
            case "pingpong" -> PingPong::gortRoundTrips;
            case "gosched" -> SwitchCounts::goschedPair;
            case "manypairs" -> ManyPairs::gortPairs;
            case "createchain" -> () -> CreateChain.gortChains(procs);
            default ->
                throw new IllegalArgumentException(
                        "SwitchCounts: want pingpong, gosched, manypairs, createchain or sieve, not " + what);
        };
        long perInvocation = switch (what) {
            case "manypairs" -> (long) ManyPairs.PAIRS * ManyPairs.MSGS;
            case "createchain" -> CreateChain.N;
            default -> PingPong.N;
        };
        try (GortHost host = new GortHost(procs)) {
            for (int i = 0; i < 30; i++) { // warm-up: the JIT compiles the M loop and the channel paths
                host.run(job);
            }
            SchedCounts.reset();
            long t0 = System.nanoTime();
            Map<String, Long> th0 = NetCounts.threadCpu();
            Map<String, long[]> sw0 = NetCounts.threadSwitches();
            long cpu0 = NetCounts.processCpuTime();
            for (int i = 0; i < reps; i++) {
                host.run(job);
            }
            long cpu1 = NetCounts.processCpuTime();
            Map<String, long[]> sw1 = NetCounts.threadSwitches();
            Map<String, Long> th1 = NetCounts.threadCpu();
            long t1 = System.nanoTime();
            Map<String, Long> c = SchedCounts.snapshot();
            double n = (double) perInvocation * reps;
            System.out.printf(
                    "SwitchCounts %s P=%d: %d %s, %d carrier threads; process CPU %.0f ns each (%.2f CPUs busy);"
                            + " wall %.0f ns each (loaded machine: not a figure)%n",
                    what,
                    procs,
                    (long) n,
                    switch (what) {
                        case "pingpong" -> "round trips";
                        case "gosched" -> "Gosched calls";
                        case "createchain" -> "goroutines created";
                        default -> "messages";
                    },
                    host.scheduler().mcountPublic(),
                    (cpu1 - cpu0) / n,
                    (cpu1 - cpu0) / (double) (t1 - t0),
                    (t1 - t0) / n);
            c.forEach((k, v) -> System.out.printf("  %-22s %12d  %9.4f%n", k, v, v / n));
            NetCounts.printThreadCpu(th0, th1, cpu1 - cpu0, n);
            NetCounts.printThreadSwitches(sw0, sw1, n);
        }
    }

    /**
     * {@link Sieve}'s gort workload as JMH runs it, a runtime per invocation ({@code Go.run}), and one
     * line per invocation: its wall time beside its continuation runs, readies (goroutines made
     * runnable by a hand-off), steals, spinning Ms and carrier wake-ups. Every run is one hand-off
     * to a parked partner, at any GOMAXPROCS: about 2.046 million per sieve (Go's runtime trace of
     * the twin at GOMAXPROCS=2: 2,047,080 GoStart events). With sieve1.go's endless generator the
     * count at 2 went up to 3.6 million (the generator ran ahead past the limit), which is why the
     * workload now stops at the 2000th prime, as the Go twin does.
     */
    static void sieve(int procs, int reps) {
        dev.gort.runtime.Config config = Sieve.config(procs);
        for (int i = 0; i < reps; i++) {
            SchedCounts.reset();
            long t0 = System.nanoTime();
            Go.run(config, Sieve::gortSieve);
            long t1 = System.nanoTime();
            Map<String, Long> c = SchedCounts.snapshot();
            System.out.printf(
                    "SwitchCounts sieve P=%d #%d: %.0f ms, contRuns %d, readies %d, steals %d, becomeSpinning %d, noteUnparks %d%n",
                    procs,
                    i,
                    (t1 - t0) / 1e6,
                    c.getOrDefault("contRuns", 0L),
                    c.getOrDefault("readies", 0L),
                    c.getOrDefault("steals", 0L),
                    c.getOrDefault("becomeSpinning", 0L),
                    c.getOrDefault("noteUnparks", 0L));
        }
    }

    /** Two goroutines each call Gosched {@link PingPong#N}/2 times (Go's Gosched through the global queue). */
    static void goschedPair() {
        WaitGroup wg = new WaitGroup();
        wg.add(2);
        for (int g = 0; g < 2; g++) {
            Go.go(() -> {
                for (int i = 0; i < PingPong.N / 2; i++) {
                    Go.gosched();
                }
                wg.done();
            });
        }
        wg.await();
    }
}
