package dev.gort;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.gort.runtime.G;
import dev.gort.runtime.M;
import dev.gort.runtime.Scheduler;
import dev.gort.runtime.Unpreemptible;
import dev.gort.sync.WaitGroup;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Where a channel hand-off puts the woken goroutine: the current P's runnext (Go's goready), so it
 * runs before anything already in the local queue, and inherits the time slice. GOMAXPROCS = 1
 * makes the order deterministic.
 */
class ChanHandoffTest {
    static int schedtick() {
        return M.current().p().schedtickOpaque();
    }

    /** go fn(), returning the goroutine. */
    static G spawn(Runnable fn) {
        return Scheduler.current().newproc(fn);
    }

    /** Yields until gp is parked (Gosched puts us on the global queue; with one P the others run). */
    static void waitParked(G gp) {
        while (gp.readgstatus() != G._Gwaiting) {
            Go.gosched();
        }
    }

    @Test
    void sendToParkedReceiverRunsItNextAheadOfTheLocalQueue() {
        List<String> order = Collections.synchronizedList(new ArrayList<>());
        int[] ticks = new int[2];
        GortTesting.run(1, () -> {
            Chan<Integer> c = Chan.make();
            WaitGroup wg = new WaitGroup();
            wg.add(3);
            G r = spawn(() -> {
                int v = c.recv();
                ticks[1] = schedtick();
                order.add("R" + v);
                wg.done();
            });
            waitParked(r); // R parks on c
            // Not preempted from here to the park in wg.await (a preempted main would go to the
            // global queue behind X1: seen on a loaded machine as [X1, main, R7, X2]).
            Unpreemptible.run(() -> {
                Go.go(() -> {
                    order.add("X1");
                    wg.done();
                });
                Go.go(() -> {
                    order.add("X2");
                    wg.done();
                }); // runnext = X2, local ring = [X1]
                c.send(7); // R -> runnext, X2 kicked to the tail: ring = [X1, X2]
                order.add("main"); // the sender keeps running
                ticks[0] = schedtick();
            });
            wg.await();
        });
        assertEquals(List.of("main", "R7", "X1", "X2"), order);
        // R came from runnext: it inherited main's slice (no schedtick increment).
        assertEquals(ticks[0], ticks[1], "a hand-off through runnext starts no new slice");
    }

    @Test
    void recvFromParkedSenderOnFullBufferRunsTheSenderNext() {
        List<String> order = Collections.synchronizedList(new ArrayList<>());
        GortTesting.run(1, () -> {
            Chan<Integer> c = Chan.make(1);
            c.send(1);
            WaitGroup wg = new WaitGroup();
            wg.add(2);
            G sender = spawn(() -> {
                c.send(2); // buffer full: parks
                order.add("S");
                wg.done();
            });
            waitParked(sender);
            Unpreemptible.run(
                    () -> { // as above
                        Go.go(() -> {
                            order.add("X");
                            wg.done();
                        }); // runnext = X
                        int v = c.recv(); // takes 1; S's 2 moves into the buffer; S -> runnext, X -> ring
                        order.add("main" + v);
                    });
            wg.await();
            order.add("buf" + c.recv());
        });
        assertEquals(List.of("main1", "S", "X", "buf2"), order);
    }

    @Test
    void closeReadiesReceiversSoTheFirstWaiterRunsFirstThenTheRestInReverse() {
        List<String> order = Collections.synchronizedList(new ArrayList<>());
        GortTesting.run(1, () -> {
            Chan<Integer> c = Chan.make();
            WaitGroup wg = new WaitGroup();
            wg.add(3);
            for (int i = 1; i <= 3; i++) {
                String name = "R" + i;
                G ri = spawn(() -> {
                    GortTesting.check(!c.recv2().ok(), "closed");
                    order.add(name);
                    wg.done();
                });
                waitParked(ri); // Ri parks: R1, R2, R3 queue in that order
            }
            c.close(); // Go's closechan: gList push R1,R2,R3 then ready R3,R2,R1 -> runnext R1, ring [R3, R2]
            wg.await();
        });
        assertEquals(List.of("R1", "R3", "R2"), order);
    }

    @Test
    void unbufferedValuesGoToTheLongestWaitingReceiver() {
        List<String> got = Collections.synchronizedList(new ArrayList<>());
        GortTesting.run(2, () -> {
            Chan<Integer> c = Chan.make();
            WaitGroup wg = new WaitGroup();
            for (int i = 0; i < 5; i++) {
                int id = i;
                wg.add(1);
                G ri = spawn(() -> {
                    got.add(id + ":" + c.recv());
                    wg.done();
                });
                waitParked(ri); // receiver i queued on c before the next one starts
            }
            for (int i = 0; i < 5; i++) {
                c.send(i);
            }
            wg.await();
        });
        List<String> sorted = new ArrayList<>(got);
        Collections.sort(sorted);
        assertEquals(List.of("0:0", "1:1", "2:2", "3:3", "4:4"), sorted);
    }
}
