package dev.gort.agent.work;

/** Loops of known body sizes, for the placement of size-aware strategies (LoopLength). */
public final class LoopSizes {
    private LoopSizes() {}

    /** A short call-free counted loop (a handful of instructions). */
    public static long shortLoop(int n) {
        long s = 0;
        for (int i = 0; i < n; i++) {
            s += i;
        }
        return s;
    }

    /** A short call-free loop that is not counted (a while on a long). */
    public static long shortWhile(long n) {
        long s = 0;
        while (n > 0) {
            s ^= n--;
        }
        return s;
    }

    /** A call-free loop with a long body (well over 24 instructions). */
    public static long longLoop(int n) {
        long a = 1;
        long b = 2;
        long c = 3;
        for (int i = 0; i < n; i++) {
            a = a * 31 + (b ^ i);
            b = b * 17 + (c ^ (i >>> 1));
            c = c * 13 + (a ^ (i >>> 2));
            a ^= b >>> 7;
            b ^= c << 3;
            c ^= a >>> 11;
        }
        return a + b + c;
    }

    /** No loop, one call: a caller (entry poll under looplen and backedge). */
    public static long caller(int n) {
        return shortLoop(n) + 1;
    }

    /** Recursion without loops. */
    public static long fib(int n) {
        return n < 2 ? n : fib(n - 1) + fib(n - 2);
    }

    /** Every method's result. */
    public static long[] all(int n) {
        return new long[] {shortLoop(n), shortWhile(n), longLoop(n), caller(n), fib(Math.min(n, 20))};
    }
}
