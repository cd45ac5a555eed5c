package dev.gort.runtime;

import java.util.ArrayList;
import java.util.List;

/**
 * Random order over all Ps in which each P is visited exactly once per enumeration: a random
 * start and a random stride coprime with the count.
 *
 * <p>Go: proc.go randomOrder, randomEnum
 */
final class StealOrder {
    private int count;
    private int[] coprimes = new int[0];

    /** Go: randomOrder.reset. Called on every procresize, under the world stop. */
    void reset(int count) {
        this.count = count;
        List<Integer> cp = new ArrayList<>();
        for (int i = 1; i <= count; i++) {
            if (gcd(i, count) == 1) {
                cp.add(i);
            }
        }
        int[] a = new int[cp.size()];
        for (int i = 0; i < a.length; i++) {
            a[i] = cp.get(i);
        }
        this.coprimes = a;
    }

    int count() {
        return count;
    }

    int[] coprimes() {
        return coprimes.clone();
    }

    /** Go: randomOrder.start. {@code r} is an unsigned random value. */
    Enum start(int r) {
        long ur = r & 0xFFFFFFFFL;
        int[] cps = coprimes;
        return new Enum(count, (int) (ur % count), cps[(int) ((ur / count) % cps.length)]);
    }

    /** Allocation-free variant for the scheduler loop: (pos, inc) packed into one long. */
    long startPacked(int r) {
        long ur = r & 0xFFFFFFFFL;
        int[] cps = coprimes;
        int pos = (int) (ur % count);
        int inc = cps[(int) ((ur / count) % cps.length)];
        return ((long) pos << 32) | (inc & 0xFFFFFFFFL);
    }

    private static int gcd(int a, int b) {
        while (b != 0) {
            int t = a % b;
            a = b;
            b = t;
        }
        return a;
    }

    /** Go: randomEnum. */
    static final class Enum {
        private int i;
        private final int count;
        private int pos;
        private final int inc;

        Enum(int count, int pos, int inc) {
            this.count = count;
            this.pos = pos;
            this.inc = inc;
        }

        boolean done() {
            return i == count;
        }

        void next() {
            i++;
            pos = (pos + inc) % count;
        }

        int position() {
            return pos;
        }

        int inc() {
            return inc;
        }
    }
}
