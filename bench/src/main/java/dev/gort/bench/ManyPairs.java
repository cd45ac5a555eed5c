package dev.gort.bench;

import dev.gort.Chan;
import dev.gort.Go;
import dev.gort.sync.WaitGroup;
import java.util.concurrent.SynchronousQueue;
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
 * 10,000 producer/consumer pairs, each on its own unbuffered channel, all running at once: one op
 * = one message. Every message is a rendezvous; with 20,000 goroutines the run queues are long and
 * the hand-offs go through runnext.
 *
 * <p>Target (issue 3; Go about 105 ns per message, Jox 2.3-2.6 us): gort &le; 150 ns.
 *
 * <p>Results, 2026-11-30 00:29, 2-vCPU AMD EPYC VM (Temurin 25), load average 2.5 (other jobs):
 * <pre>
 * JMH -f 1 -wi 3 -i 5       gort P=1 157 +- 7   gort P=2 95 +- 40   vthread 156 +- 8 / 159 +- 12 ns
 * </pre>
 *
 * <p>Earlier, 2026-11-29, 2-vCPU AMD EPYC VM shared with other jobs (load average 15-20):
 * <pre>
 * JMH (-f 1 -wi 3 -i 5)     gort P=1 700 +- 868   gort P=2 494 +- 304   vthread 433 / 399 ns
 * ChanCpuTime process CPU   gort P=1 190-200      gort P=2 180-209      vthread 200-232 ns
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
public class ManyPairs {
    static final int PAIRS = 10_000;
    static final int MSGS = 100;

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

    static void gortPairs() {
        WaitGroup wg = new WaitGroup();
        wg.add(PAIRS);
        for (int p = 0; p < PAIRS; p++) {
            Chan<Integer> c = Chan.make();
            Go.go(() -> {
                for (int i = 0; i < MSGS; i++) {
                    c.send(ONE);
                }
            });
            Go.go(() -> {
                for (int i = 0; i < MSGS; i++) {
                    c.recv();
                }
                wg.done();
            });
        }
        wg.await();
    }

    @Benchmark
    @OperationsPerInvocation(PAIRS * MSGS)
    public void gort() {
        host.run(ManyPairs::gortPairs);
    }

    @Benchmark
    @OperationsPerInvocation(PAIRS * MSGS)
    public void vthread() throws InterruptedException {
        Thread[] ts = new Thread[2 * PAIRS];
        for (int p = 0; p < PAIRS; p++) {
            SynchronousQueue<Integer> q = new SynchronousQueue<>();
            ts[2 * p] = Thread.ofVirtual().start(() -> {
                try {
                    for (int i = 0; i < MSGS; i++) {
                        q.put(ONE);
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            ts[2 * p + 1] = Thread.ofVirtual().start(() -> {
                try {
                    for (int i = 0; i < MSGS; i++) {
                        q.take();
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
        }
        for (Thread t : ts) {
            t.join();
        }
    }
}
