package dev.gort.examples;

import dev.gort.Chan;
import dev.gort.Go;
import dev.gort.Time;
import dev.gort.sync.WaitGroup;
import java.io.PrintStream;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A bounded worker pool: W worker goroutines take jobs from a buffered {@code jobs} channel and send
 * results to a {@code results} channel. At most W jobs are in progress at any time, however many
 * jobs there are; closing {@code jobs} ends the workers' {@code range} loops.
 *
 * <pre>
 * ./gort example WorkerPool [workers] [jobs] [job-ms]     # default 3 workers, 9 jobs of 10 ms
 * </pre>
 *
 * <p>Go: gobyexample.com's "Worker Pools", written anew
 */
public final class WorkerPool {
    private WorkerPool() {}

    /** What a run did: job number to its result and the worker that ran it, the peak concurrency. */
    public record Result(
            Map<Integer, Integer> results,
            Map<Integer, Integer> ranBy,
            int workers,
            int maxInProgress,
            long elapsedNanos,
            long jobNanos) {}

    // each job's result is its square, which must fit an int: 46340^2 does, 46341^2 does not
    static final Args ARGS = Args.of("WorkerPool")
            .arg("workers", "worker goroutines", 3, 1, 10_000)
            .arg("jobs", "jobs to run", 9, 1, 46_340)
            .arg("job-ms", "milliseconds each job takes", 10, 0, 60_000);

    public static void main(String[] args) {
        run(System.out, args);
    }

    public static Result run(PrintStream out, String... args) {
        int[] argv = ARGS.parse(args);
        int workers = argv[0];
        int jobs = argv[1];
        long jobNanos = argv[2] * Time.MILLISECOND;
        Result[] res = new Result[1];
        Go.run(() -> {
            Chan<Integer> jobq = Chan.make(jobs); // jobs := make(chan int, n)
            Chan<int[]> results = Chan.make(jobs); // results := make(chan result, n)
            AtomicInteger inProgress = new AtomicInteger();
            AtomicInteger maxInProgress = new AtomicInteger();
            WaitGroup wg = new WaitGroup();
            long t0 = Time.nanotime();
            for (int w = 1; w <= workers; w++) {
                int id = w;
                wg.go(
                        () -> { // wg.Go(func() { worker(id, jobs, results) })
                            for (int j : jobq) { // for j := range jobs
                                maxInProgress.accumulateAndGet(inProgress.incrementAndGet(), Math::max);
                                Time.sleep(jobNanos); // the "work": parks, holds no thread
                                inProgress.decrementAndGet();
                                results.send(new int[] {j, j * j, id});
                            }
                        });
            }
            for (int j = 1; j <= jobs; j++) {
                jobq.send(j);
            }
            jobq.close(); // no more jobs: the workers' loops end
            wg.await();
            results.close();
            Map<Integer, Integer> r = new TreeMap<>();
            Map<Integer, Integer> by = new TreeMap<>();
            for (int[] v : results) {
                r.put(v[0], v[1]);
                by.put(v[0], v[2]);
            }
            res[0] = new Result(r, by, workers, maxInProgress.get(), Time.since(t0), jobNanos);
        });
        Result r = res[0];
        for (Map.Entry<Integer, Integer> e : r.results().entrySet()) {
            out.printf(
                    "job %d -> %d (worker %d)%n",
                    e.getKey(), e.getValue(), r.ranBy().get(e.getKey()));
        }
        out.printf(
                "%d jobs of %d ms on %d workers: at most %d in progress at once; %.0f ms in all (one worker: %d ms)%n",
                r.results().size(),
                r.jobNanos() / Time.MILLISECOND,
                r.workers(),
                r.maxInProgress(),
                r.elapsedNanos() / 1e6,
                r.results().size() * r.jobNanos() / Time.MILLISECOND);
        return r;
    }
}
