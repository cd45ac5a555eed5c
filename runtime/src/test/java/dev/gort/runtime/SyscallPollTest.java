package dev.gort.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A preemption poll inside a goroutine's own syscall ({@code Syscall.block} around instrumented
 * code) does not leave the syscall. sysmon may raise a request for the slice the G ran before it
 * entered the call; only the syscall that sysmon entered on the G's behalf (Retake.retakeBlocked,
 * a carrier blocked in unwrapped user code) is left at a poll. Leaving the G's own syscall at a
 * poll let it go on into its blocking call holding a P, as a running G that sysmon cannot see
 * blocked (native I/O stays RUNNABLE: sysmon sees it only after a time slice, and only on Linux): with every P lost that way the program hung (the
 * showcase's network scenario, the server's reads in Syscall.block, on a loaded machine). Both
 * syscall models ({@code psyscall}: Go 1.25's; else Go 1.26+'s).
 */
class SyscallPollTest {

    @ParameterizedTest(name = "psyscall={0}")
    @ValueSource(booleans = {false, true})
    @Timeout(30)
    void aPollInsideTheGoroutinesOwnSyscallDoesNotLeaveIt(boolean psyscall) {
        Scheduler s = new Scheduler(TestSupport.config(1, psyscall));
        AtomicInteger left = new AtomicInteger();
        AtomicInteger trials = new AtomicInteger();
        s.run(() -> {
            // Until a poll has seen the request: on a loaded machine sysmon may get between the
            // request and the poll (a trial where the poll saw none proves nothing either way).
            while (trials.get() < 100 && s.preempt.stale.get() == 0 && left.get() == 0) {
                trials.incrementAndGet();
                G gp = Syscalls.entersyscall(); // what Syscall.block does first
                M mp = gp.m; // a G in a syscall stays on its carrier
                // sysmon's request for the slice the G ran before the call (it raced the entry)
                s.preempt.raiseForTest(mp, Preempt.tickOf(Preempt.state(mp.thread)) + 1);
                Poll.poll("SyscallPollTest"); // an instrumented poll in the code the G wrapped
                if (gp.readgstatusNoScan() != G._Gsyscall) {
                    left.incrementAndGet();
                }
                Syscalls.exitsyscall(gp); // what Syscall.block does last
                Preempt.take(mp.thread);
            }
        });
        assertEquals(0, left.get(), "the poll left the G's own syscall");
        assertEquals(0, s.preempt.syscallExitsDeferred.get());
        assertTrue(
                s.preempt.stale.get() >= 1, "in " + trials.get() + " trials no poll recognised the request as stale");
    }
}
