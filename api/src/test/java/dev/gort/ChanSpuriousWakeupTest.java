package dev.gort;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gort.internal.ParkCommit;
import dev.gort.internal.Parker;
import dev.gort.internal.Sudog;
import dev.gort.internal.ThreadParker;
import dev.gort.runtime.GortFatalError;
import dev.gort.runtime.WaitReason;
import org.junit.jupiter.api.Test;

/**
 * A blocked channel operation that resumes with nobody having completed it (a wakeup no waker
 * caused) is told apart from a completed one by what its sudog's elem holds, Go's {@code success}
 * (the sudog has no such field: issue 19): a sender whose value no receiver took fails as Go's
 * chansend does ("chansend: spurious wakeup", the channel being open), and a receiver that nobody
 * sent to reports what Go's success == false reports, (zero, not ok). Such a wakeup cannot happen
 * with gort's parkers; this one, which returns from every park at once, makes it happen.
 */
class ChanSpuriousWakeupTest {
    /** {@link ThreadParker}, except that a park runs its commit and returns: nobody woke it. */
    static final class SpuriousParker implements Parker {
        private final Parker p = ThreadParker.INSTANCE;

        @Override
        public <L> void park(Object w, ParkCommit<L> commit, L lock, WaitReason reason, Object waitingOn) {
            commit.commit(lock);
        }

        @Override
        public Object current() {
            return p.current();
        }

        @Override
        public Sudog acquireSudog(Object w) {
            return p.acquireSudog(w);
        }

        @Override
        public void ready(Object w) {
            p.ready(w);
        }

        @Override
        public Object param(Object w) {
            return p.param(w);
        }

        @Override
        public void setParam(Object w, Object v) {
            p.setParam(w, v);
        }

        @Override
        public boolean casSelectDone(Object w) {
            return p.casSelectDone(w);
        }

        @Override
        public void clearSelectDone(Object w) {
            p.clearSelectDone(w);
        }

        @Override
        public int cheaprandn(int n) {
            return p.cheaprandn(n);
        }

        @Override
        public boolean canSpin(int iter) {
            return p.canSpin(iter);
        }

        @Override
        public void goyield() {
            p.goyield();
        }

        @Override
        public long nanotime() {
            return p.nanotime();
        }
    }

    @Test
    void aSenderWokenByNobodyIsAFatalErrorNotASend() {
        Chan<String> c = Chan.make(0, new SpuriousParker());
        GortFatalError e = assertThrows(GortFatalError.class, () -> c.send("v"));
        assertTrue(e.getMessage().contains("chansend: spurious wakeup"), e.getMessage());
    }

    @Test
    void aReceiverWokenByNobodyReceivesNothing() {
        Chan<String> c = Chan.make(0, new SpuriousParker());
        Chan.Received<String> r = c.recv2();
        assertFalse(r.ok(), "a receive nobody completed is not ok");
        assertEquals(null, r.value());
    }
}
