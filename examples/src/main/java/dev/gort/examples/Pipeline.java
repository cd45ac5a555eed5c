package dev.gort.examples;

import dev.gort.Chan;
import dev.gort.Go;
import dev.gort.Select;
import dev.gort.context.CancelContext;
import dev.gort.context.Context;
import dev.gort.sync.WaitGroup;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A pipeline with fan-out, fan-in and cancellation, as in the Go blog's "Pipelines and
 * cancellation": {@code gen} emits numbers, N {@code sq} workers square them (fan-out: they all read
 * one channel), {@code merge} funnels their outputs into one channel (fan-in), and {@code main}
 * takes only the first K results, then cancels the context. Every stage sends inside a
 * {@code select} that also watches {@code ctx.done()}, so all of them return instead of blocking
 * forever on a send nobody will receive: no goroutine leaks.
 *
 * <pre>
 * ./gort example Pipeline [numbers] [workers] [take]     # default 1000 numbers, 4 workers, take 10
 * </pre>
 */
public final class Pipeline {
    private Pipeline() {}

    /** What a run did. */
    public record Result(List<Integer> taken, int stagesStarted, int stagesStopped, int goroutinesLeft, String err) {}

    // each square must fit an int: 46340^2 does, 46341^2 does not
    static final Args ARGS = Args.of("Pipeline")
            .arg("numbers", "numbers to square", 1000, 1, 46_340)
            .arg("workers", "squaring goroutines", 4, 1, 10_000)
            .arg("take", "results to take before cancelling", 10, 1, 46_340);

    public static void main(String[] args) {
        run(System.out, args);
    }

    public static Result run(PrintStream out, String... args) {
        int[] argv = ARGS.parse(args);
        int numbers = argv[0];
        int workers = argv[1];
        int take = argv[2];
        Result[] res = new Result[1];
        Go.run(() -> {
            CancelContext ctx = Context.withCancel(Context.background());
            AtomicInteger started = new AtomicInteger();
            AtomicInteger stopped = new AtomicInteger();
            WaitGroup all = new WaitGroup();

            Chan<Integer> in = gen(ctx, numbers, all, started, stopped);
            List<Chan<Integer>> outs = new ArrayList<>();
            for (int w = 0; w < workers; w++) {
                outs.add(sq(ctx, in, all, started, stopped)); // fan-out: every sq reads `in`
            }
            Chan<Integer> merged = merge(ctx, outs, all, started, stopped); // fan-in

            List<Integer> taken = new ArrayList<>();
            for (int i = 0; i < take; i++) {
                Chan.Received<Integer> r = merged.recv2();
                if (!r.ok()) {
                    break;
                }
                taken.add(r.value());
            }
            ctx.cancel(); // tell every stage to stop: done() is closed
            all.await(); // ... and wait until they all have
            // Done() runs just before a stage's goroutine ends: let the last ones finish exiting.
            for (int i = 0; i < 10_000 && Go.numGoroutine() > 1; i++) {
                Go.gosched();
            }
            res[0] = new Result(taken, started.get(), stopped.get(), Go.numGoroutine(), String.valueOf(ctx.err()));
        });
        Result r = res[0];
        out.printf(
                "took the first %d of %d squares from %d workers: %s%n",
                r.taken().size(), numbers, workers, r.taken());
        out.printf(
                "then cancelled (%s): %d of %d pipeline goroutines returned%n",
                r.err(), r.stagesStopped(), r.stagesStarted());
        out.printf("goroutines left: %d (main)%n", r.goroutinesLeft());
        return r;
    }

    /** Emits 1..n on the returned channel, until done. */
    static Chan<Integer> gen(Context ctx, int n, WaitGroup all, AtomicInteger started, AtomicInteger stopped) {
        Chan<Integer> out = Chan.make();
        stage(all, started, stopped, () -> {
            try {
                for (int i = 1; i <= n; i++) {
                    if (!sendOrDone(ctx, out, i)) {
                        return;
                    }
                }
            } finally {
                out.close();
            }
        });
        return out;
    }

    /** Squares what arrives on in, until in is closed or done. */
    static Chan<Integer> sq(
            Context ctx, Chan<Integer> in, WaitGroup all, AtomicInteger started, AtomicInteger stopped) {
        Chan<Integer> out = Chan.make();
        stage(all, started, stopped, () -> {
            try {
                for (int v : in) {
                    if (!sendOrDone(ctx, out, v * v)) {
                        return;
                    }
                }
            } finally {
                out.close();
            }
        });
        return out;
    }

    /** Copies every input channel to one output channel, closed when all inputs are. */
    static Chan<Integer> merge(
            Context ctx, List<Chan<Integer>> ins, WaitGroup all, AtomicInteger started, AtomicInteger stopped) {
        Chan<Integer> out = Chan.make();
        WaitGroup wg = new WaitGroup();
        for (Chan<Integer> c : ins) {
            wg.add(1);
            stage(all, started, stopped, () -> {
                try {
                    for (int v : c) {
                        if (!sendOrDone(ctx, out, v)) {
                            return;
                        }
                    }
                } finally {
                    wg.done();
                }
            });
        }
        stage(all, started, stopped, () -> {
            wg.await();
            out.close();
        });
        return out;
    }

    /** {@code select { case out <- v: return true; case <-ctx.Done(): return false }}. */
    static boolean sendOrDone(Context ctx, Chan<Integer> out, int v) {
        boolean[] sent = new boolean[1];
        Select.select(Select.send(out, v, () -> sent[0] = true), Select.recv(ctx.done(), () -> sent[0] = false));
        return sent[0];
    }

    /** {@code go f()}, counted. */
    static void stage(WaitGroup all, AtomicInteger started, AtomicInteger stopped, Runnable f) {
        started.incrementAndGet();
        all.go(() -> {
            try {
                f.run();
            } finally {
                stopped.incrementAndGet();
            }
        });
    }
}
