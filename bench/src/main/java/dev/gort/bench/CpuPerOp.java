package dev.gort.bench;

import java.lang.management.ManagementFactory;
import java.util.Arrays;

/**
 * The Spawn and Gosched workloads measured in process CPU time as well as wall time, for a shared
 * machine: when other processes hold the cores, wall time measures the queue for a CPU, while CPU
 * time per operation (all threads of this JVM: carriers, GC, JIT) still measures the work. On an
 * idle machine with every carrier busy, wall time is roughly CPU time divided by the number of busy
 * carriers. Not a JMH benchmark: a plain main, repeated, medians printed.
 *
 * <p>Run: {@code ./gort java --add-exports java.base/jdk.internal.vm=ALL-UNNAMED -XX:+UseG1GC -cp
 * bench/target/benchmarks.jar dev.gort.bench.CpuPerOp [spawn|gosched2|gosched16|pingpong-off|pingpong-on]
 * [procs] [impl] [reps]} (the ping-pong cases are {@link TracePingPong}'s, at GOMAXPROCS=1 whatever procs says)
 */
public final class CpuPerOp {
    private CpuPerOp() {}

    public static void main(String[] args) throws Exception {
        String what = args.length > 0 ? args[0] : "spawn";
        int procs = args.length > 1 ? Integer.parseInt(args[1]) : 2;
        String impl = args.length > 2 ? args[2] : "gort";
        int reps = args.length > 3 ? Integer.parseInt(args[3]) : 15;
        com.sun.management.OperatingSystemMXBean os =
                (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
        Spawn spawn = new Spawn();
        spawn.impl = impl;
        spawn.procs = procs;
        Gosched gosched = new Gosched();
        gosched.impl = impl;
        gosched.procs = procs;
        long ops;
        GortHost pp = null;
        if (what.startsWith("pingpong")) {
            // TracePingPong's two cases: pingpong-off, pingpong-on (a 100 ms flight recorder)
            pp = new GortHost(1);
            if (what.equals("pingpong-on")) {
                pp.scheduler()
                        .trace
                        .start(new dev.gort.runtime.trace.Tracer.Options()
                                .window(100)
                                .workload("CpuPerOp"));
            }
            ops = 10L * PingPong.N; // ten jobs per rep: process CPU time ticks in ms
        } else if (what.equals("spawn")) {
            spawn.setup();
            ops = Spawn.N;
        } else {
            gosched.goroutines = Integer.parseInt(what.substring("gosched".length()));
            gosched.setup();
            ops = Gosched.SWITCHES;
        }
        long[] wall = new long[reps];
        long[] cpu = new long[reps];
        for (int r = 0; r < reps; r++) {
            long c0 = os.getProcessCpuTime();
            long t0 = System.nanoTime();
            if (pp != null) {
                for (int k = 0; k < 10; k++) {
                    pp.run(PingPong::gortRoundTrips);
                }
            } else if (what.equals("spawn")) {
                spawn.spawn();
            } else {
                gosched.gosched();
            }
            wall[r] = (System.nanoTime() - t0) / ops;
            cpu[r] = (os.getProcessCpuTime() - c0) / ops;
        }
        if (pp != null) {
            if (pp.scheduler().trace.recording()) {
                pp.scheduler().trace.stop();
            }
            pp.close();
        }
        // The first third is warm-up.
        int from = reps / 3;
        long[] w = Arrays.copyOfRange(wall, from, reps);
        long[] c = Arrays.copyOfRange(cpu, from, reps);
        Arrays.sort(w);
        Arrays.sort(c);
        System.out.printf(
                "%s impl=%s procs=%d: wall median %d ns/op (min %d), cpu median %d ns/op (min %d), load %.1f%n",
                what, impl, procs, w[w.length / 2], w[0], c[c.length / 2], c[0], os.getSystemLoadAverage());
    }
}
