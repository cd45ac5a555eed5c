import dev.gort.Chan;
import dev.gort.Go;
import dev.gort.bench.GortHost;
import java.util.Arrays;

/**
 * A diagnostic, not part of the build: gort's unbuffered ping-pong (PingPong's workload) timed in
 * batches of 64 round trips, three runs of {@code batches} batches on one runtime, and the
 * distribution of the last run's batches in ns per round trip. It tells whether the time above the
 * median batch comes from every batch (a uniform cost) or from a few slow ones (stalls), for
 * GOMAXPROCS=1 against 2; {@code pingpong_batches.go} is Go's side.
 *
 * <pre>
 * $(./gort jdk)/bin/java --add-exports java.base/jdk.internal.vm=ALL-UNNAMED \
 *     -cp bench/target/benchmarks.jar bench/probes/PingPongBatchesProbe.java 2 200000
 * </pre>
 */
public class PingPongBatchesProbe {
    static final int BATCH = 64;

    public static void main(String[] a) throws Exception {
        int procs = Integer.parseInt(a[0]);
        int batches = Integer.parseInt(a[1]);
        long[] t = new long[batches];
        try (GortHost h = new GortHost(procs)) {
            for (int rep = 0; rep < 3; rep++) {
                h.run(() -> {
                    Chan<Integer> ping = Chan.make();
                    Chan<Integer> pong = Chan.make();
                    Go.go(() -> {
                        for (Integer v : ping) {
                            pong.send(v);
                        }
                    });
                    Integer one = 1;
                    long prev = System.nanoTime();
                    for (int b = 0; b < batches; b++) {
                        for (int i = 0; i < BATCH; i++) {
                            ping.send(one);
                            pong.recv();
                        }
                        long now = System.nanoTime();
                        t[b] = now - prev;
                        prev = now;
                    }
                    ping.close();
                });
            }
        }
        long[] s = t.clone();
        Arrays.sort(s);
        long total = 0;
        for (long x : t) {
            total += x;
        }
        long med = s[batches / 2];
        long slowT = 0;
        int slowN = 0;
        for (long x : t) {
            if (x > 2 * med) {
                slowT += x - med;
                slowN++;
            }
        }
        System.out.printf(
                "P=%d mean %.1f ns/rt; batch ns/rt p10 %.1f p50 %.1f p90 %.1f p99 %.1f p99.9 %.1f max %.1f%n",
                procs,
                total / (double) batches / BATCH,
                s[batches / 10] / (double) BATCH,
                med / (double) BATCH,
                s[batches * 9 / 10] / (double) BATCH,
                s[batches * 99 / 100] / (double) BATCH,
                s[batches * 999 / 1000] / (double) BATCH,
                s[batches - 1] / (double) BATCH);
        System.out.printf(
                "  batches > 2x median: %d of %d; their excess %.1f ns per rt overall; excess of all batches over the median %.1f ns/rt%n",
                slowN,
                batches,
                slowT / (double) batches / BATCH,
                (total - (double) med * batches) / batches / BATCH);
    }
}
