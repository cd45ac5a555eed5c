package dev.gort;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gort.runtime.G;
import dev.gort.runtime.Scheduler;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.RepeatedTest;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A goroutine that parks while it is in a syscall (a channel operation inside {@code Syscall.block},
 * or right after sysmon retook the P of its blocked carrier) parks with the channel lock released,
 * like any other park: it never waits for a P, yields for one or is preempted while the lock is
 * held (issue 12, defect 1). GOMAXPROCS=1 throughout: G3 holds the only P and spins until G2 has
 * left its carrier, then uses the channel G2 parked on; with the lock leaked, G3 spins on it
 * forever and G2, queued globally, never runs again.
 */
@ParameterizedClass(name = "psyscall={0}")
@ValueSource(booleans = {false, true})
class ParkInSyscallTest {
    /** The syscall model: Go 1.25's {@code _Psyscall} (true) or Go 1.26+'s. */
    @Parameter
    boolean psyscall;

    private static final Duration LIMIT = Duration.ofSeconds(20);

    /** The P is handed off at the syscall's entry, so the park finds no P free. */
    @Test
    void parkInsideBlockHandoffReleasesTheChannelLock() {
        AtomicReference<Integer> got = new AtomicReference<>();
        GortTesting.run(1, psyscall, LIMIT, () -> {
            Chan<Integer> c = Chan.make();
            Chan<Integer> done = Chan.make(2);
            G[] g2 = new G[1];
            AtomicBoolean g3Runs = new AtomicBoolean();
            Go.go(
                    () -> { // G3: runs once G2's syscall hands the P off
                        awaitG2(g2);
                        g3Runs.set(true);
                        waitFor(() -> leftItsCarrier(g2[0]), "G2 to park inside its syscall");
                        c.send(42);
                        done.send(3);
                    });
            Go.go(
                    () -> { // G2: runs first (runnext)
                        g2[0] = Scheduler.currentG();
                        got.set(Syscall.blockHandoff(() -> {
                            waitFor(g3Runs::get, "G3 to hold the P"); // so that the park finds no P free
                            return c.recv();
                        }));
                        done.send(2);
                    });
            done.recv();
            done.recv();
        });
        assertEquals(42, got.get());
    }

    /**
     * G2 blocks its carrier without saying so until sysmon retakes its P (G2 is then in a syscall
     * of sysmon's making), and only then receives: the park from that state must not leak the lock.
     */
    @Test
    void parkAfterSysmonRetookTheBlockedCarrierReleasesTheChannelLock() {
        AtomicReference<Integer> got = new AtomicReference<>();
        GortTesting.run(1, psyscall, LIMIT, () -> {
            Chan<Integer> c = Chan.make();
            Chan<Integer> done = Chan.make(2);
            G[] g2 = new G[1];
            Go.go(
                    () -> { // G3: runs on the P sysmon took from G2's carrier
                        awaitG2(g2);
                        waitFor(() -> leftItsCarrier(g2[0]), "G2 to park after the retake");
                        c.send(7);
                        done.send(3);
                    });
            Go.go(
                    () -> { // G2: runs first (runnext)
                        G me = Scheduler.currentG();
                        g2[0] = me;
                        waitFor(
                                () -> {
                                    sleepUnwrapped(); // a blocked carrier: sysmon retakes the P
                                    return me.readgstatus() == G._Gsyscall;
                                },
                                "sysmon to retake G2's P");
                        got.set(c.recv());
                        done.send(2);
                    });
            done.recv();
            done.recv();
        });
        assertEquals(7, got.get());
    }

    /**
     * The same 300 times: the M whose G sysmon retook could stop and report "checkdead: runnable g"
     * while the retaken P was still in sysmon's hands on its way to handoffp (1 to 7 in 600
     * repetitions beside a CPU hog, before Retake counted one more M running around the retake, as
     * Go's retake does). Run with {@code -Dgort.groups.excluded=}.
     */
    @RepeatedTest(300)
    @Tag("stress")
    void parkAfterSysmonRetookTheBlockedCarrierRepeatedly() {
        parkAfterSysmonRetookTheBlockedCarrierReleasesTheChannelLock();
    }

    /** A select inside a syscall parks the same way (its locks go in selparkcommit). */
    @Test
    void selectInsideBlockHandoffReleasesItsLocks() {
        AtomicReference<Integer> got = new AtomicReference<>();
        GortTesting.run(1, psyscall, LIMIT, () -> {
            Chan<Integer> a = Chan.make();
            Chan<Integer> b = Chan.make();
            Chan<Integer> done = Chan.make(2);
            G[] g2 = new G[1];
            AtomicBoolean g3Runs = new AtomicBoolean();
            Go.go(() -> {
                awaitG2(g2);
                g3Runs.set(true);
                waitFor(() -> leftItsCarrier(g2[0]), "G2 to park inside its syscall");
                b.send(5);
                a.close();
                done.send(3);
            });
            Go.go(() -> {
                g2[0] = Scheduler.currentG();
                got.set(Syscall.blockHandoff(() -> {
                    waitFor(g3Runs::get, "G3 to hold the P");
                    int[] v = new int[1];
                    Select.select(Select.recv(a, x -> v[0] = -1), Select.recv(b, x -> v[0] = x));
                    return v[0];
                }));
                done.send(2);
            });
            done.recv();
            done.recv();
        });
        assertEquals(5, got.get());
    }

    /**
     * G3 normally runs second, but main's carrier may lose its P to sysmon while it loads classes,
     * and then both Gs go to the global queue in creation order: let G2 start first (yielding the
     * P), and only then hold the P without yielding.
     */
    private static void awaitG2(G[] g2) {
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (g2[0] == null) {
            assertTrue(System.nanoTime() < deadline, "timed out waiting for G2 to start");
            Go.gosched();
        }
    }

    private static boolean leftItsCarrier(G g) {
        if (g == null) {
            return false;
        }
        int st = g.readgstatus();
        return st == G._Gwaiting || st == G._Grunnable;
    }

    private static void sleepUnwrapped() {
        try {
            Thread.sleep(1);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    /** Wait-for-condition with a bounded deadline (never to order events). */
    private static void waitFor(BooleanSupplier cond, String what) {
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (!cond.getAsBoolean()) {
            assertTrue(System.nanoTime() < deadline, "timed out waiting for " + what);
            Thread.onSpinWait();
        }
    }
}
