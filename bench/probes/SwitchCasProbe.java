import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import jdk.internal.vm.Continuation;
import jdk.internal.vm.ContinuationScope;

/**
 * A diagnostic, not part of the build: the JDK's continuation switch ({@code SwitchFloor} with one
 * frame) with {@code k} atomic compare-and-sets per switch on distinct objects, as a hand-off by
 * Go's rules makes them (gort's form, a release store for each unlock): 7 for a wake of a parked
 * goroutine through an unbuffered channel (the channel lock of the send and of the receive, three
 * status CASes, runnext's put and take), 4 for a Gosched (two status CASes, the global queue's lock
 * at the put and at the get). Two of them run in the driver between the runs (schedule's runnext
 * take and execute's status CAS), the rest in the continuation before it yields. Prints ns per
 * switch for k = 0, 4, 7, interleaved, {@code rounds} times: what the switches and the atomics
 * alone cost, with nothing else of a scheduler. A second argument, {@code frames} (default 1, as
 * {@code SwitchFloor}'s), puts the yield {@code frames - 1} calls down, returned through after each
 * yield (kept out of line by the compile command below; {@code FrameReturnProbe} shows that it is
 * the return through a frozen frame that costs, not the frame's bytes).
 *
 * <pre>
 * $(./gort jdk)/bin/java -XX:+UseG1GC --add-exports java.base/jdk.internal.vm=ALL-UNNAMED \
 *     -XX:CompileCommand=quiet -XX:CompileCommand=dontinline,SwitchCasProbe::down \
 *     bench/probes/SwitchCasProbe.java 5 [frames]
 * </pre>
 */
public class SwitchCasProbe {
    static final ContinuationScope SCOPE = new ContinuationScope("switchcas");
    static final int SWITCHES = 1 << 22;

    static final class Word {
        volatile int v;
    }

    static final VarHandle V;

    static {
        try {
            V = MethodHandles.lookup().findVarHandle(Word.class, "v", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    static void flip(Word w) {
        int x = w.v;
        if (!V.compareAndSet(w, x, x ^ 1)) {
            throw new IllegalStateException("one writer: the CAS cannot fail");
        }
    }

    static Word[] words(int n) {
        Word[] w = new Word[n];
        for (int i = 0; i < n; i++) {
            w[i] = new Word();
        }
        return w;
    }

    /** Compiled frames frozen besides yield0, as SwitchFloor's {@code frames}: 1 or more. */
    static int frames = 1;

    static void body(Word[] w, int depth) {
        for (; ; ) {
            for (Word x : w) {
                flip(x);
            }
            if (depth == 0) {
                Continuation.yield(SCOPE);
            } else {
                down(depth - 1);
            }
        }
    }

    /** One frame per call (kept out of line by the command's CompileCommand), then the yield. */
    static void down(int depth) {
        if (depth == 0) {
            Continuation.yield(SCOPE);
        } else {
            down(depth - 1);
        }
    }

    /** ns per switch of {@code SWITCHES} switches with {@code k} CASes each. */
    static double time(int k) {
        int inDriver = Math.min(k, 2);
        Word[] d = words(inDriver);
        Word[] wa = words(k - inDriver);
        Word[] wb = words(k - inDriver);
        int depth = frames - 1;
        Continuation a = new Continuation(SCOPE, () -> body(wa, depth));
        Continuation b = new Continuation(SCOPE, () -> body(wb, depth));
        long t0 = System.nanoTime();
        for (int i = 0; i < SWITCHES; i += 2) {
            a.run();
            for (Word w : d) {
                flip(w);
            }
            b.run();
            for (Word w : d) {
                flip(w);
            }
        }
        return (System.nanoTime() - t0) / (double) SWITCHES;
    }

    public static void main(String[] args) {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 5;
        frames = args.length > 1 ? Integer.parseInt(args[1]) : 1;
        int[] ks = {0, 4, 7};
        for (int k : ks) {
            time(k); // warm-up
        }
        for (int r = 1; r <= rounds; r++) {
            StringBuilder sb = new StringBuilder("round " + r + ":");
            for (int k : ks) {
                sb.append(String.format(" k=%d %.1f ns", k, time(k)));
            }
            System.out.println(sb);
        }
    }
}
