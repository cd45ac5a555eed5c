package dev.gort;

import static dev.gort.GortTesting.check;

import dev.gort.sync.Mutex;
import dev.gort.sync.WaitGroup;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Ports of Go's src/runtime/chan_test.go, each run at GOMAXPROCS 1, 2 and 4 (Go's -cpu=1,2,4).
 * Sizes are Go's short-mode sizes where Go has them; the full sizes run in ChannelStressTest.
 * (TestChan and TestSelectDuplicateChannel, which need time.Sleep, are in GoChanSleepTest.)
 */
class GoChanTest {

    /**
     * TestNonblockRecvRace: a cap-1 channel holding one value is closed while another goroutine
     * does a non-blocking receive; it must get the value or see closed, never take the default.
     */
    @ParameterizedTest
    @ValueSource(ints = {1, 2, 4})
    void nonblockRecvRace(int procs) {
        int n = 10_000;
        GortTesting.run(procs, () -> {
            for (int i = 0; i < n; i++) {
                Chan<Integer> c = Chan.make(1);
                c.send(1);
                Go.go(() -> Select.select(Select.recv(c, () -> {}), Select.defaultCase(() -> {
                    throw new AssertionError("chan is not ready");
                })));
                c.close();
                c.recv();
            }
        });
    }

    /** Same, with the non-blocking receive as Chan.tryRecv (selectnbrecv). */
    @ParameterizedTest
    @ValueSource(ints = {1, 2, 4})
    void nonblockRecvRaceTryRecv(int procs) {
        int n = 10_000;
        GortTesting.run(procs, () -> {
            for (int i = 0; i < n; i++) {
                Chan<Integer> c = Chan.make(1);
                c.send(1);
                Go.go(() -> check(c.tryRecv() != null, "chan is not ready"));
                c.close();
                c.recv();
            }
        });
    }

    /**
     * TestSelfSelect: two goroutines each run 1000 selects that both send and receive on the same
     * channel; no crash, no deadlock, and on an unbuffered channel a goroutine never receives its
     * own value.
     */
    @ParameterizedTest
    @ValueSource(ints = {1, 2, 4})
    void selfSelect(int procs) {
        GortTesting.run(procs, () -> {
            for (int chanCap : new int[] {0, 10}) {
                WaitGroup wg = new WaitGroup();
                wg.add(2);
                Chan<Integer> c = Chan.make(chanCap);
                for (int p = 0; p < 2; p++) {
                    int pp = p;
                    Go.go(() -> {
                        try {
                            for (int i = 0; i < 1000; i++) {
                                if (pp == 0 || i % 2 == 0) {
                                    Select.select(
                                            Select.send(c, pp, () -> {}),
                                            Select.recv(
                                                    c,
                                                    (Integer v) -> check(!(chanCap == 0 && v == pp), "self receive")));
                                } else {
                                    Select.select(
                                            Select.recv(
                                                    c,
                                                    (Integer v) -> check(!(chanCap == 0 && v == pp), "self receive")),
                                            Select.send(c, pp, () -> {}));
                                }
                            }
                        } finally {
                            wg.done();
                        }
                    });
                }
                wg.await();
            }
        });
    }

    /**
     * TestSelectFairness: 10,000 trials of a 4-case select (2 unbuffered never ready, 2 buffered
     * always ready); each ready case must be chosen 50% ± 10σ.
     */
    @ParameterizedTest
    @ValueSource(ints = {1, 2, 4})
    void selectFairness(int procs) {
        final int trials = 10_000;
        GortTesting.run(procs, () -> {
            Chan<Integer> c1 = Chan.make(trials + 1);
            Chan<Integer> c2 = Chan.make(trials + 1);
            for (int i = 0; i < trials + 1; i++) {
                c1.send(1);
                c2.send(2);
            }
            Chan<Integer> c3 = Chan.make();
            Chan<Integer> c4 = Chan.make();
            Chan<Integer> out = Chan.make();
            Chan<Integer> done = Chan.make();
            WaitGroup wg = new WaitGroup();
            wg.add(1);
            Go.go(() -> {
                try {
                    Select in = new Select();
                    in.addRecv(c3);
                    in.addRecv(c4);
                    in.addRecv(c1);
                    in.addRecv(c2);
                    Select o = new Select();
                    int sendOut = o.addSend(out, null);
                    o.addRecv(done);
                    for (; ; ) {
                        in.await();
                        o.setValue(sendOut, in.value());
                        if (o.await() != sendOut) {
                            return;
                        }
                    }
                } finally {
                    wg.done();
                }
            });
            int cnt1 = 0;
            int cnt2 = 0;
            for (int i = 0; i < trials; i++) {
                int b = out.recv();
                switch (b) {
                    case 1 -> cnt1++;
                    case 2 -> cnt2++;
                    default -> throw new AssertionError("unexpected value " + b + " on channel");
                }
            }
            // If the select in the goroutine is fair, cnt1 and cnt2 should be about the same value.
            // See if we're more than 10 sigma away from the expected value.
            final double mean = trials * 0.5;
            final double variance = trials * 0.5 * (1 - 0.5);
            double stddev = Math.sqrt(variance);
            check(
                    Math.abs(cnt1 - mean) <= 10 * stddev,
                    "unfair select: in %d trials, results were %d, %d",
                    trials,
                    cnt1,
                    cnt2);
            done.close();
            wg.await();
        });
    }

    /**
     * TestPseudoRandomSend: 100 selects with two send cases on one channel; the receiver Goscheds
     * before each receive; each value must make up more than 10%. The mutex is unlocked by the
     * goroutine that did not lock it.
     */
    @ParameterizedTest
    @ValueSource(ints = {1, 2, 4})
    void pseudoRandomSend(int procs) {
        final int n = 100;
        GortTesting.run(procs, () -> {
            for (int chanCap : new int[] {0, n}) {
                Chan<Integer> c = Chan.make(chanCap);
                int[] l = new int[n];
                Mutex m = new Mutex();
                m.lock();
                Go.go(() -> {
                    for (int i = 0; i < n; i++) {
                        Go.gosched();
                        l[i] = c.recv();
                    }
                    m.unlock();
                });
                for (int i = 0; i < n; i++) {
                    Select.select(Select.send(c, 1, () -> {}), Select.send(c, 0, () -> {}));
                }
                m.lock(); // wait
                int n0 = 0;
                int n1 = 0;
                for (int i : l) {
                    n0 += (i + 1) % 2;
                    n1 += i;
                }
                check(
                        n0 > n / 10 && n1 > n / 10,
                        "Want pseudorandom, got %d zeros and %d ones (chan cap %d)",
                        n0,
                        n1,
                        chanCap);
            }
        });
    }

    /**
     * TestMultiConsumer: 23 workers range over a cap-69 queue (Gosched when the value equals their
     * prime) and forward to a results channel; close propagates through a WaitGroup; count and sum
     * must be exact.
     */
    @ParameterizedTest
    @ValueSource(ints = {1, 2, 4})
    void multiConsumer(int procs) {
        multiConsumer(procs, 271_828);
    }

    static void multiConsumer(int procs, int niter) {
        final int nwork = 23;
        final int[] pn = {2, 3, 7, 11, 13, 17, 19, 23, 27, 31};
        GortTesting.run(procs, () -> {
            Chan<Integer> q = Chan.make(nwork * 3);
            Chan<Integer> r = Chan.make(nwork * 3);
            // workers
            WaitGroup wg = new WaitGroup();
            for (int i = 0; i < nwork; i++) {
                wg.add(1);
                int w = i;
                Go.go(() -> {
                    for (int v : q) {
                        // mess with the fifo-ish nature of range
                        if (pn[w % pn.length] == v) {
                            Go.gosched();
                        }
                        r.send(v);
                    }
                    wg.done();
                });
            }
            // feeder & closer
            long[] expect = new long[1];
            Go.go(() -> {
                for (int i = 0; i < niter; i++) {
                    int v = pn[i % pn.length];
                    expect[0] += v;
                    q.send(v);
                }
                q.close(); // no more work
                wg.await(); // workers done
                r.close(); // ... so there can be no more results
            });
            // consume & check
            int n = 0;
            long s = 0;
            for (int v : r) {
                n++;
                s += v;
            }
            check(
                    n == niter && s == expect[0],
                    "Expected sum %d (got %d) from %d iter (saw %d)",
                    expect[0],
                    s,
                    niter,
                    n);
        });
    }

    /** TestChan's "send 1000 integers in 4 goroutines" part, without its sleeps: each value seen 4 times. */
    @ParameterizedTest
    @ValueSource(ints = {1, 2, 4})
    void fourByFour(int procs) {
        GortTesting.run(procs, () -> {
            for (int chanCap = 0; chanCap < 20; chanCap++) {
                Chan<Integer> c = Chan.make(chanCap);
                final int pp = 4;
                final int ll = 1000;
                for (int p = 0; p < pp; p++) {
                    Go.go(() -> {
                        for (int i = 0; i < ll; i++) {
                            c.send(i);
                        }
                    });
                }
                Chan<Map<Integer, Integer>> done = Chan.make();
                for (int p = 0; p < pp; p++) {
                    Go.go(() -> {
                        Map<Integer, Integer> recv = new HashMap<>();
                        for (int i = 0; i < ll; i++) {
                            recv.merge(c.recv(), 1, Integer::sum);
                        }
                        done.send(recv);
                    });
                }
                Map<Integer, Integer> recv = new HashMap<>();
                for (int p = 0; p < pp; p++) {
                    done.recv().forEach((k, v) -> recv.merge(k, v, Integer::sum));
                }
                check(recv.size() == ll, "chan[%d]: received %d values, expected %d", chanCap, recv.size(), ll);
                for (int v : recv.values()) {
                    check(v == pp, "chan[%d]: received %d values, expected %d", chanCap, v, pp);
                }
            }
        });
    }
}
