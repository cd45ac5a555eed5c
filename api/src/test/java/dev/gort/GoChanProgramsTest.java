package dev.gort;

import static dev.gort.GortTesting.check;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.ArrayDeque;
import java.util.PriorityQueue;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Ports of Go's channel test programs (test/chan/*.go, test/chancap.go): each Go main becomes a
 * gort main run at GOMAXPROCS 1, 2 and 4; a Go panic becomes an exception that fails the test.
 * Programs that leak blocked goroutines by design (sieve1, sieve2) rely on the program ending when
 * main returns.
 */
class GoChanProgramsTest {
    static final int[] PRIMES = {
        2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53, 59, 61, 67, 71, 73, 79, 83, 89, 97
    };

    // ---- test/chan/sieve1.go: a daisy chain of filter goroutines over unbuffered channels ----

    static void generate(Chan<Integer> ch) {
        for (int i = 2; ; i++) {
            ch.send(i); // Send 'i' to channel 'ch'.
        }
    }

    static void filter(Chan<Integer> in, Chan<Integer> out, int prime) {
        for (int i : in) { // Loop over values received from 'in'.
            if (i % prime != 0) {
                out.send(i); // Send 'i' to channel 'out'.
            }
        }
    }

    static void sieve(Chan<Integer> primes) {
        Chan<Integer> ch = Chan.make(); // Create a new channel.
        Chan<Integer> gen = ch;
        Go.go(() -> generate(gen)); // Start Generate() as a subprocess.
        for (; ; ) {
            // Note that ch is different on each iteration.
            int prime = ch.recv();
            primes.send(prime);
            Chan<Integer> ch1 = Chan.make();
            Chan<Integer> in = ch;
            Go.go(() -> filter(in, ch1, prime));
            ch = ch1;
        }
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 2, 4})
    void sieve1(int procs) {
        GortTesting.run(procs, () -> {
            Chan<Integer> primes = Chan.make();
            Go.go(() -> sieve(primes));
            for (int p : PRIMES) {
                int x = primes.recv();
                check(x == p, "%d != %d", x, p);
            }
        });
    }

    // ---- test/chan/sieve2.go: odd-only Eratosthenes with a heap merge and a proxy goroutine ----

    /** A chan of odd numbers, starting from 5. */
    static Chan<Integer> odds() {
        Chan<Integer> out = Chan.make(50);
        Go.go(() -> {
            for (int n = 5; ; n += 2) {
                out.send(n);
            }
        });
        return out;
    }

    /** A chan of odd multiples of the prime number p, starting from p*p. */
    static Chan<Integer> multiples(int p) {
        Chan<Integer> out = Chan.make(10);
        Go.go(() -> {
            for (int n = p * p; ; n += 2 * p) {
                out.send(n);
            }
        });
        return out;
    }

    static final class PeekCh {
        int head;
        final Chan<Integer> ch;

        PeekCh(int head, Chan<Integer> ch) {
            this.head = head;
            this.ch = ch;
        }
    }

    /**
     * A channel that serves as a sending proxy to 'out': a goroutine receives from it into an
     * expanding buffer, so that sending to it never blocks. The send case is disabled (a nil
     * channel) while the buffer is empty.
     */
    static Chan<Integer> sendproxy(Chan<Integer> out) {
        Chan<Integer> proxy = Chan.make(10);
        Go.go(() -> {
            ArrayDeque<Integer> buf = new ArrayDeque<>(16);
            for (; ; ) {
                Chan<Integer> c = out;
                Integer e = null;
                if (buf.isEmpty()) {
                    // buffer empty: disable output
                    c = Chan.nil();
                } else {
                    e = buf.peekFirst();
                }
                Select.select(
                        Select.recv(proxy, (Consumer<Integer>) buf::addLast), Select.send(c, e, buf::removeFirst));
            }
        });
        return proxy;
    }

    /** A chan of primes. */
    static Chan<Integer> sieve2Primes() {
        // The output values.
        Chan<Integer> out = Chan.make(10);
        out.send(2);
        out.send(3);
        // The channel of all composites to be eliminated in increasing order.
        Chan<Integer> composites = Chan.make(50);
        // The feedback loop.
        Chan<Integer> primes = Chan.make(10);
        primes.send(3);
        // Merge channels of multiples of 'primes' into 'composites'.
        Go.go(() -> {
            PriorityQueue<PeekCh> h = new PriorityQueue<>((a, b) -> Integer.compare(a.head, b.head));
            int min = 15;
            for (; ; ) {
                Chan<Integer> m = multiples(primes.recv());
                int head = m.recv();
                while (min < head) {
                    composites.send(min);
                    PeekCh minchan = h.remove();
                    min = minchan.head;
                    minchan.head = minchan.ch.recv();
                    h.add(minchan);
                }
                while (min == head) {
                    PeekCh minchan = h.remove();
                    min = minchan.head;
                    minchan.head = minchan.ch.recv();
                    h.add(minchan);
                }
                composites.send(head);
                h.add(new PeekCh(m.recv(), m));
            }
        });
        // Sieve out 'composites' from 'candidates'.
        Go.go(() -> {
            // The merging goroutine receives from 'primes' much slower than this goroutine sends
            // to it: a proxy goroutine buffers automatically, or the buffer would fill and deadlock.
            Chan<Integer> primesProxy = sendproxy(primes);
            Chan<Integer> candidates = odds();
            int p = candidates.recv();
            for (; ; ) {
                int c = composites.recv();
                while (p < c) {
                    primesProxy.send(p);
                    out.send(p);
                    p = candidates.recv();
                }
                if (p == c) {
                    p = candidates.recv();
                }
            }
        });
        return out;
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 2, 4})
    void sieve2(int procs) {
        GortTesting.run(procs, () -> {
            Chan<Integer> primes = sieve2Primes();
            for (int p : PRIMES) {
                int x = primes.recv();
                check(x == p, "%d != %d", x, p);
            }
        });
    }

    // ---- test/chan/fifo.go: buffered and unbuffered channels act as pure FIFOs ----

    static final int N = 10;

    static void asynchFifo() {
        Chan<Integer> ch = Chan.make(N);
        for (int i = 0; i < N; i++) {
            ch.send(i);
        }
        for (int i = 0; i < N; i++) {
            int v = ch.recv();
            check(v == i, "bad receive: %d, want %d", v, i);
        }
    }

    static void chain(Chan<Integer> ch, int val, Chan<Integer> in, Chan<Integer> out) {
        in.recv();
        int v = ch.recv();
        check(v == val, "chain %d got %d", val, v);
        out.send(1);
    }

    /** Threads together a daisy chain to read the elements in sequence. */
    static void synchFifo() {
        Chan<Integer> ch = Chan.make();
        Chan<Integer> in = Chan.make();
        Chan<Integer> start = in;
        for (int i = 0; i < N; i++) {
            Chan<Integer> out = Chan.make();
            int val = i;
            Chan<Integer> cin = in;
            Go.go(() -> chain(ch, val, cin, out));
            in = out;
        }
        start.send(0);
        for (int i = 0; i < N; i++) {
            ch.send(i);
        }
        in.recv();
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 2, 4})
    void fifo(int procs) {
        GortTesting.run(procs, () -> {
            asynchFifo();
            synchFifo();
        });
    }

    // ---- test/chan/goroutines.go: 10,000 goroutines threaded together ----

    @ParameterizedTest
    @ValueSource(ints = {1, 2, 4})
    void goroutines(int procs) {
        int n = 10_000;
        GortTesting.run(procs, () -> {
            Chan<Integer> leftmost = Chan.make();
            Chan<Integer> right = leftmost;
            Chan<Integer> left = leftmost;
            for (int i = 0; i < n; i++) {
                right = Chan.make();
                Chan<Integer> l = left;
                Chan<Integer> r = right;
                Go.go(() -> l.send(r.recv()));
                left = right;
            }
            Chan<Integer> last = right;
            Go.go(() -> last.send(1));
            int v = leftmost.recv();
            check(v == 1, "got %d", v);
        });
    }

    // ---- test/chan/select6.go: issue 2075, a select that loses on c1 must leave c1's queue intact ----

    @ParameterizedTest
    @ValueSource(ints = {1, 2, 4})
    void select6(int procs) {
        GortTesting.run(procs, () -> {
            Chan<Boolean> c1 = Chan.make();
            Chan<Boolean> c2 = Chan.make();
            Chan<Boolean> c3 = Chan.make();
            Go.go(() -> c1.recv());
            Go.go(() -> {
                Select.select(
                        Select.recv(c1, () -> {
                            throw new PanicError("dummy");
                        }),
                        Select.recv(c2, () -> c3.send(true)));
                c1.recv();
            });
            Go.go(() -> c2.send(true));
            c3.recv();
            c1.send(true);
            c1.send(true);
        });
    }

    // ---- test/chan/select7.go: select when discarding a value, 9 combinations ----

    static void recv1(Chan<Integer> c) {
        c.recv();
    }

    static void recv2(Chan<Integer> c) {
        Select.select(Select.recv(c, () -> {}));
    }

    static void recv3(Chan<Integer> c) {
        Chan<Integer> c2 = Chan.make();
        Select.select(Select.recv(c, () -> {}), Select.recv(c2, () -> {}));
    }

    static void send1(Consumer<Chan<Integer>> recv) {
        Chan<Integer> c = Chan.make();
        Go.go(() -> recv.accept(c));
        Go.gosched();
        c.send(1);
    }

    static void send2(Consumer<Chan<Integer>> recv) {
        Chan<Integer> c = Chan.make();
        Go.go(() -> recv.accept(c));
        Go.gosched();
        Select.select(Select.send(c, 1, () -> {}));
    }

    static void send3(Consumer<Chan<Integer>> recv) {
        Chan<Integer> c = Chan.make();
        Go.go(() -> recv.accept(c));
        Go.gosched();
        Chan<Integer> c2 = Chan.make();
        Select.select(Select.send(c, 1, () -> {}), Select.send(c2, 1, () -> {}));
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 2, 4})
    void select7(int procs) {
        GortTesting.run(procs, () -> {
            send1(GoChanProgramsTest::recv1);
            send2(GoChanProgramsTest::recv1);
            send3(GoChanProgramsTest::recv1);
            send1(GoChanProgramsTest::recv2);
            send2(GoChanProgramsTest::recv2);
            send3(GoChanProgramsTest::recv2);
            send1(GoChanProgramsTest::recv3);
            send2(GoChanProgramsTest::recv3);
            send3(GoChanProgramsTest::recv3);
        });
    }

    // ---- test/chan/zerosize.go: channels of zero-size elements can be made ----

    record Empty() {}

    @ParameterizedTest
    @ValueSource(ints = {1, 2, 4})
    void zerosize(int procs) {
        GortTesting.run(procs, () -> {
            Chan<byte[]> a = Chan.make();
            Chan<byte[]> b = Chan.make(1);
            Chan<Empty> c = Chan.make();
            Chan<Empty> d = Chan.make(1);
            // and they work: a zero-size value round-trips through the buffer
            d.send(new Empty());
            b.send(new byte[0]);
            check(d.recv().equals(new Empty()) && b.recv().length == 0 && a.cap() == 0 && c.cap() == 0, "zero-size");
        });
    }

    // ---- test/chancap.go: len/cap, and make panics for negative or huge sizes ----

    static void shouldPanic(String msg, Runnable f) {
        PanicError e = assertThrows(PanicError.class, f::run);
        assertEquals(msg, e.getMessage());
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 2, 4})
    void chancap(int procs) {
        GortTesting.run(procs, () -> {
            Chan<Integer> c = Chan.make(10);
            check(c.len() == 0 && c.cap() == 10, "chan len/cap %d %d want 0 10", c.len(), c.cap());
            for (int i = 0; i < 3; i++) {
                c.send(i);
            }
            check(c.len() == 3 && c.cap() == 10, "chan len/cap %d %d want 3 10", c.len(), c.cap());
            c = Chan.make();
            check(c.len() == 0 && c.cap() == 0, "chan len/cap %d %d want 0 0", c.len(), c.cap());
            int n = -1;
            shouldPanic("makechan: size out of range", () -> Chan.make(n));
            shouldPanic("makechan: size out of range", () -> Chan.make((long) n));
            // Test mem > maxAlloc
            shouldPanic("makechan: size out of range", () -> Chan.make(1L << 59));
            // Test elem.size*cap overflow
            shouldPanic("makechan: size out of range", () -> Chan.make(Long.MAX_VALUE));
            // Java: beyond the largest array
            shouldPanic("makechan: size out of range", () -> Chan.make(Integer.MAX_VALUE));
        });
    }

    @Test
    void nilChannelLenCapAndClose() {
        Chan<Integer> nil = Chan.nil();
        assertEquals(0, nil.len());
        assertEquals(0, nil.cap());
        shouldPanic("close of nil channel", nil::close);
        assertEquals(false, nil.trySend(1));
        assertEquals(null, nil.tryRecv());
    }
}
