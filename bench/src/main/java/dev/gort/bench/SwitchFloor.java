package dev.gort.bench;

import java.util.concurrent.TimeUnit;
import jdk.internal.vm.Continuation;
import jdk.internal.vm.ContinuationScope;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.CompilerControl;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The floor under every switch-bound workload (issue 19): what the JDK alone charges for one
 * goroutine switch. Two raw {@link Continuation}s, each a loop that yields at once, are mounted in
 * turn on the benchmark thread: no scheduler, no run queue, no status word, no channel. Score: ns
 * per switch (one {@code run} and the {@code yield} that returns from it).
 *
 * <p>How to read it against the others, all in the same run: a ping-pong round trip is two
 * switches and a Gosched one, so {@code pingpong - 2 x floor} and {@code gosched - floor} are what
 * gort's own code adds per operation, and a Go figure below {@code 2 x floor} (ping-pong) is out of
 * reach on this JDK whatever gort does. {@code frames} is how many compiled frames the yield
 * freezes besides {@code Continuation.yield0} (too big to inline, always a frame of its own): the
 * JDK copies them out at every yield and back at every run. {@code frames=1} (the body yields
 * itself) freezes 112 bytes, the least there is; each further frame here (a call JMH keeps out of
 * line) adds 48. {@code frames=3} freezes 208 bytes, as much as a goroutine parked in a channel
 * receive ({@code for (v : ch)}, PingPong's partner). Measured 2026-12-03 as the stack chunk's
 * {@code bottom - sp}, read by reflection, on a scratch copy of these loops (calls kept out of line
 * with a compile command) and on PingPong's partner, in one JVM.
 *
 * <p>Reported in gort's P=1 column ({@code procs} has one value): one carrier, as gort's P=1.
 *
 * <p>Run: {@code ./gort java --add-exports java.base/jdk.internal.vm=ALL-UNNAMED -jar
 * bench/target/benchmarks.jar SwitchFloor}
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@State(Scope.Benchmark)
@Fork(
        value = 1,
        jvmArgsAppend = {"--add-exports", "java.base/jdk.internal.vm=ALL-UNNAMED", "-XX:+UseG1GC"})
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
public class SwitchFloor {
    /** Switches per invocation. */
    static final int SWITCHES = 1 << 16;

    private static final ContinuationScope SCOPE = new ContinuationScope("switchfloor");

    /** One carrier (the benchmark thread): the figure belongs next to gort's P=1. */
    @Param({"1"})
    public int procs;

    /** Compiled frames frozen besides yield0 (see the class comment). */
    @Param({"1", "3"})
    public int frames;

    private Continuation a;
    private Continuation b;

    @Setup
    public void setup() {
        int depth = frames - 1;
        a = new Continuation(SCOPE, () -> yieldForever(depth));
        b = new Continuation(SCOPE, () -> yieldForever(depth));
    }

    /** The continuation's body (one frame): never returns; yields directly or {@code depth} calls down. */
    private static void yieldForever(int depth) {
        if (depth == 0) {
            for (; ; ) {
                Continuation.yield(SCOPE);
            }
        }
        for (; ; ) {
            down(depth - 1);
        }
    }

    /** One frame per call (never inlined, JMH's compile command), then a yield at the bottom. */
    @CompilerControl(CompilerControl.Mode.DONT_INLINE)
    private static void down(int depth) {
        if (depth == 0) {
            Continuation.yield(SCOPE);
        } else {
            down(depth - 1);
        }
    }

    @Benchmark
    @OperationsPerInvocation(SWITCHES)
    public void floor() {
        Continuation x = a;
        Continuation y = b;
        for (int i = 0; i < SWITCHES; i += 2) {
            x.run();
            y.run();
        }
    }
}
