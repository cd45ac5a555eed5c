package dev.gort;

import static dev.gort.GortTesting.check;

import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The channel tests whose semantics involve time (Go's {@code time.Sleep(1ms)} meaning "let the
 * other goroutine block", select3's "blocks = no result within 0.1 s", nonblock's 10 µs ticker):
 * src/runtime/chan_test.go TestChan and TestSelectDuplicateChannel, test/chan/select3.go and
 * test/chan/nonblock.go. The sleeps are gort's (goroutines park on the per-P timers), never
 * Thread.sleep. Each runs at GOMAXPROCS 1, 2 and 4.
 */
class GoChanSleepTest {
    static final long MS = Time.MILLISECOND;

    /** TestChan (Go runs it at GOMAXPROCS 4; here at 1, 2 and 4). */
    @ParameterizedTest
    @ValueSource(ints = {1, 2, 4})
    void chan(int procs) {
        final int n = 200;
        GortTesting.run(procs, () -> {
            for (int chanCap = 0; chanCap < n; chanCap++) {
                final int cc = chanCap;
                {
                    // Ensure that receive from empty chan blocks.
                    Chan<Integer> c = Chan.make(chanCap);
                    AtomicBoolean recv1 = new AtomicBoolean();
                    Go.go(() -> {
                        c.recv();
                        recv1.set(true);
                    });
                    AtomicBoolean recv2 = new AtomicBoolean();
                    Go.go(() -> {
                        c.recv2();
                        recv2.set(true);
                    });
                    Time.sleep(MS);
                    check(!recv1.get() && !recv2.get(), "chan[%d]: receive from empty chan", cc);
                    // Ensure that non-blocking receive does not block.
                    Select.select(
                            Select.recv(c, () -> check(false, "chan[%d]: receive from empty chan", cc)),
                            Select.defaultCase(() -> {}));
                    Select.select(
                            Select.recv2(c, (v, ok) -> check(false, "chan[%d]: receive from empty chan", cc)),
                            Select.defaultCase(() -> {}));
                    c.send(0);
                    c.send(0);
                }
                {
                    // Ensure that send to full chan blocks.
                    Chan<Integer> c = Chan.make(chanCap);
                    for (int i = 0; i < chanCap; i++) {
                        c.send(i);
                    }
                    AtomicInteger sent = new AtomicInteger();
                    Go.go(() -> {
                        c.send(0);
                        sent.set(1);
                    });
                    Time.sleep(MS);
                    check(sent.get() == 0, "chan[%d]: send to full chan", cc);
                    // Ensure that non-blocking send does not block.
                    Select.select(
                            Select.send(c, 0, () -> check(false, "chan[%d]: send to full chan", cc)),
                            Select.defaultCase(() -> {}));
                    c.recv();
                }
                {
                    // Ensure that we receive 0 from closed chan.
                    Chan<Integer> c = Chan.make(chanCap);
                    for (int i = 0; i < chanCap; i++) {
                        c.send(i);
                    }
                    c.close();
                    for (int i = 0; i < chanCap; i++) {
                        int v = c.recv();
                        check(v == i, "chan[%d]: received %d, expected %d", cc, v, i);
                    }
                    Integer v = c.recv();
                    check(v == null, "chan[%d]: received %s, expected the zero value", cc, v);
                    Chan.Received<Integer> r = c.recv2();
                    check(
                            r.value() == null && !r.ok(),
                            "chan[%d]: received %s/%s, expected zero/false",
                            cc,
                            r.value(),
                            r.ok());
                }
                {
                    // Ensure that close unblocks receive.
                    Chan<Integer> c = Chan.make(chanCap);
                    Chan<Boolean> done = Chan.make();
                    Go.go(() -> {
                        Chan.Received<Integer> r = c.recv2();
                        done.send(r.value() == null && !r.ok());
                    });
                    Time.sleep(MS);
                    c.close();
                    check(done.recv(), "chan[%d]: received non zero from closed chan", cc);
                }
                {
                    // Send 100 integers, ensure that we receive them non-corrupted in FIFO order.
                    Chan<Integer> c = Chan.make(chanCap);
                    Go.go(() -> {
                        for (int i = 0; i < 100; i++) {
                            c.send(i);
                        }
                    });
                    for (int i = 0; i < 100; i++) {
                        int v = c.recv();
                        check(v == i, "chan[%d]: received %d, expected %d", cc, v, i);
                    }
                    // Same, but using recv2.
                    Go.go(() -> {
                        for (int i = 0; i < 100; i++) {
                            c.send(i);
                        }
                    });
                    for (int i = 0; i < 100; i++) {
                        Chan.Received<Integer> r = c.recv2();
                        check(r.ok(), "chan[%d]: receive failed, expected %d", cc, i);
                        check(r.value() == i, "chan[%d]: received %d, expected %d", cc, r.value(), i);
                    }
                    // (The 4 senders x 4 receivers x 1000 values part is GoChanTest.fourByFour.)
                }
                {
                    // Test len/cap.
                    Chan<Integer> c = Chan.make(chanCap);
                    check(
                            c.len() == 0 && c.cap() == chanCap,
                            "chan[%d]: bad len/cap, expect %d/%d, got %d/%d",
                            cc,
                            0,
                            cc,
                            c.len(),
                            c.cap());
                    for (int i = 0; i < chanCap; i++) {
                        c.send(i);
                    }
                    check(
                            c.len() == chanCap && c.cap() == chanCap,
                            "chan[%d]: bad len/cap, expect %d/%d, got %d/%d",
                            cc,
                            cc,
                            cc,
                            c.len(),
                            c.cap());
                }
            }
        });
    }

    /**
     * TestSelectDuplicateChannel: goroutine A selects on c, c and d; B then blocks on c; waking A
     * through d must remove both of A's sudogs from c, so that a later send on c wakes B.
     */
    @ParameterizedTest
    @ValueSource(ints = {1, 2, 4})
    void selectDuplicateChannel(int procs) {
        GortTesting.run(procs, () -> {
            Chan<Integer> c = Chan.make();
            Chan<Integer> d = Chan.make();
            Chan<Integer> e = Chan.make();
            // goroutine A
            Go.go(() -> {
                Select.select(Select.recv(c, () -> {}), Select.recv(c, () -> {}), Select.recv(d, () -> {}));
                e.send(9);
            });
            Time.sleep(MS); // make sure goroutine A gets queued first on c
            // goroutine B
            Go.go(() -> c.recv());
            Time.sleep(MS); // make sure goroutine B gets queued on c before continuing
            d.send(7); // wake up A, it dequeues itself from c. This operation used to corrupt c.recvq.
            e.recv(); // A tells us it's done
            c.send(8); // wake up B. This used to fail because c.recvq was corrupted
        });
    }

    // ---- test/chan/select3.go: the semantics table of select ----

    static final String ALWAYS = "function did not";
    static final String NEVER = "function did";

    static void unreachable() {
        throw new PanicError("control flow shouldn't reach here");
    }

    /** Calls f and verifies that f always/never panics depending on signal. */
    static void testPanic(String signal, Runnable f) {
        String s = NEVER;
        try {
            f.run();
        } catch (PanicError e) { // recover()
            s = ALWAYS; // f panicked
        }
        if (!s.equals(signal)) {
            throw new PanicError(signal + " panic");
        }
    }

    /**
     * Calls f and empirically verifies that f always/never blocks depending on signal.
     *
     * <p>Unlike Go's select3.go, which waits 0.1 s either way, an f that must never block gets 10 s:
     * on a loaded machine f's goroutine can wait longer than 0.1 s for a CPU, and the test would read
     * "f blocked". The 0.1 s for an f that must always block stays: a late f there can only pass.
     */
    static void testBlock(String signal, Runnable f) {
        Chan<String> c = Chan.make();
        Go.go(() -> {
            f.run();
            c.send(NEVER); // f didn't block
        });
        long wait = signal.equals(NEVER) ? 10_000 * MS : 100 * MS;
        Go.go(() -> {
            Time.sleep(wait); // 0.1s seems plenty long (10 s where f must not block)
            c.send(ALWAYS); // f blocked always
        });
        if (!c.recv().equals(signal)) {
            throw new PanicError(signal + " block");
        }
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 2, 4})
    void select3(int procs) {
        GortTesting.run(procs, () -> {
            final int async = 1; // asynchronous channels
            Chan<Integer> nilch = Chan.nil();
            Chan<Integer> closedch = Chan.make();
            closedch.close();
            Runnable nothing = () -> {};

            // sending/receiving from a nil channel blocks
            testBlock(ALWAYS, () -> nilch.send(7));
            testBlock(ALWAYS, () -> nilch.recv());

            // sending/receiving from a nil channel inside a select is never selected
            testPanic(
                    NEVER,
                    () -> Select.select(
                            Select.send(nilch, 7, GoChanSleepTest::unreachable), Select.defaultCase(nothing)));
            testPanic(
                    NEVER,
                    () -> Select.select(Select.recv(nilch, GoChanSleepTest::unreachable), Select.defaultCase(nothing)));
            // (a Java null channel reference is the same as nil in a select)
            testPanic(
                    NEVER,
                    () -> Select.select(
                            Select.recv((Chan<Integer>) null, GoChanSleepTest::unreachable),
                            Select.defaultCase(nothing)));

            // sending to an async channel with free buffer space never blocks
            testBlock(NEVER, () -> {
                Chan<Integer> ch = Chan.make(async);
                ch.send(7);
            });

            // receiving from a closed channel never blocks
            testBlock(NEVER, () -> {
                for (int i = 0; i < 10; i++) {
                    if (closedch.recv() != null) {
                        throw new PanicError("expected zero value when reading from closed channel");
                    }
                    Chan.Received<Integer> r = closedch.recv2();
                    if (r.value() != null || r.ok()) {
                        throw new PanicError("expected 0, false from closed channel");
                    }
                }
            });

            // sending to a closed channel panics.
            testPanic(ALWAYS, () -> closedch.send(7));

            // receiving from a non-ready channel always blocks
            testBlock(ALWAYS, () -> {
                Chan<Integer> ch = Chan.make();
                ch.recv();
            });

            // empty selects always block
            testBlock(ALWAYS, () -> Select.select());
            testBlock(ALWAYS, Select::block);

            // selects with only nil channels always block
            testBlock(ALWAYS, () -> Select.select(Select.recv(nilch, GoChanSleepTest::unreachable)));
            testBlock(ALWAYS, () -> Select.select(Select.send(nilch, 7, GoChanSleepTest::unreachable)));
            testBlock(
                    ALWAYS,
                    () -> Select.select(
                            Select.recv(nilch, GoChanSleepTest::unreachable),
                            Select.send(nilch, 7, GoChanSleepTest::unreachable)));

            // selects with non-ready non-nil channels always block
            testBlock(ALWAYS, () -> {
                Chan<Integer> ch = Chan.make();
                Select.select(Select.recv(ch, GoChanSleepTest::unreachable));
            });

            // selects with default cases don't block
            testBlock(NEVER, () -> Select.select(Select.defaultCase(nothing)));
            testBlock(
                    NEVER,
                    () -> Select.select(Select.recv(nilch, GoChanSleepTest::unreachable), Select.defaultCase(nothing)));
            testBlock(
                    NEVER,
                    () -> Select.select(
                            Select.send(nilch, 7, GoChanSleepTest::unreachable), Select.defaultCase(nothing)));

            // selects with ready channels don't block
            testBlock(NEVER, () -> {
                Chan<Integer> ch = Chan.make(async);
                Select.select(Select.send(ch, 7, nothing), Select.defaultCase(GoChanSleepTest::unreachable));
            });
            testBlock(NEVER, () -> {
                Chan<Integer> ch = Chan.make(async);
                ch.send(7);
                Select.select(Select.recv(ch, nothing), Select.defaultCase(GoChanSleepTest::unreachable));
            });

            // selects with closed channels behave like ordinary operations
            testBlock(NEVER, () -> Select.select(Select.recv(closedch, nothing)));
            testBlock(NEVER, () -> Select.select(Select.recv(closedch, (Integer x) -> {})));
            testBlock(NEVER, () -> Select.select(Select.recv2(closedch, (x, ok) -> {})));
            testPanic(ALWAYS, () -> Select.select(Select.send(closedch, 7, nothing)));
            // ... even with a default case (Go: send on closed panics in a select with default too)
            testPanic(ALWAYS, () -> Select.select(Select.send(closedch, 7, nothing), Select.defaultCase(nothing)));
            testPanic(ALWAYS, () -> closedch.trySend(7));

            // select should not get confused if it sees itself
            testBlock(ALWAYS, () -> {
                Chan<Integer> c = Chan.make();
                Select.select(Select.send(c, 1, nothing), Select.recv(c, nothing));
            });
        });
    }

    // ---- test/chan/nonblock.go: non-blocking send/recv succeed once the peer is ready ----

    /**
     * Go's {@code time.Tick(10 µs)}: a cap-1 channel fed by a re-arming AfterFunc that drops a tick
     * when the channel is full (as Go's ticker does).
     */
    static Chan<Long> tick(long period) {
        Chan<Long> c = Chan.make(1);
        Runnable[] f = new Runnable[1];
        f[0] = () -> {
            c.trySend(Time.nanotime());
            Time.afterFunc(period, f[0]);
        };
        Time.afterFunc(period, f[0]);
        return c;
    }

    static final class Nonblock {
        final Chan<Long> ticker = tick(10 * Time.MICROSECOND); // 10 us

        void sleep() {
            ticker.recv();
            ticker.recv();
            Go.gosched();
            Go.gosched();
            Go.gosched();
        }

        /** Go's {@code x, ok = <-c} in a select with default: a non-blocking receive. */
        static <T> Chan.Received<T> nbrecv(Chan<T> c) {
            Chan.Received<T> r = c.tryRecv();
            return r == null ? new Chan.Received<>(null, false) : r;
        }

        void run() {
            Chan<Boolean> sync = Chan.make();
            for (int buffer = 0; buffer < 2; buffer++) {
                Chan<Integer> c32 = Chan.make(buffer);
                Chan<Long> c64 = Chan.make(buffer);
                Chan<Boolean> cb = Chan.make(buffer);
                Chan<String> cs = Chan.make(buffer);

                check(!nbrecv(c32).ok(), "blocked i32sender");
                check(!nbrecv(c64).ok(), "blocked i64sender");
                check(!nbrecv(cb).ok(), "blocked bsender");
                check(!nbrecv(cs).ok(), "blocked ssender");

                Go.go(() -> {
                    check(c32.recv() == 123, "i32 value");
                    sync.send(true);
                });
                retry(() -> c32.trySend(123), "i32receiver buffer=" + buffer);
                sync.recv();

                Go.go(() -> {
                    c32.send(234);
                    sync.send(true);
                });
                if (buffer > 0) {
                    sync.recv();
                }
                Chan.Received<Integer> r32 = retryRecv(c32, "i32sender buffer=" + buffer);
                check(r32.value() == 234, "i32sender value");
                if (buffer == 0) {
                    sync.recv();
                }

                Go.go(() -> {
                    check(c64.recv() == 123456L, "i64 value");
                    sync.send(true);
                });
                retry(() -> c64.trySend(123456L), "i64receiver");
                sync.recv();

                Go.go(() -> {
                    c64.send(234567L);
                    sync.send(true);
                });
                if (buffer > 0) {
                    sync.recv();
                }
                Chan.Received<Long> r64 = retryRecv(c64, "i64sender");
                check(r64.value() == 234567L, "i64sender value");
                if (buffer == 0) {
                    sync.recv();
                }

                Go.go(() -> {
                    check(cb.recv(), "b value");
                    sync.send(true);
                });
                retry(() -> cb.trySend(true), "breceiver");
                sync.recv();

                Go.go(() -> {
                    cb.send(true);
                    sync.send(true);
                });
                if (buffer > 0) {
                    sync.recv();
                }
                Chan.Received<Boolean> rb = retryRecv(cb, "bsender");
                check(rb.value(), "bsender value");
                if (buffer == 0) {
                    sync.recv();
                }

                Go.go(() -> {
                    check(cs.recv().equals("hello"), "s value");
                    sync.send(true);
                });
                retry(() -> cs.trySend("hello"), "sreceiver");
                sync.recv();

                Go.go(() -> {
                    cs.send("hello again");
                    sync.send(true);
                });
                if (buffer > 0) {
                    sync.recv();
                }
                Chan.Received<String> rs = retryRecv(cs, "ssender");
                check(rs.value().equals("hello again"), "ssender value");
                if (buffer == 0) {
                    sync.recv();
                }
            }
        }

        /** Go: {@code for i := 0; i < maxTries; i++ { ok = c <- v; if ok { break }; sleep() }} (newer nonblock.go). */
        void retry(java.util.function.BooleanSupplier op, String what) {
            for (int i = 0; i < MAX_TRIES; i++) {
                if (op.getAsBoolean()) {
                    return;
                }
                sleep();
            }
            throw new PanicError("fail: " + what);
        }

        <T> Chan.Received<T> retryRecv(Chan<T> c, String what) {
            for (int i = 0; i < MAX_TRIES; i++) {
                Chan.Received<T> r = nbrecv(c);
                if (r.ok()) {
                    return r;
                }
                sleep();
            }
            throw new PanicError("fail: " + what);
        }

        static final int MAX_TRIES = 10_000;
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 2, 4})
    void nonblock(int procs) {
        GortTesting.run(procs, () -> new Nonblock().run());
    }
}
