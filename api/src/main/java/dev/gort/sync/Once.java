package dev.gort.sync;

import dev.gort.PanicError;
import dev.gort.internal.GoParker;
import dev.gort.internal.Parker;
import dev.gort.runtime.Scheduler;
import java.util.function.Supplier;

/**
 * Go's {@code sync.Once}: runs a function exactly once; every caller returns only after it has
 * finished (if it panics, Once still counts it as done).
 *
 * <p>Go: sync/once.go
 */
public class Once {
    /** 0 until f has returned: written under m (volatile), read volatile on the fast path. */
    private volatile int done;

    private final Mutex m;

    public Once() {
        this(GoParker.INSTANCE);
    }

    Once(Parker parker) {
        m = new Mutex(parker);
    }

    /**
     * Calls f if and only if do is being called for the first time for this Once. A recursive call
     * from f deadlocks, as in Go.
     *
     * <p>Go: (*Once).Do
     */
    public void run(Runnable f) {
        // Note: a CAS of done here would be wrong: "done" must mean "f has returned", so that a
        // second caller that loses the race waits for f instead of returning before f is done.
        if (done == 0) {
            // Outlined slow path to allow inlining of the fast path.
            doSlow(f);
        }
    }

    private void doSlow(Runnable f) {
        m.lock();
        try {
            if (done == 0) {
                try {
                    f.run();
                } finally {
                    done = 1;
                }
            }
        } finally {
            m.unlock();
        }
    }

    public boolean isDone() {
        return done != 0;
    }

    /**
     * A function that calls f only once, however many times and from however many goroutines it is
     * called; every call returns after f has returned. If f panics (throws), f is still called only
     * once and the returned function throws the same throwable on the first and on every later
     * call. If f ends its goroutine with {@code Go.goexit()} (Go: "the results are unspecified",
     * but f is not called twice), the first caller's goroutine ends so, and later calls panic with
     * {@code panic called with nil argument}, Go's {@code panic(nil)} (Go's first caller also gets
     * that recoverable panic from the deferred re-panic before its Goexit resumes; here it does
     * not). f is dropped after its call, whatever its outcome, so that what it holds can be
     * collected (as Go's does: TestOnceXGC).
     *
     * <p>Go 1.21: sync.OnceFunc
     */
    public static Runnable onceFunc(Runnable f) {
        java.util.Objects.requireNonNull(f, "f");
        OnceCall<Void> c = new OnceCall<>(() -> {
            f.run();
            return null;
        });
        return c::get;
    }

    /**
     * A function that calls f only once and returns its value on every call; panics as
     * {@link #onceFunc}.
     *
     * <p>Go 1.21: sync.OnceValue
     */
    public static <T> Supplier<T> onceValue(Supplier<? extends T> f) {
        java.util.Objects.requireNonNull(f, "f");
        return new OnceCall<T>(f)::get;
    }

    /**
     * A function that calls f only once and returns its two values on every call; panics as
     * {@link #onceFunc}. Java has no multiple results: f returns them as a {@link Values}.
     *
     * <p>Go 1.21: sync.OnceValues
     */
    public static <T1, T2> Supplier<Values<T1, T2>> onceValues(Supplier<Values<T1, T2>> f) {
        return onceValue(f);
    }

    /** The two results of an {@link #onceValues} function (Go's {@code (T1, T2)}). */
    public record Values<T1, T2>(T1 v1, T2 v2) {}

    /**
     * The state behind onceFunc, onceValue and onceValues: one Once, f until its call, and its
     * outcome. Go: oncefunc.go (the closure's variables, in one object).
     */
    private static final class OnceCall<T> {
        private final Once once = new Once();
        /** Immutable: the body given to once.run, made once so that the fast path allocates nothing. */
        private final Runnable body = this::call;
        /** Read and cleared inside once.run only (under once.m). */
        private Supplier<? extends T> f;
        /**
         * valid, result and p: written inside once.run (under once.m), before its volatile store of
         * done; read after once.run returned, which read done volatile: plain.
         */
        private boolean valid;

        private T result;
        /** What f threw (the panic value), or null if f returned or ended with Goexit. */
        private Throwable p;

        OnceCall(Supplier<? extends T> f) {
            this.f = f;
        }

        T get() {
            once.run(body);
            if (!valid) {
                throw rethrow(p);
            }
            return result;
        }

        private void call() {
            Supplier<? extends T> fn = f;
            f = null; // do not keep f alive after its call, whatever its outcome
            try {
                result = fn.get();
                valid = true; // only if f did not panic
            } catch (Throwable t) {
                // The first caller gets the throwable as it is, with f's whole stack (Go re-panics
                // at once for the same reason); a Goexit is not a panic value (Go's recover()
                // returns nil during Goexit).
                p = Scheduler.isGoexit(t) ? null : t;
                throw t;
            }
        }
    }

    /** Throws t as it is (checked or not); {@code panic(nil)}'s error for null. */
    private static RuntimeException rethrow(Throwable t) {
        if (t == null) {
            throw new PanicError("panic called with nil argument");
        }
        throw Once.<RuntimeException>sneaky(t);
    }

    @SuppressWarnings("unchecked")
    private static <E extends Throwable> E sneaky(Throwable t) throws E {
        throw (E) t;
    }
}
