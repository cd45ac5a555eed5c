package dev.gort.context;

import dev.gort.Chan;
import dev.gort.Go;
import dev.gort.Select;
import dev.gort.Time;
import dev.gort.Timer;
import dev.gort.runtime.Scheduler;
import dev.gort.sync.Mutex;
import dev.gort.sync.Once;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashSet;
import java.util.Optional;
import java.util.Set;

/**
 * The context implementations. Go: context/context.go emptyCtx, cancelCtx, timerCtx, valueCtx,
 * withoutCancelCtx, afterFuncCtx.
 */
final class Contexts {
    private Contexts() {}

    /** A reusable closed channel (Go: closedchan). */
    static final Chan<Void> CLOSEDCHAN = dev.gort.runtime.Bubble.outside(Chan::make); // no bubble's

    static {
        CLOSEDCHAN.close();
    }

    /** The key under which a cancelCtx returns itself. Go: cancelCtxKey. */
    static final Object CANCEL_CTX_KEY = new Object();

    static final Context BACKGROUND = new EmptyCtx("context.Background");
    static final Context TODO = new EmptyCtx("context.TODO");

    /** Go: emptyCtx. */
    record EmptyCtx(String name) implements Context {
        @Override
        public Optional<Instant> deadline() {
            return Optional.empty();
        }

        @Override
        public Chan<Void> done() {
            return Chan.nil();
        }

        @Override
        public ContextError err() {
            return null;
        }

        @Override
        public Object value(Object key) {
            return null;
        }

        @Override
        public String toString() {
            return name;
        }
    }

    /** Something a cancelCtx's children list can cancel. Go: canceler. */
    interface Canceler {
        void cancel(boolean removeFromParent, ContextError err, Throwable cause);

        Chan<Void> done();
    }

    static CancelContext withCancel(Context parent) {
        if (parent == null) {
            throw new IllegalArgumentException("cannot create context from nil parent");
        }
        CancelCtx c = new CancelCtx(parent);
        c.propagateCancel(parent, c);
        return c;
    }

    /**
     * Go: context.WithDeadline / WithDeadlineCause; timeoutNanos is the monotonic wait (or -1: from
     * the wall clock); cause is the deadline's cause (null: DEADLINE_EXCEEDED).
     */
    static CancelContext withDeadline(Context parent, Instant d, long timeoutNanos, Throwable cause) {
        if (parent == null) {
            throw new IllegalArgumentException("cannot create context from nil parent");
        }
        Optional<Instant> cur = parent.deadline();
        if (cur.isPresent() && cur.get().isBefore(d)) {
            // The current deadline is already sooner than the new one.
            return withCancel(parent);
        }
        TimerCtx c = new TimerCtx(parent, d);
        c.propagateCancel(parent, c);
        long dur = timeoutNanos >= 0 ? timeoutNanos : untilNanos(d);
        if (dur <= 0) {
            c.cancel(true, Context.DEADLINE_EXCEEDED, cause); // deadline has already passed
            return c;
        }
        c.mu.lock();
        try {
            if (c.err == null) {
                c.timer = Time.afterFunc(dur, () -> c.cancel(true, Context.DEADLINE_EXCEEDED, cause));
            }
        } finally {
            c.mu.unlock();
        }
        return c;
    }

    /**
     * Nanoseconds from now until {@code d}, saturating at Long's range as Go's Time.Sub saturates
     * at Duration's: a deadline centuries away is a live context, not an overflow. Go: time.Until.
     */
    static long untilNanos(Instant d) {
        return saturated(Time.until(d));
    }

    /** {@code now + timeout}, Instant.MAX (or MIN) where that lies past Instant's range. */
    static Instant deadlineAfter(Duration timeout) {
        Instant now = Time.now();
        try {
            return now.plus(timeout);
        } catch (java.time.DateTimeException | ArithmeticException e) {
            return timeout.isNegative() ? Instant.MIN : Instant.MAX;
        }
    }

    /** A Duration as non-negative nanoseconds, saturating. */
    static long nanos(Duration d) {
        return Math.max(0, saturated(d));
    }

    /** A Duration as nanoseconds, saturating at Long's range instead of throwing. */
    private static long saturated(Duration d) {
        try {
            return d.toNanos();
        } catch (ArithmeticException e) {
            return d.isNegative() ? Long.MIN_VALUE : Long.MAX_VALUE;
        }
    }

    static Context withValue(Context parent, Object key, Object val) {
        if (parent == null) {
            throw new IllegalArgumentException("cannot create context from nil parent");
        }
        if (key == null) {
            throw new IllegalArgumentException("nil key");
        }
        return new ValueCtx(parent, key, val);
    }

    static Throwable cause(Context c) {
        // Err first (Go reads it last, after the cause): a cancel that lands between a read of a
        // still-null cause and the read of err would otherwise return err, the wrong answer for a
        // context canceled with a cause (Go's TestCauseRace, ContextCauseTest.causeRace, failed so
        // once at GOMAXPROCS=2 in CI). A CancelCtx sets err and cause under one hold of mu, so once
        // err is seen, mu shows the cause. Otherwise as Go: nil until canceled, the cause where a
        // CancelCtx has one, else err (a cancellation in a custom Context).
        Throwable err = c.err();
        if (err == null) {
            return null;
        }
        if (c.value(CANCEL_CTX_KEY) instanceof CancelCtx cc) {
            Throwable cause;
            cc.mu.lock();
            try {
                cause = cc.cause;
            } finally {
                cc.mu.unlock();
            }
            if (cause != null) {
                return cause;
            }
            // Either this context is not canceled, or it is canceled and the cancellation happened
            // in a custom context implementation rather than a CancelCtx.
        }
        // There is no cancelCtxKey value with a cause, so c is not a descendant of a canceled
        // context created by withCancel: it has no cause to return beyond err (a custom Context may
        // still have one).
        return err;
    }

    static Context withoutCancel(Context parent) {
        if (parent == null) {
            throw new IllegalArgumentException("cannot create context from nil parent");
        }
        return new WithoutCancelCtx(parent);
    }

    /** Go: context.AfterFunc. */
    static Context.StopFunc afterFunc(Context ctx, Runnable f) {
        if (ctx == null) {
            throw new IllegalArgumentException("cannot create context from nil parent");
        }
        java.util.Objects.requireNonNull(f, "f");
        AfterFuncCtx a = new AfterFuncCtx(ctx, f);
        a.propagateCancel(ctx, a);
        return () -> {
            boolean[] stopped = {false};
            a.once.run(() -> stopped[0] = true);
            if (stopped[0]) {
                a.cancel(true, Context.CANCELED, null);
            }
            return stopped[0];
        };
    }

    /**
     * The closest CancelCtx of parent whose done channel is parent's, or null (then a goroutine
     * must watch parent's done instead). Go: parentCancelCtx.
     */
    static CancelCtx parentCancelCtx(Context parent) {
        Chan<Void> done = parent.done();
        if (done == CLOSEDCHAN || done.isNil()) {
            return null;
        }
        if (!(parent.value(CANCEL_CTX_KEY) instanceof CancelCtx p)) {
            return null;
        }
        if (p.done != done) {
            return null;
        }
        return p;
    }

    /** Go: removeChild (a parent with an AfterFuncer is {@link CancelCtx#detach}'s). */
    static void removeChild(Context parent, Canceler child) {
        CancelCtx p = parentCancelCtx(parent);
        if (p == null) {
            return;
        }
        p.mu.lock();
        try {
            if (p.children != null) {
                p.children.remove(child);
            }
        } finally {
            p.mu.unlock();
        }
    }

    /** Go: cancelCtx. */
    static class CancelCtx implements CancelContext, Canceler {
        final Context parent;
        /** Protects the fields below. */
        final Mutex mu = new Mutex();
        /** Created lazily, closed by the first cancel: written under mu, read volatile. */
        volatile Chan<Void> done;
        /** Under mu; null after the first cancel. */
        Set<Canceler> children;
        /** Under mu (volatile so that err() may peek without it once set). */
        volatile ContextError err;
        /** Under mu. */
        Throwable cause;
        /**
         * The stop function of this context's registration with an {@link Context.AfterFuncer}
         * parent, or null (then the parent is a CancelCtx's child list, or watched, or never done).
         * Written once by propagateCancel, under mu, before the context is returned to its creator;
         * read volatile by detach. Go: stopCtx (Go wraps the parent in it).
         */
        volatile Context.StopFunc parentStop;

        CancelCtx(Context parent) {
            this.parent = parent;
        }

        @Override
        public Optional<Instant> deadline() {
            return parent.deadline();
        }

        @Override
        public Object value(Object key) {
            if (key == CANCEL_CTX_KEY) {
                return this;
            }
            return parent.value(key);
        }

        @Override
        public Chan<Void> done() {
            Chan<Void> d = done;
            if (d != null) {
                return d;
            }
            mu.lock();
            try {
                d = done;
                if (d == null) {
                    d = Chan.make();
                    done = d;
                }
                return d;
            } finally {
                mu.unlock();
            }
        }

        @Override
        public ContextError err() {
            ContextError e = err;
            if (e != null) {
                return e;
            }
            mu.lock();
            try {
                return err;
            } finally {
                mu.unlock();
            }
        }

        @Override
        public void cancel() {
            cancel(true, CANCELED, null);
        }

        @Override
        public void cancel(Throwable cause) {
            cancel(true, CANCELED, cause);
        }

        /**
         * Arranges for child to be canceled when parent is. Go: (*cancelCtx).propagateCancel.
         */
        void propagateCancel(Context parent, Canceler child) {
            Chan<Void> pdone = parent.done();
            if (pdone.isNil()) {
                return; // parent is never canceled
            }
            if (pdone.tryRecv() != null) {
                // parent is already canceled
                child.cancel(false, parent.err(), Context.cause(parent));
                return;
            }
            CancelCtx p = parentCancelCtx(parent);
            if (p != null) {
                // parent is a cancelCtx, or derives from one.
                p.mu.lock();
                try {
                    if (p.err != null) {
                        // parent has already been canceled
                        child.cancel(false, p.err, p.cause);
                    } else {
                        if (p.children == null) {
                            p.children = new LinkedHashSet<>();
                        }
                        p.children.add(child);
                    }
                } finally {
                    p.mu.unlock();
                }
                return;
            }
            if (parent instanceof Context.AfterFuncer a) {
                // parent implements an afterFunc method.
                mu.lock();
                try {
                    parentStop = a.afterFunc(() -> child.cancel(false, parent.err(), Context.cause(parent)));
                } finally {
                    mu.unlock();
                }
                return;
            }
            // A foreign Context implementation: watch it from a goroutine.
            Go.go(() -> Select.select(
                    Select.recv(pdone, () -> child.cancel(false, parent.err(), Context.cause(parent))),
                    Select.recv(child.done(), () -> {})));
        }

        /**
         * Closes done, cancels each child, and with removeFromParent removes this from its parent's
         * children. Go: (*cancelCtx).cancel.
         */
        @Override
        public void cancel(boolean removeFromParent, ContextError err, Throwable cause) {
            if (err == null) {
                throw new IllegalArgumentException("context: internal error: missing cancel error");
            }
            if (cause == null) {
                cause = err;
            }
            Set<Canceler> kids;
            mu.lock();
            try {
                if (this.err != null) {
                    return; // already canceled
                }
                this.cause = cause;
                this.err = err;
                Chan<Void> d = done;
                if (d == null) {
                    done = CLOSEDCHAN;
                } else {
                    d.close();
                }
                kids = children;
                children = null;
                // NOTE: Go cancels the children while holding the parent's lock; so do we.
                if (kids != null) {
                    for (Canceler child : kids) {
                        child.cancel(false, err, cause);
                    }
                }
            } finally {
                mu.unlock();
            }
            if (removeFromParent) {
                detach();
            }
        }

        /**
         * Removes this context from its parent: stops its AfterFuncer registration, or leaves the
         * parent CancelCtx's children. Go: removeChild(c.Context, c), with its stopCtx case.
         */
        void detach() {
            Context.StopFunc s = parentStop;
            if (s != null) {
                s.stop();
                return;
            }
            removeChild(parent, this);
        }

        @Override
        public String toString() {
            return parent + ".WithCancel";
        }
    }

    /** A cancelCtx with a deadline, canceled by a timer. Go: timerCtx. */
    static final class TimerCtx extends CancelCtx {
        final Instant deadline;
        /** Under mu. */
        Timer timer;

        TimerCtx(Context parent, Instant deadline) {
            super(parent);
            this.deadline = deadline;
        }

        @Override
        public Optional<Instant> deadline() {
            return Optional.of(deadline);
        }

        @Override
        public void cancel(boolean removeFromParent, ContextError err, Throwable cause) {
            super.cancel(false, err, cause);
            if (removeFromParent) {
                // Remove this timerCtx from its parent cancelCtx's children.
                detach();
            }
            mu.lock();
            try {
                if (timer != null) {
                    timer.stop();
                    timer = null;
                }
            } finally {
                mu.unlock();
            }
        }

        @Override
        public String toString() {
            return parent + ".WithDeadline(" + deadline + " [" + Duration.between(Time.now(), deadline) + "])";
        }
    }

    /**
     * A CancelCtx that starts f in its own goroutine when canceled, unless stopped first. Go:
     * afterFuncCtx.
     */
    static final class AfterFuncCtx extends CancelCtx {
        /** Either starts f or stops f from being run: whichever comes first wins. */
        final Once once = new Once();
        /** Immutable. */
        final Runnable f;
        /** Immutable: the runtime afterFunc was called in, or null (outside every goroutine). */
        final Scheduler rt = Scheduler.current();

        AfterFuncCtx(Context parent, Runnable f) {
            super(parent);
            this.f = f;
        }

        @Override
        public void cancel(boolean removeFromParent, ContextError err, Throwable cause) {
            super.cancel(false, err, cause);
            if (removeFromParent) {
                detach();
            }
            once.run(() -> {
                // Go: go a.f(), in the canceling goroutine's runtime (and bubble).
                Scheduler s = Scheduler.current();
                if (s == null) {
                    s = rt;
                }
                if (s == null) {
                    throw new IllegalStateException("gort: not called from a goroutine (use Go.run)");
                }
                s.newproc(f);
            });
        }
    }

    /** Go: withoutCancelCtx. */
    record WithoutCancelCtx(Context parent) implements Context {
        @Override
        public Optional<Instant> deadline() {
            return Optional.empty();
        }

        @Override
        public Chan<Void> done() {
            return Chan.nil();
        }

        @Override
        public ContextError err() {
            return null;
        }

        @Override
        public Object value(Object key) {
            if (key == CANCEL_CTX_KEY) {
                // This is what makes cause(ctx) null for a withoutCancel ctx.
                return null;
            }
            return parent.value(key);
        }

        @Override
        public String toString() {
            return parent + ".WithoutCancel";
        }
    }

    /** Go: valueCtx. */
    record ValueCtx(Context parent, Object key, Object val) implements Context {
        @Override
        public Optional<Instant> deadline() {
            return parent.deadline();
        }

        @Override
        public Chan<Void> done() {
            return parent.done();
        }

        @Override
        public ContextError err() {
            return parent.err();
        }

        @Override
        public Object value(Object k) {
            if (key.equals(k)) {
                return val;
            }
            return parent.value(k);
        }

        @Override
        public String toString() {
            return parent + ".WithValue(" + key + ", " + val + ")";
        }
    }
}
