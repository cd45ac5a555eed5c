package dev.gort.runtime;

import java.util.concurrent.atomic.AtomicBoolean;

/**
 * What a schedtrace print costs with many goroutines (issue 17's scheddetail item): the time one
 * {@link SchedTrace#format} takes, how long it holds sched.lock (through its phase seam), and the
 * longest wait a thread needing sched.lock had meanwhile (a contender loops on the lock while main
 * prints; on a loaded machine that wait includes the contender's own descheduling and GC pauses).
 * Not a unit test:
 * <pre>./gort java -cp runtime/target/classes:runtime/target/test-classes:$AGRONA dev.gort.runtime.SchedTraceCost [goroutines] [prints]</pre>
 */
public final class SchedTraceCost {
    public static void main(String[] args) {
        int n = args.length > 0 ? Integer.parseInt(args[0]) : 10_000;
        int prints = args.length > 1 ? Integer.parseInt(args[1]) : 30;
        Scheduler s = new Scheduler(TestSupport.config(2));
        s.run(() -> {
            Scheduler rt = Scheduler.current();
            GoSema never = new GoSema(0);
            GoSema started = new GoSema(0);
            for (int i = 0; i < n; i++) {
                rt.newproc(() -> {
                    started.release();
                    never.acquire();
                });
            }
            for (int i = 0; i < n; i++) {
                started.acquire();
            }
            for (boolean detail : new boolean[] {false, true, false, true}) {
                AtomicBoolean stop = new AtomicBoolean();
                long[] maxWait = new long[1];
                Thread contender = new Thread(() -> {
                    while (!stop.get()) {
                        long t0 = System.nanoTime();
                        synchronized (rt.sched.lock) {
                            maxWait[0] = Math.max(maxWait[0], System.nanoTime() - t0);
                        }
                        Thread.onSpinWait();
                    }
                });
                contender.start();
                long total = 0;
                long len = 0;
                long[] held = new long[1]; // when sched.lock was taken
                long[] holds = new long[prints];
                int[] nh = new int[1];
                SchedTrace.phaseForTest = ph -> {
                    if (ph.equals("header")) {
                        held[0] = System.nanoTime();
                    } else if (held[0] != 0 && !Thread.holdsLock(rt.sched.lock)) {
                        if (nh[0] < holds.length) {
                            holds[nh[0]++] = System.nanoTime() - held[0];
                        }
                        held[0] = 0;
                    }
                };
                for (int k = 0; k < prints; k++) {
                    long t0 = System.nanoTime();
                    len += SchedTrace.format(rt, 0, detail).length();
                    total += System.nanoTime() - t0;
                }
                SchedTrace.phaseForTest = null;
                java.util.Arrays.sort(holds, 0, nh[0]);
                stop.set(true);
                try {
                    contender.join();
                } catch (InterruptedException e) {
                    throw new RuntimeException(e);
                }
                System.out.printf(
                        "goroutines=%d detail=%b: %.1f us per print (%d chars), sched.lock held median %.1f us, max %.1f us"
                                + " (to the first phase after it), longest wait for it %.1f us%n",
                        n,
                        detail,
                        total / 1e3 / prints,
                        len / prints,
                        holds[nh[0] / 2] / 1e3,
                        holds[nh[0] - 1] / 1e3,
                        maxWait[0] / 1e3);
            }
            for (int i = 0; i < n; i++) {
                never.release();
            }
        });
    }
}
