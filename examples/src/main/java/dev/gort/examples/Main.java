package dev.gort.examples;

import dev.gort.examples.showcase.Showcase;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * The entry point of {@code gort-examples.jar}: {@code java -jar gort-examples.jar <what> [args]}
 * where {@code <what>} is {@code showcase} or the name of an example ({@code ./gort showcase},
 * {@code ./gort example PrimeSieve}). Names match case-insensitively, with or without dashes
 * ({@code prime-sieve}, {@code primesieve}, {@code PrimeSieve}).
 */
public final class Main {
    private Main() {}

    /** An example: its name, what it shows, and its entry point. */
    public record Example(String name, String summary, Entry entry) {}

    /** An example's main. */
    @FunctionalInterface
    public interface Entry {
        void main(String[] args) throws Exception;
    }

    /** Every example, in the order the README lists them. */
    public static final List<Example> EXAMPLES = List.of(
            new Example("PrimeSieve", "the concurrent prime sieve: a chain of filter goroutines", PrimeSieve::main),
            new Example("Pipeline", "a pipeline with fan-out/fan-in, cancelled by a context", Pipeline::main),
            new Example("WorkerPool", "a bounded pool of workers fed by a jobs channel", WorkerPool::main),
            new Example("WebCrawler", "the Go tour's crawler: fake fetcher, mutex-protected cache", WebCrawler::main),
            new Example("RateLimit", "rate limiting with a ticker (and a bursty limiter)", RateLimit::main),
            new Example("Timeouts", "timeouts with select and Time.after", Timeouts::main),
            new Example("MergeSort", "a parallel merge sort: fork-join with goroutines", MergeSort::main),
            new Example("ProducerConsumer", "producers and consumers on a buffered channel", ProducerConsumer::main),
            new Example("Echo", "an echo server and 100 clients on dev.gort.net (the network poller)", Echo::main),
            new Example("HttpServer", "a small HTTP/1.1 server (GET, keep-alive) on dev.gort.net", HttpServer::main));

    public static void main(String[] args) throws Exception {
        if (args.length == 0 || isHelp(args[0])) {
            usage();
            return;
        }
        String what = args[0];
        String[] rest = Arrays.copyOfRange(args, 1, args.length);
        if (what.equalsIgnoreCase("showcase")) {
            System.exit(Showcase.main0(rest));
        }
        if (what.equalsIgnoreCase("env")) {
            Env.print(System.out);
            return;
        }
        if (what.equalsIgnoreCase("list")) {
            for (Example e : EXAMPLES) {
                System.out.println(e.name());
            }
            return;
        }
        Example e = find(what);
        if (e == null) {
            System.err.println("gort-examples: unknown example '" + what + "'");
            usage();
            System.exit(2);
        }
        try {
            e.entry().main(rest);
        } catch (Args.Usage u) {
            if (u.help()) {
                System.out.print(u.usage());
                return;
            }
            System.err.println(u.getMessage());
            System.err.print(u.usage());
            System.exit(2);
        }
    }

    /** The example called {@code name} (case and dashes ignored), or null. */
    public static Example find(String name) {
        String key = norm(name);
        for (Example e : EXAMPLES) {
            if (norm(e.name()).equals(key)) {
                return e;
            }
        }
        return null;
    }

    private static String norm(String s) {
        return s.replace("-", "").replace("_", "").toLowerCase(Locale.ROOT);
    }

    private static boolean isHelp(String a) {
        return a.equals("-h") || a.equals("--help") || a.equals("help");
    }

    private static void usage() {
        System.out.println("usage: ./gort showcase [scenario] [--help]    Go's scheduler at work, five scenarios");
        System.out.println("       ./gort example <Name> [args]           one of the examples below");
        System.out.println("       ./gort env                             the settings gort reads, with their values");
        System.out.println();
        System.out.println("examples:");
        for (Example e : EXAMPLES) {
            System.out.printf("  %-17s %s%n", e.name(), e.summary());
        }
    }
}
