package dev.gort.bench.lab;

import dev.gort.bench.GortHost;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * The preemption lab's overhead figure under JMH ({@link LabJmh} runs it): one unit of a
 * {@code lab.work.Workloads} workload, on goroutine 1 of a 1-P gort runtime, per operation. The
 * strategy is not a parameter: each setting is its own fork, with the agent
 * ({@code -javaagent:gort-agent.jar=<strategy>} and its {@code -Dgort.preempt.*} settings, or no
 * agent for the uninstrumented baseline) in the fork's JVM arguments, so the workload's classes
 * (and Jackson) are rewritten by the agent as user code is.
 *
 * <p>An invocation hands {@link #BATCH} units to the runtime at once ({@link GortHost#run}: one
 * carrier wake-up, tens of microseconds, shared by the batch), so the hand-off is a few per cent of
 * a ~1 ms unit divided by the batch; it is the same in every fork and slightly dilutes the overhead.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class LabBench {
    /** Units per invocation. */
    public static final int BATCH = 5;

    /** The workload (a row of the lab). */
    @Param({"ArraySum"})
    public String workload;

    /** The unit's size as a fraction of the workload's own {@code unit()} (Fib: its argument). */
    @Param({"1.0"})
    public double scale;

    private GortHost host;
    private LabWorkload work;
    private int unit;
    private long sink;
    private Runnable batch;

    @Setup
    public void setup() throws ReflectiveOperationException {
        host = new GortHost(1);
        work = (LabWorkload) Class.forName(PreemptLab.PKG + workload)
                .getDeclaredConstructor()
                .newInstance();
        unit = PreemptLab.unitOf(workload, work, scale);
        batch = () -> {
            long s = 0;
            for (int i = 0; i < BATCH; i++) {
                s += work.run(unit);
            }
            sink = s;
        };
    }

    @TearDown
    public void tearDown() {
        host.close();
    }

    @Benchmark
    @OperationsPerInvocation(BATCH)
    public long unit() {
        host.run(batch);
        return sink;
    }
}
