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
    public record Result(int n, boolean sorted, boolean sameAsArraysSort, int goroutines, long parallelNanos, long sequentialNanos, int gomaxprocs) {}

    public static void main(String[] args) {
        run(System.out, args);
    }

    public static Result run(PrintStream out, String... args) {
        int n = args.length > 0 ? Integer.parseInt(args[0]) : 2_000_000;
        int cutoff = args.length > 1 ? Integer.parseInt(args[1]) : 8192;
        int[] data = new SplittableRandom(42).ints(n).toArray();
        int[] expected = data.clone();
        long s0 = System.nanoTime();
        Arrays.sort(expected);
        long seq = System.nanoTime() - s0;
        Result[] res = new Result[1];
        Go.run(() -> {
            int[] a = data.clone();
            int[] tmp = new int[n];
            AtomicInteger spawned = new AtomicInteger();
            long t0 = System.nanoTime();
            sort(a, tmp, 0, n, cutoff, spawned);
            long par = System.nanoTime() - t0;
            boolean sorted = true;
            for (int i = 1; i < n; i++) {
                if (a[i - 1] > a[i]) {
                    sorted = false;
                    break;
                }
            }
            res[0] = new Result(n, sorted, Arrays.equals(a, expected), spawned.get(), par, seq, Go.gomaxprocs());
        });
        Result r = res[0];
        out.printf("sorted %,d ints with %d goroutines on GOMAXPROCS=%d: %s%n", r.n(), r.goroutines(), r.gomaxprocs(),
                r.sorted() && r.sameAsArraysSort() ? "ok (same as Arrays.sort)" : "WRONG");
        out.printf("parallel merge sort %.1f ms; sequential Arrays.sort %.1f ms%n", r.parallelNanos() / 1e6, r.sequentialNanos() / 1e6);
        return r;
    }

    /** Sorts a[lo, hi) using tmp[lo, hi) as scratch. */
    static void sort(int[] a, int[] tmp, int lo, int hi, int cutoff, AtomicInteger spawned) {
        if (hi - lo <= cutoff) {
            Arrays.sort(a, lo, hi);
            return;
        }
        int mid = (lo + hi) >>> 1;
        Chan<Boolean> done = Chan.make(1);
        spawned.incrementAndGet();
        Go.go(() -> {                                  // go sort(left half)
            sort(a, tmp, lo, mid, cutoff, spawned);
            done.send(true);
        });
        sort(a, tmp, mid, hi, cutoff, spawned);        // the right half here
        done.recv();                                   // join
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
