package dev.gort.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.ReentrantLock;
import org.junit.jupiter.api.Test;

/**
 * Preemption in place ({@link Preempt#preemptInPlace}): a goroutine that holds a carrier-owned lock
 * or monitor refuses sysmon's requests (a yield would carry the lock to another carrier), but once
 * it has refused for a whole slice (its slice is 20 ms old: a runnext chain shares one, so the first
 * request it sees may be that old) it stops on its carrier, its P goes to other work, and it runs
 * on when it is scheduled again, still on the carrier that owns the lock. Without it, a holder that
 * spins for a goroutine queued behind it on GOMAXPROCS=1 spun for ever (Caffeine under
 * {@code -Dgort.preempt=budget}). The loops poll by hand where the agent would, and count their
 * lock as the agent's hooks do.
 */
class PreemptInPlaceTest {
    private static final long SECOND = 1_000_000_000L;

    /** What the holder saw: whether it gave up waiting, and its carrier before and after. */
    record Seen(boolean gaveUp, Thread before, Thread after, boolean heldAfter) {}

    /**
     * On GOMAXPROCS=1 a goroutine takes {@code lock}, wakes main (into runnext) and spins, polling,
     * until main sets a flag. Main can run only if the holder is preempted; the holder gives up
     * after 20 s (then the rule is broken). {@code takeLock} also makes main take the lock after
     * setting the flag, blocking its carrier until the holder (which needs a P back) unlocks.
     */
    private static Seen spinForMain(boolean monitor, boolean takeLock, PreemptStats[] stats) {
        Scheduler s = new Scheduler(TestSupport.config(1));
        ReentrantLock lock = new ReentrantLock();
        Object mon = new Object();
        AtomicBoolean flag = new AtomicBoolean();
        AtomicReference<Seen> seen = new AtomicReference<>();
        s.run(() -> {
            GoSema started = new GoSema(0);
            GoSema done = new GoSema(0);
            Runnable holder = () -> {
                Thread before = Thread.currentThread();
                boolean gaveUp = false;
                long deadline = System.nanoTime() + 20 * SECOND;
                if (monitor) {
                    synchronized (mon) {
                        Poll.monitorEnter();
                        started.release();
                        while (!flag.get() && System.nanoTime() < deadline) {
                            Poll.poll();
                        }
                        gaveUp = !flag.get();
                        seen.set(new Seen(gaveUp, before, Thread.currentThread(), Thread.holdsLock(mon)));
                        Poll.monitorExit();
                    }
                } else {
                    lock.lock();
                    Poll.lockAcquired(lock);
                    started.release();
                    while (!flag.get() && System.nanoTime() < deadline) {
                        Poll.poll();
                    }
                    gaveUp = !flag.get();
                    seen.set(new Seen(gaveUp, before, Thread.currentThread(), lock.isHeldByCurrentThread()));
                    lock.unlock();
                    Poll.lockReleased(lock);
                }
                done.release();
            };
            Scheduler.current().newproc(holder);
            started.acquire(); // the holder's release puts main in runnext; the holder keeps the P
            flag.set(true);
            if (takeLock) {
                lock.lock(); // blocks this carrier until the holder, preempted in place, gets a P back
                lock.unlock();
            }
            done.acquire();
        });
        // A request raised at the very end is answered when its carrier ends: wait for the
        // carriers (bounded), then nothing is pending.
        for (M m : s.allm()) {
            try {
                m.thread.join(30_000);
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            }
            assertFalse(m.thread.isAlive(), "carrier still running: " + m.thread);
        }
        stats[0] = s.preempt.snapshot();
        return seen.get();
    }

    private static void assertPreemptedInPlace(Seen seen, PreemptStats p) {
        assertFalse(seen.gaveUp(), "the lock holder was never preempted: " + p);
        assertSame(seen.before(), seen.after(), "the lock holder left its carrier");
        assertTrue(seen.heldAfter(), "the lock holder's carrier no longer owns its lock");
        assertTrue(p.honouredInPlace() >= 1, p.toString());
        assertTrue(p.honoured() >= p.honouredInPlace(), p.toString());
        assertEquals(
                p.requested(), p.honoured() + p.refused() + p.stale() + p.unhonoured(), "requests = outcomes: " + p);
    }

    @Test
    void aLockHolderSpinningForAQueuedGoroutineIsPreemptedInPlace() {
        PreemptStats[] p = new PreemptStats[1];
        Seen seen = spinForMain(false, false, p);
        assertPreemptedInPlace(seen, p[0]);
    }

    @Test
    void aMonitorHolderSpinningForAQueuedGoroutineIsPreemptedInPlace() {
        PreemptStats[] p = new PreemptStats[1];
        Seen seen = spinForMain(true, false, p);
        assertPreemptedInPlace(seen, p[0]);
    }

    /**
     * A monitor held inside a class initialiser refuses as a monitor, but the initialiser forbids a
     * preemption in place too: the Ms holding every P may be waiting for that class (the review's
     * finding: 6 in place). 60 ms of polls with main queued behind; nothing is preempted.
     */
    @Test
    void aMonitorHeldInsideAClassInitialiserIsNotPreemptedInPlace() {
        Scheduler s = new Scheduler(TestSupport.config(1));
        s.run(() -> {
            GoSema started = new GoSema(0);
            GoSema done = new GoSema(0);
            Scheduler.current().newproc(() -> {
                Poll.clinitEnter(); // as the agent counts an instrumented <clinit>
                Poll.monitorEnter();
                try {
                    started.release(); // main is runnable behind us from here on
                    long end = System.nanoTime() + 60_000_000L;
                    while (System.nanoTime() < end) {
                        Poll.poll();
                    }
                } finally {
                    Poll.monitorExit();
                    Poll.clinitExit();
                }
                done.release();
            });
            started.acquire();
            done.acquire();
        });
        PreemptStats p = s.preempt.snapshot();
        assertEquals(0, p.honouredInPlace(), p.toString());
    }

    /**
     * Main returns while a holder preempted in place waits on its carrier for a P: no M schedules
     * it again, so it ends (Goexit: its finally blocks release its locks) and its carrier leaves.
     * Before, the carrier slept for ever, as non-daemon as the caller of run: a JVM that never
     * exited (the review's finding).
     */
    @Test
    void aHolderPreemptedInPlaceWhenMainReturnsEndsAndItsCarrierLeaves() {
        Scheduler s = new Scheduler(TestSupport.config(1));
        ReentrantLock lock = new ReentrantLock();
        AtomicBoolean unlocked = new AtomicBoolean();
        s.run(() -> {
            GoSema started = new GoSema(0);
            Scheduler.current().newproc(() -> {
                lock.lock();
                Poll.lockAcquired(lock);
                try {
                    started.release();
                    long end = System.nanoTime() + 20 * SECOND; // main returns long before
                    while (System.nanoTime() < end) {
                        Poll.poll();
                    }
                } finally {
                    lock.unlock();
                    Poll.lockReleased(lock);
                    unlocked.set(true);
                }
            });
            started.acquire(); // main runs again only once the holder is preempted in place; returns
        });
        for (M m : s.allm()) {
            try {
                m.thread.join(10_000);
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            }
            assertFalse(m.thread.isAlive(), "carrier still alive: " + m.thread + " " + s.preempt.snapshot());
        }
        assertTrue(unlocked.get(), "the holder's finally did not run");
        assertFalse(lock.isLocked(), "the lock is still held");
    }

    /**
     * After the holder stops in place, main (on the holder's former P) blocks its carrier on the same
     * lock: sysmon hands that blocked carrier's P off, the holder gets it, unlocks, and main goes on.
     */
    @Test
    void aGoroutineBlockedOnTheHoldersLockLetsTheHolderBackOnItsP() {
        PreemptStats[] p = new PreemptStats[1];
        Seen seen = spinForMain(false, true, p);
        assertPreemptedInPlace(seen, p[0]);
    }
}
