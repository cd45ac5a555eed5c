package dev.gort.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * Goroutine ids come from the creating P's cache, 16 at a time from sched.goidgen (Go: newproc1's
 * goidcache, _GoidCacheBatch), and each P counts the goroutines it created
 * (/sched/goroutines-created).
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
            ids.add(rt.newproc(() -> {}).goid); // P0's first batch: [2, 17] (main took 1)
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
        assertEquals(18, outside.get(), "outside the runtime: one id after P0's batch [2, 17]");
        List<Long> want = new ArrayList<>();
        for (long id = 2; id <= 17; id++) {
            want.add(id); // the rest of the first batch
        }
        for (long id = 19; id <= 23; id++) {
            want.add(id); // the next batch, [19, 34]
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

    @Test
    void aDestroyedPsCountIsKeptWhenGomaxprocsShrinksAndComesBack() {
        Scheduler s = new Scheduler(TestSupport.config(2));
        long[] counts = new long[5];
        s.run(() -> {
            Scheduler rt = Scheduler.current();
            GoSema done = new GoSema(0);
            long spawned = 1; // main
            // pairs of spawners until P1 has created some (its idle M steals one of them)
            for (int round = 0; round < 1000 && rt.allp()[1].goroutinesCreatedOpaque() == 0; round++) {
                for (int w = 0; w < 2; w++) {
                    rt.newproc(() -> {
                        for (int i = 0; i < 100; i++) {
                            rt.newproc(() -> {});
                        }
                        done.release();
                    });
                }
                done.acquire();
                done.acquire();
                spawned += 2 + 200;
            }
            counts[3] = rt.allp()[1].goroutinesCreatedOpaque();
            counts[4] = spawned;
            counts[0] = rt.goroutinesCreated();
            rt.gomaxprocs(1); // P1 is destroyed: its count moves to stats
            counts[1] = rt.goroutinesCreated();
            rt.gomaxprocs(2); // a fresh P1 starts from 0
            rt.newproc(() -> {});
            counts[2] = rt.goroutinesCreated();
        });
        assertTrue(counts[3] > 0, "P1 never created a goroutine in 1,000 rounds");
        assertEquals(counts[4], counts[0]);
        assertEquals(counts[0], counts[1], "shrinking GOMAXPROCS loses no P's count");
        assertEquals(counts[0] + 1, counts[2]);
    }
}
