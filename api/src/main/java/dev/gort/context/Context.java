package dev.gort.context;

import dev.gort.Chan;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;

/**
 * Go's {@code context.Context}: carries a cancellation signal (a channel closed on cancel), an
 * optional deadline and request-scoped values across goroutines.
 *
 * <pre>{@code
 * CancelContext ctx = Context.withCancel(Context.background());
 * Go.go(() -> {
 *     Select.select(
 *         Select.recv(ctx.done(), () -> log("stopped: " + ctx.err())),
 *         Select.recv(work, w -> handle(w)));
 * });
 * ctx.cancel();
 * }</pre>
 *
 * <p>Go: context/context.go
 */
public interface Context {
    /** Go: context.Canceled. */
    ContextError CANCELED = new ContextError("context canceled", false);
    /** Go: context.DeadlineExceeded. */
    ContextError DEADLINE_EXCEEDED = new ContextError("context deadline exceeded", true);

    /** When work done on behalf of this context should be canceled; empty if no deadline is set. */
    Optional<Instant> deadline();

    /**
     * A channel closed when this context is canceled or times out; {@link Chan#nil()} (never
     * closed) for a context that can never be canceled.
     */
    Chan<Void> done();

    /** Null while done is not closed; then why: CANCELED or DEADLINE_EXCEEDED. */
    ContextError err();

    /** The value associated with key in this context chain, or null. */
    Object value(Object key);

    /** A non-nil, empty context: never canceled, no values, no deadline. Go: context.Background. */
    static Context background() {
        return Contexts.BACKGROUND;
    }

    /** Like background, for when it is unclear which context to use. Go: context.TODO. */
    static Context todo() {
        return Contexts.TODO;
    }

    /**
     * A copy of parent with a new done channel, closed when {@link CancelContext#cancel()} is
     * called or when the parent's done channel is closed, whichever happens first.
     *
     * <p>Go: context.WithCancel
     */
    static CancelContext withCancel(Context parent) {
        return Contexts.withCancel(parent);
    }

    /**
     * A copy of parent whose done channel closes at deadline {@code d} (with err
     * DEADLINE_EXCEEDED), on cancel, or when the parent's closes, whichever happens first. If the
     * parent's deadline is already earlier, it is withCancel(parent). Must be called from a
     * goroutine (the deadline is a gort timer: Time.afterFunc).
     *
     * <p>Go: context.WithDeadline
     */
    static CancelContext withDeadline(Context parent, Instant d) {
        return Contexts.withDeadline(parent, d, -1);
    }

    /**
     * withDeadline(parent, now + timeout), timed on the monotonic clock. Go: context.WithTimeout.
     */
    static CancelContext withTimeout(Context parent, Duration timeout) {
        return Contexts.withDeadline(parent, Contexts.deadlineAfter(timeout), Contexts.nanos(timeout));
    }

    /** A copy of parent in which key maps to val. Go: context.WithValue. */
    static Context withValue(Context parent, Object key, Object val) {
        return Contexts.withValue(parent, key, val);
    }

    /**
     * Why c was canceled: the cause given to {@link CancelContext#cancel(Throwable)}, else
     * {@code c.err()}; null while not canceled. Go: context.Cause.
     */
    static Throwable cause(Context c) {
        return Contexts.cause(c);
    }
}
