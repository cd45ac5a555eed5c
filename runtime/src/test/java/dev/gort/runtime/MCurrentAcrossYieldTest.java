package dev.gort.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * On JDK 25, C2 may keep {@code Thread.currentThread()} across a {@code Continuation.yield}
 * compiled into the same method, so a goroutine that moved to another carrier would see its old
 * one. gort's {@link M#current()} reads the carrier afresh: a hot loop that yields and then asks
 * for its M must always get the M that is really running it: {@code gp.m}, written by that M
 * before it resumed the continuation, and the M that the out-of-line method-handle lookup
 * ({@link M#onCarrierHandle()}, which the JIT cannot inline) finds on the carrier; and
 * {@link Scheduler#currentG()} must be the goroutine itself.
 *
 * <p>The loop yields in two ways: a Gosched (to the global queue, where either M may take it: a
 * move that happens or not as the carriers run) and, every 8192 steps, a move that must happen
 * ({@link #moveToAnotherCarrier}): the goroutine parks, and a goroutine that holds its carrier
 * without yielding readies it, so the idle P's M has to steal it (Go's rules: the ready's
 * {@code wakep}, and a spinning M's last look at every P's queue before it sleeps). The test
 * counts those moves, so it cannot pass without migrations, however the kernel runs the carriers.
 */
@Timeout(60)
class MCurrentAcrossYieldTest {

    /** Steps between forced moves (a power of two, a multiple of 64). */
    static final int FORCE_EVERY = 8192;

    static final int STEPS = 2_000_000;

    /** Reads the M, sometimes yields, reads it again: the shape C2 compiles into one method. */
    static void step(Scheduler s, G gp, int i, AtomicLong stale, AtomicLong moves, AtomicLong forced) {
        M before = M.current();
        if (before != gp.m || before != M.onCarrierHandle() || Scheduler.currentG() != gp) {
            stale.incrementAndGet();
        }
        if ((i & 63) == 0) {
            boolean force = (i & (FORCE_EVERY - 1)) == 0;
            if (force) {
                moveToAnotherCarrier(s, before);
            } else {
                Scheduler.gosched(); // to the global queue: either M may resume it
            }
            M after = M.current();
            if (after != gp.m || after != M.onCarrierHandle() || Scheduler.currentG() != gp) {
                stale.incrementAndGet();
            }
            if (after != before) {
                moves.incrementAndGet();
                if (force) {
                    forced.incrementAndGet();
                }
            }
        }
    }

    /**
     * Returns on another carrier than {@code from}, the caller's: the caller starts a holder
     * (into its own P's runnext) and parks; the holder, run by {@code from}, readies the caller
     * and spins, without a yield point, until the caller runs again, which therefore happens on
     * another M. If the idle M stole the holder instead (its carrier can run before the caller
     * parks), the holder readies the caller elsewhere and the attempt is repeated.
     */
    static void moveToAnotherCarrier(Scheduler s, M from) {
        for (; ; ) {
            GoSema wake = new GoSema("move", 0);
            AtomicBoolean resumed = new AtomicBoolean();
            M[] holderM = new M[1];
            s.newproc(() -> {
                holderM[0] = M.current();
                wake.release();
                while (!resumed.get()) {
                    Thread.onSpinWait();
                }
            });
            wake.acquire(); // ordered after the holder's write of holderM by the semaphore's lock
            resumed.set(true);
            if (holderM[0] == from) {
                return;
            }
        }
    }

    @Test
    void currentMIsNeverStaleAfterAMigration() {
        Scheduler s = new Scheduler(TestSupport.config(2));
        AtomicLong stale = new AtomicLong();
        AtomicLong moves = new AtomicLong();
        AtomicLong forced = new AtomicLong();
        s.run(() -> {
            GoSema done = new GoSema(0);
            // One goroutine, so that at each forced move the other P is idle (main waits on done).
            s.newproc(() -> {
                G gp = Scheduler.currentG();
                for (int i = 0; i < STEPS; i++) {
                    step(s, gp, i, stale, moves, forced);
                }
                done.release();
            });
            done.acquire();
        });
        int forcedSteps = (STEPS + FORCE_EVERY - 1) / FORCE_EVERY;
        assertEquals(
                forcedSteps,
                forced.get(),
                "a forced move left the goroutine on its carrier (" + moves.get() + " moves)");
        assertEquals(
                0, stale.get(), "M.current() returned a carrier the goroutine had left (" + moves.get() + " moves)");
    }
}
