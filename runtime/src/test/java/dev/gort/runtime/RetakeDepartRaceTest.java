package dev.gort.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Sysmon's retake of a blocked carrier ({@link Retake#retakeBlocked}) must never take the P of an M
 * whose G has already yielded to it (Go's g0 code in park_m, gosched_m, goexit0: the G is still
 * {@code _Grunning} there and only its own M changes its status). The M's departure code may block
 * its carrier (a trace buffer flush, a contended lock): a retake there turned the G {@code _Gsyscall}
 * under the M, whose next {@code casgstatus(_Grunning, ...)} died with "casgstatus: bad incoming
 * values" (seen once in TraceOnCrashTest). The seam {@link M#departHookForTest} blocks the carrier
 * right there, deterministically, and the test plays sysmon. The blocked-carrier retake is the
 * same in both syscall models; so is the test.
 */
@Timeout(60)
class RetakeDepartRaceTest {
    @AfterEach
    void clearHook() {
        M.departHookForTest = null;
    }

    private void departureIsNotRetaken(boolean exit, boolean psyscall) throws Exception {
        Scheduler s = new Scheduler(TestSupport.config(1, psyscall));
        CountDownLatch atHook = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        AtomicReference<G> target = new AtomicReference<>();
        AtomicReference<Throwable> failed = new AtomicReference<>();
        AtomicReference<M> departing = new AtomicReference<>();
        AtomicReference<P> departingP = new AtomicReference<>();
        M.departHookForTest = gp -> {
            if (gp != target.get() || (exit ? !gp.isDone() : gp.yieldReason != G.YIELD_GOSCHED)) {
                return;
            }
            target.set(null); // once
            departing.set(gp.m);
            departingP.set(gp.m.p);
            atHook.countDown();
            try {
                release.await(); // the carrier is WAITING with the G yielded but still _Grunning
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            }
        };
        Thread player = new Thread(() -> {
            try {
                assertTrue(atHook.await(30, TimeUnit.SECONDS));
                M mp = departing.get();
                G gp = mp.curg;
                P pp = departingP.get();
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
                while (!Retake.carrierBlocked(mp)) { // wait for the condition: the carrier blocks in the hook
                    assertTrue(System.nanoTime() < deadline, "carrier blocked in the hook");
                    Thread.onSpinWait();
                }
                long now = System.nanoTime();
                // Two sightings, as sysmon's two ticks (GOMAXPROCS=1: no idle capacity, no 10 ms grace).
                assertFalse(Retake.retakeBlocked(s, pp, now), "first sighting");
                assertFalse(Retake.retakeBlocked(s, pp, now + 1), "no retake of a P whose G left its carrier");
                assertEquals(G._Grunning, gp.readgstatus(), "the G is its M's to change");
                assertEquals(0, s.syscallStats.snapshot(s).blockedRetakes(), "nobody (sysmon neither) retook it");
            } catch (Throwable t) {
                failed.set(t);
            } finally {
                release.countDown();
            }
        });
        player.start();
        s.run(() -> {
            GoSema done = new GoSema(0);
            s.newproc(() -> {
                target.set(Scheduler.currentG());
                if (!exit) {
                    Scheduler.gosched();
                }
                done.release();
            });
            done.acquire();
        });
        player.join();
        if (failed.get() != null) {
            throw new AssertionError(failed.get());
        }
    }

    @ParameterizedTest(name = "psyscall={0}")
    @ValueSource(booleans = {false, true})
    void goschedDepartureIsNotRetaken(boolean psyscall) throws Exception {
        departureIsNotRetaken(false, psyscall);
    }

    @ParameterizedTest(name = "psyscall={0}")
    @ValueSource(booleans = {false, true})
    void exitDepartureIsNotRetaken(boolean psyscall) throws Exception {
        departureIsNotRetaken(true, psyscall);
    }
}
