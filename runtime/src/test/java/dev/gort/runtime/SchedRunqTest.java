package dev.gort.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * The run-queue rules on the real runtime with GOMAXPROCS=1, where scheduling is deterministic:
 * runqputslow's single batch, the every-61st-schedtick look at the global queue, and runnext's
 * inherited time slice.
 */
class SchedRunqTest {

    /**
     * 300 goroutines spawned on one P: each {@code go} puts the new G in runnext and kicks the old one
     * to the ring; the 257th kick finds the ring full and spills its oldest 128 plus the kicked G to
     * the global queue in one batch. So, before main parks: 129 Gs on the global queue (one batch:
     * G2..G129 oldest first, then the kicked G258), 170 in the ring, the newest in runnext.
     */
    @Test
    void threeHundredSpawnsOnOnePLeave129OnTheGlobalQueueInOneBatch() {
        int n = 300;
        AtomicInteger[] runs = new AtomicInteger[n];
        List<G> spawned = new ArrayList<>();
        AtomicReference<String> observed = new AtomicReference<>();
        Scheduler s = new Scheduler(TestSupport.config(1));
        s.run(() -> {
            Scheduler rt = Scheduler.current();
            GoSema done = new GoSema(0);
            long preempts = rt.stats.preemptions.get();
            // The spawn loop and the look at the queues are unpreemptible (m.locks, Go's runtime
            // locks: newproc polls, and cold code can overrun the 10 ms slice): no go statement is
            // moved to the global queue by a preemption of main.
            M spawner = M.current();
            spawner.locks++;
            for (int i = 0; i < n; i++) {
                int k = i;
                runs[k] = new AtomicInteger();
                spawned.add(rt.newproc(() -> {
                    runs[k].incrementAndGet();
                    done.release();
                }));
            }
            P pp = M.current().p();
            G[] global = rt.globalRunqSnapshot();
            long batches;
            synchronized (rt.sched.lock) {
                batches = rt.sched.runq.batchesPut;
            }
            StringBuilder sb = new StringBuilder();
            sb.append("global=")
                    .append(rt.globalRunqSize())
                    .append(" batches=")
                    .append(batches)
                    .append(" ring=")
                    .append(pp.runq.size())
                    .append(" spills=")
                    .append(pp.runq.spills)
                    .append(" runnext=")
                    .append(pp.runq.runnext() == spawned.get(n - 1));
            boolean orderOk = global.length == 129;
            for (int i = 0; orderOk && i < 128; i++) {
                orderOk = global[i] == spawned.get(i);
            }
            orderOk = orderOk && global[128] == spawned.get(256);
            sb.append(" order=").append(orderOk);
            observed.set(rt.stats.preemptions.get() != preempts ? "preempted" : sb.toString());
            spawner.locks--;
            for (int i = 0; i < n; i++) {
                done.acquire();
            }
        });
        for (int i = 0; i < n; i++) {
            assertEquals(1, runs[i].get(), "goroutine " + i + " runs");
        }
        // A stall of more than sysmon's 10 ms slice lets sysmon preempt main at a go statement.
        assumeTrue(!observed.get().equals("preempted"), "sysmon preempted main while it spawned (stalled machine)");
        assertEquals("global=129 batches=1 ring=170 spills=1 runnext=true order=true", observed.get());
    }

    /**
     * Go: findRunnable's fairness check, "otherwise two goroutines can completely occupy the local
     * runqueue by constantly respawning each other". A and B respawn each other through the local
     * ring (each does {@code go partner; go filler}, so the partner is kicked from runnext to the ring
     * and the filler, taken from runnext, inherits the slice): the local queue is never empty and
     * every partner run starts a new slice ({@code schedtick++}). Main, after {@code Gosched}, waits
     * on the global queue: it must be taken by the first findRunnable whose schedtick is a multiple of
     * 61, i.e. within 61 partner runs, and it then starts its slice with {@code schedtick % 61 == 1}.
     * (Without the check, the pair runs until its safety limit of 10,000 runs.)
     */
    @Test
    void respawningPairCannotStarveTheGlobalQueue() {
        AtomicInteger pairRuns = new AtomicInteger();
        AtomicInteger runsWhenMainBack = new AtomicInteger(-1);
        AtomicInteger tickWhenMainBack = new AtomicInteger(-1);
        AtomicInteger tickWhenMainLeft = new AtomicInteger(-1);
        AtomicLong preemptsBefore = new AtomicLong();
        AtomicLong preemptsAfter = new AtomicLong();
        Scheduler s = new Scheduler(TestSupport.config(1));
        s.run(() -> {
            Scheduler rt = Scheduler.current();
            GoSema done = new GoSema(0);
            // Bounded so that a broken rule fails the assertions below instead of hanging.
            int limit = 10_000;
            Runnable[] pair = new Runnable[2];
            for (int i = 0; i < 2; i++) {
                int partner = 1 - i;
                pair[i] = () -> {
                    if (runsWhenMainBack.get() >= 0 || pairRuns.incrementAndGet() > limit) {
                        done.release();
                        return;
                    }
                    rt.newproc(pair[partner]);
                    rt.newproc(() -> {}); // the filler: kicks the partner to the ring
                };
            }
            // Main started from runnext with schedtick 0, where the fairness check would take it
            // straight back; run one G from the ring first (schedtick 1) so that the pair must run.
            rt.newproc(done::release);
            rt.newproc(done::release);
            done.acquire();
            done.acquire();
            rt.newproc(pair[0]);
            tickWhenMainLeft.set(M.current().p().schedtickOpaque());
            preemptsBefore.set(rt.stats.preemptions.get());
            Scheduler.gosched(); // main goes to the global queue tail
            runsWhenMainBack.set(pairRuns.get());
            tickWhenMainBack.set(M.current().p().schedtickOpaque());
            preemptsAfter.set(rt.stats.preemptions.get());
            done.acquire();
        });
        int runs = runsWhenMainBack.get();
        // A preemption (a loaded machine can stall the P past sysmon's 10 ms slice) ends a partner run
        // after it put the next partner in runnext: that one then runs from runnext with the time
        // slice inherited, without a schedtick of its own, so each preemption allows one run more.
        long preempted = preemptsAfter.get() - preemptsBefore.get();
        assertTrue(
                runs >= 0 && runs <= 61 + preempted,
                "main came back from the global queue after " + runs + " partner runs (schedtick " + tickWhenMainLeft
                        + " -> " + tickWhenMainBack + ", " + preempted + " preemptions)");
        // The machine may stall this P for more than sysmon's 10 ms slice; sysmon then preempts a G
        // (to the global queue, behind or ahead of main) and main comes back early. Only the bound
        // holds then: the exact schedtick accounting below assumes no preemption.
        assumeTrue(preemptsAfter.get() == preemptsBefore.get(), "sysmon preempted the pair (stalled machine)");
        // Main leaves at schedtick T (1 after the warm-up). The first partner run comes from runnext
        // (main spawned it just before Gosched) and inherits T; partner run k >= 2 comes from the ring
        // with schedtick T+k-1; the first findRunnable that sees a multiple of 61 takes main, whose own
        // run adds one more. With T = 1: 61 partner runs, main resumes at schedtick 62.
        int t = tickWhenMainLeft.get();
        int want = t % 61 == 0 ? 0 : 62 - t % 61;
        assertEquals(want, runs, "main is taken by the first findRunnable at a schedtick multiple of 61 (T=" + t + ")");
        assertEquals(1, tickWhenMainBack.get() % 61, "main must be taken when schedtick % 61 == 0");
        if (runs > 0) {
            assertEquals(
                    tickWhenMainLeft.get() + (runs - 1) + 1,
                    tickWhenMainBack.get(),
                    "each partner run from the ring (not the runnext fillers) and main's own run start a new slice");
        }
    }

    /**
     * A G taken from runnext inherits the time slice: a chain of goroutines that each {@code go} the
     * next and exit lives in runnext and never advances {@code schedtick}. (So, as in Go, the 61st
     * tick cannot break such a chain: only sysmon's time-slice preemption, forcePreemptNS after a
     * schedtick that has not moved for 10 ms, does: see runnextChainIsPreemptedBySysmon.)
     */
    @Test
    void runnextChainInheritsTheTimeSlice() {
        int hops = 1_000;
        AtomicInteger tickAtStart = new AtomicInteger(-1);
        AtomicInteger tickAtEnd = new AtomicInteger(-1);
        AtomicInteger hopsDone = new AtomicInteger();
        AtomicLong preempts = new AtomicLong();
        Scheduler s = new Scheduler(TestSupport.config(1));
        s.run(() -> {
            Scheduler rt = Scheduler.current();
            GoSema done = new GoSema(0);
            Runnable[] hop = new Runnable[1];
            hop[0] = () -> {
                int h = hopsDone.incrementAndGet();
                if (h == 1) {
                    tickAtStart.set(M.current().p().schedtickOpaque());
                    preempts.set(-rt.stats.preemptions.get());
                }
                if (h == hops) {
                    tickAtEnd.set(M.current().p().schedtickOpaque());
                    preempts.addAndGet(rt.stats.preemptions.get());
                    done.release();
                    return;
                }
                rt.newproc(hop[0]);
            };
            rt.newproc(hop[0]);
            done.acquire();
        });
        assertEquals(hops, hopsDone.get());
        // Normally 0. If the machine stalls the chain past sysmon's 10 ms slice, sysmon preempts it
        // (runnextChainIsPreemptedBySysmon): the preempted G comes back from the global queue with a
        // new slice, one schedtick per preemption, and no other hop may add one.
        assertEquals(
                preempts.get(),
                tickAtEnd.get() - tickAtStart.get(),
                "a runnext chain must not advance schedtick (other than by sysmon's preemptions)");
    }

    /**
     * The runnext chain above cannot starve the global queue forever: the chain shares one time
     * slice (schedtick does not move), so after forcePreemptNS (10 ms) sysmon asks the running G to
     * stop, and the G honours it at its next {@code go} (newproc's prologue in Go). Main, waiting on
     * the global queue after Gosched, then runs. The chain stops itself after 20 s, so without
     * preemption main would come back only then; the bound asserted (5 s) is generous for a loaded
     * machine and still far from that.
     */
    @Test
    void runnextChainIsPreemptedBySysmon() {
        AtomicInteger hops = new AtomicInteger();
        AtomicLong waitedNanos = new AtomicLong(-1);
        java.util.concurrent.atomic.AtomicBoolean stop = new java.util.concurrent.atomic.AtomicBoolean();
        Scheduler s = new Scheduler(TestSupport.config(1));
        s.run(() -> {
            Scheduler rt = Scheduler.current();
            GoSema done = new GoSema(0);
            long deadline = System.nanoTime() + 20_000_000_000L;
            Runnable[] pair = new Runnable[2];
            for (int i = 0; i < 2; i++) {
                int partner = 1 - i;
                pair[i] = () -> {
                    if (stop.get() || (hops.incrementAndGet() & 1023) == 0 && System.nanoTime() > deadline) {
                        done.release();
                        return;
                    }
                    rt.newproc(pair[partner]);
                };
            }
            // schedtick 1 first (see respawningPairCannotStarveTheGlobalQueue), so that main's
            // return is not the 61st-tick check's doing.
            rt.newproc(done::release);
            rt.newproc(done::release);
            done.acquire();
            done.acquire();
            rt.newproc(pair[0]);
            long t0 = System.nanoTime();
            Scheduler.gosched();
            waitedNanos.set(System.nanoTime() - t0);
            stop.set(true);
            done.acquire();
        });
        long ms = waitedNanos.get() / 1_000_000;
        assertTrue(
                ms < 5_000,
                "main waited " + ms + " ms on the global queue behind a runnext chain (" + hops.get() + " hops, "
                        + s.preempt.requests() + " preemption requests)");
        assertTrue(hops.get() > 1, "the chain ran before main came back");
    }

    /**
     * Go: proc.go ready(gp, next=true): a woken G goes to the waker's runnext, kicking the previous
     * occupant to the ring tail. With GOMAXPROCS=1: w parks; main queues x (runnext) and y (x kicked
     * to the ring), then wakes w (w to runnext, y kicked): the order is w, x, y.
     */
    @Test
    void goreadyPutsTheWokenGInRunnext() {
        List<String> order = new java.util.concurrent.CopyOnWriteArrayList<>();
        java.util.concurrent.atomic.AtomicBoolean preempted = new java.util.concurrent.atomic.AtomicBoolean();
        Scheduler s = new Scheduler(TestSupport.config(1));
        s.run(() -> {
            Scheduler rt = Scheduler.current();
            GoSema parked = new GoSema(0);
            GoSema wake = new GoSema(0);
            GoSema done = new GoSema(0);
            rt.newproc(() -> {
                parked.release(); // main to runnext; it runs once w parks below
                wake.acquire();
                order.add("w");
                done.release();
            });
            parked.acquire();
            Unpreemptible.run(
                    () -> { // a preemption at a newproc's poll would run x before w wakes
                        rt.newproc(() -> {
                            order.add("x");
                            done.release();
                        });
                        rt.newproc(() -> {
                            order.add("y");
                            done.release();
                        });
                        wake.release();
                    });
            for (int i = 0; i < 3; i++) {
                done.acquire();
            }
            // at the end: a preemption honoured at any newproc's poll above reorders the queue
            preempted.set(s.stats.preemptions.get() != 0);
        });
        // checked here, not inside the goroutine (an assumption thrown there is a panic: a failure)
        assumeTrue(!preempted.get(), "sysmon preempted a goroutine (stalled machine)");
        assertEquals(List.of("w", "x", "y"), order);
    }

    /**
     * Go: runtime.Gosched puts the G on the global queue tail (goschedImpl: globrunqput), not in a
     * local queue: with GOMAXPROCS=1 the yielder (spawned last, so run first from runnext) is the last
     * G on the global queue when the other G (in the ring) runs, and it is runnable there.
     */
    @Test
    void goschedGoesToTheGlobalQueueTail() {
        AtomicReference<String> seen = new AtomicReference<>();
        AtomicInteger warmTick = new AtomicInteger();
        java.util.concurrent.atomic.AtomicBoolean preempted = new java.util.concurrent.atomic.AtomicBoolean();
        Scheduler s = new Scheduler(TestSupport.config(1));
        s.run(() -> {
            Scheduler rt = Scheduler.current();
            GoSema done = new GoSema(0);
            // Main started from runnext (inherited slice): schedtick is still 0, and at 0 the
            // fairness check would take the yielder straight back from the global queue. Run one G
            // from the ring first so that schedtick is 1.
            rt.newproc(done::release);
            rt.newproc(done::release);
            done.acquire();
            done.acquire();
            warmTick.set(M.current().p().schedtickOpaque());
            G[] yielder = new G[1];
            rt.newproc(() -> {
                G[] q = rt.globalRunqSnapshot();
                G last = q.length == 0 ? null : q[q.length - 1];
                seen.set("last=" + (last == yielder[0]) + " status=" + (last == null ? -1 : last.readgstatus())
                        + " ring=" + M.current().p().runq.size());
                done.release();
            });
            yielder[0] = rt.newproc(() -> {
                Scheduler.gosched();
                done.release();
            });
            done.acquire();
            done.acquire();
            // at the end: a preemption honoured at the last newproc's poll would queue main too
            preempted.set(s.stats.preemptions.get() != 0);
        });
        // checked here, not inside the goroutine (an assumption thrown there is a panic: a failure)
        assumeTrue(!preempted.get(), "sysmon preempted a goroutine (stalled machine)");
        assertEquals(1, warmTick.get(), "warm-up");
        assertEquals("last=true status=" + G._Grunnable + " ring=0", seen.get());
    }
}
