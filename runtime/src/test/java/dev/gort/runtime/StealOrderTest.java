package dev.gort.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import org.junit.jupiter.api.Test;

/** Go: proc_test.go TestStealOrder (the body is proc_runtime_test.go RunStealOrderTest). */
class StealOrderTest {

    @Test
    void everyEnumerationVisitsEachPExactlyOnce() {
        StealOrder ord = new StealOrder();
        for (int procs = 1; procs <= 64; procs++) {
            ord.reset(procs);
            int[] coprimes = ord.coprimes();
            if (procs >= 3 && coprimes.length < 2) {
                fail("too few coprimes for procs=" + procs);
            }
            for (int co = 0; co < coprimes.length; co++) {
                StealOrder.Enum e = ord.start(co);
                boolean[] checked = new boolean[procs];
                for (int p = 0; p < procs; p++) {
                    int x = e.position();
                    if (checked[x]) {
                        fail("duplicate during enumeration: procs " + procs + " inc " + e.inc());
                    }
                    checked[x] = true;
                    assertFalse(e.done(), "done too early: procs " + procs);
                    e.next();
                }
                assertTrue(e.done(), "not done: procs " + procs);
            }
        }
    }

    @Test
    void differentStartsGiveDistinctPosIncPairs() {
        StealOrder ord = new StealOrder();
        for (int procs = 2; procs <= 64; procs++) {
            ord.reset(procs);
            boolean[] checked = new boolean[procs * procs];
            // We want at least procs*len(coprimes) different pos+inc values before we start repeating.
            int n = procs * ord.coprimes().length;
            for (int i = 0; i < n; i++) {
                StealOrder.Enum e = ord.start(i);
                int j = e.position() * procs + e.inc();
                if (checked[j]) {
                    fail("duplicate pos+inc during enumeration: procs " + procs + " pos " + e.position() + " inc "
                            + e.inc());
                }
                checked[j] = true;
            }
        }
    }

    /** The scheduler's allocation-free startPacked agrees with start, also for "negative" (uint32) randoms. */
    @Test
    void startPackedAgreesWithStart() {
        StealOrder ord = new StealOrder();
        FastRand r = new FastRand(42);
        for (int procs = 1; procs <= 64; procs++) {
            ord.reset(procs);
            for (int k = 0; k < 200; k++) {
                int x = k < 100 ? k : r.next();
                StealOrder.Enum e = ord.start(x);
                long packed = ord.startPacked(x);
                assertEquals(e.position(), (int) (packed >>> 32), "pos, procs " + procs + " r " + x);
                assertEquals(e.inc(), (int) packed, "inc, procs " + procs + " r " + x);
                assertTrue(e.position() >= 0 && e.position() < procs);
            }
        }
    }
}
