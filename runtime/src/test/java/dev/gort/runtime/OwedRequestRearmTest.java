package dev.gort.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A request refused while the goroutine held a monitor or lock is owed (OWED) and re-armed when the
 * last one is released (Preempt#rearm, Go's releasem restoring stackPreempt). The goroutine may by
 * then run on a P whose schedtick is not the refused request's: it left a "syscall" that sysmon
 * made of its blocked carrier (a contended lock, an {@code Object.wait}) onto another P, or onto its
 * old P after other goroutines ran there. The re-arm used to raise the request for the refused
 * slice's tick; the poll then dropped it as stale with OWED kept, and every later release re-armed
 * it again. Seen with Netty's pooled allocator (its arenas' ReentrantLocks) at GOMAXPROCS=1 with
 * 200 goroutines: 108,000 re-arms in a 6 s run, every one counted stale, none honoured, and
 * Poll's JVM-wide armed count non-zero meanwhile, so that every poll of every carrier took the
 * slow path. Go honours gp.preempt at the G's next prologue whatever P it runs on.
 */
class OwedRequestRearmTest {
    @Test
    @Timeout(60)
    void anOwedRequestIsReArmedForTheSliceTheGoroutineRunsNow() {
        Scheduler s = new Scheduler(TestSupport.config(1));
        AtomicReference<PreemptStats> before = new AtomicReference<>();
        AtomicReference<PreemptStats> after = new AtomicReference<>();
        s.run(() -> {
            // Trials until one ran without a request of sysmon's in between (the first slices load
            // classes and may outlive 10 ms); each starts a fresh slice.
            for (int trial = 0; trial < 100 && after.get() == null; trial++) {
                Scheduler.gosched();
                M mp = Scheduler.getg().m;
                PreemptStats b = s.preempt.snapshot();
                Poll.monitorEnter(); // what the agent runs after MONITORENTER
                s.preempt.raiseForTest(mp, mp.p.schedtickOpaque());
                // The poll's slow path itself: Poll's JVM-wide armed count may lag a concurrent
                // raise by sysmon (its add follows its CAS), and the fast path would skip it.
                Poll.slow("OwedRequestRearmTest"); // refused: the monitor is held; OWED
                // The goroutine goes on with its slice on a P whose schedtick is another (as after
                // leaving a retaken "syscall" onto another P).
                mp.p.incSchedtickOpaque();
                Poll.monitorExit(); // the last monitor: the owed request is re-armed
                Poll.slow("OwedRequestRearmTest"); // honoured here (the only goroutine: it runs on)
                PreemptStats a = s.preempt.snapshot();
                if (a.requested() == b.requested() + 2 && a.refusedMonitor() == b.refusedMonitor() + 1) {
                    before.set(b); // the test's request and its re-arm only
                    after.set(a);
                }
                Preempt.take(Scheduler.getg().m.thread); // a trial that failed leaves nothing armed
            }
        });
        PreemptStats b = before.get();
        PreemptStats a = after.get();
        assertNotNull(a, "no trial ran without sysmon's requests");
        assertEquals(b.rearmed() + 1, a.rearmed(), () -> "not re-armed once: " + a);
        assertEquals(b.stale(), a.stale(), () -> "the re-armed request was dropped as stale: " + a);
        assertEquals(b.honoured() + 1, a.honoured(), () -> "the owed request was not honoured: " + a);
    }
}
