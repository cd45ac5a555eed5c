package dev.gort.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A request raised on a carrier that has already ended is refused, uncounted. A raiser (sysmon's
 * retake, the shutdown's preemptall) reads the M's running G and then sets the request, and the
 * carrier can finish that G and end in between: ShowcaseIT's ping-pong under load once read "2
 * requests, 0 + 1 + 0 + 0 = 1" once every carrier had ended, the second one raised by the shutdown
 * on main's carrier as it left. Such a request was never answered, and it kept Poll's JVM-wide
 * count armed, every instrumented poll of the JVM on its slow path, for the rest of the JVM's life.
 * The test plays the late raiser after the carrier has ended (the ordering the race produces).
 */
class PreemptAfterCarrierExitTest {

    @Test
    @Timeout(30)
    void aRequestRaisedAfterTheCarrierEndedIsRefusedAndLeavesNothingArmed() throws Exception {
        Scheduler s = new Scheduler(TestSupport.config(1));
        M[] carrier = new M[1];
        s.run(() -> carrier[0] = Scheduler.getg().m);
        assertNotNull(carrier[0]);
        assertTrue(s.awaitCarriers(20_000_000_000L), "the carriers did not end");
        M mp = carrier[0];
        assertFalse(mp.thread.isAlive());

        long requested = s.preempt.requested.get();
        int armed = Poll.armedCount();
        // the late raiser: it read this M's G while it ran, and gets to its CAS now
        assertFalse(s.preempt.raiseForTest(mp, Preempt.tickOf(Preempt.state(mp.thread))), "raised on an ended carrier");
        Preempt.notice(mp); // a retake's NOTICE, just as late
        assertFalse(Preempt.requestPendingOpaque(mp.thread), "a request is pending on an ended carrier");
        assertEquals(0, Preempt.state(mp.thread) & Preempt.ARMED, "the ended carrier's word is armed");
        assertEquals(armed, Poll.armedCount(), "Poll's JVM-wide count moved");
        assertEquals(requested, s.preempt.requested.get(), "a refused raise was counted as a request");

        PreemptStats p = s.preempt.snapshot();
        assertEquals(
                p.requested(),
                p.honoured() + p.unhonoured() + p.refused() + p.stale(),
                "requests = honoured + never reached + refused + stale: " + p);
    }
}
