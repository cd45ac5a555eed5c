package dev.gort.bench;

import dev.gort.Go;
import dev.gort.Time;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.HdrHistogram.ConcurrentHistogram;
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
 * Timer latency: how late a sleep of {@code delayUs} wakes up (actual - requested), gort's
 * {@code Time.sleep} in a goroutine vs {@code Thread.sleep} in a virtual thread, in one run.
 *
 * <p>{@code sleepers} tasks each sleep {@link #R} times in a row; one op = one sleep. With one
 * sleeper the score (AverageTime, us/op) is {@code delay + mean lateness}; with 1000 concurrent
 * sleepers the score is wall time per op and says little: read the lateness distribution, printed
 * per iteration as {@code late p50/p90/p99/max/mean} in microseconds (HdrHistogram, every sleep).
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 2)
@Fork(
        value = 1,
        jvmArgsAppend = {"--add-exports", "java.base/jdk.internal.vm=ALL-UNNAMED"})
public class TimerLatency {
    /** Sleeps per task per invocation. */
    static final int R = 20;

    @Param({"gort", "vthread"})
    public String impl;

    @Param({"100", "1000"})
    public long delayUs;

    @Param({"1", "1000"})
    public int sleepers;

    @Param({"2"})
    public int procs;

    private GortHost host;
    private final ConcurrentHistogram late = new ConcurrentHistogram(3_600_000_000_000L, 3);

    @Setup(Level.Trial)
    public void setup() {
        if (impl.equals("gort")) {
            host = new GortHost(procs);
        }
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        if (host != null) {
            host.close();
        }
    }

    @TearDown(Level.Iteration)
    public void report() {
        System.out.printf(
                "%n  late[%s delay=%dus sleepers=%d]: p50=%.1f p90=%.1f p99=%.1f max=%.1f mean=%.1f us (n=%d)%n",
                impl,
                delayUs,
                sleepers,
                late.getValueAtPercentile(50) / 1e3,
                late.getValueAtPercentile(90) / 1e3,
                late.getValueAtPercentile(99) / 1e3,
                late.getMaxValue() / 1e3,
                late.getMean() / 1e3,
                late.getTotalCount());
        late.reset();
    }

    @Benchmark
    @OperationsPerInvocation(R)
    public void sleep() throws InterruptedException {
        final long d = delayUs * 1000;
        final int n = sleepers;
        if (host != null) {
            host.run(() -> {
                GLatch wg = new GLatch(n);
                for (int i = 0; i < n; i++) {
                    Go.go(() -> {
                        for (int r = 0; r < R; r++) {
                            long t0 = Time.nanotime();
                            Time.sleep(d);
                            late.recordValue(Math.max(0, Time.since(t0) - d));
                        }
                        wg.countDown();
                    });
                }
                wg.await();
            });
        } else {
            CountDownLatch wg = new CountDownLatch(n);
            Duration dd = Duration.ofNanos(d);
            for (int i = 0; i < n; i++) {
                Thread.startVirtualThread(() -> {
                    try {
                        for (int r = 0; r < R; r++) {
                            long t0 = System.nanoTime();
                            Thread.sleep(dd);
                            late.recordValue(Math.max(0, System.nanoTime() - t0 - d));
                        }
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                    wg.countDown();
                });
            }
            wg.await();
        }
    }
}
