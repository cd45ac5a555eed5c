package dev.gort.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A preemption poll inside a goroutine's own syscall ({@code Syscall.block} around instrumented
 * code) does not leave the syscall. sysmon may raise a request for the slice the G ran before it
 * entered the call; only the syscall that sysmon entered on the G's behalf (Retake.retakeBlocked,
 * a carrier blocked in unwrapped user code) is left at a poll. Leaving the G's own syscall at a
 * poll let it go on into its blocking call holding a P, as a running G that sysmon cannot see
 * blocked (native I/O stays RUNNABLE): with every P lost that way the program hung (the
 * showcase's network scenario, the server's reads in Syscall.block, on a loaded machine).
 */
class SyscallPollTest {

    @Test
    @Timeout(30)
    void aPollInsideTheGoroutinesOwnSyscallDoesNotLeaveIt() {
        Scheduler s = new Scheduler(TestSupport.config(1));
        AtomicInteger statusAfterPoll = new AtomicInteger(-1);
        AtomicInteger statusAfterExit = new AtomicInteger(-1);
        s.run(() -> {
            M mp = M.current();
            P pp = mp.p;
            G gp = Syscalls.entersyscall(); // what Syscall.block does first
            // sysmon's request for the slice the G ran before the call (it raced the entry)
            mp.thread.requestPreempt(pp.schedtick());
            Poll.poll("SyscallPollTest"); // an instrumented poll in the code the G wrapped
            statusAfterPoll.set(gp.readgstatusNoScan());
            Syscalls.exitsyscall(gp); // what Syscall.block does last
            statusAfterExit.set(gp.readgstatusNoScan());
        });
        assertEquals(G._Gsyscall, statusAfterPoll.get(), "the poll left the G's own syscall");
        assertEquals(G._Grunning, statusAfterExit.get());
        // (sysmon may retake the idle P meanwhile: that is its business, not the poll's)
        assertEquals(1, s.preempt.stale.get(), "the poll did not recognise the request as stale");
        assertEquals(0, s.preempt.syscallExitsDeferred.get());
    }
}
