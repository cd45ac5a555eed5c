package dev.gort.bench;

import dev.gort.Go;
import dev.gort.Time;
import dev.gort.Timer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
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
 * Timer throughput in Go's shapes (src/time/sleep_test.go): every P's heap first gets 2^15 garbage
 * timers ({@code AfterFunc(Hour, nil)}), then {@code procs} goroutines run the body in parallel
 * (Go's {@code b.RunParallel}); one op = one body:
 * <ul>
 *   <li>{@link #afterFunc1000}: BenchmarkAfterFunc1000, a chain of 1000 {@code AfterFunc(0, f)} where
 *       each f (in its own goroutine) arms the next;
 *   <li>{@link #sleep1000}: BenchmarkSleep1000, 1000 goroutines each {@code Sleep(1ns)}, then wait.
 * </ul>
 * Virtual-thread counterparts run the same bodies with {@code procs} platform threads driving
 * virtual threads: {@code Thread.sleep(1ns)} in 1000 virtual threads, and for AfterFunc a
 * {@code ScheduledExecutorService} (the JDK's timer) that starts a virtual thread per link.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 2)
@Fork(
        value = 1,
        jvmArgsAppend = {"--add-exports", "java.base/jdk.internal.vm=ALL-UNNAMED"})
public class TimerBench {
    /** Bodies per goroutine per invocation. */
    static final int K = 8;

    @Param({"2"})
    public int procs;

    private GortHost host;
    private final List<Timer> garbage = new ArrayList<>();
    private ScheduledExecutorService jdkTimer;

    @Setup(Level.Trial)
    public void setup() {
        host = new GortHost(procs);
        host.run(() -> {
            GLatch wg = new GLatch(procs);
            List<List<Timer>> all = new ArrayList<>();
            for (int i = 0; i < procs; i++) {
                List<Timer> mine = new ArrayList<>(1 << 15);
                all.add(mine);
                Go.go(() -> {
                    for (int j = 0; j < 1 << 15; j++) {
                        mine.add(Time.afterFunc(Time.HOUR, () -> {}));
                    }
                    wg.countDown();
                });
            }
            wg.await();
            all.forEach(garbage::addAll);
        });
        jdkTimer = Executors.newSingleThreadScheduledExecutor();
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        host.run(() -> garbage.forEach(Timer::stop));
        host.close();
        jdkTimer.shutdownNow();
    }

    private void parallel(Runnable body) {
        host.run(() -> {
            GLatch wg = new GLatch(procs);
            for (int p = 0; p < procs; p++) {
                Go.go(() -> {
                    for (int k = 0; k < K; k++) {
                        body.run();
                    }
                    wg.countDown();
                });
            }
            wg.await();
        });
    }

    /** Go: BenchmarkAfterFunc1000. Score: time per chain of 1000 AfterFunc(0). */
    @Benchmark
    @OperationsPerInvocation(K)
    public void afterFunc1000() {
        parallel(() -> {
            AtomicInteger n = new AtomicInteger(1000);
            GLatch c = new GLatch(1);
            Runnable[] f = new Runnable[1];
            f[0] = () -> {
                if (n.decrementAndGet() >= 0) {
                    Time.afterFunc(0, f[0]);
                } else {
                    c.countDown();
                }
            };
            Time.afterFunc(0, f[0]);
            c.await();
        });
    }

    /** Go: BenchmarkSleep1000. Score: time per 1000 goroutines each sleeping 1 ns. */
    @Benchmark
    @OperationsPerInvocation(K)
    public void sleep1000() {
        parallel(() -> {
            final int n = 1000;
            GLatch wg = new GLatch(n);
            for (int i = 0; i < n; i++) {
                Go.go(() -> {
                    Time.sleep(Time.NANOSECOND);
                    wg.countDown();
                });
            }
            wg.await();
        });
    }

    private void vparallel(Runnable body) throws InterruptedException {
        Thread[] ts = new Thread[procs];
        for (int p = 0; p < procs; p++) {
            ts[p] = Thread.ofPlatform().start(() -> {
                for (int k = 0; k < K; k++) {
                    body.run();
                }
            });
        }
        for (Thread t : ts) {
            t.join();
        }
    }

    /** Virtual threads: a chain of 1000 links, each a JDK timer task that starts a virtual thread. */
    @Benchmark
    @OperationsPerInvocation(K)
    public void afterFunc1000VThread() throws InterruptedException {
        vparallel(() -> {
            AtomicInteger n = new AtomicInteger(1000);
            CountDownLatch c = new CountDownLatch(1);
            Runnable[] f = new Runnable[1];
            f[0] = () -> {
                if (n.decrementAndGet() >= 0) {
                    jdkTimer.schedule(() -> Thread.startVirtualThread(f[0]), 0, TimeUnit.NANOSECONDS);
                } else {
                    c.countDown();
                }
            };
            jdkTimer.schedule(() -> Thread.startVirtualThread(f[0]), 0, TimeUnit.NANOSECONDS);
            await(c);
        });
    }

    /** Virtual threads: 1000 virtual threads each {@code Thread.sleep(1ns)}, then wait. */
    @Benchmark
    @OperationsPerInvocation(K)
    public void sleep1000VThread() throws InterruptedException {
        vparallel(() -> {
            final int n = 1000;
            CountDownLatch wg = new CountDownLatch(n);
            Duration d = Duration.ofNanos(1);
            for (int i = 0; i < n; i++) {
                Thread.startVirtualThread(() -> {
                    try {
                        Thread.sleep(d);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                    wg.countDown();
                });
            }
            await(wg);
        });
    }

    private static void await(CountDownLatch c) {
        try {
            c.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
