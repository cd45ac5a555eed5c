package dev.gort.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * On JDK 25, C2 may keep {@code Thread.currentThread()} across a {@code Continuation.yield}
 * compiled into the same method, so a goroutine that moved to another carrier would see its old
 * one. gort's {@link M#current()} reads the carrier afresh: a hot loop that yields (Gosched) and
 * then asks for its M must always get the M that is really running it: {@code gp.m}, written by
 * that M before it resumed the continuation, and the M that the out-of-line method-handle lookup
 * ({@link M#onCarrierHandle()}, which the JIT cannot inline) finds on the carrier; and
 * {@link Scheduler#currentG()} must be the goroutine itself.
 */
@Timeout(60)
class MCurrentAcrossYieldTest {

    /** Reads the M, sometimes yields, reads it again: the shape C2 compiles into one method. */
    static void step(G gp, int i, AtomicLong stale, AtomicLong moves) {
        M before = M.current();
        if (before != gp.m || before != M.onCarrierHandle() || Scheduler.currentG() != gp) {
            stale.incrementAndGet();
        }
        if ((i & 63) == 0) {
            Scheduler.gosched(); // to the global queue: either M may resume it
            M after = M.current();
            if (after != gp.m || after != M.onCarrierHandle() || Scheduler.currentG() != gp) {
                stale.incrementAndGet();
            }
            if (after != before) {
                moves.incrementAndGet();
            }
        }
    }

    @Test
    void currentMIsNeverStaleAfterAMigration() {
        Scheduler s = new Scheduler(TestSupport.config(2));
        AtomicLong stale = new AtomicLong();
        AtomicLong moves = new AtomicLong();
        s.run(() -> {
            GoSema done = new GoSema(0);
            for (int k = 0; k < 2; k++) {
                s.newproc(() -> {
                    G gp = Scheduler.currentG();
                    for (int i = 0; i < 2_000_000; i++) {
                        step(gp, i, stale, moves);
                    }
                    done.release();
                });
            }
            done.acquire();
            done.acquire();
        });
        assertTrue(moves.get() > 0, "the goroutines never changed carriers: nothing was tested");
        assertEquals(
                0, stale.get(), "M.current() returned a carrier the goroutine had left (" + moves.get() + " moves)");
    }
}
