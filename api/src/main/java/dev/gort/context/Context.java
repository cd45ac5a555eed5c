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
     * As {@link #withCancel}: the returned context's {@link CancelContext#cancel(Throwable)} is Go's
     * CancelCauseFunc. Canceling with a non-null cause records it for {@link #cause}; with null, the
     * cause is CANCELED. A context already canceled keeps its first cause. (Every CancelContext has
     * both cancel forms; this factory exists so that Go's name finds it.)
     *
     * <p>Go 1.20: context.WithCancelCause
     */
    static CancelContext withCancelCause(Context parent) {
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
        return Contexts.withDeadline(parent, d, -1, null);
    }

    /**
     * As {@link #withDeadline}, and when the deadline passes, {@link #cause} of the context is
     * {@code cause} (err is still DEADLINE_EXCEEDED). A {@link CancelContext#cancel()} before the
     * deadline does not set it (Go: "the returned CancelFunc does not set the cause"). A null cause
     * is DEADLINE_EXCEEDED.
     *
     * <p>Go 1.21: context.WithDeadlineCause
     */
    static CancelContext withDeadlineCause(Context parent, Instant d, Throwable cause) {
        return Contexts.withDeadline(parent, d, -1, cause);
    }

    /**
     * withDeadline(parent, now + timeout), timed on the monotonic clock. Go: context.WithTimeout.
     */
    static CancelContext withTimeout(Context parent, Duration timeout) {
        return Contexts.withDeadline(parent, Contexts.deadlineAfter(timeout), Contexts.nanos(timeout), null);
    }

    /**
     * withDeadlineCause(parent, now + timeout, cause), timed on the monotonic clock.
     *
     * <p>Go 1.21: context.WithTimeoutCause
     */
    static CancelContext withTimeoutCause(Context parent, Duration timeout, Throwable cause) {
        return Contexts.withDeadline(parent, Contexts.deadlineAfter(timeout), Contexts.nanos(timeout), cause);
    }

    /**
     * A copy of parent that is not canceled when parent is: no deadline, a nil done channel, err
     * and {@link #cause} null; its values are parent's.
     *
     * <p>Go 1.21: context.WithoutCancel
     */
    static Context withoutCancel(Context parent) {
        return Contexts.withoutCancel(parent);
    }

    /**
     * Arranges to call f in its own goroutine once ctx is done (canceled or timed out); at once
     * (in its own goroutine) if ctx is already done. Several afterFuncs on one context are
     * independent. The returned {@link StopFunc} ends the association: {@code stop()} returns true
     * if that call stopped f from being run, false if f has already been started (ctx is done) or
     * was already stopped; it does not wait for f to finish. If ctx is an {@link AfterFuncer},
     * its own afterFunc schedules the call.
     *
     * <p>f's goroutine is started by whoever cancels ctx, in that goroutine's runtime (and synctest
     * bubble), as Go's {@code go f()}; when ctx is canceled from outside any goroutine, in the
     * runtime afterFunc was called in (it throws IllegalStateException if that was outside too).
     *
     * <p>Go 1.21: context.AfterFunc
     */
    static StopFunc afterFunc(Context ctx, Runnable f) {
        return Contexts.afterFunc(ctx, f);
    }

    /**
     * The function {@link #afterFunc} returns (Go's {@code stop func() bool}). Go: context.AfterFunc's
     * result.
     */
    @FunctionalInterface
    interface StopFunc {
        /** True if this call stopped f from being run; false if f was started or already stopped. */
        boolean stop();
    }

    /**
     * A Context of another implementation that can run a function when it is done, as
     * {@link #afterFunc} does. withCancel, withDeadline and afterFunc on such a parent register
     * with it (and unregister when canceled) instead of starting a goroutine to watch its done
     * channel. Go: the unexported afterFuncer interface ({@code AfterFunc(func()) func() bool}),
     * which Go finds by its method set.
     */
    interface AfterFuncer {
        /** Arranges to call f in its own goroutine once this context is done; see {@link #afterFunc}. */
        StopFunc afterFunc(Runnable f);
    }

    /** A copy of parent in which key maps to val. Go: context.WithValue. */
    static Context withValue(Context parent, Object key, Object val) {
        return Contexts.withValue(parent, key, val);
    }

    /**
     * Why c was canceled: the cause given to {@link CancelContext#cancel(Throwable)} (or to
     * withDeadlineCause) by the first cancellation of c or of an ancestor, else {@code c.err()};
     * null while not canceled, and always null for a {@link #withoutCancel} context.
     *
     * <p>Go 1.20: context.Cause
     */
    static Throwable cause(Context c) {
        return Contexts.cause(c);
    }
}
