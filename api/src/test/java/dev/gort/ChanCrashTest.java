package dev.gort;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gort.runtime.ChildJvm;
import java.io.IOException;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Go's crash tests for channels, select and sync (crash_test.go TestSimpleDeadlock and friends):
 * each program runs in a child JVM the way a user runs gort (no -Dgort.fatal=throw), and its
 * output and exit status are checked. Also checks gort's wait-for graph in the deadlock dump.
 */
class ChanCrashTest {
    static ChildJvm.Result run(String name, String gomaxprocs) throws IOException, InterruptedException {
        return ChildJvm.run("dev.gort.testprog.ChanProg", name, gomaxprocs, java.util.Map.of());
    }

    static final String DEADLOCK = "fatal error: all goroutines are asleep - deadlock!\n";

    /** Go: TestSimpleDeadlock (select {} with nothing else alive). */
    @ParameterizedTest(name = "GOMAXPROCS={0}")
    @ValueSource(strings = {"1", "2", "4"})
    void selectNoCasesDeadlock(String procs) throws Exception {
        ChildJvm.Result r = run("SelectNoCases", procs);
        assertTrue(r.output().startsWith(DEADLOCK), r.output());
        assertTrue(r.output().contains("goroutine 1 [select (no cases)]:\n"), r.output());
        assertEquals(2, r.status(), r.output());
    }

    @ParameterizedTest(name = "GOMAXPROCS={0}")
    @ValueSource(strings = {"1", "2", "4"})
    void chanRecvDeadlock(String procs) throws Exception {
        ChildJvm.Result r = run("ChanRecvDeadlock", procs);
        assertTrue(r.output().startsWith(DEADLOCK), r.output());
        assertTrue(r.output().contains("goroutine 1 [chan receive]:\n"), r.output());
        // the wait-for graph names the channel, its state and its queues
        assertTrue(
                Pattern.compile(
                                "\nwait-for graph:\n  G1 \\[chan receive\\] waits on chan#\\d+ \\(len 0/cap 0; receivers waiting: G1; senders waiting: none\\)\n")
                        .matcher(r.output())
                        .find(),
                r.output());
        assertEquals(2, r.status(), r.output());
    }

    @Test
    void nilChanDeadlock() throws Exception {
        ChildJvm.Result r = run("NilChanSend", "2");
        assertTrue(r.output().startsWith(DEADLOCK), r.output());
        assertTrue(r.output().contains("goroutine 1 [chan send (nil chan)]:\n"), r.output());
        assertEquals(2, r.status(), r.output());
    }

    /**
     * gort beyond Go: the dump follows the locker -> mutex -> the sender (its holder) -> the channel
     * the sender is stuck on. Their ids are read from the dump: each P hands out ids from its own
     * batch (Go's goidcache), so at GOMAXPROCS=2 they need not be 2 and 3 (main may resume on the
     * other P between its two go statements, or create the second while its carrier had lost its
     * P, which takes the next id outside the batches).
     */
    @ParameterizedTest(name = "GOMAXPROCS={0}")
    @ValueSource(strings = {"1", "2"})
    void mutexChainDeadlockShowsTheWaitForChain(String procs) throws Exception {
        ChildJvm.Result r = run("MutexChain", procs);
        String out = r.output();
        assertTrue(out.startsWith(DEADLOCK), out);
        assertTrue(out.contains("goroutine 1 [sync.WaitGroup.Wait]:\n"), out);
        String sender = idOf(out, "chan send");
        String locker = idOf(out, "sync.Mutex.Lock");
        assertTrue(
                Pattern.compile(
                                "  G1 \\[sync.WaitGroup.Wait\\] waits on sync.WaitGroup@\\p{XDigit}+ \\(counter 2, waiters 1: G1\\)\n")
                        .matcher(out)
                        .find(),
                out);
        assertTrue(
                Pattern.compile("  G" + sender
                                + " \\[chan send\\] waits on chan#\\d+ \\(len 0/cap 0; receivers waiting: none; senders waiting: G"
                                + sender + "\\)\n")
                        .matcher(out)
                        .find(),
                out);
        assertTrue(
                Pattern.compile("  G" + locker
                                + " \\[sync.Mutex.Lock\\] waits on sync.Mutex@\\p{XDigit}+ \\(locked; waiters: G"
                                + locker
                                + "\\) held by G" + sender + "\n")
                        .matcher(out)
                        .find(),
                out);
        assertTrue(
                Pattern.compile("  chain: G" + locker + " -> sync.Mutex@\\p{XDigit}+ -> G" + sender + " -> chan#\\d+\n")
                        .matcher(out)
                        .find(),
                out);
        assertEquals(2, r.status(), out);
    }

    /** The id of the one goroutine of the dump {@code out} in state {@code state}, not main's. */
    private static String idOf(String out, String state) {
        java.util.regex.Matcher m = Pattern.compile("\ngoroutine (\\d+) \\[" + Pattern.quote(state) + "\\]:\n")
                .matcher(out);
        assertTrue(m.find(), "no goroutine [" + state + "] in\n" + out);
        String id = m.group(1);
        assertFalse(m.find(), "two goroutines [" + state + "] in\n" + out);
        assertNotEquals("1", id, out);
        return id;
    }

    @Test
    void sendOnClosedChannelPanics() throws Exception {
        ChildJvm.Result r = run("SendOnClosed", "2");
        assertTrue(r.output().startsWith("panic: send on closed channel\n\ngoroutine 2 [running]:\n"), r.output());
        assertEquals(2, r.status(), r.output());
    }

    @Test
    void unlockOfUnlockedMutexIsFatal() throws Exception {
        ChildJvm.Result r = run("UnlockUnlocked", "1");
        assertTrue(r.output().startsWith("fatal error: sync: unlock of unlocked mutex\n"), r.output());
        assertEquals(2, r.status(), r.output());
    }
}
