package dev.gort.bench;

import dev.gort.runtime.trace.Tracer;
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
 * The execution tracer's cost on the worst case, {@link PingPong}'s unbuffered round trip (at
 * GOMAXPROCS=1 by default; every ~170 ns hand-off records three events), tracing {@code off} vs
 * {@code on} in one JMH run. {@code on} records as a flight recorder ({@code window(100)}: 100 ms
 * per M), so memory stays bounded over the run while every event is still written. Issue 17's
 * target: on is at most 10 % slower than off.
 *
 * <p>Run: {@code ./gort mvn -q -DskipTests -pl bench -am package}, then {@code java --add-exports
 * java.base/jdk.internal.vm=ALL-UNNAMED -jar bench/target/benchmarks.jar TracePingPong} with JDK 25.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(
        value = 1,
        jvmArgsAppend = {
            "--add-exports",
            "java.base/jdk.internal.vm=ALL-UNNAMED",
            "--enable-native-access=ALL-UNNAMED", // the tracer's TSC clock (TraceClock)
            "-XX:+UseG1GC"
        })
public class TracePingPong {
    @Param({"off", "on"})
    public String tracing;

    /** GOMAXPROCS; the suite's passes set it (-p procs=N): the report files each run under its P. */
    @Param({"1"})
    public int procs;

    private GortHost host;
    private Runnable job;

    @Setup(Level.Trial)
    public void setup() {
        host = new GortHost(procs);
        if (tracing.equals("on")) {
            host.scheduler().trace.start(new Tracer.Options().window(100).workload("TracePingPong"));
        }
        job = PingPong::gortRoundTrips;
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        if (host.scheduler().trace.recording()) {
            host.scheduler().trace.stop();
        }
        host.close();
    }

    @Benchmark
    @OperationsPerInvocation(PingPong.N)
    public void roundTrip() {
        host.run(job);
    }
}
