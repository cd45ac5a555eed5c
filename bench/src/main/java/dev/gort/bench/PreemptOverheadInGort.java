package dev.gort.bench;

import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * {@link PreemptOverhead}'s kernels run as goroutine 1 of a live 1-P runtime ({@link GortHost}), in
 * batches of {@link #BATCH} calls per invocation (milliseconds, so the hand-off is noise), score per
 * call: the real fast paths on a carrier (the budget counter included), and real preemptions (sysmon
 * asks every 10 ms; the G yields and is resumed at once, being alone). The preemption figures of
 * each trial are printed at its end ("# preempt[...]").
 *
 * <p>Run: {@code ./gort java --add-exports java.base/jdk.internal.vm=ALL-UNNAMED -jar
 * bench/target/benchmarks.jar PreemptOverheadInGort -f 1 -wi 3 -i 5}
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(
        value = 1,
        jvmArgsAppend = {"-XX:+UseG1GC", "--add-exports", "java.base/jdk.internal.vm=ALL-UNNAMED"})
public class PreemptOverheadInGort {
    @Param({"none", "entry", "backedge", "budget"})
    public String strategy;

    static final int BATCH = 512;

    KernelApi k;
    int[] a;
    GortHost host;

    @Setup(Level.Trial)
    public void setup() {
        k = StrategyLoader.kernels(strategy);
        a = new SplittableRandom(42).ints(PreemptOverhead.N, -1000, 1000).toArray();
        host = new GortHost(1);
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        System.out.println();
        System.out.println("# " + strategy + ": " + host.scheduler().preempt.snapshot());
        host.close();
    }

    private long batch(LongSupplier op) {
        long[] out = new long[1];
        host.run(() -> {
            long s = 0;
            for (int i = 0; i < BATCH; i++) {
                s += op.getAsLong();
            }
            out[0] = s;
        });
        return out[0];
    }

    @Benchmark
    @OperationsPerInvocation(BATCH)
    public long arraySum() {
        return batch(() -> k.arraySum(a));
    }

    @Benchmark
    @OperationsPerInvocation(BATCH)
    public long nestedLoops() {
        return batch(() -> k.nested(PreemptOverhead.NESTED));
    }

    @Benchmark
    @OperationsPerInvocation(BATCH)
    public long loopCallingSmallMethod() {
        return batch(() -> k.callLoop(a));
    }
}
