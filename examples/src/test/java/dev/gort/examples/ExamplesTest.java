package dev.gort.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gort.Chan;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Function;
import org.junit.jupiter.api.Test;

/** Each example runs on a real runtime and prints what it should. */
class ExamplesTest {
    /** Runs an example with its output captured; fails if it takes more than 60 s. */
    static <R> Run<R> capture(Function<PrintStream, R> example) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8);
        R r = assertTimeoutPreemptively(Duration.ofSeconds(60), () -> example.apply(out));
        return new Run<>(r, List.of(bytes.toString(StandardCharsets.UTF_8).split("\n")));
    }

    record Run<R>(R result, List<String> lines) {
        String text() {
            return String.join("\n", lines);
        }
    }

    static List<Integer> firstPrimes(int n) {
        List<Integer> r = new ArrayList<>();
        for (int k = 2; r.size() < n; k++) {
            boolean prime = true;
            for (int d = 2; d * d <= k; d++) {
                if (k % d == 0) {
                    prime = false;
                    break;
                }
            }
            if (prime) {
                r.add(k);
            }
        }
        return r;
    }

    @Test
    void primeSievePrintsThePrimesInOrder() {
        Run<List<Integer>> r = capture(out -> PrimeSieve.run(out, "30"));
        List<Integer> expected = firstPrimes(30);
        assertEquals(expected, r.result());
        for (int i = 0; i < 30; i++) {
            assertEquals(String.valueOf(expected.get(i)), r.lines().get(i), "line " + i);
        }
        assertEquals(
                "(30 primes, 31 goroutines in the chain: 1 generator + 30 filters)",
                r.lines().get(30));
    }

    @Test
    void pipelineCancelsEveryStage() {
        Run<Pipeline.Result> r = capture(out -> Pipeline.run(out, "1000", "4", "10"));
        Pipeline.Result p = r.result();
        assertEquals(10, p.taken().size());
        for (int v : p.taken()) {
            int root = (int) Math.round(Math.sqrt(v));
            assertTrue(root * root == v && root >= 1 && root <= 1000, v + " is not a square of 1..1000");
        }
        assertEquals(1 + 4 + 4 + 1, p.stagesStarted(), "gen + 4 sq + 4 merge copiers + the closer");
        assertEquals(p.stagesStarted(), p.stagesStopped(), "every stage returned after the cancel");
        assertEquals(1, p.goroutinesLeft(), "only main is left");
        assertEquals("context canceled", p.err());
        assertTrue(
                r.text().contains("then cancelled (context canceled): 10 of 10 pipeline goroutines returned"),
                r.text());
        assertTrue(r.text().contains("goroutines left: 1 (main)"), r.text());
    }

    @Test
    void workerPoolRunsEveryJobWithAtMostWWorkers() {
        Run<WorkerPool.Result> r = capture(out -> WorkerPool.run(out, "3", "9", "5"));
        WorkerPool.Result w = r.result();
        assertEquals(9, w.results().size());
        for (int j = 1; j <= 9; j++) {
            assertEquals(j * j, w.results().get(j));
            int by = w.ranBy().get(j);
            assertTrue(by >= 1 && by <= 3, "worker " + by);
            assertTrue(r.lines().contains("job " + j + " -> " + j * j + " (worker " + by + ")"), r.text());
        }
        assertTrue(w.maxInProgress() >= 1 && w.maxInProgress() <= 3, "in progress at once: " + w.maxInProgress());
        assertTrue(
                r.text().contains("9 jobs of 5 ms on 3 workers: at most " + w.maxInProgress() + " in progress at once"),
                r.text());
    }

    @Test
    void webCrawlerFetchesEveryReachablePageOnce() {
        Run<WebCrawler.Result> r = capture(out -> WebCrawler.run(out, "4"));
        Set<String> expected = Set.of(
                "found: https://gort.dev/ \"gort: Go's scheduler on the JVM\"",
                "found: https://gort.dev/docs/ \"Documentation\"",
                "found: https://gort.dev/examples/ \"Examples\"",
                "found: https://gort.dev/docs/chan/ \"Channels and select\"",
                "found: https://gort.dev/docs/sync/ \"Mutex, WaitGroup, Once\"",
                "not found: https://gort.dev/examples/sieve/",
                "not found: https://gort.dev/blog/");
        assertEquals(expected, new HashSet<>(r.result().lines()));
        assertEquals(
                7,
                r.result().lines().size(),
                "no page reported twice: " + r.result().lines());
        assertEquals(r.result().lines().get(0), "found: https://gort.dev/ \"gort: Go's scheduler on the JVM\"");
        assertEquals(7, r.result().fetches().size());
        r.result().fetches().forEach((u, n) -> assertEquals(1, n, u + " fetched " + n + " times"));
        assertTrue(r.text().endsWith("7 pages fetched, each exactly once"), r.text());
    }

    @Test
    void webCrawlerStopsAtDepth() {
        Run<WebCrawler.Result> r = capture(out -> WebCrawler.run(out, "1"));
        assertEquals(
                List.of("found: https://gort.dev/ \"gort: Go's scheduler on the JVM\""),
                r.result().lines());
    }

    @Test
    void mergeSortSortsLikeArraysSort() {
        Run<MergeSort.Result> r = capture(out -> MergeSort.run(out, "300000", "4096"));
        MergeSort.Result m = r.result();
        assertTrue(m.sorted() && m.sameAsArraysSort());
        // a binary split down to 4096: 2^7 = 128 leaves, 127 forks
        assertEquals(127, m.goroutines());
        assertTrue(r.lines().get(0).startsWith("sorted 300,000 ints with 127 goroutines on GOMAXPROCS="), r.text());
        assertTrue(r.lines().get(0).endsWith(": ok (same as Arrays.sort)"), r.text());
    }

    @Test
    void producerConsumerLosesAndDuplicatesNothing() {
        Run<ProducerConsumer.Result> r = capture(out -> ProducerConsumer.run(out, "3", "50", "2", "4"));
        ProducerConsumer.Result p = r.result();
        assertEquals(150, p.produced());
        assertEquals(150, p.consumed());
        assertEquals(p.expectedSum(), p.sum());
        assertEquals(150, Arrays.stream(p.perConsumer()).sum());
        assertTrue(p.peakLen() <= 4, "buffer length " + p.peakLen() + " > capacity");
        assertTrue(
                r.text()
                        .contains("sum " + p.expectedSum() + " (expected " + p.expectedSum()
                                + "): nothing lost, nothing duplicated"),
                r.text());
    }

    @Test
    void rateLimitServesOneRequestPerTickAndBurstsOfThree() {
        Run<RateLimit.Result> r = capture(out -> RateLimit.run(out, "5", "15"));
        RateLimit.Result rl = r.result();
        long d = rl.intervalNanos();
        assertEquals(5, rl.steady().size());
        for (int k = 1; k <= 5; k++) {
            RateLimit.Served s = rl.steady().get(k - 1);
            assertEquals(k, s.request());
            // the k-th tick fires k intervals after the ticker started, never earlier
            assertTrue(s.atNanos() >= k * d, "request " + k + " at " + s.atNanos() + " ns, before tick " + k);
        }
        assertEquals(5, rl.bursty().size());
        for (int k = 1; k <= 5; k++) {
            RateLimit.Served s = rl.bursty().get(k - 1);
            assertEquals(k <= 3 ? "burst" : "tick", s.token(), "request " + k);
            if (k > 3) {
                assertTrue(s.atNanos() >= (k - 3) * d, "request " + k + " before its tick");
            }
        }
        assertEquals("one request per 15 ms tick:", r.lines().get(0));
        assertTrue(
                r.lines().get(7).startsWith("  request 1 served at +")
                        && r.lines().get(7).endsWith("(burst token)"),
                r.text());
        assertTrue(r.lines().get(11).endsWith("(tick token)"), r.text());
    }

    @Test
    void echoServesEveryClientOnAFewThreads() {
        Run<List<String>> r = capture(out -> Echo.run(out, "50"));
        assertTrue(r.lines().get(0).startsWith("50 clients, "), r.text());
        // 50 clients x 10 lines of "client N line M\n"
        long want = 0;
        for (int id = 0; id < 50; id++) {
            for (int i = 0; i < 10; i++) {
                want += ("client " + id + " line " + i + "\n").length();
            }
        }
        assertTrue(r.lines().get(0).contains(", " + want + " bytes echoed"), r.text());
        assertEquals("server stopped", r.lines().get(1), r.text());
    }

    @Test
    void httpServerAnswersKeptAliveRequests() {
        Run<List<String>> r = capture(out -> HttpServer.run(out));
        assertEquals(
                "GET / -> HTTP/1.1 200 OK: gort: Go's scheduler, with a network poller",
                r.lines().get(0),
                r.text());
        assertTrue(r.lines().get(1).startsWith("GET /hello -> HTTP/1.1 200 OK: hello from goroutine "), r.text());
        assertEquals(
                "GET /missing -> HTTP/1.1 404 Not Found: 404 page not found",
                r.lines().get(2),
                r.text());
        assertEquals(
                "after Connection: close, the server's side ended: read -1",
                r.lines().get(4),
                r.text());
    }

    @Test
    void timeoutsGiveUpOnTheSlowCallAndWaitForTheOtherOne() {
        // Which side of each select wins is decided by events, not by the wall clock (a 20 ms timer
        // against a 40 ms sleep lost under load): call 1 answers only once call 2 has started, that
        // is after the first select gave up on it; call 2 (awaited for an hour) and the first two
        // steps answer at once; the later steps never answer, so only the deadline ends the series.
        Chan<Boolean> gaveUp = Chan.make();
        Chan<Boolean> never = Chan.make();
        Timeouts.Work work = (n, ms) -> {
            switch (n) {
                case 1 -> gaveUp.recv2(); // until closed
                case 2 -> gaveUp.close();
                case 3, 4 -> {}
                default -> never.recv2();
            }
        };
        Run<List<String>> r = capture(out -> Timeouts.run(out, work, 20, 3_600_000, 35));
        assertEquals("timeout 1", r.lines().get(0), r.text());
        assertEquals("result 2", r.lines().get(1), r.text());
        // at most the two steps that answer fit before the deadline (fewer if it came first)
        assertTrue(r.lines().get(2).matches("context deadline exceeded after [0-2] of 5 steps"), r.text());
        assertEquals(3, r.lines().size(), r.text());
    }

    /** The example itself, on the wall clock: its shape only (which side wins is the test above's). */
    @Test
    void timeoutsRunsOnTheWallClock() {
        Run<List<String>> r = capture(out -> Timeouts.run(out));
        assertEquals(3, r.lines().size(), r.text());
        assertTrue(r.lines().get(0).matches("timeout 1|result 1"), r.text());
        assertTrue(r.lines().get(1).matches("timeout 2|result 2"), r.text());
        assertTrue(
                r.lines().get(2).matches("context deadline exceeded after [0-5] of 5 steps|all 5 steps done"),
                r.text());
    }

    @Test
    void mainFindsExamplesByAnySpelling() {
        assertEquals("PrimeSieve", Main.find("prime-sieve").name());
        assertEquals("PrimeSieve", Main.find("PRIMESIEVE").name());
        assertEquals("ProducerConsumer", Main.find("producer_consumer").name());
        assertNull(Main.find("nope"));
        for (Main.Example e : Main.EXAMPLES) {
            assertNotNull(Main.find(e.name()));
        }
    }

    /** Every example's declared command line ({@code ARGS}), read by reflection from its class. */
    static Args argsOf(Main.Example e) throws ReflectiveOperationException {
        var f = Class.forName("dev.gort.examples." + e.name()).getDeclaredField("ARGS");
        f.setAccessible(true);
        return (Args) f.get(null);
    }

    /**
     * Every example checks its arguments before it runs: a usage line of its own, each argument a
     * whole number in its range (not a number, below or above it is a usage error naming the
     * argument), no extra arguments, and -h/--help asks for the usage.
     */
    @Test
    void everyExampleChecksItsArgumentsAgainstItsUsage() throws Exception {
        for (Main.Example e : Main.EXAMPLES) {
            Args a = argsOf(e);
            String usage = a.usage();
            assertTrue(usage.startsWith("usage: ./gort example " + e.name()), usage);
            assertTrue(assertThrows(Args.Usage.class, () -> a.parse("--help")).help(), e.name());
            int n = a.usage().split("\n").length - 1; // a line per argument
            String[] extra = new String[n + 1];
            Arrays.fill(extra, "1");
            extra[n] = "extra";
            Args.Usage u = assertThrows(Args.Usage.class, () -> a.parse(extra), e.name());
            assertTrue(u.getMessage().contains("'extra'") && !u.help(), u.getMessage());
            for (int i = 0; i < n; i++) {
                String name = usage.split("\n")[i + 1].trim().split(" ")[0];
                for (String bad : List.of("abc", "99999999999", "1.5", "")) {
                    String[] args = new String[i + 1];
                    Arrays.fill(args, "1");
                    args[i] = bad;
                    Args.Usage b = assertThrows(Args.Usage.class, () -> a.parse(args), e.name() + " " + bad);
                    assertTrue(
                            b.getMessage().startsWith(e.name() + ": " + name + " wants a whole number from "),
                            b.getMessage());
                    assertTrue(b.getMessage().endsWith(", not '" + bad + "'"), b.getMessage());
                }
            }
        }
    }

    /**
     * The arguments the examples used to take and then fail on (a panic, a stack overflow, a
     * NegativeArraySizeException, "-5 primes", a MISMATCH) are usage errors before any work.
     */
    @Test
    void argumentsThatUsedToFailInsideTheExamplesAreUsageErrors() {
        PrintStream out = new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8);
        List<Runnable> bad = List.of(
                () -> PrimeSieve.run(out, "-5"),
                () -> PrimeSieve.run(out, "abc"),
                () -> PrimeSieve.run(out, "99999999999"),
                () -> Echo.run(out, "-1"),
                () -> MergeSort.run(out, "10", "0"),
                () -> MergeSort.run(out, "-3"),
                () -> WorkerPool.run(out, "3", "-1"),
                () -> WorkerPool.run(out, "extra"),
                () -> ProducerConsumer.run(out, "1", "1", "0"),
                () -> Pipeline.run(out, "1000", "0"),
                () -> RateLimit.run(out, "5", "0"),
                () -> WebCrawler.run(out, "0"),
                () -> Timeouts.run(out, "1"),
                () -> HttpServer.run(out, "1"));
        for (Runnable r : bad) {
            assertThrows(Args.Usage.class, r::run);
        }
        assertEquals(
                "PrimeSieve: n wants a whole number from 1 to 100000, not '-5'",
                assertThrows(Args.Usage.class, () -> PrimeSieve.run(out, "-5")).getMessage());
        assertEquals(
                "usage: ./gort example PrimeSieve [n]\n  n          how many primes to print: 1 to 100000 (default 25)\n",
                PrimeSieve.ARGS.usage());
    }
}
