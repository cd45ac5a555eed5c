package dev.gort.examples;

import dev.gort.Chan;
import dev.gort.Go;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;

/**
 * The concurrent prime sieve, the Go classic: a generator goroutine sends 2, 3, 4, ... down a
 * channel; each prime found starts a filter goroutine that drops the multiples of that prime, and
 * the chain grows by one filter per prime. {@code main} returns while the generator and the filters
 * are still blocked on their channels; as in Go, the program simply ends.
 *
 * <pre>
 * ./gort example PrimeSieve [n]     # the first n primes (default 25)
 * </pre>
 *
 * <p>Go: the sieve from the Go tour / go.dev/doc/play/sieve.go
 */
public final class PrimeSieve {
    private PrimeSieve() {}

    static final Args ARGS = Args.of("PrimeSieve").arg("n", "how many primes to print", 25, 1, 100_000);

    public static void main(String[] args) {
        run(System.out, args);
    }

    /** Prints the first n primes (args[0], default 25), one per line, and returns them. */
    public static List<Integer> run(PrintStream out, String... args) {
        int n = ARGS.parse(args)[0];
        List<Integer> primes = new ArrayList<>();
        Go.run(() -> {
            Chan<Integer> ch = Chan.make(); // ch := make(chan int)
            Go.go(() -> generate(ch)); // go generate(ch)
            Chan<Integer> in = ch;
            for (int i = 0; i < n; i++) {
                int prime = in.recv(); // prime := <-ch
                primes.add(prime);
                out.println(prime);
                Chan<Integer> next = Chan.make();
                Chan<Integer> src = in;
                Go.go(() -> filter(src, next, prime)); // go filter(ch, ch1, prime)
                in = next; // ch = ch1
            }
            out.println("(" + n + " primes, " + (n + 1) + " goroutines in the chain: " + "1 generator + " + n
                    + " filters)");
        });
        return primes;
    }

    /** Sends 2, 3, 4, ... to ch. */
    static void generate(Chan<Integer> ch) {
        for (int i = 2; ; i++) {
            ch.send(i);
        }
    }

    /** Copies the values from in to out, dropping those divisible by prime. */
    static void filter(Chan<Integer> in, Chan<Integer> out, int prime) {
        for (; ; ) {
            int i = in.recv();
            if (i % prime != 0) {
                out.send(i);
            }
        }
    }
}
