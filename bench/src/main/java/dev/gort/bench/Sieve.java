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
 * first 2000 primes (about 2000 goroutines and 2 million channel hand-offs, most of them to a
 * goroutine parked on the next channel). Virtual threads: the same chain over SynchronousQueues.
 *
 * <p>The same workload as the Go twin's {@code sieve} (bench/go/main.go): the generator counts only
 * to the 2000th prime ({@link #LIMIT}) and then closes its channel; each filter closes its own when
 * its input ends, and main, after the 2000th prime, drains the last channel, so the close travels
 * down the chain and every goroutine ends. sieve1.go's generator never stops: with it, at
 * GOMAXPROCS=2 the other P ran the generator and the first filters ahead on numbers past the limit
 * while the chain's tail was still working (up to 3.6 million continuation runs per sieve, each
 * readied by a hand-off, instead of 2.05 million; 2,042,625 sends, 2026-12-03), work the twin
 * never does. The twin does not time its drain (the 2000 closes,
 * about 0.1 % of the hand-offs); here a JMH operation is the whole {@code Go.run}, drain and the
 * runtime's boot included.
 *
 * <p>The numbers travel as {@link Integer}s taken from {@link #NUMBERS}, a table built once, so that
 * a gort hand-off allocates nothing, as the twin's {@code chan int} allocates nothing (the value is
 * copied into the receiver); the virtual threads' sieve still allocates 133 MB per sieve, among it
 * a {@code SynchronousQueue} node for each hand-off that finds a waiter. Until 2026-12-04 every
 * send also boxed its number afresh (about 2 million 16-byte {@code Integer}s, 32 MB per sieve, for
 * gort and virtual threads alike), and gort's figure then depended on where in G1's young generation a run fell
 * ({@code SwitchCounts sieve 1 40}): 414-500 ms or 595-655 ms per sieve at GOMAXPROCS=1, in runs of
 * each between young collections, 598-909 ms with a 2 GB young generation that never filled,
 * against 354-410 ms unboxed; at GOMAXPROCS=2 225-384 ms against 204-285 (the whole-suite run at
 * 84d4190 read 488 &plusmn; 105 and 341 &plusmn; 34.6 ms). {@code -Dbench.sieve.boxed=true} still
 * runs it that way ({@link #BOXED}; bench/results/HISTORY.md has the figures of both).
 *
 * <p>Target (issue 3; Go 215 ms, virtual threads 776 ms, Jox 5720 ms): gort &le; 215 ms.
 *
 * <p>Results, 2026-11-30 00:30, 2-vCPU AMD EPYC VM (Temurin 25), load average 2.2 (other jobs),
 * with sieve1.go's endless generator:
 * <pre>
 * JMH -f 1 -wi 3 -i 5       gort P=1 389 +- 19   gort P=2 267 +- 128   vthread 589 +- 147 / 602 +- 123 ms
 * (about 2.3 million hand-offs among 2000 goroutines: every thaw touches a cold stack chunk)
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
        config = config(procs);
    }

    /** The runtime each {@link #gort} invocation boots (also SwitchCounts' sieve, which counts it). */
    static dev.gort.runtime.Config config(int procs) {
        return dev.gort.runtime.Config.fromEnvironment().withGomaxprocs(procs).withPanicExits(false);
    }

    /** The 2000th prime (17389): the generator's last number, as in the Go twin. */
    static final int LIMIT = nthPrime(PRIMES);

    /**
     * Every number the generator sends, boxed once (index = value): the hand-offs pass these along,
     * and gort's allocate nothing. Built when the class is initialised, before any timing.
     */
    static final Integer[] NUMBERS = numbers(LIMIT);

    /** Box every number as it is sent, as the sieve did until 2026-12-04 (see the class comment). */
    static final boolean BOXED = Boolean.getBoolean("bench.sieve.boxed");

    private static Integer[] numbers(int limit) {
        Integer[] t = new Integer[limit + 1];
        for (int i = 0; i <= limit; i++) {
            t[i] = i;
        }
        return t;
    }

    /** The number {@code i} as the generator sends it. */
    private static Integer generated(int i) {
        return BOXED ? Integer.valueOf(i) : NUMBERS[i];
    }

    /** The number {@code v} as a filter passes it on: the same object, or boxed afresh if {@link #BOXED}. */
    private static Integer passed(Integer v) {
        return BOXED ? Integer.valueOf(v.intValue()) : v;
    }

    static volatile int lastPrime;

    /**
     * The Go twin's sieve: sieve1.go's chain, with a generator that stops at {@link #LIMIT} and
     * closes; main drains the last channel after the 2000th prime, so every goroutine ends.
     */
    static void gortSieve() {
        Chan<Integer> ch = Chan.make();
        Chan<Integer> gen = ch;
        Go.go(() -> {
            for (int i = 2; i <= LIMIT; i++) {
                gen.send(generated(i));
            }
            gen.close();
        });
        int prime = 0;
        for (int n = 0; n < PRIMES; n++) {
            prime = ch.recv();
            Chan<Integer> in = ch;
            Chan<Integer> out = Chan.make();
            int p = prime;
            Go.go(() -> {
                for (Integer v : in) {
                    if (v % p != 0) {
                        out.send(passed(v));
                    }
                }
                out.close();
            });
            ch = out;
        }
        lastPrime = prime;
        for (Integer ignored : ch) {
            throw new AssertionError("sieve: " + ignored + " after the 2000th prime");
        }
    }

    /** The n-th prime (2 is the first), by trial division. Go twin: nthPrime. */
    static int nthPrime(int n) {
        int p = 1;
        int found = 0;
        while (found < n) {
            p++;
            boolean prime = true;
            for (int d = 2; d * d <= p; d++) {
                if (p % d == 0) {
                    prime = false;
                    break;
                }
            }
            if (prime) {
                found++;
            }
        }
        return p;
    }

    /**
     * One run of the program: a fresh runtime (as Go runs a fresh process), ended when main returns,
     * by which time every goroutine of the chain has ended. Booting the carriers costs well under a
     * millisecond of the ~200 ms.
     */
    @Benchmark
    public int gort() {
        Go.run(config, Sieve::gortSieve);
        return lastPrime;
    }

    /**
     * The end of a virtual-thread chain (a SynchronousQueue cannot be closed): passed down, then the
     * filter ends. Compared by identity: no number is this object.
     */
    private static final Integer END = Integer.valueOf(-1);

    @Benchmark
    public int vthread() throws InterruptedException {
        int[] result = new int[1];
        AssertionError[] failure = new AssertionError[1];
        Thread main = Thread.ofVirtual().start(() -> {
            SynchronousQueue<Integer> ch = new SynchronousQueue<>();
            SynchronousQueue<Integer> gen = ch;
            Thread.ofVirtual().start(() -> {
                try {
                    for (int i = 2; i <= LIMIT; i++) {
                        gen.put(generated(i));
                    }
                    gen.put(END);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            try {
                int prime = 0;
                for (int n = 0; n < PRIMES; n++) {
                    prime = ch.take();
                    SynchronousQueue<Integer> in = ch;
                    SynchronousQueue<Integer> out = new SynchronousQueue<>();
                    int p = prime;
                    Thread.ofVirtual().start(() -> {
                        try {
                            for (Integer v; (v = in.take()) != END; ) {
                                if (v % p != 0) {
                                    out.put(passed(v));
                                }
                            }
                            out.put(END);
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                        }
                    });
                    ch = out;
                }
                result[0] = prime;
                Integer last = ch.take();
                if (last != END) {
                    failure[0] = new AssertionError("sieve: " + last + " after the 2000th prime");
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        main.join();
        if (failure[0] != null) {
            throw failure[0]; // from the benchmark's thread, so that JMH sees it
        }
        return result[0];
    }
}
