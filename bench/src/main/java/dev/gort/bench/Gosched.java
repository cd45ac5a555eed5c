package dev.gort.bench;

import dev.gort.Go;
import dev.gort.runtime.Config;
import dev.gort.sync.WaitGroup;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
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
import org.openjdk.jmh.annotations.Warmup;

/**
 * Gosched: {@code goroutines} goroutines each call {@code runtime.Gosched} in a loop, so the Ps
 * switch round-robin between them through the global run queue; the score is the cost of one
 * Gosched (yield, globrunqput, findRunnable, resume), per switch. Target: at most 150 ns (the raw
 * Continuation run+yield floor is ~90 ns). Virtual threads: {@code Thread.yield()} in the same loop,
 * with the scheduler's parallelism set to {@code procs}.
 *
 * <p>Run: {@code ./gort java --add-exports java.base/jdk.internal.vm=ALL-UNNAMED -jar
 * bench/target/benchmarks.jar Gosched -f 1 -wi 3 -i 5}
 *
 * <p>Latest (2026-11-29, 2-core AMD EPYC KVM, Temurin 25.0.3, commit 64e7237; shared machine, load
 * average 16-17 on 2 cores: wall figures inflated, errors huge), ns per switch:
 * <pre>
 *   JMH wall         goroutines=2: gort P=1 613 ± 706, P=2 1267 ± 1920; vthread C=1 633 ± 557, C=2 648 ± 556
 *                    goroutines=16: gort P=1 741 ± 867, P=2 716 ± 684; vthread C=1 580 ± 341, C=2 659 ± 464
 *   CPU (CpuPerOp)   goroutines=2: gort P=1 143, P=2 152; vthread C=1 143, C=2 143
 *                    goroutines=16: gort P=1 143, P=2 143; vthread C=1 133, C=2 133
 * </pre>
 * (CPU per switch was 180 ns at P=1 before GlobalRunQueue's Thread.holdsLock check went behind -ea.)
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@OperationsPerInvocation(Gosched.SWITCHES)
@State(Scope.Benchmark)
@Fork(
        value = 1,
        jvmArgsAppend = {"--add-exports", "java.base/jdk.internal.vm=ALL-UNNAMED", "-XX:+UseG1GC"})
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
public class Gosched {
    /** Gosched calls per invocation, over all goroutines. */
    static final int SWITCHES = 1 << 20;

    @Param({"gort", "vthread"})
    public String impl;

    @Param({"1", "2"})
    public int procs;

    @Param({"2", "16"})
    public int goroutines;

    private Config config;

    @Setup(Level.Trial)
    public void setup() {
        config = Config.fromEnvironment().withGomaxprocs(procs);
        if (impl.equals("vthread")) {
            System.setProperty("jdk.virtualThreadScheduler.parallelism", Integer.toString(procs));
            System.setProperty("jdk.virtualThreadScheduler.maxPoolSize", Integer.toString(Math.max(256, procs)));
        }
    }

    @Benchmark
    public void gosched() throws InterruptedException {
        int n = goroutines;
        int each = SWITCHES / n;
        if (impl.equals("gort")) {
            Go.run(config, () -> {
                WaitGroup wg = new WaitGroup();
                wg.add(n);
                for (int g = 0; g < n; g++) {
                    Go.go(() -> {
                        for (int i = 0; i < each; i++) {
                            Go.gosched();
                        }
                        wg.done();
                    });
                }
                wg.await();
            });
        } else {
            CountDownLatch wg = new CountDownLatch(n);
            for (int g = 0; g < n; g++) {
                Thread.ofVirtual().start(() -> {
                    for (int i = 0; i < each; i++) {
                        Thread.yield();
                    }
                    wg.countDown();
                });
            }
            wg.await();
        }
    }
}
