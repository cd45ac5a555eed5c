package dev.gort;

import static dev.gort.GortTesting.check;

import dev.gort.sync.Mutex;
import dev.gort.sync.WaitGroup;
import java.time.Duration;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicLongArray;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Whole-runtime stress (jox style): many goroutines over channels of random capacities, plain
 * operations, selects and closes mixed, counting every value so that a duplicate or a loss fails
 * the test; plus Go's TestSelectStress and the full-size TestMultiConsumer. Tagged "stress"
 * (excluded by default: {@code -Dgort.groups.excluded=} runs it); scaled by
 * {@code -Dgort.stress.multiplier} (default 1); each run is bounded by a timeout.
 */
@Tag("stress")
class ChannelStressTest {
    static final int MULT = Integer.getInteger("gort.stress.multiplier", 1);

    /**
     * P producers and Q consumers per channel over K channels of random capacity; producers send
     * unique ids with plain sends or 2-case selects, consumers receive with range or selects; every
     * id must be received exactly once.
     */
    @ParameterizedTest
    @ValueSource(ints = {1, 2, 4})
    void noLossNoDuplicate(int procs) {
        final int channels = 8;
        final int producers = 4;
        final int consumers = 3;
        final int perProducer = 5_000 * MULT;
        final int total = channels * producers * perProducer;
        AtomicLongArray seen = new AtomicLongArray(total);
        GortTesting.run(procs, Duration.ofMinutes(5), () -> {
            SplittableRandom rnd = new SplittableRandom(42 + procs);
            WaitGroup consumed = new WaitGroup();
            for (int k = 0; k < channels; k++) {
                int cap = rnd.nextInt(3) == 0 ? 0 : rnd.nextInt(1, 64);
                Chan<Integer> c = Chan.make(cap);
                // second cases for the selects, never ready: nobody receives from sendSide, nobody sends on recvSide
                Chan<Integer> sendSide = Chan.make();
                Chan<Integer> recvSide = Chan.make();
                WaitGroup produced = new WaitGroup();
                for (int p = 0; p < producers; p++) {
                    int base = (k * producers + p) * perProducer;
                    boolean useSelect = p % 2 == 1;
                    produced.go(() -> {
                        Select s = new Select();
                        int sc = s.addSend(c, null);
                        s.addSend(sendSide, -1);
                        for (int i = 0; i < perProducer; i++) {
                            if (useSelect) {
                                s.setValue(sc, base + i);
                                check(s.await() == sc, "side channel chosen");
                            } else {
                                c.send(base + i);
                            }
                        }
                    });
                }
                for (int q = 0; q < consumers; q++) {
                    boolean useSelect = q % 2 == 0;
                    consumed.go(() -> {
                        if (useSelect) {
                            Select s = new Select();
                            int rc = s.addRecv(c);
                            s.addRecv(recvSide);
                            for (; ; ) {
                                check(s.await() == rc, "side channel chosen");
                                if (!s.ok()) {
                                    return;
                                }
                                int v = s.<Integer>value();
                                check(seen.getAndIncrement(v) == 0, "duplicate %d", v);
                            }
                        }
                        for (int v : c) {
                            check(seen.getAndIncrement(v) == 0, "duplicate %d", v);
                        }
                    });
                }
                Go.go(() -> {
                    produced.await();
                    c.close();
                });
            }
            consumed.await();
        });
        for (int i = 0; i < total; i++) {
            check(seen.get(i) == 1, "value %d seen %d times", i, seen.get(i));
        }
    }

    /**
     * Go's TestSelectStress: 4 goroutines send N on each of 4 channels (2 unbuffered, caps 2 and
     * 3), 4 receive N from each, one sends N on each in a single select, one receives N from each
     * in a single select (disabling a case with a nil channel when done). Must not deadlock.
     */
    @ParameterizedTest
    @ValueSource(ints = {1, 2, 4})
    void selectStress(int procs) {
        final int n = 100_000 * MULT;
        GortTesting.run(procs, Duration.ofMinutes(5), () -> {
            @SuppressWarnings("unchecked")
            Chan<Integer>[] c = new Chan[] {Chan.make(), Chan.make(), Chan.make(2), Chan.make(3)};
            WaitGroup wg = new WaitGroup();
            for (int k = 0; k < 4; k++) {
                Chan<Integer> ck = c[k];
                wg.go(() -> {
                    for (int i = 0; i < n; i++) {
                        ck.send(0);
                    }
                });
                wg.go(() -> {
                    for (int i = 0; i < n; i++) {
                        ck.recv();
                    }
                });
            }
            wg.go(() -> {
                int[] cnt = new int[4];
                Select s = new Select();
                int[] idx = {s.addSend(c[3], 0), s.addSend(c[2], 0), s.addSend(c[0], 0), s.addSend(c[1], 0)};
                int[] which = {3, 2, 0, 1};
                for (int i = 0; i < 4 * n; i++) {
                    int k = s.await();
                    int ch = which[k];
                    if (++cnt[ch] == n) {
                        s.setChan(idx[k], null);
                    }
                }
            });
            wg.go(() -> {
                int[] cnt = new int[4];
                Select s = new Select();
                for (int k = 0; k < 4; k++) {
                    s.addRecv(c[k]);
                }
                for (int i = 0; i < 4 * n; i++) {
                    int k = s.await();
                    if (++cnt[k] == n) {
                        s.setChan(k, null);
                    }
                }
            });
            wg.await();
        });
    }

    /** TestMultiConsumer at its full size. */
    @ParameterizedTest
    @ValueSource(ints = {1, 2, 4})
    void multiConsumerFull(int procs) {
        for (int i = 0; i < MULT; i++) {
            GoChanTest.multiConsumer(procs, 271_828);
        }
    }

    /** Mutex under heavy contention: starvation mode kicks in and out; the count stays exact. */
    @ParameterizedTest
    @ValueSource(ints = {1, 2, 4})
    void mutexCounter(int procs) {
        final int gs = 16;
        final int iters = 20_000 * MULT;
        long[] counter = new long[1];
        GortTesting.run(procs, Duration.ofMinutes(5), () -> {
            Mutex m = new Mutex();
            WaitGroup wg = new WaitGroup();
            for (int g = 0; g < gs; g++) {
                wg.go(() -> {
                    for (int i = 0; i < iters; i++) {
                        m.lock();
                        counter[0]++;
                        if (i % 97 == 0) {
                            Go.gosched(); // hold it across a yield sometimes: waiters queue up
                        }
                        m.unlock();
                    }
                });
            }
            wg.await();
        });
        check(counter[0] == (long) gs * iters, "counter %d", counter[0]);
    }
}
