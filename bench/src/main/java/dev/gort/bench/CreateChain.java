package dev.gort.bench;

import dev.gort.Go;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
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
 * Create chain: each goroutine creates the next one and ends, so creation is always done by a
 * goroutine that is about to die (the new G inherits its P through runnext). {@code gomaxprocs}
 * chains run side by side, {@link #N} creations in all, as in Go's {@code BenchmarkCreateGoroutines}
 * (proc_test.go: {@code go f(b.N / procs)} once per P). Score: ns per created goroutine.
 *
 * <p>Virtual threads: each thread starts the next one ({@code Thread.startVirtualThread}) and ends.
 * Platform threads are left out: at ~50 us per thread start the chain would dominate the budget and
 * say nothing new (Spawn covers them).
 *
 * <p>Go: proc_test.go BenchmarkCreateGoroutines
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(
        value = 1,
        jvmArgsAppend = {"-XX:+UseG1GC", "--add-exports", "java.base/jdk.internal.vm=ALL-UNNAMED"})
public class CreateChain {
    /** Goroutines created per invocation (split over the chains). */
    public static final int N = 100_000;

    @Param({"gort", "vthread"})
    public String impl;

    @Param({"1", "2"})
    public int gomaxprocs;

    private GortHost host;
    private int chains;

    @Setup
    public void setup() {
        Bench.checkImpl(impl, Bench.GORT, Bench.VTHREAD);
        chains = gomaxprocs;
        if (impl.equals(Bench.GORT)) {
            host = new GortHost(gomaxprocs);
        }
    }

    @TearDown
    public void tearDown() {
        if (host != null) {
            host.close();
        }
    }

    @Benchmark
    @OperationsPerInvocation(N)
    public void chain() throws InterruptedException {
        int per = N / chains;
        if (host != null) {
            host.run(() -> gortChains(chains));
        } else {
            CountDownLatch done = new CountDownLatch(chains);
            for (int i = 0; i < chains; i++) {
                Thread.startVirtualThread(() -> vthreadStep(per - 1, done));
            }
            done.await();
        }
    }

    /** {@code chains} chains of {@link #N}{@code / chains} goroutines each, from a goroutine; returns when all end. */
    static void gortChains(int chains) {
        int per = N / chains;
        GLatch done = new GLatch(chains);
        for (int i = 0; i < chains; i++) {
            Go.go(() -> gortStep(per - 1, done));
        }
        done.await();
    }

    private static void gortStep(int n, GLatch done) {
        if (n == 0) {
            done.countDown();
        } else {
            Go.go(() -> gortStep(n - 1, done));
        }
    }

    private static void vthreadStep(int n, CountDownLatch done) {
        if (n == 0) {
            done.countDown();
        } else {
            Thread.startVirtualThread(() -> vthreadStep(n - 1, done));
        }
    }
}
