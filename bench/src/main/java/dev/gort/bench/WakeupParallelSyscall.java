package dev.gort.bench;

import dev.gort.Chan;
import dev.gort.Go;
import dev.gort.Syscall;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
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
 * Go's {@code BenchmarkWakeupParallelSyscall} (runtime/proc_test.go, benchmarkWakeupParallel):
 * two goroutines alternate as sender and receiver on two unbuffered channels; before each receive a
 * goroutine blocks for {@code delay} in a syscall, before each send for {@code delay + 5 µs}. The
 * "syscall" is {@code Syscall.block(() -> LockSupport.parkNanos(d))}, a blocking sleep of the
 * carrier as Go's {@code nanosleep} blocks the thread. One operation is one iteration: each
 * goroutine once sender, once receiver.
 *
 * <p>Reading it (Go's comment): if both goroutines ran on one core, each µs of delay would add 4 µs
 * per iteration (all four delays serialised); if they run in parallel, 2 µs, and the time per
 * iteration is 2 × (runtime overhead + send/receive + delay + wakeDelay), from which the wake-up
 * cost can be estimated. Needs GOMAXPROCS &gt;= 2 (Go skips at 1). Timer slack makes short
 * {@code parkNanos} sleeps last ~50-60 µs on Linux: compare the slope across delays, not the
 * absolute value.
 *
 * <p>Run: {@code ./gort java --add-exports java.base/jdk.internal.vm=ALL-UNNAMED -jar
 * bench/target/benchmarks.jar WakeupParallelSyscall -f 1 -wi 3 -i 5}
 *
 * <p>Latest (2025-11-30, 2-core AMD EPYC VM, Temurin 25.0.3, load average ~12), µs per iteration:
 * delay 0: 191 ± 81, 2: 214 ± 166, 4: 256 ± 228, 6: 251 ± 247, 8: 225 ± 87, 10: 323 ± 540.
 * Go 1.19's own BenchmarkWakeupParallelSyscall on the same machine (load ~19; its delays are 0, 1,
 * 2, 5, 10 µs): 479, 600, 209, 249, 321 µs. Both are dominated by the sleeps' timer slack and the
 * machine's load; no slope can be read at this noise level.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@OperationsPerInvocation(WakeupParallelSyscall.ITERATIONS)
@State(Scope.Benchmark)
@Fork(
        value = 1,
        jvmArgsAppend = {"-XX:+UseG1GC", "--add-exports", "java.base/jdk.internal.vm=ALL-UNNAMED"})
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
public class WakeupParallelSyscall {
    static final int ITERATIONS = 200;
    static final long WAKE_DELAY_NS = 5_000;

    /** Go's loop: 0 to 10 µs in steps of 2 µs. */
    @Param({"0", "2", "4", "6", "8", "10"})
    public int delayUs;

    @Param({"2"})
    public int gomaxprocs;

    private GortHost host;

    @Setup(Level.Trial)
    public void setup() {
        if (gomaxprocs < 2) {
            throw new IllegalArgumentException("skipping: GOMAXPROCS=1 (as Go does)");
        }
        host = new GortHost(gomaxprocs);
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        host.close();
    }

    /** Go: BenchmarkWakeupParallelSyscall's spin: invoke a blocking syscall directly. */
    static void spin(long ns) {
        Syscall.block(() -> {
            if (ns > 0) {
                LockSupport.parkNanos(ns);
            }
        });
    }

    @Benchmark
    public void wakeup() {
        final long delay = delayUs * 1_000L;
        host.run(() -> {
            Chan<Boolean> ping = Chan.make();
            Chan<Boolean> pong = Chan.make();
            Chan<Boolean> start = Chan.make();
            Chan<Boolean> done = Chan.make();
            Go.go(() -> {
                start.recv();
                for (int i = 0; i < ITERATIONS; i++) {
                    // sender
                    spin(delay + WAKE_DELAY_NS);
                    ping.send(true);
                    // receiver
                    spin(delay);
                    pong.recv();
                }
                done.send(true);
            });
            Go.go(() -> {
                for (int i = 0; i < ITERATIONS; i++) {
                    // receiver
                    spin(delay);
                    ping.recv();
                    // sender
                    spin(delay + WAKE_DELAY_NS);
                    pong.send(true);
                }
                done.send(true);
            });
            start.send(true);
            done.recv();
            done.recv();
        });
    }
}
