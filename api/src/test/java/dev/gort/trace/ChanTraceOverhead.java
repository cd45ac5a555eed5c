package dev.gort.trace;

import dev.gort.Chan;
import dev.gort.runtime.Config;
import dev.gort.runtime.M;
import dev.gort.runtime.Scheduler;
import dev.gort.runtime.trace.Ev;
import dev.gort.runtime.trace.Trace;

/**
 * Tracing overhead on the channel ping-pong (two goroutines, two unbuffered channels): carrier
 * CPU ns per round trip with tracing off and on, alternating; best of N (the machine is shared).
 * Not a unit test:
 * <pre>./gort java --add-exports java.base/jdk.internal.vm=ALL-UNNAMED -cp ... dev.gort.trace.ChanTraceOverhead [procs] [rounds] [reps]</pre>
 */
public final class ChanTraceOverhead {
    public static void main(String[] args) {
        int procs = args.length > 0 ? Integer.parseInt(args[0]) : 1;
        int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 200_000;
        int reps = args.length > 2 ? Integer.parseInt(args[2]) : 10;
        double bestOff = Double.MAX_VALUE;
        double bestOn = Double.MAX_VALUE;
        for (int r = 0; r < reps; r++) {
            bestOff = Math.min(bestOff, once(procs, rounds, false));
            bestOn = Math.min(bestOn, once(procs, rounds, true));
        }
        System.out.printf(
                "chan ping-pong GOMAXPROCS=%d rounds=%d best of %d: off %.1f cpu-ns/round, on %.1f cpu-ns/round, overhead %+.1f%%%n",
                procs, rounds, reps, bestOff, bestOn, 100 * (bestOn - bestOff) / bestOff);
    }

    static long carrierCpu(Scheduler s) {
        java.lang.management.ThreadMXBean tb = java.lang.management.ManagementFactory.getThreadMXBean();
        long sum = 0;
        for (M m : s.allm()) {
            long c = tb.getThreadCpuTime(m.thread().threadId());
            if (c > 0) {
                sum += c;
            }
        }
        return sum;
    }

    static double once(int procs, int rounds, boolean trace) {
        Scheduler s =
                new Scheduler(Config.fromEnvironment().withGomaxprocs(procs).withPanicExits(false));
        if (trace) {
            s.trace.start(new dev.gort.runtime.trace.Tracer.Options().level(Integer.getInteger("gort.trace.level", 2)));
        }
        long[] ns = new long[1];
        s.run(() -> {
            Chan<Integer> ping = Chan.make();
            Chan<Integer> pong = Chan.make();
            Chan<Boolean> done = Chan.make();
            Scheduler rt = Scheduler.current();
            rt.newproc(() -> {
                for (int i = 0; i < rounds; i++) {
                    pong.send(ping.recv());
                }
                done.send(true);
            });
            long t0 = carrierCpu(rt);
            for (int i = 0; i < rounds; i++) {
                ping.send(i);
                pong.recv();
            }
            done.recv();
            ns[0] = carrierCpu(rt) - t0;
        });
        if (trace) {
            Trace t = s.trace.stop();
            if (t.count(Ev.GO_UNBLOCK) < rounds) {
                throw new AssertionError("trace lost events: " + t.count(Ev.GO_UNBLOCK));
            }
        }
        return (double) ns[0] / rounds;
    }
}
