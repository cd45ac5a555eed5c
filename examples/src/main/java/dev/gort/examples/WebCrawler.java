package dev.gort.examples;

import dev.gort.Go;
import dev.gort.sync.Mutex;
import dev.gort.sync.WaitGroup;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The Go tour's web-crawler exercise: crawl a (fake) site in parallel, one goroutine per page,
 * without fetching a page twice. The set of visited URLs is a cache protected by a
 * {@link Mutex}; a {@link WaitGroup} waits for every crawl goroutine. The fetcher is a map with a
 * small simulated latency ({@code Time.sleep}), so the goroutines really overlap.
 *
 * <pre>
 * ./gort example WebCrawler [depth]     # default 4
 * </pre>
 *
 * <p>Go: go.dev/tour/concurrency/10 (Exercise: Web Crawler), solved anew
 */
public final class WebCrawler {
    private WebCrawler() {}

    /** What a fetch returns. */
    record Page(String body, List<String> urls) {}

    /** Fetches a URL: its body and the URLs it links to. */
    interface Fetcher {
        Page fetch(String url) throws NotFound;
    }

    static final class NotFound extends Exception {
        NotFound(String url) {
            super("not found: " + url);
        }
    }

    /** A pretend web: five pages linking to each other, and two dead links. */
    static final Map<String, Page> SITE = Map.of(
            "https://gort.dev/",
                    new Page(
                            "gort: Go's scheduler on the JVM",
                            List.of("https://gort.dev/docs/", "https://gort.dev/examples/")),
            "https://gort.dev/docs/",
                    new Page(
                            "Documentation",
                            List.of(
                                    "https://gort.dev/",
                                    "https://gort.dev/docs/chan/",
                                    "https://gort.dev/docs/sync/",
                                    "https://gort.dev/examples/")),
            "https://gort.dev/docs/chan/",
                    new Page("Channels and select", List.of("https://gort.dev/", "https://gort.dev/docs/")),
            "https://gort.dev/docs/sync/",
                    new Page(
                            "Mutex, WaitGroup, Once",
                            List.of("https://gort.dev/", "https://gort.dev/docs/", "https://gort.dev/blog/")),
            "https://gort.dev/examples/",
                    new Page("Examples", List.of("https://gort.dev/", "https://gort.dev/examples/sieve/")));

    /** A fake fetcher over {@link #SITE} that takes {@code latencyMs} per fetch and counts fetches. */
    static final class FakeFetcher implements Fetcher {
        final long latencyMs;
        final Map<String, Integer> fetches = new HashMap<>();
        final Mutex mu = new Mutex();

        FakeFetcher(long latencyMs) {
            this.latencyMs = latencyMs;
        }

        @Override
        public Page fetch(String url) throws NotFound {
            mu.lock();
            try {
                fetches.merge(url, 1, Integer::sum);
            } finally {
                mu.unlock();
            }
            dev.gort.Time.sleep(latencyMs * dev.gort.Time.MILLISECOND);
            Page p = SITE.get(url);
            if (p == null) {
                throw new NotFound(url);
            }
            return p;
        }
    }

    /** The visited-URL cache: safe for concurrent use. */
    static final class Visited {
        private final Mutex mu = new Mutex();
        private final Map<String, Boolean> seen = new HashMap<>();

        /** Marks url visited; true if this caller is the first to visit it. */
        boolean visit(String url) {
            mu.lock();
            try {
                return seen.putIfAbsent(url, Boolean.TRUE) == null;
            } finally {
                mu.unlock();
            }
        }
    }

    /** What a crawl found, in the order it was found. */
    public record Result(List<String> lines, Map<String, Integer> fetches) {}

    static final Args ARGS = Args.of("WebCrawler").arg("depth", "links to follow from the first page", 4, 1, 100);

    public static void main(String[] args) {
        run(System.out, args);
    }

    public static Result run(PrintStream out, String... args) {
        int depth = ARGS.parse(args)[0];
        List<String> lines = new ArrayList<>();
        FakeFetcher fetcher = new FakeFetcher(5);
        Go.run(() -> {
            Mutex outMu = new Mutex();
            Visited visited = new Visited();
            WaitGroup wg = new WaitGroup();
            crawl("https://gort.dev/", depth, fetcher, visited, wg, line -> {
                outMu.lock();
                try {
                    lines.add(line);
                    out.println(line);
                } finally {
                    outMu.unlock();
                }
            });
            wg.await();
        });
        out.printf("%d pages fetched, each exactly once%n", fetcher.fetches.size());
        return new Result(lines, fetcher.fetches);
    }

    /** Crawls url and, in new goroutines, the pages it links to, down to depth. */
    static void crawl(
            String url,
            int depth,
            Fetcher fetcher,
            Visited visited,
            WaitGroup wg,
            java.util.function.Consumer<String> report) {
        if (depth <= 0 || !visited.visit(url)) {
            return;
        }
        Page p;
        try {
            p = fetcher.fetch(url);
        } catch (NotFound e) {
            report.accept(e.getMessage());
            return;
        }
        report.accept("found: " + url + " \"" + p.body() + "\"");
        for (String u : p.urls()) {
            wg.go(() -> crawl(u, depth - 1, fetcher, visited, wg, report));
        }
    }
}
