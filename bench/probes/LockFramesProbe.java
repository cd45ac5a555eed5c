package dev.gort.runtime;

import dev.gort.Go;

/**
 * A diagnostic, not part of the build: what the look at a goroutine's stack for JDK lock frames
 * costs ({@link LockFrames#scan()}: the screen of the frames' classes, then the full walk only
 * where the screen finds a suspect) against the full walk alone ({@link LockFrames#walk()}), in a
 * goroutine, at three depths, with and without a {@code Gosched} before each (after a switch the
 * goroutine's lower frames are still frozen in its stack chunk). In package
 * {@code dev.gort.runtime} for the package-private methods: compile it against the runtime's jar.
 *
 * <pre>
 * javac --add-exports java.base/jdk.internal.vm=ALL-UNNAMED -d /tmp/lfp -cp bench/target/benchmarks.jar \
 *     bench/probes/LockFramesProbe.java
 * $(./gort jdk)/bin/java --add-exports java.base/jdk.internal.vm=ALL-UNNAMED \
 *     --add-exports java.base/jdk.internal.misc=ALL-UNNAMED \
 *     --add-opens jdk.management/com.sun.management.internal=ALL-UNNAMED \
 *     -cp /tmp/lfp:bench/target/benchmarks.jar dev.gort.runtime.LockFramesProbe
 * </pre>
 *
 * <p>{@code --add-exports java.base/jdk.internal.misc} gives the scan its screen (the agent exports
 * it); the {@code --add-opens} lets the runtime add its compiler directive (the agent does that too),
 * without which a walk after a {@code Gosched} fails ({@code StackWalker} names the carrier the
 * goroutine left: {@code JitDirectives}).
 */
public class LockFramesProbe {
    static long sink;

    /** Mean ns per scan and per full walk, {@code depth} frames below the caller's. */
    static long[] measure(boolean yield, int depth) {
        if (depth > 0) {
            return measure(yield, depth - 1);
        }
        int n = 50_000;
        long scan = 0, walk = 0;
        for (int i = 0; i < n; i++) {
            if (yield) Go.gosched();
            long t0 = System.nanoTime();
            sink += LockFrames.scan();
            long t1 = System.nanoTime();
            if (yield) Go.gosched();
            long t2 = System.nanoTime();
            sink += LockFrames.walk();
            long t3 = System.nanoTime();
            scan += t1 - t0;
            walk += t3 - t2;
        }
        return new long[] {scan / n, walk / n};
    }

    public static void main(String[] a) throws Exception {
        System.out.println("lockframes=" + Preempt.lockFrameLook());
        Go.run(() -> {
            for (int r = 0; r < 3; r++) { // the first two warm up
                for (int d : new int[] {0, 10, 30}) {
                    for (boolean y : new boolean[] {false, true}) {
                        long[] t = measure(y, d);
                        if (r == 2) {
                            System.out.printf("depth+%d gosched=%s: scan %d ns, full walk %d ns%n", d, y, t[0], t[1]);
                        }
                    }
                }
            }
        });
    }
}
