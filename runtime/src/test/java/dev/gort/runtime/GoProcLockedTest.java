package dev.gort.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * go-tests-to-port.md §C: TestBlockLocked and TestYieldLocked, plus LockOSThread's nesting rules.
 * Channels and timers are not in the core: an unbuffered send is a rendezvous of two semaphores,
 * and "time.Sleep(1ms)" is a park readied 1 ms later by an outside timer thread.
 */
@Timeout(60)
class GoProcLockedTest {

    /** c <- v on an unbuffered channel, for one sender and one receiver. */
    static final class Rendezvous {
        final GoSema items = new GoSema(0);
        final GoSema taken = new GoSema(0);

        void send() {
            items.release();
            taken.acquire();
        }

        void recv() {
            items.acquire();
            taken.release();
        }
    }

    /** Go: proc_test.go TestBlockLocked: a locked G sends 10 values to main, then unlocks. */
    @ParameterizedTest(name = "GOMAXPROCS={0}")
    @ValueSource(ints = {1, 2, 4})
    void TestBlockLocked(int procs) {
        final int n = 10;
        Scheduler s = new Scheduler(TestSupport.config(procs));
        Set<Thread> senderCarriers = ConcurrentHashMap.newKeySet();
        AtomicInteger received = new AtomicInteger();
        s.run(() -> {
            Rendezvous c = new Rendezvous();
            GoSema exited = new GoSema(0);
            s.newproc(() -> {
                ThreadLock.LockOSThread();
                for (int i = 0; i < n; i++) {
                    senderCarriers.add(Thread.currentThread());
                    c.send();
                }
                senderCarriers.add(Thread.currentThread());
                ThreadLock.UnlockOSThread();
                exited.release();
            });
            for (int i = 0; i < n; i++) {
                c.recv();
                received.incrementAndGet();
            }
            exited.acquire();
        });
        assertEquals(n, received.get());
        assertEquals(1, senderCarriers.size(), "the locked G ran on one carrier only: " + senderCarriers);
        assertEquals(0, s.syscallStats.snapshot(s).lockedExits(), "it unlocked: its thread lives on");
    }

    /**
     * Go: proc_test.go TestYieldLocked: a locked G does Gosched + Sleep(1 ms) ten times, signals and
     * exits still locked. gort does what Go does with that thread: it ends with the goroutine.
     */
    @Test
    void TestYieldLocked() throws Exception {
        final int n = 10;
        Scheduler s = new Scheduler(TestSupport.config(2));
        ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor();
        Set<Thread> carriers = ConcurrentHashMap.newKeySet();
        AtomicReference<Thread> lockedCarrier = new AtomicReference<>();
        try {
            s.run(() -> {
                // c is polled, not parked on: the "sleep" timer is an outside thread that
                // checkdead cannot know about, so some goroutine must stay runnable meanwhile.
                java.util.concurrent.atomic.AtomicBoolean c = new java.util.concurrent.atomic.AtomicBoolean();
                s.newproc(() -> {
                    ThreadLock.LockOSThread();
                    lockedCarrier.set(Thread.currentThread());
                    for (int i = 0; i < n; i++) {
                        carriers.add(Thread.currentThread());
                        Scheduler.gosched();
                        carriers.add(Thread.currentThread());
                        GoSema slept = new GoSema(0);
                        timer.schedule(slept::release, 1, TimeUnit.MILLISECONDS);
                        slept.acquire(); // time.Sleep(time.Millisecond)
                    }
                    carriers.add(Thread.currentThread());
                    c.set(true);
                    // runtime.UnlockOSThread() is deliberately omitted
                });
                while (!c.get()) {
                    Scheduler.gosched();
                }
                // The locked G's thread ends with it: wait for that (bounded), from inside main.
                Thread t = lockedCarrier.get();
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                while (t.isAlive() && System.nanoTime() < deadline) {
                    Scheduler.gosched();
                }
                assertFalse(t.isAlive(), "the thread of a G that exited locked terminates");
                assertTrue(s.allm().stream().noneMatch(m -> m.thread == t), "and leaves allm");
            });
        } finally {
            timer.shutdownNow();
        }
        assertNotNull(lockedCarrier.get());
        assertEquals(Set.of(lockedCarrier.get()), carriers, "the locked G never left its carrier");
        assertEquals(1, s.syscallStats.snapshot(s).lockedExits());
    }

    @Test
    void lockOSThreadNests() {
        Scheduler s = new Scheduler(TestSupport.config(1));
        s.run(() -> {
            G gp = Scheduler.currentG();
            M mp = M.current();
            ThreadLock.UnlockOSThread(); // no-op without a lock
            assertFalse(ThreadLock.isLocked());
            ThreadLock.LockOSThread();
            ThreadLock.LockOSThread();
            assertSame(mp, gp.lockedm());
            assertSame(gp, mp.lockedg);
            ThreadLock.UnlockOSThread();
            assertTrue(ThreadLock.isLocked(), "one LockOSThread still outstanding");
            assertSame(mp, gp.lockedm());
            ThreadLock.UnlockOSThread();
            assertFalse(ThreadLock.isLocked());
            assertSame(null, gp.lockedm());
            assertSame(null, mp.lockedg);
        });
    }

    /** A locked G that blocks in a syscall and finds no P on the way out waits on its own M. */
    @Test
    void lockedMainGoroutineKeepsItsThreadAcrossParks() {
        Scheduler s = new Scheduler(TestSupport.config(1));
        s.run(() -> {
            ThreadLock.LockOSThread();
            Thread me = Thread.currentThread();
            GoSema ping = new GoSema(0);
            GoSema pong = new GoSema(0);
            s.newproc(() -> {
                for (int i = 0; i < 100; i++) {
                    ping.acquire();
                    pong.release();
                }
            });
            for (int i = 0; i < 100; i++) {
                ping.release();
                pong.acquire();
                assertSame(me, Thread.currentThread());
            }
            ThreadLock.UnlockOSThread();
        });
    }
}
