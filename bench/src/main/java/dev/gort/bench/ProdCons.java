package dev.gort.bench;

import dev.gort.Chan;
import dev.gort.Go;
import java.util.concurrent.ArrayBlockingQueue;
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
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * One producer, one consumer, a buffered channel of capacity 128: one op = one element. Most
 * sends and receives take the lock-and-copy path without parking; a side parks only when the
 * buffer is full or empty. Virtual threads: ArrayBlockingQueue(128).
 *
 * <p>Target (issue 3; Go 39 ns, virtual threads 92 ns, Jox 106 ns): gort &le; 50 ns.
 *
 * <p>Results, 2026-11-30 00:28, 2-vCPU AMD EPYC VM (Temurin 25), load average 3.3 (other jobs):
 * <pre>
 * JMH -f 1 -wi 3 -i 5       gort P=1 15.2 +- 0.4   gort P=2 25.4 +- 3.0   vthread 144 +- 18 / 137 +- 19 ns
 * </pre>
 *
 * <p>Earlier, 2026-11-29, 2-vCPU AMD EPYC VM shared with other jobs (load average 15-20):
 * <pre>
 * JMH (-f 1 -wi 3 -i 5)     gort P=1 119 +- 279   gort P=2 42 +- 68   vthread 100 / 179 ns
 * ChanCpuTime process CPU   gort P=1 19-20        gort P=2 30         vthread 63 ns
 * </pre>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(
        value = 1,
        jvmArgsAppend = {"--add-exports", "java.base/jdk.internal.vm=ALL-UNNAMED", "-XX:+UseG1GC"})
public class ProdCons {
    static final int N = 1_000_000;
    static final int CAP = 128;

    @Param({"1", "2"})
    public int procs;

    private GortHost host;

    @Setup(Level.Trial)
    public void setup() {
        host = new GortHost(procs);
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        host.close();
    }

    static final Integer ONE = 1;

    static void gortBuffered() {
        Chan<Integer> c = Chan.make(CAP);
        Go.go(() -> {
            for (int i = 0; i < N; i++) {
                c.send(ONE);
            }
            c.close();
        });
        long n = 0;
        for (Integer v : c) {
            n += v;
        }
        if (n != N) {
            throw new AssertionError(n);
        }
    }

    @Benchmark
    @OperationsPerInvocation(N)
    public void gort() {
        host.run(ProdCons::gortBuffered);
    }

    @Benchmark
    @OperationsPerInvocation(N)
    public void vthread() throws InterruptedException {
        ArrayBlockingQueue<Integer> q = new ArrayBlockingQueue<>(CAP);
        Thread prod = Thread.ofVirtual().start(() -> {
            try {
                for (int i = 0; i < N; i++) {
                    q.put(ONE);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        long[] n = new long[1];
        Thread cons = Thread.ofVirtual().start(() -> {
            try {
                for (int i = 0; i < N; i++) {
                    n[0] += q.take();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        prod.join();
        cons.join();
        if (n[0] != N) {
            throw new AssertionError(n[0]);
        }
    }
}
