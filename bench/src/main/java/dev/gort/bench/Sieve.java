package dev.gort.bench;

import dev.gort.Chan;
import dev.gort.Go;
import java.util.concurrent.SynchronousQueue;
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
 * The daisy-chain prime sieve (Go's test/chan/sieve1.go, the "Go concurrency" classic): a generator
 * and one filter goroutine per prime found, linked by unbuffered channels; one op = finding the
 * first 2000 primes (about 2000 goroutines and 2.3 million channel hand-offs, most of them to a
 * goroutine parked on the next channel). Virtual threads: the same chain over SynchronousQueues.
 *
 * <p>Target (issue 3; Go 215 ms, virtual threads 776 ms, Jox 5720 ms): gort &le; 215 ms.
 *
 * <p>Results, 2026-11-30 00:30, 2-vCPU AMD EPYC VM (Temurin 25), load average 2.2 (other jobs):
 * <pre>
 * JMH -f 1 -wi 3 -i 5       gort P=1 389 +- 19   gort P=2 267 +- 128   vthread 589 +- 147 / 602 +- 123 ms
 * (about 2.3 million hand-offs among 2000 goroutines: every thaw touches a cold stack chunk)
 * </pre>
 *
 * <p>Earlier, 2026-11-29, 2-vCPU AMD EPYC VM shared with other jobs (load average 15-20):
 * <pre>
 * JMH (-f 1 -wi 3 -i 5)     gort P=1 1461 +- 1366   gort P=2 2304 +- 2786   vthread 2325 / 4224 ms
 * ChanCpuTime process CPU   gort P=1 610-670        gort P=2 510-660        vthread 670-840 ms
 * (about 2.3 million hand-offs among 2000 goroutines: every thaw touches a cold stack chunk, so
 * this one suffers most from the neighbours' cache pressure)
 * </pre>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(
        value = 1,
        jvmArgsAppend = {"--add-exports", "java.base/jdk.internal.vm=ALL-UNNAMED", "-XX:+UseG1GC"})
public class Sieve {
    static final int PRIMES = 2000;

    @Param({"1", "2"})
    public int procs;

    private dev.gort.runtime.Config config;

    @Setup(Level.Trial)
    public void setup() {
        config = dev.gort.runtime.Config.fromEnvironment().withGomaxprocs(procs).withPanicExits(false);
    }

    static volatile int lastPrime;

    /** Go: sieve1.go main, for 2000 primes; the generator and filters are left blocked, as in Go. */
    static void gortSieve() {
        Chan<Integer> ch = Chan.make();
        Chan<Integer> gen = ch;
        Go.go(() -> {
            for (int i = 2; ; i++) {
                gen.send(i);
            }
        });
        int prime = 0;
        for (int n = 0; n < PRIMES; n++) {
            prime = ch.recv();
            Chan<Integer> in = ch;
            Chan<Integer> out = Chan.make();
            int p = prime;
            Go.go(() -> {
                for (int i : in) {
                    if (i % p != 0) {
                        out.send(i);
                    }
                }
            });
            ch = out;
        }
        lastPrime = prime;
    }

    /**
     * One run of the program: a fresh runtime (as Go runs a fresh process), ended when main returns;
     * the blocked generator and filters are abandoned with it. Booting the carriers costs well
     * under a millisecond of the ~200 ms.
     */
    @Benchmark
    public int gort() {
        Go.run(config, Sieve::gortSieve);
        return lastPrime;
    }

    @Benchmark
    public int vthread() throws InterruptedException {
        int[] result = new int[1];
        Thread main = Thread.ofVirtual().start(() -> {
            java.util.List<Thread> all = new java.util.ArrayList<>();
            SynchronousQueue<Integer> ch = new SynchronousQueue<>();
            SynchronousQueue<Integer> gen = ch;
            all.add(Thread.ofVirtual().start(() -> {
                try {
                    for (int i = 2; ; i++) {
                        gen.put(i);
                    }
                } catch (InterruptedException e) {
                    // stopped
                }
            }));
            try {
                int prime = 0;
                for (int n = 0; n < PRIMES; n++) {
                    prime = ch.take();
                    SynchronousQueue<Integer> in = ch;
                    SynchronousQueue<Integer> out = new SynchronousQueue<>();
                    int p = prime;
                    all.add(Thread.ofVirtual().start(() -> {
                        try {
                            for (; ; ) {
                                int i = in.take();
                                if (i % p != 0) {
                                    out.put(i);
                                }
                            }
                        } catch (InterruptedException e) {
                            // stopped
                        }
                    }));
                    ch = out;
                }
                result[0] = prime;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            for (Thread t : all) {
                t.interrupt();
            }
        });
        main.join();
        return result[0];
    }
}
