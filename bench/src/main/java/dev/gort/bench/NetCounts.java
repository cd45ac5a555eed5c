package dev.gort.bench;

import dev.gort.Go;
import dev.gort.net.Conn;
import dev.gort.net.Listener;
import dev.gort.net.Net;
import dev.gort.runtime.Netpoll;
import dev.gort.runtime.SchedCounts;
import dev.gort.runtime.Scheduler;
import dev.gort.sync.WaitGroup;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Counts, rather than times, what one network message costs the runtime (issue 14: the machine is
 * shared, so wall time is noise; counts are not): runs {@link NetEcho}'s or {@link NetPingPong}'s
 * gort workload once to warm up, resets the counters, runs it again and prints every
 * {@link SchedCounts} counter and the poller's own ({@link Netpoll#arms} ...) per message (echo) or
 * per round trip (ping-pong).
 *
 * <p>Run (the counters are compiled in only with {@code gort.debug.counts}; under {@code strace -f
 * -c} for the system calls):
 *
 * <pre>
 * $(./gort jdk)/bin/java -Dgort.debug.counts=true --add-exports java.base/jdk.internal.vm=ALL-UNNAMED \
 *     --add-exports java.base/sun.nio.ch=ALL-UNNAMED --enable-native-access=ALL-UNNAMED \
 *     -cp bench/target/benchmarks.jar dev.gort.bench.NetCounts echo 1 [rounds]
 * </pre>
 *
 * <p>That counts the epoll poller's work; add {@code -Dgort.netpoll=selector} for the selector's.
 *
 * <p>Arguments: {@code echo} or {@code pingpong}, GOMAXPROCS, and the invocations to count (echo: each
 * {@link NetEcho#ROUNDS} messages on {@link NetEcho#CONNS} connections; ping-pong: each
 * {@link NetPingPong#N} round trips).
 */
public final class NetCounts {
    private NetCounts() {}

    public static void main(String[] args) throws Exception {
        String what = args[0];
        int procs = args[1].equals("vthread") ? 0 : Integer.parseInt(args[1]);
        int reps = args.length > 2 ? Integer.parseInt(args[2]) : 3;
        if (procs == 0) {
            vthreads(what, reps);
            return;
        }
        if (!SchedCounts.ON) {
            System.err.println("NetCounts: run with -Dgort.debug.counts=true (the counters are off)");
        }
        try (GortHost host = new GortHost(procs)) {
            Scheduler s = host.scheduler();
            Netpoll np = Netpoll.of(s);
            List<Conn> clients = new ArrayList<>();
            Listener[] ln = new Listener[1];
            int conns = what.equals("echo") ? NetEcho.CONNS : 1;
            host.run(() -> {
                try {
                    ln[0] = Net.listen("tcp", "127.0.0.1:0");
                    Go.go(() -> {
                        try {
                            for (; ; ) {
                                Conn c = ln[0].accept();
                                Go.go(() -> NetEcho.echo(c));
                            }
                        } catch (IOException e) {
                            // closed at the end
                        }
                    });
                    for (int i = 0; i < conns; i++) {
                        clients.add(Net.dial("tcp", ln[0].addr().toString()));
                    }
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
            Runnable job;
            long perJob;
            if (what.equals("echo")) {
                perJob = (long) NetEcho.CONNS * NetEcho.ROUNDS;
                job = () -> {
                    WaitGroup wg = new WaitGroup();
                    wg.add(clients.size());
                    for (Conn c : clients) {
                        Go.go(() -> {
                            try {
                                NetEcho.clientRounds(c);
                            } finally {
                                wg.done();
                            }
                        });
                    }
                    wg.await();
                };
            } else if (what.equals("pingpong")) {
                perJob = NetPingPong.N;
                job = () -> NetPingPong.roundTrips(clients.get(0));
            } else {
                throw new IllegalArgumentException(what + ": echo or pingpong");
            }
            for (int i = 0; i < reps; i++) {
                host.run(job); // warm-up
            }
            SchedCounts.reset();
            long arms0 = np.arms.get();
            long disarms0 = np.disarms.get();
            long breaks0 = np.breaks.get();
            long polls0 = np.polls.get();
            long woken0 = np.wokenByPoller.get();
            long t0 = System.nanoTime();
            Map<String, Long> th0 = threadCpu();
            Map<String, long[]> sw0 = threadSwitches();
            long cpu0 = processCpuTime();
            for (int i = 0; i < reps; i++) {
                host.run(job);
            }
            long cpu1 = processCpuTime();
            Map<String, long[]> sw1 = threadSwitches();
            Map<String, Long> th1 = threadCpu();
            long t1 = System.nanoTime();
            Map<String, Long> c = SchedCounts.snapshot();
            c.put("poller.arms", np.arms.get() - arms0);
            c.put("poller.disarms", np.disarms.get() - disarms0);
            c.put("poller.breaks", np.breaks.get() - breaks0);
            c.put("poller.pollsThatWoke", np.polls.get() - polls0);
            c.put("poller.woken", np.wokenByPoller.get() - woken0);
            double n = (double) perJob * reps;
            System.out.printf(
                    "NetCounts %s P=%d: %d %s, %d carrier threads; process CPU %.0f ns each; wall %.0f ns each"
                            + " (loaded machine: not a figure)%n",
                    what,
                    procs,
                    (long) n,
                    what.equals("echo") ? "messages" : "round trips",
                    s.mcountPublic(),
                    (cpu1 - cpu0) / n,
                    (t1 - t0) / n);
            c.forEach((k, v) -> System.out.printf("  %-22s %12d  %9.3f%n", k, v, v / n));
            printThreadCpu(th0, th1, cpu1 - cpu0, n);
            printThreadSwitches(sw0, sw1, n);
            host.run(() -> {
                try {
                    for (Conn cl : clients) {
                        cl.close();
                    }
                    ln[0].close();
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
        }
    }

    /** A thread's kind: its name with the digits dropped ("bench-M#": the carriers together). */
    static String threadKind(String name) {
        return name.replaceAll("[0-9]+", "#");
    }

    /** CPU time of the JVM's visible threads, by {@link #threadKind}. */
    static Map<String, Long> threadCpu() {
        java.lang.management.ThreadMXBean mx = java.lang.management.ManagementFactory.getThreadMXBean();
        Map<String, Long> m = new java.util.TreeMap<>();
        for (long id : mx.getAllThreadIds()) {
            java.lang.management.ThreadInfo ti = mx.getThreadInfo(id);
            long t = mx.getThreadCpuTime(id);
            if (ti != null && t > 0) {
                m.merge(threadKind(ti.getThreadName()), t, Long::sum);
            }
        }
        return m;
    }

    /**
     * Prints the CPU per operation of each thread kind between two {@link #threadCpu} readings
     * (those that ran), then the rest of the process's {@code processCpu} ns (GC, JIT, threads gone).
     */
    static void printThreadCpu(Map<String, Long> th0, Map<String, Long> th1, long processCpu, double n) {
        long named = 0;
        for (Map.Entry<String, Long> e : th1.entrySet()) {
            long d = e.getValue() - th0.getOrDefault(e.getKey(), 0L);
            named += d;
            if (d != 0) {
                System.out.printf("  cpu %-18s %9.0f ns each%n", e.getKey(), d / n);
            }
        }
        System.out.printf("  cpu %-18s %9.0f ns each%n", "(GC, JIT, other)", (processCpu - named) / n);
    }

    /**
     * The kernel's context-switch counts of the JVM's threads, by {@link #threadKind}: {voluntary
     * (the thread blocked: a park, a timed sleep), involuntary (the kernel preempted it while it
     * could run)}, from {@code /proc/self/task/<tid>/status}. Empty where there is no such file (not
     * Linux). A carrier woken on the CPU of the carrier that runs the work preempts it: that shows
     * as involuntary switches.
     */
    static Map<String, long[]> threadSwitches() {
        Map<String, long[]> m = new java.util.TreeMap<>();
        Path tasks = Path.of("/proc/self/task");
        if (!Files.isDirectory(tasks)) {
            return m;
        }
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(tasks)) {
            for (Path t : ds) {
                try {
                    long[] sum = m.computeIfAbsent(
                            threadKind(Files.readString(t.resolve("comm")).trim()), k -> new long[2]);
                    for (String line : Files.readAllLines(t.resolve("status"))) {
                        if (line.startsWith("voluntary_ctxt_switches:")) {
                            sum[0] += Long.parseLong(
                                    line.substring(line.indexOf(':') + 1).trim());
                        } else if (line.startsWith("nonvoluntary_ctxt_switches:")) {
                            sum[1] += Long.parseLong(
                                    line.substring(line.indexOf(':') + 1).trim());
                        }
                    }
                } catch (IOException e) {
                    // the thread ended between the listing and the read: it is left out
                }
            }
        } catch (IOException e) {
            return m;
        }
        return m;
    }

    /**
     * Prints the voluntary and involuntary context switches per operation of each thread kind
     * between two {@link #threadSwitches} readings (those with at least one per 20,000 operations).
     * Threads that ended in between are left out; one that started in between counts from its start.
     */
    static void printThreadSwitches(Map<String, long[]> s0, Map<String, long[]> s1, double n) {
        for (Map.Entry<String, long[]> e : s1.entrySet()) {
            long[] before = s0.getOrDefault(e.getKey(), new long[2]);
            long vol = e.getValue()[0] - before[0];
            long invol = e.getValue()[1] - before[1];
            if ((vol + invol) / n >= 0.00005) { // printed to four places: skip what rounds to nothing
                System.out.printf(
                        "  ctxsw %-16s %9.4f voluntary, %9.4f involuntary each%n", e.getKey(), vol / n, invol / n);
            }
        }
    }

    /** The JVM's CPU time (all threads: carriers, sysmon, GC, JIT), ns. */
    static long processCpuTime() {
        return ((com.sun.management.OperatingSystemMXBean)
                        java.lang.management.ManagementFactory.getOperatingSystemMXBean())
                .getProcessCpuTime();
    }

    /** The virtual-thread twin (blocking sockets, the JDK's poller): process CPU and wall per op. */
    static void vthreads(String what, int reps) throws Exception {
        long perJob;
        Runnable job;
        AutoCloseable end;
        if (what.equals("echo")) {
            NetEcho.VtState st = new NetEcho.VtState();
            st.setup();
            perJob = (long) NetEcho.CONNS * NetEcho.ROUNDS;
            job = () -> {
                try {
                    st.rounds();
                } catch (InterruptedException e) {
                    throw new IllegalStateException(e);
                }
            };
            end = st::tearDown;
        } else {
            java.net.ServerSocket server = new java.net.ServerSocket(0, 50, java.net.InetAddress.getLoopbackAddress());
            Thread.ofVirtual().start(() -> NetPingPong.blockingEcho(server));
            java.net.Socket c = NetPingPong.connect(server);
            perJob = NetPingPong.N;
            job = () -> {
                Thread t = Thread.ofVirtual().start(() -> NetPingPong.roundTrips(c));
                try {
                    t.join();
                } catch (InterruptedException e) {
                    throw new IllegalStateException(e);
                }
            };
            end = () -> {
                c.close();
                server.close();
            };
        }
        for (int i = 0; i < reps; i++) {
            job.run();
        }
        long t0 = System.nanoTime();
        long cpu0 = processCpuTime();
        for (int i = 0; i < reps; i++) {
            job.run();
        }
        long cpu1 = processCpuTime();
        long t1 = System.nanoTime();
        double n = (double) perJob * reps;
        System.out.printf(
                "NetCounts %s vthread: %d ops; process CPU %.0f ns each; wall %.0f ns each (loaded machine)%n",
                what, (long) n, (cpu1 - cpu0) / n, (t1 - t0) / n);
        end.close();
    }
}
