package dev.gort.bench;

import dev.gort.Chan;
import dev.gort.Go;
import dev.gort.Time;
import dev.gort.runtime.G;
import dev.gort.runtime.Scheduler;
import dev.gort.runtime.WaitReason;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;
import org.openjdk.jmh.annotations.AuxCounters;
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
import org.openjdk.jmh.annotations.Warmup;

/**
 * Parked memory: heap bytes per parked task with {@link #tasks} tasks parked at once.
 *
 * <p>Method (one invocation = one measurement, {@code SingleShotTime}): an array for the task
 * references is allocated first; then the heap is "GC-settled" ({@code System.gc()}, a full
 * compacting collection under G1, repeated until two readings of {@link MemoryMXBean} heap use agree
 * within 0.1 %); that is the baseline. Then {@code tasks} tasks start and park, the benchmark waits
 * until every one of them is really parked (gort: its unlock function ran, i.e. the continuation is
 * frozen and the G is {@code _Gwaiting}; virtual threads: {@code Thread.State.WAITING}), settles the
 * heap again and reports {@code (after - baseline) / tasks} as the secondary result
 * {@code bytesPerTask}. Everything a parked task keeps alive is counted: the G or Thread object, the
 * continuation and its frozen stack chunk, the task's Runnable, and the runtime's bookkeeping (gort's
 * allgs registry; the AQS node of a virtual thread waiting for a lock). The primary score (ms to
 * start and park every task, GCs included) is a by-product.
 *
 * <ul>
 *   <li>{@code gort}: goroutines parked with {@code Scheduler.gopark} (the core's primitive, what a
 *       channel receive does underneath) on a fresh runtime;
 *   <li>{@code gort-chan}: goroutines blocked in {@code recv} on one unbuffered {@link Chan} (what the
 *       Go twin measures: the waiter's sudog is counted too);
 *   <li>{@code vthread-park}: virtual threads in {@code LockSupport.park()};
 *   <li>{@code vthread-lock}: virtual threads queued on a {@link ReentrantLock} held by the benchmark.
 * </ul>
 * Run with a heap large enough for a million virtual threads (the fork gets {@code -Xmx6g}).
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.SingleShotTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 1)
@Measurement(iterations = 3)
@Fork(
        value = 1,
        jvmArgsAppend = {"-XX:+UseG1GC", "--add-exports", "java.base/jdk.internal.vm=ALL-UNNAMED", "-Xmx6g"})
public class Parked {
    @Param({"gort", "gort-chan", "vthread-park", "vthread-lock"})
    public String impl;

    @Param({"1000000"})
    public int tasks;

    @Param({"1"})
    public int gomaxprocs;

    /** The secondary result. JMH sums EVENTS counters over the iteration's single invocation. */
    @State(Scope.Thread)
    @AuxCounters(AuxCounters.Type.EVENTS)
    public static class Memory {
        public double bytesPerTask;

        @Setup(Level.Iteration)
        public void clean() {
            bytesPerTask = 0;
        }
    }

    @Setup
    public void setup() {
        Bench.checkImpl(impl, Bench.GORT, "gort-chan", "vthread-park", "vthread-lock");
    }

    @Benchmark
    public void park(Memory mem) throws InterruptedException {
        Object[] refs = new Object[tasks];
        switch (impl) {
            case Bench.GORT -> mem.bytesPerTask = gort(refs);
            case "gort-chan" -> mem.bytesPerTask = gortChan(refs.length);
            case "vthread-park" -> mem.bytesPerTask = vthreadPark(refs);
            default -> mem.bytesPerTask = vthreadLock(refs);
        }
    }

    private double gort(Object[] refs) {
        double[] out = new double[1];
        Bench.gort(gomaxprocs, () -> {
            Object waitingOn = new Object();
            AtomicInteger index = new AtomicInteger();
            GLatch allParked = new GLatch(refs.length);
            G.ParkUnlock<Object[]> unlockf = (gp, r) -> {
                r[index.getAndIncrement()] = gp;
                allParked.countDown();
                return true;
            };
            Runnable parker = () -> Scheduler.gopark(unlockf, refs, WaitReason.CHAN_RECEIVE, waitingOn);
            Histogram h = Histogram.start();
            long before = settledHeap();
            for (int i = 0; i < refs.length; i++) {
                Go.go(parker);
            }
            allParked.await();
            long after = settledHeap();
            h.print("gort", refs.length);
            out[0] = (double) (after - before) / refs.length;
            // main returns: the runtime stops and the parked goroutines become garbage (Go semantics).
        });
        return out[0];
    }

    private double gortChan(int n) {
        double[] out = new double[1];
        Bench.gort(gomaxprocs, () -> {
            Chan<Object> ch = Chan.make();
            AtomicInteger started = new AtomicInteger();
            Runnable receiver = () -> {
                started.incrementAndGet();
                ch.recv();
            };
            Histogram h = Histogram.start();
            long before = settledHeap();
            for (int i = 0; i < n; i++) {
                Go.go(receiver);
            }
            while (started.get() < n) {
                Go.gosched();
            }
            while (waitingOn(ch) < n) { // an O(n) walk: check rarely
                Time.sleep(Time.MILLISECOND * 10);
            }
            long after = settledHeap();
            h.print("gort-chan", n);
            out[0] = (double) (after - before) / n;
        });
        return out[0];
    }

    /** How many goroutines of the current runtime wait on {@code o}. */
    private static int waitingOn(Object o) {
        int c = 0;
        for (G gp : Scheduler.current().allgs()) {
            if (gp.readgstatus() == G._Gwaiting && gp.waitingOn() == o) {
                c++;
            }
        }
        return c;
    }

    private double vthreadPark(Object[] refs) throws InterruptedException {
        Histogram h = Histogram.start();
        long before = settledHeap();
        boolean[] release = new boolean[1];
        Runnable parker = () -> {
            while (!release[0]) {
                LockSupport.park();
            }
        };
        for (int i = 0; i < refs.length; i++) {
            refs[i] = Thread.startVirtualThread(parker);
        }
        awaitWaiting(refs);
        long after = settledHeap();
        h.print("vthread-park", refs.length);
        release[0] = true;
        for (Object t : refs) {
            LockSupport.unpark((Thread) t);
        }
        for (Object t : refs) {
            ((Thread) t).join();
        }
        return (double) (after - before) / refs.length;
    }

    private double vthreadLock(Object[] refs) throws InterruptedException {
        ReentrantLock lock = new ReentrantLock();
        lock.lock();
        Runnable locker = () -> {
            lock.lock();
            lock.unlock();
        };
        Histogram h = Histogram.start();
        long before = settledHeap();
        long after;
        try {
            for (int i = 0; i < refs.length; i++) {
                refs[i] = Thread.startVirtualThread(locker);
            }
            awaitWaiting(refs);
            after = settledHeap();
            h.print("vthread-lock", refs.length);
        } finally {
            lock.unlock();
        }
        for (Object t : refs) {
            ((Thread) t).join();
        }
        return (double) (after - before) / refs.length;
    }

    /** Waits until every thread in {@code refs} is parked (WAITING). */
    private static void awaitWaiting(Object[] refs) throws InterruptedException {
        for (Object o : refs) {
            Thread t = (Thread) o;
            while (t.getState() != Thread.State.WAITING) {
                Thread.sleep(1);
            }
        }
    }

    /**
     * With {@code -Dbench.parked.histogram=true}: the classes that grew between the baseline and the
     * parked state, from the JVM's class histogram ({@code GC.class_histogram}), in bytes per task;
     * this is how a figure is explained. Off by default (two full heap walks).
     */
    static final class Histogram {
        private final Map<String, long[]> before;

        private Histogram(Map<String, long[]> before) {
            this.before = before;
        }

        static Histogram start() {
            return new Histogram(Boolean.getBoolean("bench.parked.histogram") ? histogram() : null);
        }

        void print(String what, int tasks) {
            if (before == null) {
                return;
            }
            Map<String, long[]> after = histogram();
            List<Map.Entry<String, Long>> grew = new ArrayList<>();
            for (Map.Entry<String, long[]> e : after.entrySet()) {
                long[] b = before.getOrDefault(e.getKey(), new long[2]);
                long d = e.getValue()[1] - b[1];
                if (d > 0) {
                    grew.add(Map.entry(e.getKey() + " (" + (e.getValue()[0] - b[0]) + " instances)", d));
                }
            }
            grew.sort(Map.Entry.<String, Long>comparingByValue().reversed());
            StringBuilder sb = new StringBuilder("\n[parked histogram] " + what + ", bytes per task by class:\n");
            for (Map.Entry<String, Long> e : grew.subList(0, Math.min(12, grew.size()))) {
                sb.append(String.format(
                        java.util.Locale.ROOT, "  %8.1f  %s%n", (double) e.getValue() / tasks, e.getKey()));
            }
            System.out.print(sb);
        }

        private static Map<String, long[]> histogram() {
            try {
                javax.management.MBeanServer s = ManagementFactory.getPlatformMBeanServer();
                String text = (String) s.invoke(
                        new javax.management.ObjectName("com.sun.management:type=DiagnosticCommand"),
                        "gcClassHistogram",
                        new Object[] {new String[0]},
                        new String[] {String[].class.getName()});
                Map<String, long[]> m = new HashMap<>();
                for (String line : text.split("\n")) {
                    String[] f = line.trim().split("\\s+");
                    if (f.length >= 4 && f[0].endsWith(":")) {
                        m.put(f[3], new long[] {Long.parseLong(f[1]), Long.parseLong(f[2])});
                    }
                }
                return m;
            } catch (Exception e) {
                throw new IllegalStateException("class histogram unavailable", e);
            }
        }
    }

    /** Heap in use after full GCs, once two successive readings agree within 0.1 %. */
    static long settledHeap() {
        MemoryMXBean mx = ManagementFactory.getMemoryMXBean();
        long prev = -1;
        for (int i = 0; i < 10; i++) {
            System.gc();
            long used = mx.getHeapMemoryUsage().getUsed();
            if (prev >= 0 && Math.abs(used - prev) <= prev / 1000) {
                return Math.min(used, prev);
            }
            prev = used;
        }
        return prev;
    }
}
