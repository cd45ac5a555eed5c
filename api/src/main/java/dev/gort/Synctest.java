package dev.gort;

import dev.gort.runtime.Bubble;
import dev.gort.runtime.Config;
import dev.gort.runtime.Decisions;
import dev.gort.runtime.GoPanic;
import dev.gort.runtime.Scheduler;

/**
 * Go 1.25's {@code testing/synctest}: runs code in an isolated "bubble" with a fake clock, so that
 * tests of timeouts, tickers and retries run in microseconds and never flake.
 *
 * <pre>{@code
 * Synctest.test(() -> {
 *     Instant start = Time.now();                 // 2000-01-01T00:00:00Z
 *     Context ctx = Context.withTimeout(Context.background(), Duration.ofHours(1));
 *     Time.sleep(Duration.ofMinutes(59));
 *     Synctest.waitBubble();                      // every other bubble goroutine is durably blocked
 *     assert ctx.err() == null;
 *     Time.sleep(Duration.ofMinutes(1));
 *     Synctest.waitBubble();
 *     assert ctx.err() == Context.DEADLINE_EXCEEDED && Time.since(start).toHours() == 1;
 * });
 * }</pre>
 *
 * <p>Every goroutine started in the bubble belongs to it. Inside, {@link Time#now()},
 * {@link Time#nanotime()}, {@link Time#sleep}, timers, tickers, {@link Time#after},
 * {@link Time#afterFunc} and context deadlines use the bubble's clock, which starts at
 * 2000-01-01T00:00:00Z and moves only when every goroutine of the bubble is durably blocked, then
 * straight to the next timer of the bubble. Durably blocked (Go's rules): on a channel made in the
 * bubble, a select over such channels only, a nil channel, {@code select {}}, a sleep,
 * {@code sync.Cond.await}, {@code WaitGroup.await} on a group the bubble Adds to, or
 * {@link #waitBubble}. Not durable: a mutex, a semaphore, a syscall, IO, a channel made outside.
 * A goroutine that blocks while holding a Java monitor parks in place on its carrier (ADR 0004)
 * and follows the same rules.
 *
 * <p>Network deadlines, as in Go: a deadline {@code Instant} is read against the clock of the
 * goroutine that sets it ({@code conn.setReadDeadline(Time.now().plusSeconds(5))} in a bubble is 5
 * s ahead of the fake clock; {@code Time.now()} itself, or earlier, fails the I/O at once), and that
 * duration then passes in real time: the poller's deadline timers are never a bubble's (Go's
 * {@code pollDesc} timers are not fake), and a goroutine waiting on the network is not durably
 * blocked, so the fake clock does not move while it waits. A connection may cross a bubble's
 * boundary (made outside, used inside, or the reverse): each deadline takes the setter's clock.
 * {@code Net.dialTimeout}'s timeout passes in real time too. Prefer an in-memory fake network in a
 * bubble, as Go's documentation advises.
 *
 * <p>A channel (or timer) made in a bubble may be used only from that bubble: a send, receive,
 * close or select from outside panics ({@code send on synctest channel from outside bubble}; Go
 * 1.25 makes these fatal errors, gort panics so that a test can report them).
 *
 * <p>Lives in {@code dev.gort} beside {@link Go} and {@link Time} rather than in a
 * {@code dev.gort.testing} package: it is runtime API (it works in any program, with any test
 * framework or none, and has no JUnit dependency), and it needs the package's own access to the
 * calling goroutine's runtime.
 *
 * <p>Go: testing/synctest (Test, Wait); runtime/synctest.go
 */
public final class Synctest {
    private Synctest() {}

    /**
     * Runs {@code f} as the main goroutine of a new bubble and returns once every goroutine of the
     * bubble has exited. Called from a goroutine, the caller is the bubble's root (Go's
     * {@code synctest.Test}); called from a thread outside gort (a JUnit test method), it first
     * starts a runtime of its own ({@link Config#fromEnvironment()}, panics reported, not
     * halting), runs the bubble from its main goroutine, and rethrows what failed in it (an
     * {@code AssertionError} from inside the bubble fails the test as it is).
     *
     * @throws PanicError {@code synctest.Run called from within a synctest bubble} when nested;
     *     {@code deadlock: all goroutines in bubble are blocked} when every goroutine of the
     *     bubble is durably blocked with no timer left; {@code deadlock: main bubble goroutine has
     *     exited but blocked goroutines remain} when f returned but goroutines it started are
     *     blocked for good (Go's messages)
     */
    public static void test(Runnable f) {
        if (Scheduler.getg() == null) {
            test(Config.fromEnvironment().withPanicExits(false), f);
            return;
        }
        if (f == null) {
            throw new NullPointerException("f");
        }
        if (Bubble.current() != null) {
            throw new PanicError("synctest.Run called from within a synctest bubble");
        }
        String deadlock = Bubble.run(f);
        if (deadlock != null) {
            throw new DeadlockError(deadlock);
        }
    }

    /**
     * {@link #test(Runnable)} on a runtime of its own with {@code config} (e.g.
     * {@code GOMAXPROCS=1} and a seed for a deterministic schedule), from a thread outside gort.
     * A panic in the bubble, or the bubble's deadlock, is rethrown here: the panic's own exception
     * (unwrapped from the runtime's {@link GoPanic}), or the {@link DeadlockError}.
     */
    public static void test(Config config, Runnable f) {
        test(config, null, f);
    }

    /**
     * {@link #test(Config, Runnable)} recording the run's scheduling decisions into {@code
     * decisions} (or replaying them from it): with {@code config}'s GOMAXPROCS at 1 and a seed,
     * the same program gives the same {@link Decisions#steps()} every run, and a replay forces
     * them (a divergence stops the run: {@code fatal error: schedule replay diverged at step N}).
     */
    public static void test(Config config, Decisions decisions, Runnable f) {
        if (Scheduler.getg() != null) {
            throw new IllegalStateException("gort: Synctest.test(config, f) starts a runtime: call it outside gort");
        }
        Throwable[] failed = new Throwable[1];
        try {
            Runnable main = () -> {
                try {
                    test(f);
                } catch (PanicError | AssertionError e) {
                    failed[0] = e; // the root's own panic: the test's outcome, not the program's
                }
            };
            if (decisions != null) {
                Go.run(config, decisions, main);
            } else {
                Go.run(config, main);
            }
        } catch (GoPanic p) {
            // A goroutine of the bubble panicked: the program ended (Go's too).
            Throwable c = p.getCause();
            if (c instanceof RuntimeException re) {
                throw re;
            }
            if (c instanceof Error e) {
                throw e;
            }
            throw p;
        }
        if (failed[0] instanceof RuntimeException re) {
            throw re;
        }
        if (failed[0] instanceof Error e) {
            throw e;
        }
    }

    /**
     * Blocks until every other goroutine of the calling goroutine's bubble is durably blocked. The
     * clock does not move while it waits: when all are blocked, the waiter is woken rather than
     * the clock advanced (a timer already due still fires first). Go: synctest.Wait.
     *
     * @throws PanicError {@code goroutine is not in a bubble} outside a bubble; {@code wait already
     *     in progress} when another goroutine of the bubble is in waitBubble (Go's panics)
     */
    public static void waitBubble() {
        try {
            Bubble.synctestWait();
        } catch (IllegalStateException e) {
            throw new PanicError(e.getMessage());
        }
    }

    /** Whether the calling goroutine is in a synctest bubble. Go: internal/synctest.IsInBubble. */
    public static boolean isInBubble() {
        return Bubble.current() != null;
    }

    /**
     * The panic of a deadlocked bubble, raised in the caller of {@link #test}: Go's
     * {@code synctestDeadlockError}, whose message is the reason.
     */
    public static final class DeadlockError extends PanicError {
        private static final long serialVersionUID = 1L;

        DeadlockError(String reason) {
            super(reason);
        }
    }
}
