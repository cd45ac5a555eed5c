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
                default -> { }
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
            STATIC_INIT, o.built, nested(scale / 10), labelled(scale / 10), switchInLoop(scale), doWhile(scale),
            longCounted(scale * 10L), tryFinallyInLoop(scale), lambdas(scale), enhancedFor(scale),
            o.syncBlock(scale), o.syncMethod(scale), thrown, o.syncBlockThrows(scale), infiniteWithBreak(scale),
            monitorDepth()
        };
        return r;
    }

    private static long monitorDepth() {
        var g = Scheduler.currentG();
        return g == null ? 0 : g.monitorDepth;
    }
}
