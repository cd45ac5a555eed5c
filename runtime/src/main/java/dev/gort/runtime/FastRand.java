package dev.gort.runtime;

/**
 * A per-M wyrand generator (Go's {@code cheaprand}): cheap, unsynchronised, good enough for steal
 * order and select's poll order. Each M owns one; never share an instance between threads.
 *
 * <p>Go: rand.go cheaprand, cheaprandn
 */
class FastRand {
    private long state; // owner thread only, plain

    FastRand(long seed) {
        this.state = seed == 0 ? 0x9E3779B97F4A7C15L : seed;
    }

    /** Go: cheaprand. */
    int next() {
        state += 0xa0761d6478bd642fL;
        long x = state ^ 0xe7037ed1a0b428dbL;
        long hi = Math.multiplyHigh(state, x);
        long lo = state * x;
        return (int) (hi ^ lo);
    }

    /**
     * The random rank of a synctest bubble's timer entering the bubble's heap, which orders timers
     * due at the same instant. Go: maybeAdd's {@code t.rand = cheaprand()}.
     */
    int timerOrder() {
        return next();
    }

    /** A uniform value in [0, n). Go: cheaprandn (Lemire's multiply-shift). */
    int nextn(int n) {
        return scale(next(), n);
    }

    /** r, a uniform 32-bit value, scaled to [0, n). */
    static int scale(int r, int n) {
        return (int) (((r & 0xFFFFFFFFL) * (n & 0xFFFFFFFFL)) >>> 32);
    }
}
