package dev.gort.examples;

import dev.gort.Chan;
import dev.gort.Go;
import dev.gort.Ticker;
import dev.gort.Time;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;

/**
 * Rate limiting with a ticker: requests are served at most one per tick. Then a bursty limiter: a
 * buffered channel of tokens, filled with three at the start (a burst of three requests goes
 * through at once) and refilled by a ticker goroutine, so that after the burst the requests are
 * again served one per tick.
 *
 * <pre>
 * ./gort example RateLimit [requests] [interval]     # default 5 requests, 20 ms
 * </pre>
 *
 * <p>Go: gobyexample.com's "Rate Limiting", written anew
 */
public final class RateLimit {
    private RateLimit() {}

    /** One served request: when (ns after the limiter started) and, for the bursty one, with which token. */
    public record Served(int request, long atNanos, String token) {}

    /** Both runs. */
    public record Result(List<Served> steady, List<Served> bursty, long intervalNanos) {}

    static final Args ARGS = Args.of("RateLimit")
            .arg("requests", "requests to serve", 5, 1, 10_000)
            .arg("interval", "milliseconds between two requests", 20, 1, 60_000);

    public static void main(String[] args) {
        run(System.out, args);
    }

    public static Result run(PrintStream out, String... args) {
        int[] argv = ARGS.parse(args);
        int n = argv[0];
        long interval = argv[1] * Time.MILLISECOND;
        Result[] res = new Result[1];
        Go.run(() -> {
            // Steady: one request per tick.
            Chan<Integer> requests = Chan.make(n);
            for (int i = 1; i <= n; i++) {
                requests.send(i);
            }
            requests.close();
            long t0 = Time.nanotime();
            Ticker limiter = Time.newTicker(interval); // limiter := time.NewTicker(interval)
            List<Served> steady = new ArrayList<>();
            for (int req : requests) { // for req := range requests
                limiter.c().recv(); //     <-limiter.C
                steady.add(new Served(req, Time.since(t0), "tick"));
            }
            limiter.stop();

            // Bursty: up to 3 at once, then one per tick.
            Chan<String> bursty = Chan.make(3); // burstyLimiter := make(chan time.Time, 3)
            for (int i = 0; i < 3; i++) {
                bursty.send("burst");
            }
            long t1 = Time.nanotime();
            Ticker refill = Time.newTicker(interval);
            Go.go(
                    () -> { // go func() { for t := range tick { burstyLimiter <- t } }()
                        for (; ; ) {
                            refill.c().recv();
                            bursty.send("tick");
                        }
                    });
            Chan<Integer> burstyRequests = Chan.make(n);
            for (int i = 1; i <= n; i++) {
                burstyRequests.send(i);
            }
            burstyRequests.close();
            List<Served> burst = new ArrayList<>();
            for (int req : burstyRequests) {
                String token = bursty.recv();
                burst.add(new Served(req, Time.since(t1), token));
            }
            refill.stop();
            res[0] = new Result(steady, burst, interval);
        });
        Result r = res[0];
        out.printf("one request per %d ms tick:%n", r.intervalNanos() / Time.MILLISECOND);
        for (Served s : r.steady()) {
            out.printf("  request %d served at +%.1f ms%n", s.request(), s.atNanos() / 1e6);
        }
        out.println("bursts of up to 3, then one per tick:");
        for (Served s : r.bursty()) {
            out.printf("  request %d served at +%.1f ms (%s token)%n", s.request(), s.atNanos() / 1e6, s.token());
        }
        return r;
    }
}
