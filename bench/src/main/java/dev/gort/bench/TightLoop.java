package dev.gort.bench;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
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
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Tight loop (preemption-strategies.md W1): on one P / one carrier a hog runs {@link #HOG_MILLIS} ms of
 * call-free CPU work ({@link Work#spin}); right after it has started, a short task is made runnable.
 * Score: the short task's latency, from being made runnable (from the benchmark thread) to having run,
 * in ms. Without preemption it waits for the hog's whole remaining run; with Go's 10 ms slice
 * ({@code forcePreemptNS}) it should run after about 10 ms.
 *
 * <p>{@code preempt} names the strategy the fork was started with ({@code -Dgort.preempt=...}, plus
 * gort's agent for the strategies that need polls): the report runs this class once per strategy and
 * this parameter only labels the result; the setup fails if it does not match the fork's property, so a
 * mislabelled figure cannot be produced. {@code vthread} needs {@code
 * -Djdk.virtualThreadScheduler.parallelism=1} (the report passes it for the gomaxprocs=1 pass): virtual
 * threads have no time slicing, so the expected figure is the hog's remaining run.
 *
 * <p>Per invocation: setup starts a fresh hog and waits until it is running; the measured part makes the
 * short task runnable and waits for it; teardown waits for the hog to end (not measured).
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 2, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(
        value = 1,
        jvmArgsAppend = {
            "-XX:+UseG1GC",
            "--add-exports",
            "java.base/jdk.internal.vm=ALL-UNNAMED",
            "-Djdk.virtualThreadScheduler.parallelism=1"
        })
public class TightLoop {
    public static final long HOG_MILLIS = 40;

    @Param({"gort", "vthread"})
    public String impl;

    /** One P / one carrier: the workload is about who gets the only processor. */
    @Param({"1"})
    public int gomaxprocs;

    /** The preemption strategy of this fork ({@code -Dgort.preempt}); "default" when unset. */
    @Param({"default"})
    public String preempt;

    private GortHost host;
    private long hogIterations;
    private Thread benchThread;

    /** Set by the hog when it starts / ends; reset by the setup. */
    private volatile boolean hogRunning;

    private volatile boolean hogDone;
    private volatile boolean shortRan;
    private volatile long sink;

    private final Runnable hog = () -> {
        hogRunning = true;
        sink = Work.spin(hogIterations, 7);
        hogDone = true;
        LockSupport.unpark(benchThread);
    };

    private final Runnable shortTask = () -> {
        shortRan = true;
        LockSupport.unpark(benchThread);
    };

    @Setup(Level.Trial)
    public void setup() {
        Bench.checkImpl(impl, Bench.GORT, Bench.VTHREAD);
        if (gomaxprocs != 1) {
            throw new IllegalArgumentException("TightLoop runs on one P / one carrier only (gomaxprocs=1)");
        }
        String prop = System.getProperty("gort.preempt", "default");
        if (impl.equals(Bench.GORT) && !prop.equals(preempt)) {
            throw new IllegalStateException("preempt=" + preempt + " but this fork runs -Dgort.preempt=" + prop);
        }
        if (impl.equals(Bench.VTHREAD) && !"1".equals(System.getProperty("jdk.virtualThreadScheduler.parallelism"))) {
            throw new IllegalStateException("vthread needs -Djdk.virtualThreadScheduler.parallelism=1 (one carrier)");
        }
        hogIterations = Work.calibrate(TimeUnit.MILLISECONDS.toNanos(HOG_MILLIS));
        benchThread = Thread.currentThread();
        if (impl.equals(Bench.GORT)) {
            host = new GortHost(1);
        }
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        if (host != null) {
            host.close();
        }
    }

    @Setup(Level.Invocation)
    public void startHog() {
        hogRunning = false;
        hogDone = false;
        shortRan = false;
        submit(hog);
        while (!hogRunning) {
            Thread.onSpinWait();
        }
    }

    @TearDown(Level.Invocation)
    public void awaitHog() {
        while (!hogDone) {
            LockSupport.park(this);
        }
    }

    @Benchmark
    public boolean shortTaskLatency() {
        submit(shortTask);
        while (!shortRan) {
            LockSupport.park(this);
        }
        return shortRan;
    }

    private void submit(Runnable r) {
        if (host != null) {
            host.scheduler().newproc(r);
        } else {
            Thread.startVirtualThread(r);
        }
    }
}
