package dev.gort.examples.showcase;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gort.runtime.PreemptStats;
import dev.gort.runtime.PreemptStrategy;
import java.util.Map;
import org.HdrHistogram.Histogram;
import org.junit.jupiter.api.Test;

/** The showcase's preemption figures say whether they add up (requests = the ways requests ended). */
class FactsTest {
    static PreemptStats stats(long requested, long honoured, long refused, long stale, long unhonoured) {
        PreemptStats.Percentiles none = new PreemptStats.Percentiles(0, 0, 0, 0, 0);
        return new PreemptStats(
                PreemptStrategy.values()[0],
                requested,
                honoured,
                0,
                refused,
                0,
                0,
                0,
                0,
                0,
                0,
                stale,
                unhonoured,
                0,
                0,
                0,
                0,
                Map.of(),
                Map.of(),
                none,
                none,
                new Histogram(3),
                new Histogram(3));
    }

    @Test
    void preemptionFiguresSayWhetherTheyAddUp() {
        String ok = Facts.preemptBalance(stats(10, 6, 1, 1, 2), null, 0, 0);
        assertTrue(ok.startsWith("adds up: 10 requests, 6 + 2 + 1 + 1 = 10 "), ok);
        String bad = Facts.preemptBalance(stats(10, 6, 0, 0, 2), null, 0, 0);
        assertTrue(bad.startsWith("DOES NOT add up: 10 requests, 6 + 2 + 0 + 0 = 8 "), bad);
    }
}
