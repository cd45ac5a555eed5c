package dev.gort.bench;

import dev.gort.Syscall;
import dev.gort.runtime.G;
import dev.gort.runtime.Syscalls;
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
 * The cost of a short syscall: {@code entersyscall} + {@code exitsyscall} on the fast path (the old
 * P is still in {@code _Psyscall}: one CAS back, the slice goes on), around a call that does
 * nothing. Target: at most 50 ns (Go's is tens of ns). One invocation is a batch of
 * {@link #CALLS} syscalls made by goroutine 1 of a runtime kept for the trial ({@link GortHost}).
 *
 * <ul>
 *   <li>{@code raw}: {@code G g = Syscalls.entersyscall(); ...; Syscalls.exitsyscall(g);} (the
 *       runtime pair);
 *   <li>{@code api}: {@code Syscall.block(() -> ...)} (the user API: the same pair plus a lambda call);
 *   <li>{@code none}: the same loop calling the lambda directly: the baseline to subtract.
 * </ul>
 *
 * <p>JMH's score is wall time per call. On a shared, loaded machine a carrier gets a fraction of a
 * core and wall time overstates the cost, so each measurement iteration also prints the CPU time
 * the runtime's carriers spent per call ({@code cpu ns/call}, summed over every M's thread CPU time:
 * a goroutine preempted at a syscall exit may continue on another carrier).
 *
 * <p>Run: {@code ./gort java --add-exports java.base/jdk.internal.vm=ALL-UNNAMED -jar
 * bench/target/benchmarks.jar SyscallCost -f 1 -wi 3 -i 5}
 *
 * <p>Latest (2025-11-30, 2-core AMD EPYC VM, Temurin 25.0.3, shared with other builds: load
 * average 8-11 during the run):
 * <pre>
 * mode  P  wall ns/op (JMH)   carrier CPU ns/call (5 measurement iterations)
 * raw   1  47.4 ± 57.5        19.9 20.0 19.7 19.6 19.8
 * raw   2  33.3 ± 53.9        19.7 19.7 19.8 19.8 19.7
 * api   1  36.3 ± 33.8        21.5 21.5 21.5 21.4 21.4
 * api   2  36.0 ± 21.6        20.2 20.0 19.9 19.7 19.7
 * none  -  0.02 (the loop folds away)
 * </pre>
 * Go 1.19's BenchmarkSyscall (Entersyscall+Exitsyscall, -cpu 2) on the same machine at load ~19:
 * 122 ns/op wall.
 *
 * <p>The suite's Go twin of {@code api} ({@code bench/go/timers.go} syscallCost) times Go's own API
 * instead: {@code syscall.Syscall(getpid)} minus {@code syscall.RawSyscall(getpid)}, which is the
 * entersyscall/exitsyscall pair. 2026-12-03, long budget, idle machine: gort 13.3 / 13.2 ns at
 * P = 1 / 2, Go 33.3 / 32.9 ns.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@OperationsPerInvocation(SyscallCost.CALLS)
@State(Scope.Benchmark)
@Fork(
        value = 1,
        jvmArgsAppend = {"-XX:+UseG1GC", "--add-exports", "java.base/jdk.internal.vm=ALL-UNNAMED"})
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
public class SyscallCost {
    /** Syscalls per invocation. */
    static final int CALLS = 1 << 20;

    @Param({"raw", "api", "none"})
    public String mode;

    @Param({"1", "2"})
    public int gomaxprocs;

    private GortHost host;
    private long sink;
    private long cpuNs;
    private long calls;
    private static final java.lang.management.ThreadMXBean THREADS =
            java.lang.management.ManagementFactory.getThreadMXBean();

    private static final Syscall.Call<Long, RuntimeException> CALL = () -> 1L;

    @Setup(Level.Trial)
    public void setup() {
        host = new GortHost(gomaxprocs);
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        host.close();
    }

    @TearDown(Level.Iteration)
    public void printCpu() {
        if (calls > 0) {
            System.out.printf(
                    "%n[SyscallCost mode=%s gomaxprocs=%d] cpu %.1f ns/call over %d calls%n",
                    mode, gomaxprocs, (double) cpuNs / calls, calls);
        }
        cpuNs = 0;
        calls = 0;
    }

    /** CPU time of every carrier (M) of the host runtime so far. */
    private long carriersCpu() {
        long t = 0;
        for (dev.gort.runtime.M m : host.scheduler().allm()) {
            long c = THREADS.getThreadCpuTime(m.thread().threadId());
            if (c > 0) {
                t += c;
            }
        }
        return t;
    }

    @Benchmark
    public long syscall() {
        final String m = mode;
        long cpu0 = carriersCpu();
        host.run(() -> {
            long s = 0;
            switch (m) {
                case "raw" -> {
                    for (int i = 0; i < CALLS; i++) {
                        G g = Syscalls.entersyscall();
                        s += i;
                        Syscalls.exitsyscall(g);
                    }
                }
                case "api" -> {
                    for (int i = 0; i < CALLS; i++) {
                        s += Syscall.block(CALL);
                    }
                }
                case "none" -> {
                    for (int i = 0; i < CALLS; i++) {
                        s += CALL.call();
                    }
                }
                default -> throw new IllegalArgumentException(m);
            }
            sink += s;
        });
        cpuNs += carriersCpu() - cpu0;
        calls += CALLS;
        return sink;
    }
}
