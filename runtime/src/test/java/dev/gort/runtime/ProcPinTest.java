package dev.gort.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@link Scheduler#procPin}: the P's id, and while pinned the M's lock count forbids preemption
 * (the refusal rule answers R_RUNTIME_LOCK); procUnpin restores it. Without a P it may use (outside
 * a goroutine, in a syscall) the id is -1, and the pair still balances.
 */
@Timeout(30)
class ProcPinTest {
    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void pinReturnsThePsIdAndForbidsPreemptionUntilUnpin(boolean psyscall) {
        assertEquals(-1, Scheduler.procPin(), "outside a goroutine");
        Scheduler.procUnpin(); // nothing to undo: must not throw
        Scheduler s = new Scheduler(TestSupport.config(2, psyscall));
        TestSupport.runChecked(s, () -> {
            M mp = M.current();
            G gp = Scheduler.getg();
            int locks = mp.locks;
            assertEquals(Preempt.R_NONE, Preempt.refusal(mp, gp, false), "preemptible before the pin");
            int pid = Scheduler.procPin();
            try {
                assertEquals(mp.p().id, pid, "procPin's id is the M's P");
                assertEquals(locks + 1, mp.locks, "procPin raises m.locks");
                assertEquals(Preempt.R_RUNTIME_LOCK, Preempt.refusal(mp, gp, false), "pinned: not preemptible");
            } finally {
                Scheduler.procUnpin();
            }
            assertEquals(locks, mp.locks, "procUnpin restores m.locks");
            assertEquals(Preempt.R_NONE, Preempt.refusal(mp, gp, false), "preemptible after the unpin");

            Syscalls.entersyscall();
            try {
                int inSyscall = Scheduler.procPin();
                Scheduler.procUnpin();
                assertEquals(-1, inSyscall, "in a syscall the goroutine has no P of its own");
            } finally {
                Syscalls.exitsyscall();
            }
            assertEquals(locks, mp.locks, "balanced across the syscall");
        });
    }
}
