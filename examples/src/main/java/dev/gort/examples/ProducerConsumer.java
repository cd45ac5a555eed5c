package dev.gort.examples;

import dev.gort.Chan;
import dev.gort.Go;
import dev.gort.sync.WaitGroup;
import java.io.PrintStream;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Producers and consumers on a buffered channel: P producers each send M items into a channel of
 * capacity C; a closer goroutine closes the channel once every producer is done (WaitGroup); K
 * consumers {@code range} over the channel until it is closed and drained, and report their
 * partial sums on a results channel. A full buffer blocks the producers (back-pressure), an empty
 * one blocks the consumers; nothing is lost or duplicated.
 *
 * <pre>
 * ./gort example ProducerConsumer [producers] [items each] [consumers] [capacity]   # default 3 20 2 8
 * </pre>
 */
public final class ProducerConsumer {
    private ProducerConsumer() {}

    /** What a run produced and consumed. */
    public record Result(
            int produced, int consumed, long sum, long expectedSum, int[] perConsumer, int peakLen, int capacity) {}

    static final Args ARGS = Args.of("ProducerConsumer")
            .arg("producers", "producer goroutines", 3, 1, 1000)
            .arg("items", "items each producer sends", 20, 1, 1_000_000)
            .arg("consumers", "consumer goroutines", 2, 1, 1000)
            .arg("capacity", "the channel's buffer (0: unbuffered)", 8, 0, 1_000_000);

    public static void main(String[] args) {
        run(System.out, args);
    }

    public static Result run(PrintStream out, String... args) {
        int[] argv = ARGS.parse(args);
        int producers = argv[0];
        int items = argv[1];
        int consumers = argv[2];
        int capacity = argv[3];
        Result[] res = new Result[1];
        Go.run(() -> {
            Chan<Integer> queue = Chan.make(capacity); // queue := make(chan int, capacity)
            Chan<long[]> results = Chan.make(consumers);
            AtomicInteger produced = new AtomicInteger();
            AtomicInteger peak = new AtomicInteger();
            WaitGroup wg = new WaitGroup();
            for (int p = 0; p < producers; p++) {
                int id = p;
                wg.add(1);
                Go.go(
                        () -> { // go producer(id)
                            try {
                                for (int i = 1; i <= items; i++) {
                                    queue.send(id * 1000 + i); // blocks while the buffer is full
                                    produced.incrementAndGet();
                                    peak.accumulateAndGet(queue.len(), Math::max);
                                }
                            } finally {
                                wg.done();
                            }
                        });
            }
            Go.go(
                    () -> { // close once every producer is done
                        wg.await();
                        queue.close();
                    });
            for (int c = 0; c < consumers; c++) {
                int id = c;
                Go.go(() -> {
                    long sum = 0;
                    long n = 0;
                    for (int v : queue) { // for v := range queue
                        sum += v;
                        n++;
                    }
                    results.send(new long[] {id, n, sum});
                });
            }
            int[] per = new int[consumers];
            long sum = 0;
            int consumed = 0;
            for (int c = 0; c < consumers; c++) {
                long[] r = results.recv();
                per[(int) r[0]] = (int) r[1];
                consumed += (int) r[1];
                sum += r[2];
            }
            long expected = 0;
            for (int p = 0; p < producers; p++) {
                for (int i = 1; i <= items; i++) {
                    expected += p * 1000L + i;
                }
            }
            res[0] = new Result(produced.get(), consumed, sum, expected, per, peak.get(), capacity);
        });
        Result r = res[0];
        out.printf(
                "%d producers x %d items -> channel of capacity %d -> %d consumers%n",
                producers, items, capacity, consumers);
        out.printf(
                "produced %d, consumed %d (per consumer: %s)%n",
                r.produced(), r.consumed(), java.util.Arrays.toString(r.perConsumer()));
        out.printf(
                "sum %d (expected %d): %s%n",
                r.sum(), r.expectedSum(), r.sum() == r.expectedSum() ? "nothing lost, nothing duplicated" : "MISMATCH");
        out.printf("largest buffer length seen by a producer: %d (capacity %d)%n", r.peakLen(), r.capacity());
        return r;
    }
}
