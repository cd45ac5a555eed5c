import jdk.internal.vm.Continuation;
import jdk.internal.vm.ContinuationScope;

/**
 * A diagnostic, not part of the build: what the frames between a continuation's loop and its yield
 * cost per switch on this JDK, and which part of them. Two raw continuations switch on one thread,
 * as in {@code SwitchFloor}, each in one of five shapes:
 *
 * <ul>
 *   <li>{@code thin}: the loop yields itself (one frame besides {@code yield0});
 *   <li>{@code fat}: the same with twelve {@code long}s live across the yield (about 96 bytes more
 *       in the one frame: compiled code keeps every live value in the frame across a call);
 *   <li>{@code ret3}: the yield two calls down, returned through after every yield (the shape of a
 *       goroutine parked in {@code for (v : ch)} whose receive is not inlined into its loop);
 *   <li>{@code stay3}: the yield two calls down, the loop in the deepest frame, nothing returned
 *       through (three frames frozen, as many as {@code ret3});
 *   <li>{@code ret5}: the yield four calls down, returned through.
 * </ul>
 *
 * Prints ns per switch (one {@code run} and the {@code yield} that ends it), four rounds. The calls
 * are kept out of line by the compile commands of the command below.
 *
 * <pre>
 * $(./gort jdk)/bin/java -XX:+UseG1GC -XX:CompileCommand=quiet \
 *     -XX:CompileCommand=dontinline,FrameReturnProbe::d* -XX:CompileCommand=dontinline,FrameReturnProbe::s* \
 *     --add-exports java.base/jdk.internal.vm=ALL-UNNAMED bench/probes/FrameReturnProbe.java
 * </pre>
 */
public class FrameReturnProbe {
    static final ContinuationScope S = new ContinuationScope("framereturn");
    static final int SWITCHES = 1 << 22;
    static volatile long sink;
    static long seed = 1;

    static void thin() {
        for (; ; ) {
            Continuation.yield(S);
        }
    }

    static void fat() {
        long a = seed, b = a * 3, c = b * 5, d = c * 7, e = d * 11, f = e * 13;
        long g = f * 17, h = g * 19, i = h * 23, j = i * 29, k = j * 31, l = k * 37;
        for (; ; ) {
            Continuation.yield(S);
            a++;
            b += a;
            c += b;
            d += c;
            e += d;
            f += e;
            g += f;
            h += g;
            i += h;
            j += i;
            k += j;
            l += k;
            if (l == 42) {
                sink = a + b + c + d + e + f + g + h + i + j + k + l;
            }
        }
    }

    static void d1() {
        Continuation.yield(S);
    }

    static void d2() {
        d1();
    }

    static void d3() {
        d2();
    }

    static void d4() {
        d3();
    }

    static void ret3() {
        for (; ; ) {
            d2();
        }
    }

    static void ret5() {
        for (; ; ) {
            d4();
        }
    }

    static void stay3() {
        s2();
    }

    static void s2() {
        s1();
    }

    static void s1() {
        for (; ; ) {
            Continuation.yield(S);
        }
    }

    static double time(Runnable body) {
        Continuation a = new Continuation(S, body);
        Continuation b = new Continuation(S, body);
        long t0 = System.nanoTime();
        for (int x = 0; x < SWITCHES; x += 2) {
            a.run();
            b.run();
        }
        return (System.nanoTime() - t0) / (double) SWITCHES;
    }

    public static void main(String[] args) {
        String[] names = {"thin", "fat", "ret3", "stay3", "ret5"};
        Runnable[] bodies = {
            FrameReturnProbe::thin,
            FrameReturnProbe::fat,
            FrameReturnProbe::ret3,
            FrameReturnProbe::stay3,
            FrameReturnProbe::ret5
        };
        for (int w = 0; w < 3; w++) {
            for (Runnable r : bodies) {
                time(r);
            }
        }
        for (int round = 1; round <= 4; round++) {
            StringBuilder sb = new StringBuilder("round " + round + ":");
            for (int i = 0; i < bodies.length; i++) {
                sb.append(String.format(" %s %.1f", names[i], time(bodies[i])));
            }
            System.out.println(sb);
        }
    }
}
