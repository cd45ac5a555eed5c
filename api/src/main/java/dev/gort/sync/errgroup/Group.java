package dev.gort.sync.errgroup;

import dev.gort.Chan;
import dev.gort.Go;
import dev.gort.PanicError;
import dev.gort.context.CancelContext;
import dev.gort.context.Context;
import dev.gort.sync.Once;
import dev.gort.sync.WaitGroup;
import java.util.Objects;

/**
 * golang.org/x/sync's {@code errgroup.Group}: a collection of goroutines working on subtasks of a
 * common task, with error propagation, an optional limit on how many run at once and, from
 * {@link #withContext}, a context canceled when the first one fails. Related to {@link WaitGroup},
 * with tasks that fail.
 *
 * <pre>{@code
 * Group.WithContext gc = Group.withContext(parent);   // g, ctx := errgroup.WithContext(parent)
 * Group g = gc.group();
 * Context ctx = gc.ctx();
 * for (String url : urls) {
 *     g.go(() -> fetch(ctx, url));                     // g.Go(func() error { return fetch(ctx, url) })
 * }
 * Exception err = g.await();                           // err := g.Wait()
 * }</pre>
 *
 * <p>A task is Go's {@code func() error} ({@link Task}): returning normally is returning nil;
 * throwing an {@link Exception}, checked or not, is returning that error ({@code throw ctx.err()}
 * is Go's {@code return ctx.Err()}). A {@link PanicError} (gort's spelling of a Go panic: {@code
 * send on closed channel}, a {@code Synctest} deadlock, ...) or an {@link Error} ({@code
 * AssertionError}, {@code StackOverflowError}, ...) is a panic: as in the current errgroup, the group
 * does not catch it. The goroutine is counted done (Go's {@code defer g.done()}) and the panic goes
 * on and ends the program, as any goroutine's uncaught throwable does; {@link #await} does not
 * report it. ({@code Go.goexit()} in a task ends its goroutine normally: done, no error.) errgroup
 * propagated panics to Wait for a while in 2025 (CL 644575) and took that back (CL 682935, "it
 * creates more problems than it solves"); gort follows the current code.
 *
 * <p>A new Group (Go's zero Group) has no limit and cancels nothing. A Group should not be reused
 * for different tasks. The first call to {@link #go} must happen before {@link #await}.
 *
 * <p>Go: golang.org/x/sync errgroup/errgroup.go Group
 */
public class Group {
    /**
     * A task: Go's {@code func() error}. Returning is nil; a thrown {@link Exception} is the error;
     * a {@link PanicError} or an {@link Error} is a panic (see {@link Group}).
     */
    @FunctionalInterface
    public interface Task {
        void run() throws Exception;
    }

    /**
     * What {@link #withContext} returns: Go's two results {@code (*Group, context.Context)}.
     *
     * @param group the new group
     * @param ctx the derived context, canceled when a task first fails or {@link #await} first returns
     */
    public record WithContext(Group group, Context ctx) {}

    /** The token a goroutine holds in {@link #sem} while it is active. Go: token. */
    private static final Object TOKEN = Boolean.TRUE;

    /** Immutable; null for a Group made with {@code new} (Go's nil cancel). Go: g.cancel. */
    private final CancelContext cancel;

    /** Go: g.wg. */
    private final WaitGroup wg = new WaitGroup();

    /**
     * The active goroutines' tokens, {@code cap} = the limit; null for no limit. Plain, as Go's: it
     * is written by {@link #setLimit} only while no goroutine of the group is active (Go's rule, not
     * enforced for a negative limit, as in Go), and read by go/tryGo (the caller's) and by the
     * goroutine's {@link #done}, which {@code Go.go} started after the read. Go: g.sem.
     */
    private Chan<Object> sem;

    /** Go: g.errOnce. */
    private final Once errOnce = new Once();

    /**
     * The first error. Written once, inside errOnce (whose lock orders the writers); read by
     * {@link #await} after {@code wg.await()}, which happens after every task's {@code wg.done()}.
     * Go: g.err.
     */
    private Exception err;

    /** A Group with no limit that cancels nothing: Go's zero {@code errgroup.Group}. */
    public Group() {
        this(null);
    }

    private Group(CancelContext cancel) {
        this.cancel = cancel;
    }

    /**
     * A new Group and a Context derived from ctx, canceled the first time a task of the group
     * fails or the first time {@link #await} returns, whichever occurs first. Its {@link
     * Context#cause} is the first error (Go's WithCancelCause), or {@link Context#CANCELED} when
     * await returned with none.
     *
     * <p>Go: errgroup.go WithContext
     */
    public static WithContext withContext(Context ctx) {
        CancelContext c = Context.withCancelCause(ctx);
        return new WithContext(new Group(c), c);
    }

    /** Go: (*Group).done. */
    private void done() {
        Chan<Object> s = sem;
        if (s != null) {
            s.recv();
        }
        wg.done();
    }

    /**
     * Blocks until every task started by {@link #go} and {@link #tryGo} has returned, then returns
     * the first error (the first task's throwable, see {@link Group}), or null if none failed.
     * Cancels the context of {@link #withContext}. ({@code wait} is taken by {@code Object.wait}.)
     *
     * <p>Go: (*Group).Wait
     */
    public Exception await() {
        wg.await();
        if (cancel != null) {
            cancel.cancel(err); // null: the cause is CANCELED, as Go's cancel(nil)
        }
        return err;
    }

    /**
     * Calls f in a new goroutine. Blocks until the new goroutine can be added without the number of
     * active goroutines in the group exceeding the limit ({@link #setLimit}). The first task that
     * fails cancels the context of {@link #withContext}; its error is the one {@link #await}
     * returns. Outside a goroutine it throws as {@code Go.go} does and leaves the group as it was.
     *
     * <p>Go: (*Group).Go
     */
    public void go(Task f) {
        Objects.requireNonNull(f, "f");
        Chan<Object> s = sem;
        if (s != null) {
            s.send(TOKEN);
        }
        wg.add(1);
        start(f);
    }

    /**
     * Calls f in a new goroutine only if the number of active goroutines in the group is now below
     * the limit; true if it started one. (A free slot can be taken by a caller that comes later
     * than one blocked in {@link #go}: Go's "this allows barging iff channels in general allow
     * barging".)
     *
     * <p>Go: (*Group).TryGo
     */
    public boolean tryGo(Task f) {
        Objects.requireNonNull(f, "f");
        Chan<Object> s = sem;
        if (s != null && !s.trySend(TOKEN)) {
            return false;
        }
        wg.add(1);
        start(f);
        return true;
    }

    /** The goroutine of go and tryGo; undoes their token and add if none could be started. */
    private void start(Task f) {
        try {
            Go.go(() -> run(f));
        } catch (RuntimeException | Error e) {
            done(); // no goroutine was started (called outside one)
            throw e;
        }
    }

    /** The body of Go's {@code go func() { defer g.done(); if err := f(); err != nil { ... } }()}. */
    private void run(Task f) {
        try {
            f.run();
        } catch (PanicError p) {
            throw p; // a panic, not an error: done (below), then it ends the program
        } catch (Exception e) {
            errOnce.run(() -> {
                err = e;
                if (cancel != null) {
                    cancel.cancel(e);
                }
            });
        } finally {
            done(); // also for a panic or Goexit, as Go's deferred g.done()
        }
    }

    /**
     * Limits the number of active goroutines in this group to at most n; negative is no limit;
     * zero keeps {@link #go} from adding any. Later calls to go block until they can add a
     * goroutine without exceeding the limit. The limit must not be modified while goroutines of
     * the group are active: that panics {@code errgroup: modify limit while 2 goroutines in the
     * group are still active} ({@link PanicError}), except for a negative n, which Go does not check.
     *
     * <p>Go: (*Group).SetLimit
     */
    public void setLimit(int n) {
        if (n < 0) {
            sem = null;
            return;
        }
        Chan<Object> s = sem;
        int active = s == null ? 0 : s.len();
        if (active != 0) {
            throw new PanicError(
                    "errgroup: modify limit while " + active + " goroutines in the group are still active");
        }
        sem = Chan.make(n);
    }
}
