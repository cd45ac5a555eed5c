package dev.gort.examples;

import dev.gort.Chan;
import dev.gort.Go;
import java.io.PrintStream;
import java.util.Arrays;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A parallel merge sort, fork-join with goroutines: each call sorts the right half itself and the
 * left half in a new goroutine ({@code go}), waits for it on a channel, then merges. Below a cut-off
 * the halves are sorted sequentially. The goroutines spread over the Ps by work stealing: a P that
 * runs out of work takes half of a busy P's run queue.
 *
 * <pre>
 * ./gort example MergeSort [n] [cutoff]     # default 2000000 ints, cut-off 8192
 * </pre>
 */
public final class MergeSort {
    private MergeSort() {}

    /** What a run did. */
    public record Result(
            int n,
            boolean sorted,
            boolean sameAsArraysSort,
            int goroutines,
            long parallelNanos,
            long sequentialNanos,
            int gomaxprocs) {}

    // n: the ints are held six times over (data, expected, the copies and their buffers)
    static final Args ARGS = Args.of("MergeSort")
            .arg("n", "ints to sort", 2_000_000, 1, 20_000_000)
            .arg("cutoff", "the longest range sorted without splitting it", 8192, 1, Integer.MAX_VALUE);

    public static void main(String[] args) {
        run(System.out, args);
    }

    public static Result run(PrintStream out, String... args) {
        int[] argv = ARGS.parse(args);
        int n = argv[0];
        int cutoff = argv[1];
        int[] data = new SplittableRandom(42).ints(n).toArray();
        int[] expected = data.clone();
        Arrays.sort(expected);
        Result[] res = new Result[1];
        Go.run(() -> {
            // Warm up both ways once (the JIT compiles sort and merge), then time each on a fresh copy.
            sort(data.clone(), new int[n], 0, n, cutoff, new AtomicInteger(), true);
            sort(data.clone(), new int[n], 0, n, cutoff, new AtomicInteger(), false);
            int[] s = data.clone();
            long t0 = System.nanoTime();
            sort(s, new int[n], 0, n, cutoff, new AtomicInteger(), false);
            long seq = System.nanoTime() - t0;
            int[] a = data.clone();
            AtomicInteger spawned = new AtomicInteger();
            long t1 = System.nanoTime();
            sort(a, new int[n], 0, n, cutoff, spawned, true);
            long par = System.nanoTime() - t1;
            boolean sorted = true;
            for (int i = 1; i < n; i++) {
                if (a[i - 1] > a[i]) {
                    sorted = false;
                    break;
                }
            }
            res[0] = new Result(
                    n,
                    sorted,
                    Arrays.equals(a, expected) && Arrays.equals(s, expected),
                    spawned.get(),
                    par,
                    seq,
                    Go.gomaxprocs());
        });
        Result r = res[0];
        out.printf(
                "sorted %,d ints with %d goroutines on GOMAXPROCS=%d: %s%n",
                r.n(),
                r.goroutines(),
                r.gomaxprocs(),
                r.sorted() && r.sameAsArraysSort() ? "ok (same as Arrays.sort)" : "WRONG");
        out.printf(
                "fork-join merge sort %.1f ms; the same merge sort in one goroutine %.1f ms (x%.2f)%n",
                r.parallelNanos() / 1e6, r.sequentialNanos() / 1e6, (double) r.sequentialNanos() / r.parallelNanos());
        return r;
    }

    /** Sorts a[lo, hi) using tmp[lo, hi) as scratch; forks the left half into a goroutine if {@code fork}. */
    static void sort(int[] a, int[] tmp, int lo, int hi, int cutoff, AtomicInteger spawned, boolean fork) {
        if (hi - lo <= cutoff) {
            Arrays.sort(a, lo, hi);
            return;
        }
        int mid = (lo + hi) >>> 1;
        if (!fork) {
            sort(a, tmp, lo, mid, cutoff, spawned, false);
            sort(a, tmp, mid, hi, cutoff, spawned, false);
            merge(a, tmp, lo, mid, hi);
            return;
        }
        Chan<Boolean> done = Chan.make(1);
        spawned.incrementAndGet();
        Go.go(
                () -> { // go sort(left half)
                    sort(a, tmp, lo, mid, cutoff, spawned, true);
                    done.send(true);
                });
        sort(a, tmp, mid, hi, cutoff, spawned, true); // the right half here
        done.recv(); // join
        merge(a, tmp, lo, mid, hi);
    }

    static void merge(int[] a, int[] tmp, int lo, int mid, int hi) {
        System.arraycopy(a, lo, tmp, lo, hi - lo);
        int i = lo;
        int j = mid;
        for (int k = lo; k < hi; k++) {
            if (i < mid && (j >= hi || tmp[i] <= tmp[j])) {
                a[k] = tmp[i++];
            } else {
                a[k] = tmp[j++];
            }
        }
    }
}
