package dev.gort.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * A goroutine whose P sysmon retook while its carrier was blocked in unwrapped code
 * ({@link Retake#retakeBlocked}: {@code _Gsyscall}, {@code syscallByRetake}) and that then enters a
 * syscall of its own ({@code Syscall.block}: entersyscall or entersyscallblock) before anything has
 * left the retake: that syscall is the goroutine's own. A blocking call returning inside it
 * ({@link Poll#blockingExit}, where the agent puts it after {@code Object.wait}) must not take a P
 * into the goroutine's blocking call, and sysmon no longer watches the carrier as a retaken one. It
 * kept sysmon's flag, so the return took a P mid-call (and a test that counted main's
 * entersyscallblock hand-off failed once under load, when main had been retaken just before).
 */
@Timeout(30)
class RetakenThenSyscallTest {

    @ParameterizedTest(name = "{0}, psyscall={1}")
    @CsvSource({"entersyscall, false", "entersyscallblock, false", "entersyscall, true", "entersyscallblock, true"})
    void aSyscallEnteredAfterARetakeIsTheGoroutinesOwn(String enter, boolean psyscall) throws Exception {
        Scheduler s = new Scheduler(TestSupport.config(1, psyscall));
        CountDownLatch g2ran = new CountDownLatch(1);
        AtomicReference<String> afterBlock = new AtomicReference<>();
        AtomicReference<String> inOwnCall = new AtomicReference<>();
        AtomicReference<P> pInOwnCall = new AtomicReference<>();
        s.run(() -> {
            GoSema done = new GoSema(0);
            Unpreemptible.run(() -> {
                s.newproc(
                        () -> { // G2: runs only once sysmon has retaken G1's P
                            g2ran.countDown();
                            done.release();
                        });
                s.newproc(
                        () -> { // G1, runnext: blocks its carrier unwrapped (no gort call, no poll)
                            try {
                                assertTrue(g2ran.await(10, TimeUnit.SECONDS));
                            } catch (InterruptedException e) {
                                throw new AssertionError(e);
                            }
                            G gp = M.current().curg;
                            afterBlock.set(G.gstatusName(gp.readgstatusNoScan()) + " implicit=" + gp.syscallImplicit);
                            G own = enter.equals("entersyscall")
                                    ? Syscalls.entersyscall()
                                    : Syscalls.entersyscallblock();
                            Poll.blockingExit(); // a blocking call inside the goroutine's own syscall returns
                            M mp = M.current();
                            inOwnCall.set(G.gstatusName(gp.readgstatusNoScan()) + " implicit=" + gp.syscallImplicit);
                            pInOwnCall.set(mp.p);
                            Syscalls.exitsyscall(own);
                            done.release();
                        });
            });
            done.acquire();
            done.acquire();
        });
        assertEquals(
                "syscall implicit=1",
                afterBlock.get(),
                "G1's P was retaken while its carrier blocked, and nothing has left the retake yet");
        assertEquals(
                "syscall implicit=0",
                inOwnCall.get(),
                "inside the goroutine's own syscall: still in it, and it is the goroutine's");
        assertNull(pInOwnCall.get(), "no P taken into the goroutine's own blocking call");
        assertFalse(s.syscallStats.snapshot(s).blockedRetakes() < 1);
    }
}
