package dev.gort.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A G that yields ({@code Gosched}) in the "syscall" sysmon made of its blocked carrier leaves its
 * carrier without a P: the M's exitsyscallM found none (another M held the only one), so the
 * departure queues it globally. Go's goschedImpl then calls wakep whatever the M holds; gort's
 * skipped it for an M without a P, and if the other M had meanwhile found nothing to run and
 * idled the P (its findRunnable looked at the global queue before the G was in it), nobody ran the
 * G: "checkdead: runnable g" once in CI (BlockedCarrierTest). The seam {@link M#departHookForTest}
 * holds the departing carrier, deterministically, until the P is idle and no M spins.
 */
@Timeout(60)
class SyscallDepartWakeTest {
    @AfterEach
    void clearHook() {
        M.departHookForTest = null;
    }

    @ParameterizedTest(name = "psyscall={0}")
    @ValueSource(booleans = {false, true})
    void aGoschedDepartureWithoutAPWakesTheIdleP(boolean psyscall) throws Exception {
        Scheduler s = new Scheduler(TestSupport.config(1, psyscall));
        CountDownLatch release = new CountDownLatch(1);
        CountDownLatch atHook = new CountDownLatch(1);
        AtomicReference<G> target = new AtomicReference<>();
        AtomicReference<String> timedOut = new AtomicReference<>();
        M.departHookForTest = gp -> {
            if (gp != target.get() || gp.yieldReason != G.YIELD_GOSCHED || gp.readgstatusNoScan() != G._Gsyscall) {
                return;
            }
            target.set(null); // once
            atHook.countDown();
            // The only P goes idle: its M ran the rest and found nothing (the G is not queued yet).
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while (s.idle.npidle.get() != 1 || s.idle.nmspinning.get() != 0) {
                if (System.nanoTime() > deadline) {
                    timedOut.set("the P never went idle");
                    return;
                }
                Thread.onSpinWait();
            }
        };
        s.run(() -> {
            GoSema done = new GoSema(0);
            // A (created first, runs second): on the P that sysmon takes from B's blocked carrier.
            s.newproc(() -> {
                release.countDown(); // B's carrier runs again, in its "syscall", without a P
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
                while (atHook.getCount() > 0 && System.nanoTime() < deadline) {
                    Thread.onSpinWait(); // keeps the only P while B's M looks for one
                }
                done.release();
            });
            // B (runs first, from runnext): blocks its carrier until A runs.
            s.newproc(() -> {
                target.set(Scheduler.currentG());
                try {
                    assertTrue(release.await(20, TimeUnit.SECONDS));
                } catch (InterruptedException e) {
                    throw new AssertionError(e);
                }
                Scheduler.gosched(); // departs in the retaken syscall, with no P free
                done.release();
            });
            done.acquire();
            done.acquire();
        });
        assertNull(timedOut.get());
        assertEquals(0, atHook.getCount(), "the departure never happened");
        assertTrue(s.syscallStats.snapshot(s).blockedRetakes() >= 1);
    }
}
