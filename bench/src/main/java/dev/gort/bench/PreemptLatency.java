package dev.gort.bench;

import dev.gort.runtime.PreemptStats;
import dev.gort.runtime.Scheduler;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.HdrHistogram.Histogram;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.IterationParams;
import org.openjdk.jmh.runner.IterationType;

/**
 * Preemption latency per strategy: two CPU hogs ({@code Kernels.hogUntil}, instrumented for the
 * strategy) share one P for {@link #RUN_MS} ms per invocation, so every slice ends in a preemption.
 * The JMH score is only the invocation time; the figures are printed at the end of the trial for
 * all measured invocations together:
 * <ul>
 *   <li>{@code overrun}: yield time minus the slice end (sysmon's first sighting of the schedtick +
 *       10 ms): how far beyond {@code forcePreemptNS} the slice ran. Includes sysmon's own sleep
 *       (20 µs doubling to 10 ms while it retakes nothing, as in Go: {@code -Dgort.sysmon.maxdelay}
 *       caps it, in µs);
 *   <li>{@code request->yield}: sysmon's request to the yield at a poll: the cost of the strategy.
 * </ul>
 * {@code none} is left out: nothing would ever yield.
 *
 * <p>Run: {@code ./gort java --add-exports java.base/jdk.internal.vm=ALL-UNNAMED -jar
 * bench/target/benchmarks.jar PreemptLatency -f 1 -wi 3 -i 5}
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.SingleShotTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 3, batchSize = 1)
@Measurement(iterations = 5, batchSize = 1)
@Fork(
        value = 1,
        jvmArgsAppend = {"-XX:+UseG1GC", "--add-exports", "java.base/jdk.internal.vm=ALL-UNNAMED"})
public class PreemptLatency {
    static final long RUN_MS = 500;

    @Param({"entry", "backedge", "budget"})
    public String strategy;

    KernelApi k;
    int[] a;
    GortHost host;
    final Histogram overrun = new Histogram(3);
    final Histogram reqToYield = new Histogram(3);
    long honoured;
    long budgetYields;
    PreemptStats last;

    @Setup(Level.Trial)
    public void setup() {
        k = StrategyLoader.kernels(strategy);
        a = new SplittableRandom(7).ints(1024, -1000, 1000).toArray();
    }

    @Setup(Level.Iteration)
    public void newRuntime() {
        host = new GortHost(1);
    }

    @TearDown(Level.Iteration)
    public void collect(IterationParams ip) {
        PreemptStats st = host.scheduler().preempt.snapshot();
        host.close();
        System.out.println();
        System.out.println("# iteration: " + st);
        if (ip.getType() != IterationType.MEASUREMENT) {
            return; // the total covers measured iterations only (warm-up ones include JIT deopts)
        }
        overrun.add(st.sliceOverrunHistogram());
        reqToYield.add(st.requestToYieldHistogram());
        honoured += st.honoured();
        budgetYields += st.budgetYields();
    }

    @TearDown(Level.Trial)
    public void report() {
        System.out.println();
        System.out.printf(
                "# %s TOTAL honoured=%d budgetYields=%d overrun p50=%.3fms p99=%.3fms max=%.3fms;"
                        + " request->yield p50=%.3fms p99=%.3fms max=%.3fms%n",
                strategy,
                honoured,
                budgetYields,
                overrun.getValueAtPercentile(50) / 1e6,
                overrun.getValueAtPercentile(99) / 1e6,
                overrun.getMaxValue() / 1e6,
                reqToYield.getValueAtPercentile(50) / 1e6,
                reqToYield.getValueAtPercentile(99) / 1e6,
                reqToYield.getMaxValue() / 1e6);
    }

    @Benchmark
    public long twoHogsOneP() {
        long[] out = new long[1];
        host.run(() -> {
            Scheduler rt = Scheduler.current();
            long deadline = System.nanoTime() + RUN_MS * 1_000_000L;
            GLatch done = new GLatch(2);
            for (int h = 0; h < 2; h++) {
                rt.newproc(() -> {
                    out[0] += k.hogUntil(a, deadline);
                    done.countDown();
                });
            }
            done.await();
        });
        return out[0];
    }
}
