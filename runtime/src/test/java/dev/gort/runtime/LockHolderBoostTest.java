package dev.gort.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.ReentrantLock;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A goroutine that holds a Java lock and finds no idle P when its block ends must not wait for
 * some goroutine's time slice to end: every goroutine that wants the lock waits behind it
 * ({@link Preempt#boostLockHolder}). The agent counts a lock at its call sites; these tests count
 * it by hand ({@link Poll#lockAcquired}), as instrumented code would. sysmon is held
 * ({@link RetakeGate}) so that no time slice ends and no blocked carrier is retaken while the
 * holder waits: only the boost can give it a P.
 */
@Timeout(60)
class LockHolderBoostTest {

    /**
     * GOMAXPROCS=1: a CPU-bound goroutine holds the P, with two more goroutines queued on that P
     * that spin until the holder has run; the holder's blocking call ({@code entersyscallblock}:
     * the P was handed off at entry) acquires a {@code ReentrantLock} the test thread releases.
     * The holder asks the spinner for its P, and the P's next findRunnable takes the holder from
     * the global queue's head before its own queue. Without the request the holder waits for a
     * time slice sysmon never ends here; without the mark the P runs its queued spinners first.
     */
    @ParameterizedTest(name = "psyscall={0}")
    @ValueSource(booleans = {false, true})
    void aLockHolderWithNoIdlePTakesARunningGoroutinesP(boolean psyscall) throws Exception {
        Scheduler s = new Scheduler(TestSupport.config(1, psyscall));
        ReentrantLock lock = new ReentrantLock();
        AtomicBoolean holderRan = new AtomicBoolean();
        CountDownLatch spinning = new CountDownLatch(1);
        CountDownLatch holderDone = new CountDownLatch(1);
        AtomicReference<Throwable> failure = new AtomicReference<>();
        lock.lock(); // the test thread's: the holder's blocking call waits for it
        Thread runner;
        try (RetakeGate noSysmon = RetakeGate.hold()) {
            runner = new Thread(() -> {
                try {
                    s.run(() -> {
                        GoSema done = new GoSema(0);
                        Unpreemptible.run(() -> {
                            s.newproc(
                                    () -> { // the spinner, queued behind the holder (runnext)
                                        for (int i = 0; i < 2; i++) {
                                            s.newproc(
                                                    () -> { // queued on the spinner's P
                                                        spinUntil(holderRan);
                                                        done.release();
                                                    });
                                        }
                                        spinning.countDown();
                                        spinUntil(holderRan);
                                        done.release();
                                    });
                            s.newproc(
                                    () -> { // the holder
                                        G own = Syscalls.entersyscallblock(); // hands the P off at once
                                        lock.lock();
                                        Poll.lockAcquired(lock);
                                        Syscalls.exitsyscall(own); // the spinner holds the only P
                                        holderRan.set(true);
                                        lock.unlock();
                                        Poll.lockReleased(lock);
                                        holderDone.countDown();
                                        done.release();
                                    });
                        });
                        for (int i = 0; i < 4; i++) {
                            done.acquire();
                        }
                    });
                } catch (Throwable t) {
                    failure.set(t);
                }
            });
            runner.start();
            assertTrue(spinning.await(20, TimeUnit.SECONDS), "the spinner runs");
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while (!lock.hasQueuedThreads()) { // the holder's carrier waits for the lock
                assertTrue(System.nanoTime() < until, "the holder blocks on the lock");
                Thread.onSpinWait();
            }
            lock.unlock();
            boolean ran = holderDone.await(20, TimeUnit.SECONDS);
            noSysmon.close(); // let a failed run end
            assertTrue(ran, "the lock holder got the spinner's P with sysmon held (it waited for a slice to end)");
        }
        runner.join(TimeUnit.SECONDS.toMillis(30));
        assertFalse(runner.isAlive(), "the runtime ended");
        if (failure.get() != null) {
            throw new AssertionError(failure.get());
        }
        assertEquals(1, s.syscallStats.snapshot(s).lockHolderBoosts(), "one boost");
    }

    /**
     * The only P runs a goroutine that holds a lock of its own (it would refuse a preemption) with
     * its carrier blocked in Java: the boost marks that P and hurries sysmon, whose retake of a
     * blocked carrier then hands the P to the holder, instead of asking the goroutine to stop.
     */
    @Test
    void aPHeldByABlockedLockHolderIsMarkedAndSysmonHurried() throws Exception {
        Scheduler s = new Scheduler(TestSupport.config(1));
        CountDownLatch blocked = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        AtomicReference<M> blockedM = new AtomicReference<>();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        ReentrantLock own = new ReentrantLock();
        Thread runner;
        try (RetakeGate noSysmon = RetakeGate.hold()) {
            runner = new Thread(() -> {
                try {
                    s.run(() -> {
                        own.lock();
                        Poll.lockAcquired(own);
                        blockedM.set(M.current());
                        blocked.countDown();
                        try {
                            release.await(); // the carrier blocks in Java, holding the P
                        } catch (InterruptedException e) {
                            throw new AssertionError(e);
                        }
                        own.unlock();
                        Poll.lockReleased(own);
                    });
                } catch (Throwable t) {
                    failure.set(t);
                }
            });
            runner.start();
            assertTrue(blocked.await(20, TimeUnit.SECONDS));
            M mp = blockedM.get();
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while (!Retake.carrierBlocked(mp)) {
                assertTrue(System.nanoTime() < until, "main's carrier blocks");
                Thread.onSpinWait();
            }
            P pp = mp.p;
            long requests = s.preempt.requests();
            s.sysmon.hurriedForTest(); // clear
            boolean boosted;
            synchronized (s.sched.lock) {
                boosted = s.preempt.boostLockHolder(mp);
            }
            assertTrue(boosted, "a P was found for the holder");
            assertTrue(pp.lockHolderWaitingOpaque(), "the blocked holder's P is marked");
            assertTrue(s.sysmon.hurriedForTest(), "sysmon hurried");
            assertEquals(requests, s.preempt.requests(), "no request to a goroutine that would refuse it");
            synchronized (s.sched.lock) {
                assertFalse(s.preempt.boostLockHolder(mp), "a marked P is not chosen twice");
            }
            release.countDown();
        }
        runner.join(TimeUnit.SECONDS.toMillis(30));
        assertFalse(runner.isAlive(), "the runtime ended");
        if (failure.get() != null) {
            throw new AssertionError(failure.get());
        }
    }

    private static void spinUntil(AtomicBoolean flag) {
        while (!flag.get()) {
            Poll.poll();
        }
    }
}
