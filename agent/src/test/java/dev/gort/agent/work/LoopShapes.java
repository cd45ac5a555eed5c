package dev.gort.agent.work;

import dev.gort.runtime.Scheduler;
import java.util.ArrayList;
import java.util.List;
import java.util.function.IntUnaryOperator;
import java.util.function.LongSupplier;

/**
 * Loop shapes whose results must not change under any preemption strategy. Each returns a checksum;
 * {@link #all()} runs them all. Loaded both plainly and through the instrumenting loader.
 */
public final class LoopShapes {
    static final long STATIC_INIT;

    static {
        long s = 0;
        for (int i = 0; i < 1000; i++) { // <clinit>: never instrumented
            s += i * 7L;
        }
        STATIC_INIT = s;
    }

    private final long built;

    public LoopShapes(int n) {
        long s = 0;
        int i = 0;
        while (i < n) { // a loop in a constructor
            s += i++;
        }
        built = s;
    }

    public static long nested(int n) {
        long s = 0;
        for (int i = 0; i < n; i++) {
            for (int j = 0; j < n; j++) {
                for (int k = 0; k < 4; k++) {
                    s += (long) i * j + k;
                }
            }
        }
        return s;
    }

    public static long labelled(int n) {
        long s = 0;
        outer:
        for (int i = 0; i < n; i++) {
            for (int j = 0; j < n; j++) {
                if (j == i) {
                    continue outer;
                }
                if (i * j > 3 * n) {
                    break outer;
                }
                s += i ^ j;
            }
        }
        return s;
    }

    public static long switchInLoop(int n) {
        long s = 0;
        for (int i = 0; i < n; i++) {
            switch (i % 5) {
                case 0 -> s += 1;
                case 1 -> s *= 3;
                case 2 -> s -= i;
                case 3 -> {
                    int k = 0;
                    do {
                        s += k;
                    } while (++k < 3);
                }
                default -> s ^= i;
            }
            switch (i & 1023) { // lookupswitch
                case 1, 100, 1000 -> s += 7;
                default -> {}
            }
        }
        return s;
    }

    public static long doWhile(int n) {
        long s = 0;
        int i = 0;
        do {
            s += i * 3L;
            i++;
        } while (i < n);
        return s;
    }

    public static long longCounted(long n) {
        long s = 0;
        for (long i = 0; i < n; i++) {
            s += i & 0xFF;
        }
        return s;
    }

    public static long tryFinallyInLoop(int n) {
        long s = 0;
        for (int i = 0; i < n; i++) {
            try {
                if (i % 7 == 0) {
                    continue;
                }
                if (i % 11 == 0) {
                    throw new IllegalStateException("x" + i);
                }
                s += i;
            } catch (IllegalStateException e) {
                s += e.getMessage().length();
            } finally {
                s++;
            }
        }
        return s;
    }

    public static long lambdas(int n) {
        IntUnaryOperator f = x -> {
            int r = 0;
            for (int i = 0; i < x; i++) {
                r += i;
            }
            return r;
        };
        LongSupplier g = () -> {
            long r = 0;
            int i = n;
            while (i-- > 0) {
                r += f.applyAsInt(i % 50);
            }
            return r;
        };
        return g.getAsLong();
    }

    public static long enhancedFor(int n) {
        int[] arr = new int[n];
        for (int i = 0; i < n; i++) {
            arr[i] = i * i;
        }
        List<Integer> list = new ArrayList<>();
        long s = 0;
        for (int v : arr) {
            s += v;
            if ((v & 3) == 0) {
                list.add(v);
            }
        }
        for (Integer v : list) {
            s -= v;
        }
        return s;
    }

    private final Object lock = new Object();
    private long counter;

    public long syncBlock(int n) {
        long s = 0;
        for (int i = 0; i < n; i++) {
            synchronized (lock) {
                for (int j = 0; j < 10; j++) {
                    counter += j;
                }
                s += counter;
            }
        }
        return s;
    }

    public synchronized long syncMethod(int n) {
        long s = 0;
        for (int i = 0; i < n; i++) {
            s += i % 13;
        }
        return s;
    }

    public synchronized long syncMethodThrows(int n) {
        long s = 0;
        for (int i = 0; i < n; i++) {
            s += i;
            if (i == n / 2) {
                throw new ArithmeticException("at " + i);
            }
        }
        return s;
    }

    public long syncBlockThrows(int n) {
        long s = 0;
        for (int r = 0; r < 5; r++) {
            try {
                synchronized (lock) {
                    for (int i = 0; i < n; i++) {
                        s += i;
                        if (i == r * 10) {
                            throw new IllegalArgumentException();
                        }
                    }
                }
            } catch (IllegalArgumentException e) {
                s += 1000;
            }
        }
        return s;
    }

    public static long infiniteWithBreak(int n) {
        long s = 0;
        int i = 0;
        while (true) {
            if (++i > n) {
                break;
            }
            s += i;
        }
        return s;
    }

    /**
     * Loops in the shape {@code StripMiner} rewrites, with what may go wrong around it: a limit
     * that depends on the outer index, a constant limit, continue/break/return inside, a catch
     * inside, a limit of Integer.MAX_VALUE reached by an early exit, a negative start, an empty
     * range, a call to a method of this class, and a {@code while} loop with its {@code i++} last.
     */
    public static long stripShapes(int n) {
        long s = 0;
        int[] a = new int[n];
        for (int i = 0; i < a.length; i++) {
            a[i] = i * 7 - n;
        }
        for (int i = 0; i < n; i++) {
            for (int j = 0; j < i; j++) { // triangular: the inner limit moves with the outer index
                s += a[j] ^ i;
            }
        }
        for (int i = 0; i < 5000; i++) { // constant limit
            if ((i & 7) == 3) {
                continue;
            }
            s = s * 31 + i;
        }
        for (int i = -n; i < n; i++) { // negative start, break out of the middle
            if (i == n / 2) {
                break;
            }
            s += mixer(i);
        }
        for (int i = Integer.MAX_VALUE - 3000; i < Integer.MAX_VALUE; i++) { // i + stride overflows an int
            s += i & 15;
            if (i == Integer.MAX_VALUE - 1) {
                break;
            }
        }
        for (int i = 5; i < 5; i++) {
            s += 1_000_000;
        }
        for (int i = 0; i < n; i++) { // a catch inside the body
            try {
                s += 100 / (i % 50);
            } catch (ArithmeticException e) {
                s -= 1;
            }
        }
        int i = 0;
        while (i < a.length) { // while with the increment last
            s += a[i] * 3L;
            i++;
        }
        int k = 0;
        while (k < n) { // two back-edges to one head: a continue after its own k++, and the last k++
            if ((k & 3) == 1) {
                s += 7;
                k++;
                continue;
            }
            s += k;
            k++;
        }
        return s + firstAbove(a, n * 3);
    }

    private static int mixer(int x) {
        x ^= x >>> 7;
        return x * 0x9E3779B1;
    }

    private static long firstAbove(int[] a, int bound) {
        for (int i = 0; i < a.length; i++) {
            if (a[i] > bound) {
                return i; // a return from inside a strip
            }
        }
        return -1;
    }

    /** Everything, in a fixed order; also reports the G's monitor depth at the end (must be 0). */
    public static long[] all(int scale) {
        LoopShapes o = new LoopShapes(scale);
        long thrown = 0;
        try {
            o.syncMethodThrows(scale);
        } catch (ArithmeticException e) {
            thrown = e.getMessage().hashCode();
        }
        long[] r = {
            STATIC_INIT,
            o.built,
            nested(scale / 10),
            labelled(scale / 10),
            switchInLoop(scale),
            doWhile(scale),
            longCounted(scale * 10L),
            tryFinallyInLoop(scale),
            lambdas(scale),
            enhancedFor(scale),
            o.syncBlock(scale),
            o.syncMethod(scale),
            thrown,
            o.syncBlockThrows(scale),
            infiniteWithBreak(scale),
            stripShapes(scale / 10),
            monitorDepth()
        };
        return r;
    }

    private static long monitorDepth() {
        var g = Scheduler.currentG();
        return g == null ? 0 : g.monitorDepth();
    }
}
