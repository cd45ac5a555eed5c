package dev.gort.bench;

/**
 * The CPU-bound kernels of the preemption-overhead benchmark, as seen by the benchmark. The one
 * implementation ({@link dev.gort.bench.kernels.Kernels}) is loaded once per strategy through
 * {@link StrategyLoader}, so each strategy runs its own copy of the same bytecode.
 */
public interface KernelApi {
    /** Sum of an int array: a counted loop that C2 vectorises when nothing stops it. */
    long arraySum(int[] a);

    /** Two nested counted loops over a scalar dependency chain. */
    long nested(int n);

    /** A loop calling a small method (inlined by C2) on every element. */
    long callLoop(int[] a);

    /** callLoop until {@code deadline} (nanoTime): a hog for the latency benchmark. */
    long hogUntil(int[] a, long deadline);
}
