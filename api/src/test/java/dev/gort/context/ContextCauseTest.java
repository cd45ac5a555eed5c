package dev.gort.context;

import static dev.gort.GortTesting.check;
import static org.junit.jupiter.api.Assertions.assertSame;

import dev.gort.Chan;
import dev.gort.Go;
import dev.gort.GortTesting;
import dev.gort.sync.Mutex;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Go 1.20-1.21's cancellation causes and WithoutCancel (x_test.go TestCause and its neighbours):
 * the first cancellation of a context or of an ancestor sets the cause; withDeadlineCause's cause
 * is the deadline's only; a withoutCancel context has neither err nor cause; a custom Context's
 * Cause is its Err.
 */
class ContextCauseTest {
    static final Duration FOREVER = Duration.ofSeconds(1_000_000);

    record Case(String name, Supplier<Context> ctx, ContextError err, Throwable cause) {}

    /** Go: TestCause, every row. */
    @Test
    void causeTable() {
        Throwable parentCause = new RuntimeException("parentCause");
        Throwable childCause = new RuntimeException("childCause");
        Throwable tooSlow = new RuntimeException("tooSlow");
        Throwable finishedEarly = new RuntimeException("finishedEarly");
        List<Case> cases = new ArrayList<>();
        cases.add(new Case("Background", Context::background, null, null));
        cases.add(new Case("TODO", Context::todo, null, null));
        cases.add(new Case(
                "WithCancel",
                () -> {
                    CancelContext c = Context.withCancel(Context.background());
                    c.cancel();
                    return c;
                },
                Context.CANCELED,
                Context.CANCELED));
        cases.add(new Case(
                "WithCancelCause",
                () -> {
                    CancelContext c = Context.withCancelCause(Context.background());
                    c.cancel(parentCause);
                    return c;
                },
                Context.CANCELED,
                parentCause));
        cases.add(new Case(
                "WithCancelCause nil",
                () -> {
                    CancelContext c = Context.withCancelCause(Context.background());
                    c.cancel(null);
                    return c;
                },
                Context.CANCELED,
                Context.CANCELED));
        cases.add(new Case(
                "WithCancelCause: parent cause before child",
                () -> {
                    CancelContext p = Context.withCancelCause(Context.background());
                    CancelContext c = Context.withCancelCause(p);
                    p.cancel(parentCause);
                    c.cancel(childCause);
                    return c;
                },
                Context.CANCELED,
                parentCause));
        cases.add(new Case(
                "WithCancelCause: parent cause after child",
                () -> {
                    CancelContext p = Context.withCancelCause(Context.background());
                    CancelContext c = Context.withCancelCause(p);
                    c.cancel(childCause);
                    p.cancel(parentCause);
                    return c;
                },
                Context.CANCELED,
                childCause));
        cases.add(new Case(
                "WithCancelCause: parent cause before nil",
                () -> {
                    CancelContext p = Context.withCancelCause(Context.background());
                    CancelContext c = Context.withCancel(p);
                    p.cancel(parentCause);
                    c.cancel();
                    return c;
                },
                Context.CANCELED,
                parentCause));
        cases.add(new Case(
                "WithCancelCause: parent cause after nil",
                () -> {
                    CancelContext p = Context.withCancelCause(Context.background());
                    CancelContext c = Context.withCancel(p);
                    c.cancel();
                    p.cancel(parentCause);
                    return c;
                },
                Context.CANCELED,
                Context.CANCELED));
        cases.add(new Case(
                "WithCancelCause: child cause after nil",
                () -> {
                    CancelContext p = Context.withCancel(Context.background());
                    CancelContext c = Context.withCancelCause(p);
                    p.cancel();
                    c.cancel(childCause);
                    return c;
                },
                Context.CANCELED,
                Context.CANCELED));
        cases.add(new Case(
                "WithCancelCause: child cause before nil",
                () -> {
                    CancelContext p = Context.withCancel(Context.background());
                    CancelContext c = Context.withCancelCause(p);
                    c.cancel(childCause);
                    p.cancel();
                    return c;
                },
                Context.CANCELED,
                childCause));
        cases.add(new Case(
                "WithTimeout",
                () -> {
                    CancelContext c = Context.withTimeout(Context.background(), Duration.ZERO);
                    c.cancel();
                    return c;
                },
                Context.DEADLINE_EXCEEDED,
                Context.DEADLINE_EXCEEDED));
        cases.add(new Case(
                "WithTimeout canceled",
                () -> {
                    CancelContext c = Context.withTimeout(Context.background(), FOREVER);
                    c.cancel();
                    return c;
                },
                Context.CANCELED,
                Context.CANCELED));
        cases.add(new Case(
                "WithTimeoutCause",
                () -> {
                    CancelContext c = Context.withTimeoutCause(Context.background(), Duration.ZERO, tooSlow);
                    c.cancel();
                    return c;
                },
                Context.DEADLINE_EXCEEDED,
                tooSlow));
        cases.add(new Case(
                "WithTimeoutCause canceled",
                () -> {
                    CancelContext c = Context.withTimeoutCause(Context.background(), FOREVER, tooSlow);
                    c.cancel();
                    return c;
                },
                Context.CANCELED,
                Context.CANCELED));
        cases.add(new Case(
                "WithTimeoutCause stacked",
                () -> {
                    CancelContext p = Context.withCancelCause(Context.background());
                    CancelContext c = Context.withTimeoutCause(p, Duration.ZERO, tooSlow);
                    p.cancel(finishedEarly);
                    return c;
                },
                Context.DEADLINE_EXCEEDED,
                tooSlow));
        cases.add(new Case(
                "WithTimeoutCause stacked canceled",
                () -> {
                    CancelContext p = Context.withCancelCause(Context.background());
                    CancelContext c = Context.withTimeoutCause(p, FOREVER, tooSlow);
                    p.cancel(finishedEarly);
                    return c;
                },
                Context.CANCELED,
                finishedEarly));
        cases.add(new Case("WithoutCancel", () -> Context.withoutCancel(Context.background()), null, null));
        cases.add(new Case(
                "WithoutCancel canceled",
                () -> {
                    CancelContext p = Context.withCancelCause(Context.background());
                    Context c = Context.withoutCancel(p);
                    p.cancel(finishedEarly);
                    return c;
                },
                null,
                null));
        cases.add(new Case(
                "WithoutCancel timeout",
                () -> {
                    CancelContext p = Context.withTimeoutCause(Context.background(), Duration.ZERO, tooSlow);
                    Context c = Context.withoutCancel(p);
                    p.cancel();
                    return c;
                },
                null,
                null));
        GortTesting.run(1, () -> {
            for (Case tc : cases) {
                Context ctx = tc.ctx().get();
                check(ctx.err() == tc.err(), "%s: ctx.err() = %s want %s", tc.name(), ctx.err(), tc.err());
                Throwable got = Context.cause(ctx);
                check(got == tc.cause(), "%s: cause(ctx) = %s want %s", tc.name(), got, tc.cause());
            }
        });
    }

    /** A deadline in the past given as an Instant: withDeadlineCause sets the cause at once. */
    @Test
    void withDeadlineCauseInThePast() {
        GortTesting.run(1, () -> {
            Throwable late = new RuntimeException("late");
            CancelContext c = Context.withDeadlineCause(
                    Context.background(), Instant.now().minusSeconds(1), late);
            check(c.err() == Context.DEADLINE_EXCEEDED, "err %s", c.err());
            assertSame(late, Context.cause(c));
            CancelContext child = Context.withCancel(c);
            assertSame(late, Context.cause(child), "a child of a canceled parent inherits its cause");
        });
    }

    /** The timer path of withTimeoutCause: the deadline fires later and sets the cause then. */
    @Test
    void withTimeoutCauseSetsTheCauseWhenTheTimerFires() {
        GortTesting.run(
                2,
                () -> dev.gort.Synctest.test(() -> {
                    Throwable tooSlow = new RuntimeException("tooSlow");
                    CancelContext c = Context.withTimeoutCause(Context.background(), Duration.ofSeconds(5), tooSlow);
                    CancelContext child = Context.withCancel(c);
                    check(Context.cause(c) == null, "cause before the deadline: %s", Context.cause(c));
                    child.done().recv();
                    check(c.err() == Context.DEADLINE_EXCEEDED, "err %s", c.err());
                    assertSame(tooSlow, Context.cause(c));
                    assertSame(tooSlow, Context.cause(child));
                }));
    }

    /** Go: TestWithCancelCanceledParent. */
    @Test
    void withCancelOfACanceledParent() {
        GortTesting.run(1, () -> {
            CancelContext parent = Context.withCancelCause(Context.background());
            Throwable cause = new RuntimeException("Because!");
            parent.cancel(cause);
            CancelContext c = Context.withCancel(parent);
            check(c.done().tryRecv() != null, "child not done immediately upon construction");
            check(c.err() == Context.CANCELED, "child not canceled: %s", c.err());
            check(Context.cause(c) == cause, "child has wrong cause: %s", Context.cause(c));
        });
    }

    /** Go: TestWithCancelSimultaneouslyCanceledParent. */
    @ParameterizedTest
    @ValueSource(ints = {1, 4})
    void withCancelOfASimultaneouslyCanceledParent(int procs) {
        GortTesting.run(procs, () -> {
            for (int i = 0; i < 100; i++) {
                CancelContext parent = Context.withCancelCause(Context.background());
                Throwable cause = new RuntimeException("Because!");
                Go.go(() -> parent.cancel(cause));
                CancelContext c = Context.withCancel(parent);
                c.done().recv();
                check(c.err() == Context.CANCELED, "child not canceled: %s", c.err());
                check(Context.cause(c) == cause, "child has wrong cause: %s", Context.cause(c));
            }
        });
    }

    /** Go: TestCauseRace. Polling cause (not done) sees the cause, never a half-set state. */
    @ParameterizedTest
    @ValueSource(ints = {1, 4})
    void causeRace(int procs) {
        GortTesting.run(procs, () -> {
            Throwable cause = new RuntimeException("TestCauseRace");
            CancelContext ctx = Context.withCancelCause(Context.background());
            Go.go(() -> ctx.cancel(cause));
            for (; ; ) {
                Throwable err = Context.cause(ctx);
                if (err != null) {
                    check(err == cause, "cause returned %s, want %s", err, cause);
                    break;
                }
                Go.gosched();
            }
        });
    }

    /**
     * causeRace without its Gosched, two thousand times on two Ps: a poll of cause that overlaps the
     * cancel must see the cause, never the bare error (Go's Cause reads the cause, then err, and a
     * cancel landing between the two returned err: 86,902 of 200,000 polls did so in a scratch run
     * of this loop before cause read err first; none since).
     */
    @Test
    void causeOverlappingTheCancelIsTheCause() {
        GortTesting.run(2, () -> {
            for (int i = 0; i < 2_000; i++) {
                Throwable cause = new RuntimeException("overlap " + i);
                CancelContext ctx = Context.withCancelCause(Context.background());
                Go.go(() -> ctx.cancel(cause));
                Throwable err;
                while ((err = Context.cause(ctx)) == null) {
                    Thread.onSpinWait();
                }
                check(err == cause, "cause returned %s, want %s", err, cause);
            }
        });
    }

    /** Go: TestWithoutCancel, and its children are never canceled by the parent either. */
    @Test
    void withoutCancelKeepsValuesAndDropsCancellation() {
        GortTesting.run(1, () -> {
            CancelContext parent =
                    Context.withTimeout(Context.withValue(Context.background(), "key", "value"), FOREVER);
            Context ctx = Context.withoutCancel(parent);
            check(ctx.deadline().isEmpty(), "deadline %s want none", ctx.deadline());
            check(ctx.done().isNil(), "done() want the nil channel");
            check(ctx.err() == null, "err %s want null", ctx.err());
            check("value".equals(ctx.value("key")), "value(key) = %s want value", ctx.value("key"));
            CancelContext child = Context.withCancel(ctx);
            parent.cancel();
            check(ctx.err() == null && child.err() == null, "canceled through withoutCancel");
            check(ctx.toString().endsWith(".WithoutCancel"), "%s", ctx);
            child.cancel();
        });
    }

    /** Go: TestInvalidDerivedFail, for the new factories. */
    @Test
    void nilParentsAreRejected() {
        for (Runnable r : List.<Runnable>of(
                () -> Context.withoutCancel(null),
                () -> Context.withCancelCause(null),
                () -> Context.afterFunc(null, () -> {}))) {
            try {
                r.run();
                throw new AssertionError("expected a panic");
            } catch (IllegalArgumentException e) {
                check(e.getMessage().equals("cannot create context from nil parent"), "%s", e.getMessage());
            }
        }
    }

    /**
     * A context of another implementation over ctx1 with its own done channel: the child is watched
     * by a goroutine and its cause is ctx1's. Go: customDoneContext, TestCustomContextPropagation.
     */
    @Test
    void customDoneContextPropagatesTheCause() {
        GortTesting.run(2, () -> {
            Throwable cause = new RuntimeException("TestCustomContextPropagation");
            Chan<Void> donec = Chan.make();
            CancelContext ctx1 = Context.withCancelCause(Context.background());
            Context ctx2 = new Context() {
                public Optional<Instant> deadline() {
                    return ctx1.deadline();
                }

                public Chan<Void> done() {
                    return donec;
                }

                public ContextError err() {
                    return ctx1.err();
                }

                public Object value(Object key) {
                    return ctx1.value(key);
                }
            };
            CancelContext ctx3 = Context.withCancel(ctx2);
            ctx1.cancel(cause);
            donec.close();
            ctx3.done().recv();
            check(ctx3.err() == Context.CANCELED, "child not canceled: %s", ctx3.err());
            check(Context.cause(ctx3) == cause, "child has wrong cause: %s", Context.cause(ctx3));
        });
    }

    /**
     * A context of another implementation that reports its own err over an uncanceled CancelCtx's
     * values: its cause is its err, not the CancelCtx's (still null) cause. Go 1.21.x's Cause fix.
     */
    @Test
    void causeOfACustomContextOverAnUncanceledCancelCtxIsItsErr() {
        GortTesting.run(1, () -> {
            CancelContext inner = Context.withCancel(Context.background());
            Context custom = new Context() {
                public Optional<Instant> deadline() {
                    return Optional.empty();
                }

                public Chan<Void> done() {
                    return Contexts.CLOSEDCHAN;
                }

                public ContextError err() {
                    return Context.CANCELED;
                }

                public Object value(Object key) {
                    return inner.value(key);
                }
            };
            check(Context.cause(custom) == Context.CANCELED, "cause = %s", Context.cause(custom));
            inner.cancel();
        });
    }

    /** Go: customCauseContext. */
    static final class CustomCauseContext implements Context {
        final Mutex mu = new Mutex();
        final Chan<Void> done = Chan.make();
        ContextError err;
        CancelContext cancelChild;

        public Optional<Instant> deadline() {
            return Optional.empty();
        }

        public Chan<Void> done() {
            return done;
        }

        public ContextError err() {
            mu.lock();
            try {
                return err;
            } finally {
                mu.unlock();
            }
        }

        public Object value(Object key) {
            return null;
        }

        void cancel() {
            CancelContext c;
            mu.lock();
            try {
                err = Context.CANCELED;
                done.close();
                c = cancelChild;
            } finally {
                mu.unlock();
            }
            if (c != null) {
                c.cancel();
            }
        }
    }

    /** Go: TestCustomContextCause. A custom context's cause is its err; a child's own cause stays. */
    @Test
    void customContextCause() {
        GortTesting.run(2, () -> {
            CustomCauseContext ccc = new CustomCauseContext();
            ccc.cancel();
            check(ccc.err() == Context.CANCELED, "ccc.err() = %s", ccc.err());
            check(Context.cause(ccc) == Context.CANCELED, "cause(ccc) = %s", Context.cause(ccc));

            ccc = new CustomCauseContext();
            CancelContext ctx = Context.withCancelCause(ccc);
            Throwable cause = new RuntimeException("TestCustomContextCause");
            ctx.cancel(cause);
            check(ctx.err() == Context.CANCELED, "ctx.err() = %s", ctx.err());
            check(Context.cause(ctx) == cause, "cause(ctx) = %s", Context.cause(ctx));
            check(ccc.err() == null && Context.cause(ccc) == null, "the custom parent was canceled");

            ccc.cancel();
            check(Context.cause(ctx) == cause, "after the parent's cancel: cause(ctx) = %s", Context.cause(ctx));
            check(Context.cause(ccc) == Context.CANCELED, "cause(ccc) = %s", Context.cause(ccc));

            ccc = new CustomCauseContext();
            CancelContext child = Context.withCancel(ccc);
            ccc.cancelChild = child;
            ccc.cancel();
            check(child.err() == Context.CANCELED, "child.err() = %s", child.err());
            check(Context.cause(child) == Context.CANCELED, "cause(child) = %s", Context.cause(child));
            check(Context.cause(ccc) == Context.CANCELED, "cause(ccc) = %s", Context.cause(ccc));
        });
    }
}
