package dev.gort.bench;

import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
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
import org.openjdk.jmh.annotations.Warmup;

/**
 * Cost of the injected yield points on CPU-bound loops (preemption-strategies.md W4): the same
 * kernels ({@link dev.gort.bench.kernels.Kernels}) uninstrumented ({@code none}) and rewritten for
 * each strategy by gort's transformer, in one run. Score: ns per kernel call (lower is better);
 * overhead = score / score(none).
 *
 * <p>Here the kernel runs on the JMH thread, outside gort: the {@code poll()} fast path is the same
 * instruction sequence there (one opaque load of the armed count, never set), but the budget
 * strategy's counter lives on a gort carrier, so its off-carrier figure is not its real cost (see
 * {@link PreemptOverheadInGort}, which runs the same kernels as a goroutine).
 *
 * <p>Run: {@code ./gort java --add-exports java.base/jdk.internal.vm=ALL-UNNAMED -jar
 * bench/target/benchmarks.jar PreemptOverhead -f 1 -wi 3 -i 5}. Vectorisation: add
 * {@code -jvmArgsAppend -XX:+UnlockDiagnosticVMOptions -jvmArgsAppend -XX:+PrintCompilation} or
 * {@code -prof perfasm} where perf is available.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(
        value = 1,
        jvmArgsAppend = {"-XX:+UseG1GC", "--add-exports", "java.base/jdk.internal.vm=ALL-UNNAMED"})
public class PreemptOverhead {
    /** {@code backedge}: strip-mined counted loops (default stride); {@code backedge:0}: a poll at every back-edge. */
    @Param({"none", "entry", "backedge", "backedge:0", "budget"})
    public String strategy;

    static final int N = 16 * 1024;
    static final int NESTED = 128;

    KernelApi k;
    int[] a;

    @Setup(Level.Trial)
    public void setup() {
        k = StrategyLoader.kernels(strategy);
        a = new SplittableRandom(42).ints(N, -1000, 1000).toArray();
    }

    @Benchmark
    public long arraySum() {
        return k.arraySum(a);
    }

    @Benchmark
    public long nestedLoops() {
        return k.nested(NESTED);
    }

    @Benchmark
    public long loopCallingSmallMethod() {
        return k.callLoop(a);
    }
}
