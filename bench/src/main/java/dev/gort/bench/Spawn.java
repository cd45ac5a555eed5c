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
 * Spawn: one goroutine starts 1,000,000 goroutines that each finish at once, counted down on a
 * WaitGroup, while main waits; the score is the cost per goroutine (spawn + run + exit +
 * count-down), including the boot and shutdown of a fresh runtime per invocation (well under 1 % of
 * an invocation).
 *
 * <p>Go twin: {@code wg.Add(N); go func() { for i := 0; i < N; i++ { go wg.Done() } }(); wg.Wait()}
 * (the spawner is a goroutine of its own, main blocks in Wait: until 2026-12-03 gort's main spawned
 * them itself, 2.6-9 % faster at GOMAXPROCS=2 than the twin's shape in three runs)
 * (Go 1.19, 2 cores: 208 ns per goroutine). Virtual threads: the same from one virtual thread with
 * {@code Thread.ofVirtual().start} and a {@code CountDownLatch(N)}, the scheduler's parallelism set
 * to {@code procs} ({@code jdk.virtualThreadScheduler.parallelism}, read when the first virtual
 * thread starts in the fork).
 *
 * <p>Run: {@code ./gort java --add-exports java.base/jdk.internal.vm=ALL-UNNAMED -jar
 * bench/target/benchmarks.jar Spawn -f 1 -wi 3 -i 5}
 *
 * <p>Latest (2026-11-29, 2-core AMD EPYC KVM, Temurin 25.0.3, commit 64e7237; the machine was shared,
 * load average 13-17 on 2 cores, so wall figures are inflated and the errors huge), ns per goroutine:
 * <pre>
 *   JMH wall      gort P=1  774 ± 1062   gort P=2  572 ± 651   vthread C=1 6729 ± 19452   vthread C=2 703 ± 467
 *   CPU (CpuPerOp) gort P=1  180          gort P=2  180         vthread C=1  830           vthread C=2 370
 * </pre>
 * CPU is process CPU time per goroutine over every thread (carriers, GC, JIT), median of 10 runs.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@OperationsPerInvocation(Spawn.N)
@State(Scope.Benchmark)
@Fork(
        value = 1,
        jvmArgsAppend = {"--add-exports", "java.base/jdk.internal.vm=ALL-UNNAMED", "-XX:+UseG1GC"})
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
public class Spawn {
    static final int N = 1_000_000;

    @Param({"gort", "vthread"})
    public String impl;

    @Param({"1", "2"})
    public int procs;

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
    public void spawn() throws InterruptedException {
        if (impl.equals("gort")) {
            Go.run(config, Spawn::gortMain);
        } else {
            vthreadMain();
        }
    }

    static void gortMain() {
        WaitGroup wg = new WaitGroup();
        wg.add(N);
        Runnable task = wg::done;
        Go.go(() -> {
            for (int i = 0; i < N; i++) {
                Go.go(task);
            }
        });
        wg.await();
    }

    static void vthreadMain() throws InterruptedException {
        CountDownLatch wg = new CountDownLatch(N);
        Runnable task = wg::countDown;
        Thread spawner = Thread.ofVirtual().start(() -> {
            for (int i = 0; i < N; i++) {
                Thread.ofVirtual().start(task);
            }
        });
        spawner.join();
        wg.await();
    }
}
