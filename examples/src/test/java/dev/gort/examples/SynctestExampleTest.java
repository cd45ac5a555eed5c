package dev.gort.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.fail;

import dev.gort.Chan;
import dev.gort.Go;
import dev.gort.PanicError;
import dev.gort.Select;
import dev.gort.Synctest;
import dev.gort.Ticker;
import dev.gort.Time;
import dev.gort.context.Context;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.function.IntPredicate;
import org.junit.jupiter.api.Test;

/**
 * How to test timeouts, retries and tickers with gort's synctest bubbles (Go 1.25's
 * testing/synctest): the test body runs in a bubble whose clock is fake, so minutes of backoff take
 * microseconds and the instants asserted are exact. The README's "Deterministic tests" section.
 */
class SynctestExampleTest {
    /** The README's example: a request that gets no reply times out after exactly five seconds. */
    @Test
    void theRequestTimesOutAfterFiveSeconds() {
        Synctest.test(() -> {
            Context ctx = Context.withTimeout(Context.background(), Duration.ofSeconds(5));
            Chan<String> reply = Chan.make(); // the server never answers
            Instant start = Time.now(); // 2000-01-01T00:00:00Z
            Select.select(
                    Select.recv(reply, (String r) -> fail("no reply expected")), Select.recv(ctx.done(), () -> {}));
            assertEquals(Duration.ofSeconds(5), Time.since(start)); // exactly
            assertEquals(Context.DEADLINE_EXCEEDED, ctx.err());
        });
    }

    /** Code under test: retries {@code attempt} with exponential backoff (1 s, 2 s, 4 s, ...). */
    static int retry(int maxAttempts, IntPredicate attempt, List<Duration> at, Instant start) {
        Duration backoff = Duration.ofSeconds(1);
        for (int n = 1; n <= maxAttempts; n++) {
            at.add(Time.since(start));
            if (attempt.test(n)) {
                return n;
            }
            Time.sleep(backoff);
            backoff = backoff.multipliedBy(2);
        }
        return -1;
    }

    @Test
    void retriesBackOffExponentially() {
        Synctest.test(() -> {
            List<Duration> at = new ArrayList<>();
            assertEquals(5, retry(8, n -> n == 5, at, Time.now()));
            assertEquals(
                    List.of(
                            Duration.ZERO,
                            Duration.ofSeconds(1),
                            Duration.ofSeconds(3),
                            Duration.ofSeconds(7),
                            Duration.ofSeconds(15)),
                    at);
        });
    }

    /** A heartbeat goroutine: Wait lets the test look between ticks, at exact fake instants. */
    @Test
    void aHeartbeatBeatsEveryTenSeconds() {
        Synctest.test(() -> {
            Chan<Instant> beats = Chan.make(16);
            Chan<Boolean> stop = Chan.make();
            Go.go(() -> {
                Ticker t = Time.newTicker(Duration.ofSeconds(10));
                for (boolean[] running = {true}; running[0]; ) {
                    Select.select(
                            Select.recv(t.c(), (Instant now) -> beats.send(now)),
                            Select.recv(stop, () -> running[0] = false));
                }
                t.stop();
            });
            Time.sleep(Duration.ofSeconds(35));
            Synctest.waitBubble(); // the heartbeat is blocked in its select again
            assertEquals(3, beats.len());
            assertEquals(Instant.parse("2000-01-01T00:00:10Z"), beats.recv());
            assertEquals(Instant.parse("2000-01-01T00:00:20Z"), beats.recv());
            assertEquals(Instant.parse("2000-01-01T00:00:30Z"), beats.recv());
            stop.send(true);
        });
    }

    /** A goroutine that can never be woken is a deadlock, reported as Go reports it. */
    @Test
    void aForgottenGoroutineIsReported() {
        PanicError e = assertThrows(
                PanicError.class,
                () -> Synctest.test(() -> {
                    Chan<Integer> never = Chan.make();
                    Go.go(never::recv);
                }));
        assertEquals("deadlock: main bubble goroutine has exited but blocked goroutines remain", e.getMessage());
    }
}
