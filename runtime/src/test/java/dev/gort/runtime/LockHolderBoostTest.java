package dev.gort.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
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
        lock.lock(); // the test thread's: the holder's blocking call waits for it
        RuntimeThread runner;
        try (RetakeGate noSysmon = RetakeGate.hold()) {
            runner = new RuntimeThread(s, () -> {
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
            assertTrue(spinning.await(20, TimeUnit.SECONDS), "the spinner runs");
            awaitQueued(lock); // the holder's carrier waits for the lock
            lock.unlock();
            boolean ran = holderDone.await(20, TimeUnit.SECONDS);
            noSysmon.close(); // let a failed run end
            assertTrue(ran, "the lock holder got the spinner's P with sysmon held (it waited for a slice to end)");
        }
        runner.join();
        assertEquals(1, s.syscallStats.snapshot(s).lockHolderBoosts(), "one boost");
    }

    /**
     * The only P runs a goroutine that holds a lock of its own (it would refuse a preemption) with
     * its carrier blocked in Java: the boost claims that P and hurries sysmon, whose retake of a
     * blocked carrier then hands the P to the holder, instead of asking the goroutine to stop. A
     * second holder claims the same P again (the P's next two findRunnables take the global
     * queue's head first), without asking or hurrying anything more.
     */
    @Test
    void aPHeldByABlockedLockHolderIsMarkedAndSysmonHurried() throws Exception {
        Scheduler s = new Scheduler(TestSupport.config(1));
        CountDownLatch blocked = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        AtomicReference<M> blockedM = new AtomicReference<>();
        ReentrantLock own = new ReentrantLock();
        RuntimeThread runner;
        try (RetakeGate noSysmon = RetakeGate.hold()) {
            runner = new RuntimeThread(s, () -> {
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
            assertEquals(1, pp.lockHoldersWaitingOpaque(), "the blocked holder's P is claimed");
            assertTrue(s.sysmon.hurriedForTest(), "sysmon hurried");
            assertEquals(requests, s.preempt.requests(), "no request to a goroutine that would refuse it");
            synchronized (s.sched.lock) {
                assertTrue(s.preempt.boostLockHolder(mp), "a second holder claims the P too");
            }
            assertEquals(2, pp.lockHoldersWaitingOpaque(), "two claims: the P's next two findRunnables");
            assertFalse(s.sysmon.hurriedForTest(), "a claimed P's sysmon is not hurried again");
            assertEquals(requests, s.preempt.requests(), "nor its goroutine asked");
            release.countDown();
        }
        runner.join();
    }

    /**
     * A seeded runtime never preempts on the wall clock (Sysmon, {@link Decisions}): the moment a
     * lock holder's carrier wakes is such a time, so its boost asks nothing of the running
     * goroutine (which would stop at whatever poll it had reached) and only claims the P: the
     * holder runs when that goroutine leaves the P, before the P's own queue. GOMAXPROCS=1: the
     * spinner runs until the holder waits for a P and then ends; the holder runs after it.
     */
    @Test
    void aSeededRuntimeAsksNoGoroutineToStopForALockHolder() throws Exception {
        Scheduler s = new Scheduler(TestSupport.config(1).withSeed(42));
        ReentrantLock lock = new ReentrantLock();
        AtomicReference<M> holderM = new AtomicReference<>();
        java.util.List<String> order = java.util.Collections.synchronizedList(new java.util.ArrayList<>());
        CountDownLatch spinning = new CountDownLatch(1);
        lock.lock();
        RuntimeThread runner = new RuntimeThread(s, () -> {
            GoSema done = new GoSema(0);
            Unpreemptible.run(() -> {
                s.newproc(
                        () -> { // the spinner, queued behind the holder (runnext)
                            spinning.countDown();
                            for (; ; ) {
                                M m = holderM.get();
                                if (m != null && m.blocked) {
                                    break; // the holder waits for this P: it asked (or not) already
                                }
                                Poll.poll();
                            }
                            for (int i = 0; i < 1000; i++) {
                                Poll.poll();
                            }
                            order.add("spinner");
                            done.release();
                        });
                s.newproc(
                        () -> { // the holder
                            holderM.set(M.current());
                            G own = Syscalls.entersyscallblock(); // hands the P off at once
                            lock.lock();
                            Poll.lockAcquired(lock);
                            Syscalls.exitsyscall(own); // the spinner holds the only P
                            order.add("holder");
                            lock.unlock();
                            Poll.lockReleased(lock);
                            done.release();
                        });
            });
            done.acquire();
            done.acquire();
        });
        assertTrue(spinning.await(20, TimeUnit.SECONDS), "the spinner runs");
        awaitQueued(lock);
        lock.unlock();
        runner.join();
        assertEquals(java.util.List.of("spinner", "holder"), order, "the spinner was not asked to stop");
        assertEquals(1, s.syscallStats.snapshot(s).lockHolderBoosts(), "the holder claimed the P");
    }

    /**
     * GOMAXPROCS=1, sysmon held: a second lock holder arrives while the P runs the first one
     * (boosted onto it, still inside its critical section: it holds a lock, so it is asked
     * nothing, and its carrier runs). The P is claimed for it all the same, so that when the first
     * holder leaves the P its next findRunnable takes the second from the global queue's head
     * before the spinners queued on the P. Without that claim the second waits for the spinners'
     * time slices, which sysmon never ends here.
     */
    @ParameterizedTest(name = "psyscall={0}")
    @ValueSource(booleans = {false, true})
    void aSecondLockHolderGetsThePWhenTheRunningHolderLeavesIt(boolean psyscall) throws Exception {
        twoHolders(psyscall, false);
    }

    /**
     * GOMAXPROCS=1, sysmon held: two lock holders wait for the one P, claimed for the first (the
     * spinner asked to stop refuses a moment, unpreemptible, so the P is still claimed when the
     * second arrives). The second, at the queue's head, takes the P first; the first must get it
     * when the second leaves, not after the spinners queued on the P (it waited for time slices
     * sysmon never ends here).
     */
    @ParameterizedTest(name = "psyscall={0}")
    @ValueSource(booleans = {false, true})
    void twoLockHoldersWaitingForOneClaimedPBothGetIt(boolean psyscall) throws Exception {
        twoHolders(psyscall, true);
    }

    /**
     * The spinner S on the only P, with two more spinners queued on it, and two holders H1 and H2,
     * each in a blocking call acquiring a lock the test thread holds. H1 is let go first and
     * boosted onto the P. {@code markedP}: S refuses its request a moment (unpreemptible) until H2
     * waits in the global queue (the P is still claimed when H2 asks); else H1, running on the P
     * with its lock, waits until H2 is queued. Both holders must run with sysmon held.
     */
    private static void twoHolders(boolean psyscall, boolean markedP) throws Exception {
        Scheduler s = new Scheduler(TestSupport.config(1, psyscall));
        ReentrantLock lock1 = new ReentrantLock();
        ReentrantLock lock2 = new ReentrantLock();
        AtomicInteger holdersRan = new AtomicInteger();
        AtomicReference<M> h2 = new AtomicReference<>(); // H2's carrier
        CountDownLatch spinning = new CountDownLatch(1);
        CountDownLatch h1Running = new CountDownLatch(1);
        CountDownLatch spinnerAsked = new CountDownLatch(1);
        CountDownLatch holdersDone = new CountDownLatch(2);
        lock1.lock();
        lock2.lock();
        RuntimeThread runner;
        try (RetakeGate noSysmon = RetakeGate.hold()) {
            runner = new RuntimeThread(s, () -> {
                GoSema done = new GoSema(0);
                Unpreemptible.run(() -> {
                    s.newproc(
                            () -> { // S, run after both holders entered their calls
                                for (int i = 0; i < 2; i++) {
                                    s.newproc(
                                            () -> { // queued on S's P
                                                spinUntil(holdersRan, 2);
                                                done.release();
                                            });
                                }
                                spinning.countDown();
                                if (markedP) {
                                    M me = M.current();
                                    Unpreemptible.run(
                                            () -> { // holds no lock: H1 asks S
                                                while (!Preempt.owedOpaque(me)) {
                                                    Poll.poll(); // H1's request, refused here
                                                }
                                                spinnerAsked.countDown();
                                                spinUntilWaiting(h2);
                                            });
                                    // Owed: asked again (as a released lock re-arms); the next poll yields.
                                    s.preempt.rearm(me, Scheduler.getg(), false);
                                }
                                spinUntil(holdersRan, 2);
                                done.release();
                            });
                    s.newproc(
                            () -> { // H1, runnext
                                s.newproc(
                                        () -> { // H2, on H1's P while H1 blocks
                                            h2.set(M.current());
                                            G own = Syscalls.entersyscallblock();
                                            lock2.lock();
                                            Poll.lockAcquired(lock2);
                                            Syscalls.exitsyscall(own);
                                            holdersRan.incrementAndGet();
                                            lock2.unlock();
                                            Poll.lockReleased(lock2);
                                            holdersDone.countDown();
                                            done.release();
                                        });
                                G own = Syscalls.entersyscallblock(); // hands the P off: H2 runs
                                lock1.lock();
                                Poll.lockAcquired(lock1);
                                Syscalls.exitsyscall(own); // S holds the only P
                                h1Running.countDown();
                                if (!markedP) {
                                    spinUntilWaiting(h2); // H2 asks while this holds lock1
                                }
                                holdersRan.incrementAndGet();
                                lock1.unlock();
                                Poll.lockReleased(lock1);
                                holdersDone.countDown();
                                done.release();
                            });
                });
                for (int i = 0; i < 5; i++) {
                    done.acquire();
                }
            });
            assertTrue(spinning.await(20, TimeUnit.SECONDS), "the spinner runs");
            awaitQueued(lock1);
            awaitQueued(lock2);
            lock1.unlock(); // H1 asks for S's P
            if (markedP) {
                assertTrue(spinnerAsked.await(20, TimeUnit.SECONDS), "S was asked for its P");
            } else {
                assertTrue(h1Running.await(20, TimeUnit.SECONDS), "H1 got S's P");
            }
            lock2.unlock(); // H2 asks
            boolean ran = holdersDone.await(20, TimeUnit.SECONDS);
            noSysmon.close(); // let a failed run end
            assertTrue(ran, "both holders ran with sysmon held (" + holdersRan.get() + " did; one waited for a slice)");
        }
        runner.join();
        assertEquals(2, s.syscallStats.snapshot(s).lockHolderBoosts(), "each holder asked");
    }

    /** Waits (bounded) until a thread waits for {@code lock}. */
    private static void awaitQueued(ReentrantLock lock) {
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (!lock.hasQueuedThreads()) {
            assertTrue(System.nanoTime() < until, "a holder blocks on its lock");
            Thread.onSpinWait();
        }
    }

    /**
     * Spins, polling, until the carrier {@code mp} (once known) sleeps waiting for a P: its holder
     * is in the global queue and has asked for a P. Not by a look at the queue under sched.lock: a
     * carrier blocked on that lock while the holder asks (it holds it) looks blocked in Java.
     */
    private static void spinUntilWaiting(AtomicReference<M> mp) {
        for (; ; ) {
            M m = mp.get();
            if (m != null && m.blocked) {
                return;
            }
            Poll.poll();
        }
    }

    private static void spinUntil(AtomicInteger n, int until) {
        while (n.get() < until) {
            Poll.poll();
        }
    }

    private static void spinUntil(AtomicBoolean flag) {
        while (!flag.get()) {
            Poll.poll();
        }
    }

    /** {@code s.run(main)} on a thread of its own, started at once, keeping what it threw. */
    private static final class RuntimeThread {
        private final Thread thread;
        private final AtomicReference<Throwable> failure = new AtomicReference<>();

        RuntimeThread(Scheduler s, Runnable main) {
            thread = new Thread(() -> {
                try {
                    s.run(main);
                } catch (Throwable t) {
                    failure.set(t);
                }
            });
            thread.start();
        }

        /** Waits (bounded) for the runtime to end, and fails with what it threw. */
        void join() throws InterruptedException {
            thread.join(TimeUnit.SECONDS.toMillis(30));
            assertFalse(thread.isAlive(), "the runtime ended");
            if (failure.get() != null) {
                throw new AssertionError(failure.get());
            }
        }
    }
}
