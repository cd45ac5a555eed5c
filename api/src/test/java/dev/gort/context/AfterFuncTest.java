package dev.gort.context;

import static dev.gort.GortTesting.check;

import dev.gort.Chan;
import dev.gort.Go;
import dev.gort.GortTesting;
import dev.gort.Synctest;
import dev.gort.runtime.ExternalWaker;
import dev.gort.runtime.Scheduler;
import dev.gort.sync.Mutex;
import dev.gort.sync.WaitGroup;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Go 1.21's context.AfterFunc (x_test.go's TestAfterFunc*, afterfunc_test.go's custom
 * AfterFuncer contexts). "f is not called" is checked inside a synctest bubble after
 * {@link Synctest#waitBubble()}: once every goroutine of the bubble is durably blocked, a started f
 * would have run (Go's tests wait a short real duration instead).
 */
class AfterFuncTest {
    static final Duration VERY_LONG = Duration.ofHours(1000);

    /** Go: TestAfterFuncCalledAfterCancel. Not before the cancel, once after it; stop then false. */
    @Test
    void calledAfterCancel() {
        GortTesting.run(
                2,
                () -> Synctest.test(() -> {
                    CancelContext ctx = Context.withCancel(Context.background());
                    Chan<Void> donec = Chan.make();
                    Context.StopFunc stop = Context.afterFunc(ctx, donec::close);
                    Synctest.waitBubble();
                    check(donec.tryRecv() == null, "AfterFunc called before context is done");
                    ctx.cancel();
                    donec.recv();
                    check(!stop.stop(), "stop() = true, want false");
                }));
    }

    /** Go: TestAfterFuncCalledAfterTimeout. */
    @Test
    void calledAfterTimeout() {
        GortTesting.run(
                2,
                () -> Synctest.test(() -> {
                    CancelContext ctx = Context.withTimeout(Context.background(), Duration.ofMillis(20));
                    Chan<Void> donec = Chan.make();
                    Context.afterFunc(ctx, donec::close);
                    donec.recv(); // the bubble's clock reaches the deadline once all are blocked
                    check(ctx.err() == Context.DEADLINE_EXCEEDED, "err %s", ctx.err());
                    ctx.cancel();
                }));
    }

    /** Go: TestAfterFuncCalledImmediately. An already canceled context: f runs at once. */
    @Test
    void calledImmediatelyForACanceledContext() {
        GortTesting.run(1, () -> {
            CancelContext ctx = Context.withCancel(Context.background());
            ctx.cancel();
            Chan<Void> donec = Chan.make();
            Context.StopFunc stop = Context.afterFunc(ctx, donec::close);
            donec.recv();
            check(!stop.stop(), "stop() = true after f started");
        });
    }

    /** Go: TestAfterFuncNotCalledAfterStop. stop first: true; then f never runs; stop again false. */
    @Test
    void notCalledAfterStop() {
        GortTesting.run(
                2,
                () -> Synctest.test(() -> {
                    CancelContext ctx = Context.withCancel(Context.background());
                    Chan<Void> donec = Chan.make();
                    Context.StopFunc stop = Context.afterFunc(ctx, donec::close);
                    check(stop.stop(), "stop() = false, want true");
                    ctx.cancel();
                    Synctest.waitBubble();
                    check(donec.tryRecv() == null, "AfterFunc called for already-canceled context");
                    check(!stop.stop(), "stop() = true, want false");
                    Contexts.CancelCtx p = (Contexts.CancelCtx) ctx;
                    check(p.children == null, "children dropped by cancel");
                }));
    }

    /** Go: TestAfterFuncCalledAsynchronously. cancel does not wait for f, which blocks until read. */
    @Test
    void calledAsynchronously() {
        GortTesting.run(1, () -> {
            CancelContext ctx = Context.withCancel(Context.background());
            Chan<Integer> donec = Chan.make();
            Context.StopFunc stop = Context.afterFunc(ctx, () -> donec.send(1)); // blocks until read
            ctx.cancel(); // with f run in place this would deadlock
            check(donec.recv() == 1, "f ran");
            stop.stop();
        });
    }

    /** f runs in its own goroutine, not the canceler's, and in the canceler's synctest bubble. */
    @Test
    void fRunsInItsOwnGoroutineInTheCancelersBubble() {
        GortTesting.run(
                1,
                () -> Synctest.test(() -> {
                    CancelContext ctx = Context.withCancel(Context.background());
                    Chan<String> out = Chan.make(1);
                    Context.afterFunc(ctx, () -> out.send(Scheduler.currentG().goid + " " + Synctest.isInBubble()));
                    long me = Scheduler.currentG().goid;
                    ctx.cancel();
                    String got = out.recv();
                    check(!got.startsWith(me + " "), "f ran in the canceling goroutine %d: %s", me, got);
                    check(got.endsWith(" true"), "f's goroutine is outside the bubble: %s", got);
                }));
    }

    /**
     * stop racing cancel: exactly one wins. Either stop returned true and f never runs, or stop
     * returned false and f runs once.
     */
    @ParameterizedTest
    @ValueSource(ints = {1, 4})
    void stopAndCancelRacingExactlyOneWins(int procs) {
        GortTesting.run(procs, () -> {
            for (int i = 0; i < 200; i++) {
                CancelContext ctx = Context.withCancel(Context.background());
                Chan<Void> ran = Chan.make(2);
                Context.StopFunc stop = Context.afterFunc(ctx, () -> ran.send(null));
                Chan<Boolean> stopped = Chan.make(1);
                Go.go(() -> stopped.send(stop.stop()));
                Go.go(ctx::cancel);
                if (stopped.recv()) {
                    ctx.done().recv();
                    WaitGroup settle = new WaitGroup(); // let any wrongly started f run first
                    for (int k = 0; k < 4; k++) {
                        settle.go(Go::gosched);
                    }
                    settle.await();
                    check(ran.tryRecv() == null, "iteration %d: stop returned true but f ran", i);
                } else {
                    ran.recv(); // f was started: it runs (a lost f hangs here, and the test fails)
                }
                check(!stop.stop(), "a second stop returned true");
            }
        });
    }

    /**
     * Canceled from a thread outside the runtime, f runs in the runtime afterFunc was called in
     * (Go has no such thread; gort's cancel may come from one, e.g. an executor callback).
     */
    @Test
    void canceledFromOutsideTheRuntimeStartsFInTheCallersRuntime() {
        AtomicReference<Throwable> outside = new AtomicReference<>();
        GortTesting.run(2, () -> {
            CancelContext ctx = Context.withCancel(Context.background());
            Chan<Void> donec = Chan.make();
            Context.afterFunc(ctx, donec::close);
            ExternalWaker w = Go.external();
            Thread t = new Thread(() -> {
                try (w) {
                    ctx.cancel();
                } catch (Throwable e) {
                    outside.set(e);
                }
            });
            t.start();
            donec.recv();
        });
        check(outside.get() == null, "cancel from outside threw %s", outside.get());
    }

    // ---------------------------------------------------------------------------------------------
    // afterfunc_test.go: a Context of another implementation that supports afterFunc.

    /** Go: afterfunc_test.go afterFuncContext. */
    static final class AfterFuncContext implements Context, Context.AfterFuncer {
        final Mutex mu = new Mutex();
        final Map<Object, Runnable> afterFuncs = new LinkedHashMap<>();
        Chan<Void> done;
        ContextError err;

        @Override
        public Optional<Instant> deadline() {
            return Optional.empty();
        }

        @Override
        public Chan<Void> done() {
            mu.lock();
            try {
                if (done == null) {
                    done = Chan.make();
                }
                return done;
            } finally {
                mu.unlock();
            }
        }

        @Override
        public ContextError err() {
            mu.lock();
            try {
                return err;
            } finally {
                mu.unlock();
            }
        }

        @Override
        public Object value(Object key) {
            return null;
        }

        @Override
        public Context.StopFunc afterFunc(Runnable f) {
            mu.lock();
            try {
                Object k = new Object();
                afterFuncs.put(k, f);
                return () -> {
                    mu.lock();
                    try {
                        return afterFuncs.remove(k) != null;
                    } finally {
                        mu.unlock();
                    }
                };
            } finally {
                mu.unlock();
            }
        }

        void cancel(ContextError e) {
            mu.lock();
            try {
                if (err != null) {
                    return;
                }
                err = e;
                for (Runnable f : afterFuncs.values()) {
                    Go.go(f);
                }
                afterFuncs.clear();
            } finally {
                mu.unlock();
            }
        }

        int registered() {
            mu.lock();
            try {
                return afterFuncs.size();
            } finally {
                mu.unlock();
            }
        }
    }

    /** Go: TestCustomContextAfterFuncCancel. The child registers with the parent, no watcher. */
    @Test
    void customAfterFuncerCancelsWithCancelChild() {
        GortTesting.run(1, () -> {
            AfterFuncContext ctx0 = new AfterFuncContext();
            CancelContext ctx1 = Context.withCancel(ctx0);
            int before = Go.numGoroutine();
            ctx0.cancel(Context.CANCELED);
            ctx1.done().recv();
            check(Context.cause(ctx1) == Context.CANCELED, "cause %s", Context.cause(ctx1));
            check(before == 1, "a goroutine watches the AfterFuncer parent: %d goroutines", before);
            ctx1.cancel();
        });
    }

    /** Go: TestCustomContextAfterFuncTimeout. */
    @Test
    void customAfterFuncerCancelsWithTimeoutChild() {
        GortTesting.run(1, () -> {
            AfterFuncContext ctx0 = new AfterFuncContext();
            CancelContext ctx1 = Context.withTimeout(ctx0, VERY_LONG);
            ctx0.cancel(Context.CANCELED);
            ctx1.done().recv();
            check(ctx1.err() == Context.CANCELED, "err %s", ctx1.err());
            ctx1.cancel();
        });
    }

    /** Go: TestCustomContextAfterFuncAfterFunc. */
    @Test
    void customAfterFuncerRunsAfterFunc() {
        GortTesting.run(1, () -> {
            AfterFuncContext ctx0 = new AfterFuncContext();
            Chan<Void> donec = Chan.make();
            Context.StopFunc stop = Context.afterFunc(ctx0, donec::close);
            ctx0.cancel(Context.CANCELED);
            donec.recv();
            stop.stop();
        });
    }

    /**
     * Go: TestCustomContextAfterFuncUnregisterCancel, ...UnregisterTimeout, ...UnregisterAfterFunc.
     * A child canceled (or an afterFunc stopped) unregisters from the AfterFuncer parent.
     */
    @Test
    void customAfterFuncerRegistrationsAreRemovedByCancelAndStop() {
        GortTesting.run(1, () -> {
            AfterFuncContext ctx0 = new AfterFuncContext();
            CancelContext c1 = Context.withCancel(ctx0);
            CancelContext c2 = Context.withCancel(ctx0);
            check(ctx0.registered() == 2, "after withCancel(ctx0): %d afterFuncs, want 2", ctx0.registered());
            c1.cancel();
            c2.cancel();
            check(ctx0.registered() == 0, "after canceling: %d afterFuncs, want 0", ctx0.registered());

            CancelContext t = Context.withTimeout(ctx0, VERY_LONG);
            check(ctx0.registered() == 1, "after withTimeout(ctx0): %d afterFuncs, want 1", ctx0.registered());
            t.cancel();
            check(ctx0.registered() == 0, "after canceling withTimeout: %d, want 0", ctx0.registered());

            Context.StopFunc stop = Context.afterFunc(ctx0, () -> {});
            check(ctx0.registered() == 1, "after afterFunc(ctx0): %d afterFuncs, want 1", ctx0.registered());
            stop.stop();
            check(ctx0.registered() == 0, "after stopping afterFunc: %d, want 0", ctx0.registered());
        });
    }
}
