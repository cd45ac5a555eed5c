package dev.gort.context;

import static dev.gort.GortTesting.check;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;

import dev.gort.Chan;
import dev.gort.Go;
import dev.gort.GortTesting;
import dev.gort.Select;
import dev.gort.Time;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Go's context semantics (context_test.go's main cases): cancel, propagation, values, deadlines. */
class ContextTest {
    @Test
    void backgroundIsNeverDone() {
        Context b = Context.background();
        assertSame(Chan.nil(), b.done());
        assertNull(b.err());
        assertEquals(Optional.empty(), b.deadline());
        assertEquals("context.Background", b.toString());
        assertEquals("context.TODO", Context.todo().toString());
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 2, 4})
    void cancelClosesDoneAndPropagatesToChildren(int procs) {
        GortTesting.run(procs, () -> {
            CancelContext parent = Context.withCancel(Context.background());
            CancelContext child = Context.withCancel(parent);
            Context value = Context.withValue(child, "k", "v");
            CancelContext grandchild = Context.withCancel(value);
            Chan<String> out = Chan.make(3);
            for (Context c : new Context[] {parent, child, grandchild}) {
                Go.go(() -> {
                    c.done().recv(); // blocks until canceled
                    out.send(String.valueOf(c.err()));
                });
            }
            check(parent.err() == null && grandchild.done().tryRecv() == null, "not yet canceled");
            check("v".equals(grandchild.value("k")) && grandchild.value("x") == null, "values");
            parent.cancel();
            for (int i = 0; i < 3; i++) {
                check(out.recv().equals("context canceled"), "err");
            }
            check(grandchild.err() == Context.CANCELED, "grandchild canceled");
            check(Context.cause(grandchild) == Context.CANCELED, "cause defaults to err");
            parent.cancel(); // idempotent
        });
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 2})
    void cancelingAChildLeavesTheParentAndRemovesTheChild(int procs) {
        GortTesting.run(procs, () -> {
            CancelContext parent = Context.withCancel(Context.background());
            CancelContext child = Context.withCancel(parent);
            RuntimeException why = new RuntimeException("why");
            child.cancel(why);
            check(child.err() == Context.CANCELED && parent.err() == null, "only the child");
            check(Context.cause(child) == why, "cause");
            Contexts.CancelCtx p = (Contexts.CancelCtx) parent;
            p.mu.lock();
            check(p.children == null || p.children.isEmpty(), "child removed from parent");
            p.mu.unlock();
        });
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 2, 4})
    void withTimeoutExpires(int procs) {
        GortTesting.run(procs, () -> {
            long start = Time.nanotime();
            CancelContext ctx = Context.withTimeout(Context.background(), Duration.ofMillis(20));
            check(ctx.deadline().isPresent(), "deadline set");
            int[] chosen = {0};
            Chan<Integer> never = Chan.make();
            Select.select(Select.recv(ctx.done(), () -> chosen[0] = 1), Select.recv(never, () -> chosen[0] = 2));
            long waited = Time.since(start);
            check(chosen[0] == 1, "done fired");
            check(ctx.err() == Context.DEADLINE_EXCEEDED && ctx.err().timeout(), "err %s", ctx.err());
            check(waited >= 20 * Time.MILLISECOND, "fired early: %d ns", waited);
            check(ctx.err().toString().equals("context deadline exceeded"), "message");
        });
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 2})
    void cancelBeforeDeadlineStopsTheTimer(int procs) {
        GortTesting.run(procs, () -> {
            CancelContext ctx = Context.withTimeout(Context.background(), Duration.ofHours(1));
            ctx.cancel();
            ctx.done().recv();
            check(ctx.err() == Context.CANCELED, "canceled, not timed out");
            Contexts.TimerCtx t = (Contexts.TimerCtx) ctx;
            check(t.timer == null, "timer stopped and dropped");
        });
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 2})
    void pastDeadlineAndEarlierParentDeadline(int procs) {
        GortTesting.run(procs, () -> {
            CancelContext past =
                    Context.withDeadline(Context.background(), Instant.now().minusSeconds(1));
            check(past.err() == Context.DEADLINE_EXCEEDED, "already expired");
            check(past.done().tryRecv() != null, "done closed");
            CancelContext soon = Context.withTimeout(Context.background(), Duration.ofMillis(10));
            CancelContext later = Context.withTimeout(soon, Duration.ofHours(1));
            check(later.deadline().equals(soon.deadline()), "child keeps the earlier parent deadline");
            later.done().recv();
            check(later.err() == Context.DEADLINE_EXCEEDED, "propagated from parent: %s", later.err());
        });
    }

    /**
     * Deadlines past Long's nanoseconds saturate, as Go's Time.Sub does at Duration's range: a far
     * future is a live context, a far past an expired one; neither overflows (ArithmeticException
     * before, from year 2400 or Instant.MAX on, and DateTimeException for a huge timeout).
     */
    @Test
    void deadlinesCenturiesAwaySaturate() {
        GortTesting.run(1, () -> {
            for (Instant far : List.of(Instant.MAX, Instant.parse("9999-12-31T00:00:00Z"))) {
                CancelContext c = Context.withDeadline(Context.background(), far);
                check(c.err() == null, "live until %s", far);
                check(c.deadline().equals(Optional.of(far)), "deadline %s", c.deadline());
                c.cancel();
                check(c.err() == Context.CANCELED, "cancelled: %s", c.err());
            }
            for (Instant past : List.of(Instant.MIN, Instant.parse("1600-01-01T00:00:00Z"))) {
                CancelContext c = Context.withDeadline(Context.background(), past);
                check(c.err() == Context.DEADLINE_EXCEEDED, "expired at %s: %s", past, c.err());
            }
            CancelContext huge = Context.withTimeout(Context.background(), Duration.ofSeconds(Long.MAX_VALUE / 2));
            check(huge.err() == null && huge.deadline().equals(Optional.of(Instant.MAX)), "%s", huge.deadline());
            huge.cancel();
            CancelContext negative = Context.withTimeout(Context.background(), Duration.ofSeconds(Long.MIN_VALUE / 2));
            check(negative.err() == Context.DEADLINE_EXCEEDED, "%s", negative.err());
        });
    }

    /** A foreign Context implementation is watched by a goroutine (propagateCancel's fallback). */
    @ParameterizedTest
    @ValueSource(ints = {1, 2})
    void foreignParentIsWatched(int procs) {
        GortTesting.run(procs, () -> {
            Chan<Void> d = Chan.make();
            ContextError[] err = {null};
            Context foreign = new Context() {
                public Optional<Instant> deadline() {
                    return Optional.empty();
                }

                public Chan<Void> done() {
                    return d;
                }

                public ContextError err() {
                    return err[0];
                }

                public Object value(Object key) {
                    return null;
                }
            };
            CancelContext child = Context.withCancel(foreign);
            err[0] = Context.CANCELED;
            d.close();
            child.done().recv();
            check(child.err() == Context.CANCELED, "child canceled through the watcher goroutine");
        });
    }
}
