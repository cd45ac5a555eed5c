package dev.gort;

import dev.gort.runtime.Config;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Supplier;

/**
 * A small schedule explorer for research: runs a workload under N seeds (each in a synctest bubble
 * on a runtime of its own, with the given configuration and that seed) and reports the
 * distribution of an outcome (which goroutine wins a race, an order, a latency in fake time), with
 * the seeds that produced each value, so that any one of them can be reproduced exactly with
 * {@link #reproduce}. Deterministic only where a seed is (GOMAXPROCS=1: see
 * {@link dev.gort.runtime.Decisions}); call it from a thread outside gort.
 */
public final class Explorer {
    private Explorer() {}

    /** The distribution of a workload's outcome over seeds: outcome, in order, to the seeds that gave it. */
    public record Report(Map<String, List<Long>> seedsByOutcome) {
        /** How many seeds gave each outcome. */
        public Map<String, Integer> counts() {
            Map<String, Integer> m = new LinkedHashMap<>();
            seedsByOutcome.forEach((k, v) -> m.put(k, v.size()));
            return m;
        }

        @Override
        public String toString() {
            StringBuilder b = new StringBuilder();
            seedsByOutcome.forEach((k, v) -> b.append(String.format(
                    "%5d  %s  (seeds %s%s)%n",
                    v.size(), k, v.subList(0, Math.min(5, v.size())), v.size() > 5 ? ", ..." : "")));
            return b.toString();
        }
    }

    /**
     * Runs {@code workload} once for each seed in {@code [firstSeed, firstSeed + n)}, each time as
     * the main goroutine of a bubble on a new runtime with {@code config} and that seed, and
     * groups the seeds by the outcome's {@code toString()}.
     */
    public static Report explore(Config config, long firstSeed, int n, Supplier<?> workload) {
        Map<String, List<Long>> by = new TreeMap<>();
        for (int i = 0; i < n; i++) {
            long seed = firstSeed + i;
            by.computeIfAbsent(reproduce(config, seed, workload), k -> new ArrayList<>())
                    .add(seed);
        }
        return new Report(by);
    }

    /** One seed's run of {@code workload}, as {@link #explore} ran it: its outcome. */
    public static String reproduce(Config config, long seed, Supplier<?> workload) {
        if (seed == 0) {
            throw new IllegalArgumentException("seed 0 means unseeded");
        }
        String[] out = new String[1];
        Synctest.test(config.withSeed(seed), () -> out[0] = String.valueOf(workload.get()));
        return out[0];
    }
}
