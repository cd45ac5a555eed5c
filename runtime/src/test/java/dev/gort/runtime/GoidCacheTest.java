package dev.gort.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * Goroutine ids come from the creating P's cache, taken from sched.goidgen a block at a time (Go:
 * newproc1's goidcache, _GoidCacheBatch: 16 ids; gort takes the rest of the aligned block of 16 that
 * the next id falls in, so that a P's batch never shares a block, and so an {@link AllGs} stripe,
 * with another P's), and each P counts the goroutines it created (/sched/goroutines-created).
 */
class GoidCacheTest {
    @Test
    void aPHandsOutItsBatchInOrderAndAGoroutineStartedFromOutsideTakesTheIdAfterIt() throws Exception {
        Scheduler s = new Scheduler(TestSupport.config(1));
        List<Long> ids = new ArrayList<>();
        AtomicLong outside = new AtomicLong();
        AtomicLong main = new AtomicLong();
        s.run(() -> {
            Scheduler rt = Scheduler.current();
            main.set(Scheduler.getg().goid);
            ids.add(rt.newproc(() -> {}).goid); // P0's first batch: [2, 15] (main took 1 of block [0, 15])
            // main neither blocks its carrier (a carrier blocked in Thread.join has its P retaken,
            // and main would then spawn without a P) nor parks (with nothing runnable, checkdead
            // would call it a deadlock before the outside thread has spawned): it yields until the
            // goroutine started from outside has run
            new Thread(() -> rt.newproc(() -> outside.set(Scheduler.getg().goid))).start();
            while (outside.get() == 0) {
                Scheduler.gosched();
            }
            for (int i = 0; i < 20; i++) {
                ids.add(rt.newproc(() -> {}).goid);
            }
        });
        assertEquals(1, main.get(), "main: the runtime's first id, taken without a P");
        assertEquals(16, outside.get(), "outside the runtime: one id after P0's batch [2, 15]");
        List<Long> want = new ArrayList<>();
        for (long id = 2; id <= 15; id++) {
            want.add(id); // the rest of the first batch
        }
        for (long id = 17; id <= 23; id++) {
            want.add(id); // the next batch, the rest of block [16, 31] after the outside goroutine's 16
        }
        assertEquals(want, ids);
        assertEquals(1 + 21 + 1, s.goroutinesCreated());
    }

    @Test
    void twoSpawnersAtGomaxprocs2NeverShareAnIdAndTheCountAddsUp() {
        int each = 5_000;
        Scheduler s = new Scheduler(TestSupport.config(2));
        Set<Long> seen = new HashSet<>();
        s.run(() -> {
            Scheduler rt = Scheduler.current();
            long[][] got = new long[2][each];
            GoSema done = new GoSema(0);
            for (int w = 0; w < 2; w++) {
                long[] mine = got[w];
                rt.newproc(() -> {
                    for (int i = 0; i < each; i++) {
                        mine[i] = rt.newproc(() -> {}).goid;
                    }
                    done.release();
                });
            }
            done.acquire();
            done.acquire();
            for (long[] g : got) {
                for (long id : g) {
                    seen.add(id);
                }
            }
        });
        assertEquals(2 * each, seen.size(), "every id handed out once");
        assertEquals(1 + 2 + 2 * each, s.goroutinesCreated());
    }

    /**
     * Each P's batch is the rest of one aligned block of 16 ids, so two Ps never hand out ids of the
     * same block (what keeps AllGs's stripes, one per block, apart when two Ps spawn at once), while
     * goroutines created without a P take single ids in between. Driven directly, in a seeded random
     * order of P0's, P1's and P-less creations, so that every interleaving of refills comes up
     * without depending on how the scheduler places goroutines.
     */
    @Test
    void noTwoPsHandOutIdsOfTheSameBlockOfSixteen() {
        Scheduler s = new Scheduler(TestSupport.config(2));
        P[] ps = {new P.Padded(s, 0, 256), new P.Padded(s, 1, 256)};
        AtomicLong goidgen = new AtomicLong();
        Random rnd = new Random(19);
        Map<Long, Set<Integer>> psOfBlock = new HashMap<>();
        Set<Long> seen = new HashSet<>();
        long[] last = {0, 0};
        for (int i = 0; i < 20_000; i++) {
            int r = rnd.nextInt(100);
            if (r < 3) {
                assertTrue(seen.add(goidgen.incrementAndGet()), "a P-less id handed out twice");
                continue;
            }
            int w = r < 51 ? 0 : 1;
            long id = ps[w].nextGoid(goidgen);
            assertTrue(seen.add(id), "id " + id + " handed out twice");
            assertTrue(id > last[w], "P" + w + "'s ids go up");
            last[w] = id;
            psOfBlock.computeIfAbsent(id >>> 4, b -> new HashSet<>()).add(w);
        }
        assertEquals(
                Set.of(0, 1), psOfBlock.values().stream().flatMap(Set::stream).collect(Collectors.toSet()));
        psOfBlock.forEach((block, which) -> assertEquals(
                1, which.size(), "ids " + (block << 4) + ".." + ((block << 4) + 15) + " from Ps " + which));
    }

    /**
     * P1 creates goroutines for certain, then is destroyed and comes back: its count is kept. Two
     * spawners: whichever runs on P0 holds P0 (it spins, and nothing preempts it without the agent)
     * until the other has run on P1, stolen by P1's M, and created 100 goroutines there; whichever
     * runs on P1 creates them, unless they were already created. (An earlier version spawned pairs
     * until P1's M happened to steal a spawner, up to 1,000 rounds; on a loaded machine its M came
     * too late every time, P0 having run both, and CI failed: "P1 never created a goroutine".)
     */
    @Test
    void aDestroyedPsCountIsKeptWhenGomaxprocsShrinksAndComesBack() {
        Scheduler s = new Scheduler(TestSupport.config(2));
        long[] counts = new long[4];
        java.util.concurrent.atomic.AtomicBoolean createdOnP1 = new java.util.concurrent.atomic.AtomicBoolean();
        s.run(() -> {
            Scheduler rt = Scheduler.current();
            GoSema done = new GoSema(0);
            // Unpreemptible: main's slice can end between the two spawns on a loaded machine (its
            // carrier descheduled), and main then spawns the second from P1: 101 there (a full run).
            Unpreemptible.run(() -> {
                for (int w = 0; w < 2; w++) {
                    spawner(rt, createdOnP1, done);
                }
            });
            done.acquire();
            done.acquire();
            counts[3] = rt.allp()[1].goroutinesCreatedOpaque();
            counts[0] = rt.goroutinesCreated();
            rt.gomaxprocs(1); // P1 is destroyed: its count moves to stats
            counts[1] = rt.goroutinesCreated();
            rt.gomaxprocs(2); // a fresh P1 starts from 0
            rt.newproc(() -> {});
            counts[2] = rt.goroutinesCreated();
        });
        assertEquals(100, counts[3], "P1 created the 100 goroutines");
        assertEquals(1 + 2 + 100, counts[0], "main, the two spawners, the 100");
        assertEquals(counts[0], counts[1], "shrinking GOMAXPROCS loses no P's count");
        assertEquals(counts[0] + 1, counts[2]);
    }

    /**
     * A goroutine that, run on P1, creates 100 goroutines there (unpreemptible, so all on P1) and
     * otherwise holds P0 spinning until that is done.
     */
    private static void spawner(Scheduler rt, java.util.concurrent.atomic.AtomicBoolean createdOnP1, GoSema done) {
        rt.newproc(() -> {
            if (M.current().p().id == 1) {
                if (!createdOnP1.get()) {
                    Unpreemptible.run(() -> {
                        for (int i = 0; i < 100; i++) {
                            rt.newproc(() -> {});
                        }
                    });
                    createdOnP1.set(true);
                }
            } else {
                while (!createdOnP1.get()) {
                    Thread.onSpinWait(); // holds P0: the other spawner can only run on P1
                }
            }
            done.release();
        });
    }
}
