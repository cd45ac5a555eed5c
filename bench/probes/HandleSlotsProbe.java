package dev.gort.runtime;

import dev.gort.Go;
import dev.gort.bench.GortHost;
import dev.gort.sync.WaitGroup;
import java.lang.reflect.Field;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import sun.misc.Unsafe;

/**
 * A diagnostic, not part of the build: where each carrier's HotSpot thread handles lie (the table
 * CarrierSpacers is about), and which carriers run, invocation by invocation. It reads JVM
 * internals through sun.misc.Unsafe (Thread.eetop is the JavaThread's address; the handles are
 * found by scanning the JavaThread for a pointer to a slot that holds the thread's own oop), so it
 * assumes HotSpot on x86-64 Linux with zero-based compressed oops (a heap under 32 GiB) and may
 * crash elsewhere. It sits in gort's runtime package to read the Ms.
 *
 * <pre>
 * javac -nowarn -d /tmp/hsp -cp bench/target/benchmarks.jar bench/probes/HandleSlotsProbe.java
 * $(./gort jdk)/bin/java --add-exports java.base/jdk.internal.vm=ALL-UNNAMED \
 *     -cp /tmp/hsp:bench/target/benchmarks.jar dev.gort.runtime.HandleSlotsProbe manypairs 60
 * $(./gort jdk)/bin/java ... dev.gort.runtime.HandleSlotsProbe gosched 16
 * </pre>
 *
 * manypairs: one GortHost at GOMAXPROCS=2 runs ManyPairs' 10,000 pairs per invocation; each line is
 * the ns per message, then per carrier: the P it holds at the end, its CPU ticks in the invocation
 * (/proc, 10 ms each) and the 64-byte line of its first handle. gosched: a runtime per invocation
 * (as JMH's Gosched), two goroutines calling Gosched 2^19 times each; each line is the ns per
 * Gosched and how many CPUs the process kept busy (about 1: both goroutines on one P; about 2: one
 * on each).
 */
public final class HandleSlotsProbe {
    private static final Unsafe U;

    static {
        try {
            Field f = Unsafe.class.getDeclaredField("theUnsafe");
            f.setAccessible(true);
            U = (Unsafe) f.get(null);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private static final Object[] BOX = new Object[1];
    private static long handleOffset = -1;

    private HandleSlotsProbe() {}

    public static void main(String[] args) throws Exception {
        int n = Integer.parseInt(args[1]);
        if (args[0].equals("gosched")) {
            gosched(n);
        } else {
            manypairs(n);
        }
    }

    /** An object's address (zero-based compressed oops). */
    private static synchronized long addr(Object o) {
        BOX[0] = o;
        long narrow = U.getInt(BOX, (long) Unsafe.ARRAY_OBJECT_BASE_OFFSET) & 0xffffffffL;
        BOX[0] = null;
        return narrow << 3;
    }

    /** The address of {@code t}'s first handle slot (its thread object), or 0. */
    private static long firstHandle(Thread t) throws Exception {
        long jt = U.getLong(t, 16L); // Thread.eetop
        if (jt == 0) {
            return 0;
        }
        if (handleOffset < 0) {
            List<long[]> readable = new ArrayList<>();
            for (String line : Files.readAllLines(Path.of("/proc/self/maps"))) {
                String[] f = line.split("\\s+");
                if (f[1].charAt(0) == 'r') {
                    String[] ab = f[0].split("-");
                    readable.add(new long[] {Long.parseUnsignedLong(ab[0], 16), Long.parseUnsignedLong(ab[1], 16)});
                }
            }
            long oop = addr(t);
            for (long off = 0; off < 4096 && handleOffset < 0; off += 8) {
                long w = U.getLong(jt + off);
                for (long[] r : readable) {
                    if (w >= r[0] && w + 8 <= r[1] && (w & 7) == 0) {
                        if (U.getLong(w) == oop) {
                            handleOffset = off;
                        }
                        break;
                    }
                }
            }
        }
        return handleOffset < 0 ? 0 : U.getLong(jt + handleOffset);
    }

    private static Map<String, Long> ticks() throws Exception {
        Map<String, Long> m = new HashMap<>();
        try (var ds = Files.newDirectoryStream(Path.of("/proc/self/task"))) {
            for (Path t : ds) {
                String comm = Files.readString(t.resolve("comm")).trim();
                String st = Files.readString(t.resolve("stat"));
                String[] f = st.substring(st.lastIndexOf(')') + 2).split(" ");
                m.put(comm, Long.parseLong(f[11]) + Long.parseLong(f[12]));
            }
        }
        return m;
    }

    private static void manypairs(int n) throws Exception {
        long per = 10_000L * 100;
        java.lang.reflect.Method pairs = Class.forName("dev.gort.bench.ManyPairs").getDeclaredMethod("gortPairs");
        pairs.setAccessible(true);
        Runnable job = () -> {
            try {
                pairs.invoke(null);
            } catch (ReflectiveOperationException e) {
                throw new IllegalStateException(e);
            }
        };
        try (GortHost host = new GortHost(2)) {
            Scheduler s = host.scheduler();
            Map<String, Long> before = ticks();
            for (int i = 0; i < n; i++) {
                long t0 = System.nanoTime();
                host.run(job);
                double ns = (System.nanoTime() - t0) / (double) per;
                Map<String, Long> after = ticks();
                StringBuilder sb = new StringBuilder(String.format("%3d %5.0f ns/msg ", i, ns));
                TreeMap<Long, String> lines = new TreeMap<>();
                for (M m : s.allm()) {
                    String comm = m.thread().getName();
                    comm = comm.length() > 15 ? comm.substring(0, 15) : comm;
                    P p = m.p;
                    long slot = firstHandle(m.thread());
                    lines.put(m.id, String.format(
                            " M%d[%s %+d ticks, line %x]",
                            m.id,
                            p == null ? "-" : "P" + p.id,
                            after.getOrDefault(comm, 0L) - before.getOrDefault(comm, 0L),
                            slot & ~63L));
                }
                lines.values().forEach(sb::append);
                System.out.println(sb);
                before = after;
            }
        }
    }

    private static void gosched(int n) {
        var os = (com.sun.management.OperatingSystemMXBean) java.lang.management.ManagementFactory.getOperatingSystemMXBean();
        Config config = Config.fromEnvironment().withGomaxprocs(2);
        int each = 1 << 19;
        for (int i = 0; i < n; i++) {
            long c0 = os.getProcessCpuTime();
            long t0 = System.nanoTime();
            Go.run(config, () -> {
                WaitGroup wg = new WaitGroup();
                wg.add(2);
                for (int g = 0; g < 2; g++) {
                    Go.go(() -> {
                        for (int k = 0; k < each; k++) {
                            Go.gosched();
                        }
                        wg.done();
                    });
                }
                wg.await();
            });
            long wall = System.nanoTime() - t0;
            System.out.printf(
                    "%3d %5.0f ns/Gosched, %.2f CPUs busy%n",
                    i, wall / (double) (2 * each), (os.getProcessCpuTime() - c0) / (double) wall);
        }
    }
}
