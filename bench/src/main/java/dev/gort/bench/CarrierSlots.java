package dev.gort.bench;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import jdk.internal.vm.Continuation;
import jdk.internal.vm.ContinuationScope;

/**
 * The substrate effect behind gort's carrier spacers (runtime's {@code CarrierSpacers}), with
 * nothing of gort: two platform threads each run a continuation's run and yield in a loop, at the
 * same time, and report the time per run+yield. In one trial the two threads are started one after
 * the other; in the other, {@code spacers} parked threads are started between them. HotSpot gives
 * each thread four 8-byte handles in one table, in start order, and {@code Continuation.run}
 * writes one of them twice per run and reads another: started one after the other, the two
 * threads' handles usually share a cache line, which then travels between the CPUs at every
 * switch.
 *
 * <p>Every thread of every trial stays alive (parked) until the program ends, so that no trial's
 * threads reuse the handles of an earlier one's: each trial's threads take fresh slots, at the end
 * of the table, in the order they start.
 *
 * <pre>
 * $(./gort jdk)/bin/java --add-exports java.base/jdk.internal.vm=ALL-UNNAMED \
 *     -cp bench/target/benchmarks.jar dev.gort.bench.CarrierSlots [trials] [spacers] [millis]
 * </pre>
 *
 * Defaults: 6 trials of each kind (alternating), 2 spacers, 1500 ms per trial. Needs two free CPUs.
 */
public final class CarrierSlots {
    private static final ContinuationScope SCOPE = new ContinuationScope("CarrierSlots");
    private static final CountDownLatch END = new CountDownLatch(1);
    private static final List<Thread> KEPT = new ArrayList<>();
    private static volatile boolean stop;

    private CarrierSlots() {}

    public static void main(String[] args) throws Exception {
        int trials = args.length > 0 ? Integer.parseInt(args[0]) : 6;
        int spacers = args.length > 1 ? Integer.parseInt(args[1]) : 2;
        long millis = args.length > 2 ? Long.parseLong(args[2]) : 1500;
        double[][] ns = new double[2][2 * trials];
        for (int t = 0; t < trials; t++) {
            for (int kind = 0; kind < 2; kind++) {
                int sp = kind == 0 ? 0 : spacers;
                double[] r = trial(sp, millis);
                ns[kind][2 * t] = r[0];
                ns[kind][2 * t + 1] = r[1];
                System.out.printf("trial %d, %d spacers: %.0f and %.0f ns per run+yield%n", t, sp, r[0], r[1]);
            }
        }
        for (int kind = 0; kind < 2; kind++) {
            double[] v = ns[kind].clone();
            Arrays.sort(v);
            System.out.printf(
                    "%d spacers: median %.0f ns per run+yield (min %.0f, max %.0f; %d threads)%n",
                    kind == 0 ? 0 : spacers,
                    (v[v.length / 2 - 1] + v[v.length / 2]) / 2,
                    v[0],
                    v[v.length - 1],
                    v.length);
        }
        END.countDown();
        for (Thread t : KEPT) {
            t.join();
        }
    }

    /** One trial: the two switching threads' ns per run+yield. */
    private static double[] trial(int spacers, long millis) throws Exception {
        stop = false;
        CyclicBarrier go = new CyclicBarrier(3);
        double[] result = new double[2];
        for (int k = 0; k < 2; k++) {
            int who = k;
            keep(new Thread(() -> switcher(go, result, who), "switcher" + k));
            if (k == 0) {
                for (int i = 0; i < spacers; i++) {
                    keep(new Thread(CarrierSlots::park, "spacer" + i));
                }
            }
        }
        go.await();
        Thread.sleep(millis); // the measuring window, not an ordering
        stop = true;
        go.await(); // both have written their result
        return result;
    }

    private static void keep(Thread t) {
        t.setDaemon(true);
        t.start();
        KEPT.add(t);
    }

    private static void switcher(CyclicBarrier go, double[] result, int who) {
        Continuation c = new Continuation(SCOPE, () -> {
            while (true) {
                Continuation.yield(SCOPE);
            }
        });
        for (int i = 0; i < 200_000; i++) { // the JIT compiles run and yield
            c.run();
        }
        try {
            go.await();
            long n = 0;
            long t0 = System.nanoTime();
            while (!stop) {
                for (int i = 0; i < 1000; i++) {
                    c.run();
                }
                n += 1000;
            }
            result[who] = (System.nanoTime() - t0) / (double) n;
            go.await();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
        park();
    }

    private static void park() {
        try {
            END.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
