package dev.gort.bench.kernels;

import dev.gort.bench.KernelApi;

/**
 * The benchmark kernels. Never instrumented by the agent's package filter (dev/gort/ is gort's
 * own); {@link dev.gort.bench.StrategyLoader} rewrites a private copy per strategy.
 */
public final class Kernels implements KernelApi {
    @Override
    public long arraySum(int[] a) {
        long s = 0;
        for (int i = 0; i < a.length; i++) {
            s += a[i];
        }
        return s;
    }

    @Override
    public long nested(int n) {
        long s = 1;
        for (int i = 0; i < n; i++) {
            for (int j = 0; j < n; j++) {
                s = s * 31 + (i ^ j);
            }
        }
        return s;
    }

    @Override
    public long callLoop(int[] a) {
        long s = 0;
        for (int i = 0; i < a.length; i++) {
            s += mix(a[i]);
        }
        return s;
    }

    private static int mix(int x) {
        x ^= x >>> 7;
        return x * 0x9E3779B1;
    }

    @Override
    public long hogUntil(int[] a, long deadline) {
        long s = 0;
        do {
            s += callLoop(a);
        } while (System.nanoTime() < deadline);
        return s;
    }
}
