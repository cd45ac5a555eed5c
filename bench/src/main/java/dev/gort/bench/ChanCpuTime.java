package dev.gort.bench;

import dev.gort.Go;
import java.lang.management.ManagementFactory;

/**
 * A companion to the channel JMH benchmarks for a busy machine: runs each workload several times
 * and prints both wall time and <em>process CPU time</em> per operation. On an idle machine the
 * two agree for GOMAXPROCS=1 (one busy carrier); on a shared, overloaded one the wall time mostly
 * measures how much CPU the process was given, while the CPU time still measures the work (plus
 * cache misses caused by the neighbours). At GOMAXPROCS=2 the CPU time includes spinning Ms.
 *
 * <pre>
 * ./gort java --add-exports java.base/jdk.internal.vm=ALL-UNNAMED -XX:+UseG1GC \
 *     -cp bench/target/benchmarks.jar dev.gort.bench.ChanCpuTime [rounds, default 20]
 * </pre>
 */
public final class ChanCpuTime {
    private ChanCpuTime() {}

    static long cpu() {
        return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
                .getProcessCpuTime();
    }

    interface Body {
        void run() throws Exception;
    }

    /**
     * Runs body {@code rounds} times; over the second half (warmed up) reports the best wall time
     * and the aggregate process CPU time per op (the OS reports process CPU time in 10 ms steps,
     * so it is summed over many runs).
     */
    static void measure(String name, long ops, int rounds, Body body) throws Exception {
        double bestWall = Double.MAX_VALUE;
        long cpuSum = 0;
        long wallSum = 0;
        long opsSum = 0;
        for (int r = 0; r < rounds; r++) {
            long t0 = System.nanoTime();
            long c0 = cpu();
            body.run();
            long t1 = System.nanoTime();
            long c1 = cpu();
            if (r >= rounds / 2) { // second half: warmed up
                bestWall = Math.min(bestWall, (t1 - t0) / (double) ops);
                wallSum += t1 - t0;
                cpuSum += c1 - c0;
                opsSum += ops;
            }
        }
        System.out.printf(
                "%-22s wall: best %10.1f mean %10.1f | process cpu: mean %10.1f   (ns per op)%n",
                name, bestWall, wallSum / (double) opsSum, cpuSum / (double) opsSum);
    }

    public static void main(String[] args) throws Exception {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 20;
        System.out.println("load average before: "
                + ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage());
        for (int procs : new int[] {1, 2}) {
            GortHost host = new GortHost(procs);
            try {
                measure("pingpong gort P=" + procs, PingPong.N, rounds, () -> host.run(PingPong::gortRoundTrips));
                measure("prodcons gort P=" + procs, ProdCons.N, rounds, () -> host.run(ProdCons::gortBuffered));
                measure(
                        "manypairs gort P=" + procs,
                        ManyPairs.PAIRS * ManyPairs.MSGS,
                        rounds,
                        () -> host.run(ManyPairs::gortPairs));
            } finally {
                host.close();
            }
            dev.gort.runtime.Config cfg = Bench.config(procs).withPanicExits(false);
            measure("sieve gort P=" + procs, 1, Math.max(4, rounds / 3), () -> Go.run(cfg, Sieve::gortSieve));
        }
        PingPong pp = new PingPong();
        measure("pingpong vthread", PingPong.N, rounds, pp::vthread);
        ProdCons pc = new ProdCons();
        measure("prodcons vthread", ProdCons.N, rounds, pc::vthread);
        ManyPairs mp = new ManyPairs();
        measure("manypairs vthread", ManyPairs.PAIRS * ManyPairs.MSGS, rounds, mp::vthread);
        Sieve sv = new Sieve();
        measure("sieve vthread", 1, Math.max(4, rounds / 3), sv::vthread);
        System.out.println("load average after: "
                + ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage());
    }
}
