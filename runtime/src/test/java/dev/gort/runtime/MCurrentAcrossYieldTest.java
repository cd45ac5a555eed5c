package dev.gort.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.concurrent.atomic.AtomicBoolean;
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
 *
 * <p>A Gosched puts the goroutine on the global queue, where either M may take it: whether it
 * moves depends on which carrier the kernel runs then, and on a loaded machine none may move. So
 * every 8192 steps the same Gosched is made a move that must happen: a holder goroutine goes into
 * the P's runnext first; after the Gosched the goroutine's M runs it, and the holder spins without
 * a yield point until the goroutine has run again, which only another M can then do (it takes the
 * goroutine from the global queue: goschedImpl's {@code wakep} starts it). The test counts those
 * moves, so it cannot pass without migrations, however the kernel runs the carriers.
 */
@Timeout(60)
class MCurrentAcrossYieldTest {

    /** Steps between forced moves (a power of two, a multiple of 64). */
    static final int FORCE_EVERY = 8192;

    static final int STEPS = 2_000_000;

    /** A goroutine that holds the carrier it runs on until {@link #release}. */
    static final class Holder {
        /** Written by the holder as it starts, read by the goroutine after its Gosched. */
        volatile M ranOn;

        final AtomicBoolean released = new AtomicBoolean();

        static Holder start(Scheduler s) {
            Holder h = new Holder();
            s.newproc(() -> {
                h.ranOn = M.current();
                while (!h.released.get()) {
                    Thread.onSpinWait(); // no yield point: its carrier stays busy
                }
            });
            return h;
        }

        void release() {
            released.set(true);
        }
    }

    /** Reads the M, sometimes yields, reads it again: the shape C2 compiles into one method. */
    static void step(Scheduler s, G gp, int i, AtomicLong stale, AtomicLong moves, AtomicLong forced) {
        M before = M.current();
        if (before != gp.m || before != M.onCarrierHandle() || Scheduler.currentG() != gp) {
            stale.incrementAndGet();
        }
        if ((i & 63) == 0) {
            boolean force = (i & (FORCE_EVERY - 1)) == 0;
            for (; ; ) {
                // A forced move: the holder into this P's runnext (newproc may honour a preemption
                // before it creates the holder, so the M to leave is read after it).
                Holder h = force ? Holder.start(s) : null;
                M from = force ? M.current() : before;
                Scheduler.gosched(); // to the global queue: either M may resume it
                M after = M.current();
                if (after != gp.m || after != M.onCarrierHandle() || Scheduler.currentG() != gp) {
                    stale.incrementAndGet();
                }
                if (after != before) {
                    moves.incrementAndGet();
                }
                if (h == null) {
                    break;
                }
                // The holder started on `from` before this goroutine ran again (it cannot start
                // there while this goroutine runs there, and it spins until released): so this
                // goroutine resumed on another M. Otherwise (the holder not started yet, or run by
                // another M, or this goroutine taken back by `from` on a 61st tick) try again.
                boolean held = h.ranOn == from;
                h.release();
                if (held) {
                    if (after != from) {
                        forced.incrementAndGet();
                    }
                    break;
                }
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
            // One goroutine, so that the other P is free to take it at a forced move (main parks
            // on done, and until it does, its goroutine only delays the other M).
            s.newproc(() -> {
                G gp = Scheduler.currentG();
                for (int i = 0; i < STEPS; i++) {
                    step(s, gp, i, stale, moves, forced);
                }
                done.release();
            });
            done.acquire();
        });
        assertEquals(
                0, stale.get(), "M.current() returned a carrier the goroutine had left (" + moves.get() + " moves)");
        int forcedSteps = (STEPS + FORCE_EVERY - 1) / FORCE_EVERY;
        assertEquals(
                forcedSteps,
                forced.get(),
                "a forced move left the goroutine on its carrier (" + moves.get() + " moves)");
    }
}
