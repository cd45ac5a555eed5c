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
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Unbuffered ping-pong: one op = one round trip (ping over one unbuffered channel, pong back over
 * another). gort at GOMAXPROCS {@code procs}: each send finds the partner parked and hands it the
 * value through runnext, then the sender parks on the reply, so the pair runs as a unit on one P.
 * Virtual threads: two SynchronousQueues.
 *
 * <p>Targets (issue 3; Go 1.19 on the same 2-core machine: 216 ns at GOMAXPROCS=1, 309 ns at 2;
 * virtual threads 551 ns; Jox 867 ns): gort &le; 216 ns at P=1, &le; 310 ns at P=2.
 *
 * <p>Results, 2026-11-30 00:28, 2-vCPU AMD EPYC VM (Temurin 25), load average 3.3 (other jobs):
 * <pre>
 * JMH -f 1 -wi 3 -i 5       gort P=1 328 +- 44   gort P=2 471 +- 59   vthread 152 +- 21 / 153 +- 15 ns
 * same machine, same time:  raw Continuation run+yield 81 ns; gort core park/ready round trip (no
 *                           channel, CorePP-style) 250 ns; so a round trip is 2 x 81 switch + ~90
 *                           scheduler + ~65 channel layer (4 channel ops: lock, queue, sudog, hand-off)
 * (vthread: SynchronousQueue spins before parking, so with two carriers the pair hands off without
 * ever parking, on two busy cores)
 * </pre>
 *
 * <p>Earlier, 2026-11-29, 2-vCPU AMD EPYC VM shared with other jobs (load average 15-20, so wall
 * times are mostly queueing: read them with the CPU column of {@link ChanCpuTime}):
 * <pre>
 * JMH (-f 1 -wi 3 -i 5)     gort P=1 1540 +- 2034   gort P=2 987 +- 1707   vthread 1139 / 1038 ns
 * ChanCpuTime process CPU   gort P=1  380-440       gort P=2 730 (spinning Ms included)   vthread 770 ns
 * same machine, same load:  raw Continuation run+yield 80 ns CPU; gort core park/ready round trip
 *                           (no channel) 300 ns CPU; so a round trip is 2 x 80 switch + ~140 scheduler
 *                           + ~100 channel layer (4 channel ops: lock, queue, sudog, hand-off)
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
public class PingPong {
    static final int N = 100_000;

    @Param({"1", "2"})
    public int procs;

    private GortHost host;
    private Runnable job;

    @Setup(Level.Trial)
    public void setup() {
        host = new GortHost(procs);
        job = PingPong::gortRoundTrips;
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        host.close();
    }

    static void gortRoundTrips() {
        Chan<Integer> ping = Chan.make();
        Chan<Integer> pong = Chan.make();
        Go.go(() -> {
            for (Integer v : ping) {
                pong.send(v);
            }
        });
        Integer one = 1;
        for (int i = 0; i < N; i++) {
            ping.send(one);
            pong.recv();
        }
        ping.close();
    }

    @Benchmark
    @OperationsPerInvocation(N)
    public void gort() {
        host.run(job);
    }

    @Benchmark
    @OperationsPerInvocation(N)
    public void vthread() throws InterruptedException {
        SynchronousQueue<Integer> ping = new SynchronousQueue<>();
        SynchronousQueue<Integer> pong = new SynchronousQueue<>();
        Thread partner = Thread.ofVirtual().start(() -> {
            try {
                for (int i = 0; i < N; i++) {
                    pong.put(ping.take());
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        Thread main = Thread.ofVirtual().start(() -> {
            try {
                Integer one = 1;
                for (int i = 0; i < N; i++) {
                    ping.put(one);
                    pong.take();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        main.join();
        partner.join();
    }
}
