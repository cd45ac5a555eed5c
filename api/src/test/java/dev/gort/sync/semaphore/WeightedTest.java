package dev.gort.sync.semaphore;

import static dev.gort.GortTesting.check;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.gort.Chan;
import dev.gort.Go;
import dev.gort.GortTesting;
import dev.gort.PanicError;
import dev.gort.Synctest;
import dev.gort.Time;
import dev.gort.context.CancelContext;
import dev.gort.context.Context;
import dev.gort.context.ContextError;
import dev.gort.sync.WaitGroup;
import dev.gort.sync.errgroup.Group;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * golang.org/x/sync's semaphore_test.go and semaphore_example_test.go. Where Go waits with real
 * sleeps, timeouts or spin loops for a goroutine to queue, these run in a synctest bubble (a fake
 * clock; {@link Synctest#waitBubble()} to know that a goroutine is parked in Acquire).
 */
class WeightedTest {
    /** {@code sem.Acquire(ctx, n) == nil}. */
    private static boolean acquired(Weighted sem, Context ctx, long n) {
        try {
            sem.acquire(ctx, n);
            return true;
        } catch (ContextError e) {
            return false;
        }
    }

    /**
     * Go: TestWeighted (HammerWeighted). GOMAXPROCS goroutines acquire and release weights 0..n-1
     * of a semaphore of n, 10000 times in all; the weight held never exceeds n. (Go sleeps up to a
     * millisecond while holding; here a random number of Goscheds.)
     */
    @Test
    void weighted() {
        int n = 4;
        GortTesting.run(n, () -> {
            int loops = 10000 / n;
            Weighted sem = Weighted.newWeighted(n);
            AtomicLong held = new AtomicLong();
            AtomicLong peak = new AtomicLong();
            WaitGroup wg = new WaitGroup();
            wg.add(n);
            for (int i = 0; i < n; i++) {
                long w = i;
                SplittableRandom rnd = new SplittableRandom(i);
                Go.go(() -> {
                    try {
                        for (int k = 0; k < loops; k++) {
                            sem.acquire(Context.background(), w);
                            long h = held.addAndGet(w);
                            peak.accumulateAndGet(h, Math::max);
                            for (int y = rnd.nextInt(4); y > 0; y--) {
                                Go.gosched();
                            }
                            held.addAndGet(-w);
                            sem.release(w);
                        }
                    } finally {
                        wg.done();
                    }
                });
            }
            wg.await();
            check(peak.get() <= n, "held %d of a semaphore of %d", peak.get(), n);
            check(sem.tryAcquire(n), "all released");
        });
    }

    /** Go: TestWeightedPanic. */
    @Test
    void weightedPanic() {
        Weighted w = Weighted.newWeighted(1);
        PanicError p = assertThrows(PanicError.class, () -> w.release(1));
        assertEquals("semaphore: released more than held", p.getMessage());
    }

    /** Go: TestWeightedTryAcquire. */
    @Test
    void weightedTryAcquire() {
        GortTesting.run(1, () -> {
            Context ctx = Context.background();
            Weighted sem = Weighted.newWeighted(2);
            List<Boolean> tries = new ArrayList<>();
            sem.acquire(ctx, 1);
            tries.add(sem.tryAcquire(1));
            tries.add(sem.tryAcquire(1));

            sem.release(2);

            tries.add(sem.tryAcquire(1));
            sem.acquire(ctx, 1);
            tries.add(sem.tryAcquire(1));

            check(tries.equals(List.of(true, false, true, false)), "tries %s", tries);
        });
    }

    /**
     * Go: TestWeightedAcquire. An Acquire that cannot get its tokens in 10 ms fails with
     * DEADLINE_EXCEEDED (on the bubble's clock), leaving the semaphore as it was.
     */
    @Test
    void weightedAcquire() {
        GortTesting.run(
                1,
                () -> Synctest.test(() -> {
                    Context ctx = Context.background();
                    Weighted sem = Weighted.newWeighted(2);
                    ContextError[] last = new ContextError[1];
                    java.util.function.LongPredicate tryAcquire = n -> {
                        CancelContext c = Context.withTimeout(ctx, Duration.ofMillis(10));
                        try {
                            sem.acquire(c, n);
                            return true;
                        } catch (ContextError e) {
                            last[0] = e;
                            return false;
                        } finally {
                            c.cancel();
                        }
                    };
                    List<Boolean> tries = new ArrayList<>();
                    sem.acquire(ctx, 1);
                    tries.add(tryAcquire.test(1));
                    tries.add(tryAcquire.test(1));

                    sem.release(2);

                    tries.add(tryAcquire.test(1));
                    sem.acquire(ctx, 1);
                    tries.add(tryAcquire.test(1));

                    check(tries.equals(List.of(true, false, true, false)), "tries %s", tries);
                    check(last[0] == Context.DEADLINE_EXCEEDED, "error %s", last[0]);
                }));
    }

    /**
     * Go: TestWeightedDoesntBlockIfTooBig. An Acquire of more than the size, pending, does not
     * keep Acquires of 1 waiting behind it (queued, it would: the bubble's deadlock).
     */
    @Test
    void weightedDoesntBlockIfTooBig() {
        GortTesting.run(
                2,
                () -> Synctest.test(() -> {
                    int n = 2;
                    Weighted sem = Weighted.newWeighted(n);
                    CancelContext big = Context.withCancel(Context.background());
                    Go.go(() -> acquired(sem, big, n + 1));
                    Synctest.waitBubble(); // it is pending

                    Group.WithContext gc = Group.withContext(Context.background());
                    Group g = gc.group();
                    for (int i = n * 3; i > 0; i--) {
                        g.go(() -> {
                            sem.acquire(gc.ctx(), 1);
                            Time.sleep(Duration.ofMillis(1));
                            sem.release(1);
                        });
                    }
                    Exception err = g.await();
                    check(
                            err == null,
                            "semaphore.NewWeighted(%d) failed to AcquireCtx(_, 1) with AcquireCtx(_, %d) pending: %s",
                            n,
                            n + 1,
                            err);
                    big.cancel();
                }));
    }

    /**
     * Go: TestLargeAcquireDoesntStarve. GOMAXPROCS goroutines keep releasing and taking back one
     * token each; an Acquire of all of them still gets them (FIFO: the smaller Acquires queue
     * behind it). Starved, it never returned (the test's timeout).
     */
    @Test
    void largeAcquireDoesntStarve() {
        int n = 4;
        GortTesting.run(
                n,
                Duration.ofSeconds(20),
                () -> Synctest.test(() -> {
                    Context ctx = Context.background();
                    Weighted sem = Weighted.newWeighted(n);
                    AtomicBoolean running = new AtomicBoolean(true);
                    WaitGroup wg = new WaitGroup();
                    wg.add(n);
                    for (int i = n; i > 0; i--) {
                        sem.acquire(ctx, 1);
                        Go.go(() -> {
                            try {
                                while (running.get()) {
                                    Time.sleep(Duration.ofMillis(1));
                                    sem.release(1);
                                    sem.acquire(ctx, 1);
                                }
                            } finally {
                                sem.release(1);
                                wg.done();
                            }
                        });
                    }
                    sem.acquire(ctx, n);
                    running.set(false);
                    sem.release(n);
                    wg.await();
                }));
    }

    /**
     * Go: TestAllocCancelDoesntStarve (from zhiqiangxu/util's crwmutex_test.go). An Acquire(_, 10)
     * at the head of the queue is canceled while an Acquire(_, 1) waits behind it: the canceled
     * waiter, leaving with tokens free, wakes the one behind (Go's notifyWaiters on cancel). Go
     * runs the cancel and the Acquire(_, 1) concurrently; here the Acquire(_, 1) is queued first
     * ({@link Synctest#waitBubble()}), the order the fix is for. Without it: the bubble's deadlock.
     */
    @Test
    void allocCancelDoesntStarve() {
        GortTesting.run(
                2,
                () -> Synctest.test(() -> {
                    Weighted sem = Weighted.newWeighted(10);
                    // Block off a portion of the semaphore so that Acquire(_, 10) can eventually succeed.
                    sem.acquire(Context.background(), 1);
                    // In the background, Acquire(_, 10).
                    CancelContext ctx = Context.withCancel(Context.background());
                    Go.go(() -> acquired(sem, ctx, 10));
                    Synctest.waitBubble(); // until the Acquire(_, 10) call blocks
                    check(!sem.tryAcquire(1), "TryAcquire(1) succeeded with Acquire(_, 10) queued");

                    // Grab a read lock, queued behind it; cancel the Acquire(_, 10) once it is.
                    Go.go(() -> {
                        Synctest.waitBubble();
                        ctx.cancel();
                    });
                    check(acquired(sem, Context.background(), 1), "Acquire(_, 1) failed unexpectedly");
                    sem.release(1);
                }));
    }

    /**
     * Go: TestWeightedAcquireCanceled (go.dev/issue/63615). ctx is canceled, then the tokens come:
     * the Acquire(ctx, 2) fails with Canceled and puts the tokens it was given back (TryAcquire(2)
     * succeeds after); an Acquire with a done ctx fails even when it would not block. Go's
     * goroutine spins on TryAcquire until the Acquire(2) is queued; here waitBubble.
     */
    @Test
    void weightedAcquireCanceled() {
        GortTesting.run(
                1,
                () -> Synctest.test(() -> {
                    Weighted sem = Weighted.newWeighted(2);
                    CancelContext ctx = Context.withCancel(Context.background());
                    sem.acquire(Context.background(), 1);
                    Chan<Void> ch = Chan.make();
                    Go.go(() -> {
                        Synctest.waitBubble(); // the Acquire(2) below is queued
                        // Now cancel ctx, and then release the token.
                        ctx.cancel();
                        sem.release(1);
                        ch.close();
                    });
                    // Since the context closing happens before enough tokens become available,
                    // this Acquire must fail.
                    ContextError err = assertThrows(ContextError.class, () -> sem.acquire(ctx, 2));
                    check(err == Context.CANCELED, "want context.Canceled, got %s", err);
                    // There must always be two tokens in the semaphore after the other goroutine
                    // releases the one we held at the start.
                    ch.recv();
                    check(sem.tryAcquire(2), "TryAcquire after canceled Acquire failed");
                    // Additionally verify that we don't acquire with a done context even when we
                    // wouldn't need to block to do so.
                    sem.release(2);
                    err = assertThrows(ContextError.class, () -> sem.acquire(ctx, 1));
                    check(err == Context.CANCELED, "want context.Canceled, got %s", err);
                    check(sem.tryAcquire(2), "the failed Acquire took tokens");
                }));
    }

    /**
     * The other order: the tokens come, then ctx is canceled before the waiter runs. Go's Acquire,
     * woken by ready, finds done closed too and fails, giving the tokens back.
     */
    @Test
    void acquiredButCanceledBeforeReturningFails() {
        GortTesting.run(
                1,
                () -> Synctest.test(() -> {
                    Weighted sem = Weighted.newWeighted(2);
                    CancelContext ctx = Context.withCancel(Context.background());
                    sem.acquire(Context.background(), 1);
                    Go.go(() -> {
                        Synctest.waitBubble();
                        sem.release(1); // the waiter gets its 2 tokens: ready is closed
                        ctx.cancel(); // and before it runs (GOMAXPROCS=1) ctx is done
                    });
                    ContextError err = assertThrows(ContextError.class, () -> sem.acquire(ctx, 2));
                    check(err == Context.CANCELED, "want context.Canceled, got %s", err);
                    check(sem.tryAcquire(2), "the tokens were not given back");
                }));
    }

    /** Go: Example_workerPool (semaphore_example_test.go). */
    @Test
    void exampleWorkerPool() {
        int[] out = new int[32];
        GortTesting.run(4, () -> {
            Context ctx = Context.todo();
            int maxWorkers = Go.gomaxprocs();
            Weighted sem = Weighted.newWeighted(maxWorkers);
            // Compute the output using up to maxWorkers goroutines at a time.
            for (int i = 0; i < out.length; i++) {
                // When maxWorkers goroutines are in flight, Acquire blocks until one of the
                // workers finishes.
                sem.acquire(ctx, 1);
                int j = i;
                Go.go(() -> {
                    try {
                        out[j] = collatzSteps(j + 1);
                    } finally {
                        sem.release(1);
                    }
                });
            }
            // Acquire all of the tokens to wait for any remaining workers to finish.
            sem.acquire(ctx, maxWorkers);
        });
        assertEquals(
                "[0, 1, 7, 2, 5, 8, 16, 3, 19, 6, 14, 9, 9, 17, 17, 4, 12, 20, 20, 7, 7, 15, 15, 10, 23, 10, 111, 18, 18, 18, 106, 5]",
                Arrays.toString(out));
    }

    /** The number of steps to reach 1 under the Collatz conjecture. */
    private static int collatzSteps(int n) {
        if (n <= 0) {
            throw new PanicError("nonpositive input");
        }
        int steps = 0;
        for (; n > 1; steps++) {
            if (steps < 0) {
                throw new PanicError("too many steps");
            }
            if (n % 2 == 0) {
                n /= 2;
                continue;
            }
            if (n > (Integer.MAX_VALUE - 1) / 3) {
                throw new PanicError("overflow");
            }
            n = 3 * n + 1;
        }
        return steps;
    }
}
