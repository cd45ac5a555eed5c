package dev.gort.examples;

import dev.gort.Chan;
import dev.gort.Go;
import dev.gort.Select;
import dev.gort.Time;
import dev.gort.context.CancelContext;
import dev.gort.context.Context;
import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Timeouts with {@code select} and {@code Time.after}: a call that takes 40 ms, awaited for 20 ms
 * (it times out) and then for 80 ms (its result arrives). The result channels are buffered, so the
 * goroutine that was given up on can still send and end: no leak. Then one deadline for a whole
 * series of steps: a context with a timeout, whose {@code done()} channel every select watches.
 *
 * <pre>
 * ./gort example Timeouts
 * </pre>
 *
 * <p>Go: gobyexample.com's "Timeouts", written anew (scaled from seconds to milliseconds)
 */
public final class Timeouts {
    private Timeouts() {}

    static final Args ARGS = Args.of("Timeouts");

    public static void main(String[] args) {
        run(System.out, args);
    }

    /**
     * What a simulated call does before it answers: the example sleeps; a test waits for events
     * instead, so that which side of a select wins does not depend on the wall clock.
     */
    interface Work {
        /**
         * Called by simulated call {@code n} (1: the one given up on, 2: the one awaited, 3 to 7:
         * the steps) before it answers; the example sleeps {@code ms}.
         */
        void await(int n, long ms);
    }

    /** The example's work: each call sleeps its time. */
    static final Work SLEEP = (n, ms) -> Time.sleep(ms * Time.MILLISECOND);

    /** Call {@code n}: answers after {@code work} on a buffered channel. */
    static Chan<String> slowCall(Work work, int n, String answer, long ms) {
        Chan<String> c = Chan.make(1); // c := make(chan string, 1)
        Go.go(() -> {
            work.await(n, ms);
            c.send(answer);
        });
        return c;
    }

    /** Prints and returns the lines. */
    public static List<String> run(PrintStream out, String... args) {
        ARGS.parse(args);
        return run(out, SLEEP, 20, 80, 35);
    }

    /**
     * The example with its waits (ms) as parameters: {@code wait1} for the first call,
     * {@code wait2} for the second, {@code deadline} for the series of steps.
     */
    static List<String> run(PrintStream out, Work work, long wait1, long wait2, long deadline) {
        List<String> lines = new ArrayList<>();
        Go.run(() -> {
            // select { case res := <-c1: ...; case <-time.After(20 * time.Millisecond): ... }
            Chan<String> c1 = slowCall(work, 1, "result 1", 40);
            Select.select(
                    Select.recv(c1, res -> lines.add(res)),
                    Select.recv(Time.after(wait1 * Time.MILLISECOND), () -> lines.add("timeout 1")));

            Chan<String> c2 = slowCall(work, 2, "result 2", 40);
            Select.select(
                    Select.recv(c2, res -> lines.add(res)),
                    Select.recv(Time.after(wait2 * Time.MILLISECOND), () -> lines.add("timeout 2")));

            // One deadline for a series of 10 ms steps, as a context: 5 steps do not fit in 35 ms.
            // ctx, cancel := context.WithTimeout(context.Background(), 35*time.Millisecond)
            CancelContext ctx = Context.withTimeout(Context.background(), Duration.ofMillis(deadline));
            int[] done = {0};
            boolean[] late = {false};
            for (int step = 1; step <= 5 && !late[0]; step++) {
                Chan<String> c = slowCall(work, 2 + step, "step " + step, 10);
                Select.select(Select.recv(c, res -> done[0]++), Select.recv(ctx.done(), () -> late[0] = true));
            }
            ctx.cancel(); // defer cancel()
            lines.add(late[0] ? ctx.err() + " after " + done[0] + " of 5 steps" : "all 5 steps done");
        });
        lines.forEach(out::println);
        return lines;
    }
}
