package dev.gort.agent;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gort.runtime.GoSema;
import dev.gort.runtime.M;
import dev.gort.runtime.PreemptStats;
import dev.gort.runtime.PreemptStrategy;
import dev.gort.runtime.Scheduler;
import java.lang.reflect.Method;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.Lock;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Issue 12, defects 2 and 3: no preemption while the carrier thread owns a lock (a
 * {@code java.util.concurrent} lock taken in instrumented code, or a lock the JDK holds around a
 * callback), and none, nor a wait for a P, inside a class initialiser. The workloads in
 * {@code dev.gort.agent.work} go through the real transformer ({@link InstrumentingLoader},
 * {@code backedge}) and run on GOMAXPROCS=1, where a goroutine that is not preempted keeps the
 * only P: any other goroutine that runs meanwhile proves a preemption inside the section.
 */
class AgentLocksTest {
    private static final long MS = 1_000_000L;
    /** CPU held inside each section: longer than the 10 ms slice, so sysmon asks inside it. */
    private static final long HOLD = 25 * MS;

    private static Method method(String cls, String name, Class<?>... params) throws Exception {
        return AgentPreemptionTest.method(PreemptStrategy.BACKEDGE, cls, name, params);
    }

    private static Object call(Method m, Object... args) {
        return AgentPreemptionTest.call(m, null, args);
    }

    /**
     * Starts {@code body} as a goroutine of {@code rt}: the first failure of any such goroutine goes
     * to {@code failure}, and {@code done} is released when it ends, however it ends.
     */
    private static void go(Scheduler rt, AtomicReference<Throwable> failure, GoSema done, Runnable body) {
        rt.newproc(() -> {
            try {
                body.run();
            } catch (Throwable t) {
                failure.compareAndSet(null, t);
            } finally {
                done.release();
            }
        });
    }

    /**
     * Goroutines that each take {@code lock} twice around a CPU loop, on one P: the critical
     * sections never overlap (a preempted holder would let the next goroutine on the same carrier
     * re-enter the carrier-owned lock), nothing throws (a holder resumed on another carrier would
     * get IllegalMonitorStateException from unlock), and the refused requests are honoured after
     * the unlock or, for a holder that refused a whole slice, in place.
     */
    private static PreemptStats contend(Method m, Lock lock) throws Exception {
        Scheduler s = AgentPreemptionTest.newScheduler(1);
        AtomicInteger inside = new AtomicInteger();
        AtomicInteger overlaps = new AtomicInteger();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        s.run(() -> {
            GoSema done = new GoSema(0);
            Scheduler rt = Scheduler.current();
            for (int g = 0; g < 3; g++) {
                go(rt, failure, done, () -> {
                    for (int round = 0; round < 2; round++) {
                        call(m, lock, HOLD, inside, overlaps);
                    }
                });
            }
            for (int g = 0; g < 3; g++) {
                done.acquire();
            }
        });
        PreemptStats ps = s.preempt.snapshot();
        System.out.println("contend[" + m.getName() + "/" + lock.getClass().getSimpleName() + "]: " + ps);
        assertNull(failure.get(), () -> "a critical section failed: " + failure.get());
        assertEquals(0, overlaps.get(), "critical sections overlapped: " + ps);
        assertTrue(ps.refusedLock() >= 1, "no request arrived inside a lock: " + ps);
        // A refused request is not lost: re-armed at the unlock, or the holder, refusing for a
        // whole slice, was preempted in place (its lock stays with its carrier: no overlap above).
        assertTrue(ps.rearmed() >= 1 || ps.honouredInPlace() >= 1, ps.toString());
        return ps;
    }

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void reentrantLockHeldAcrossACpuLoopIsNeverPreempted() throws Exception {
        contend(
                method("Locks", "lockedSpin", Lock.class, long.class, AtomicInteger.class, AtomicInteger.class),
                new ReentrantLock());
    }

    /** The same through {@code ReentrantLock.tryLock(timeout)} and an unlock in another method. */
    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void timedTryLockAndUnlockInAnotherMethodAreCounted() throws Exception {
        contend(
                method(
                        "Locks",
                        "tryLockedSpin",
                        ReentrantLock.class,
                        long.class,
                        AtomicInteger.class,
                        AtomicInteger.class),
                new ReentrantLock());
    }

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void reentrantReadWriteLockWriteLockIsNeverPreempted() throws Exception {
        contend(
                method("Locks", "lockedSpin", Lock.class, long.class, AtomicInteger.class, AtomicInteger.class),
                new ReentrantReadWriteLock().writeLock());
    }

    /**
     * One goroutine holds a read lock (or the JDK holds a lock around its callback) for longer
     * than a slice while a ticker goroutine, which counts and yields in a loop, shares the only
     * P: the ticker runs only when the holder is preempted, so its count moves inside a section
     * only if the holder was preempted there.
     */
    private static PreemptStats observed(String what, Runnable section, AtomicLong ticks, AtomicInteger violations)
            throws Exception {
        return observed(what, section, ticks, new AtomicReference<>(), violations);
    }

    /**
     * On GOMAXPROCS=1, a goroutine runs {@code section} twice while another ticks and yields: a
     * tick on the carrier that {@code inSection} names (a section holding a carrier-owned lock
     * publishes its carrier there: Locks.observed) is a violation, as another goroutine there
     * could enter the same lock. A section preempted in place lets the ticker run on another one.
     */
    private static PreemptStats observed(
            String what,
            Runnable section,
            AtomicLong ticks,
            AtomicReference<Thread> inSection,
            AtomicInteger violations)
            throws Exception {
        Scheduler s = AgentPreemptionTest.newScheduler(1);
        AtomicReference<Throwable> failure = new AtomicReference<>();
        AtomicInteger stop = new AtomicInteger();
        s.run(() -> {
            GoSema done = new GoSema(0);
            Scheduler rt = Scheduler.current();
            rt.newproc(() -> {
                rt.newproc(() -> {
                    while (stop.get() == 0) {
                        Thread c = inSection.get();
                        if (c != null && c == M.current().thread()) {
                            violations.incrementAndGet();
                        }
                        ticks.incrementAndGet();
                        Scheduler.gosched();
                    }
                    done.release();
                });
                try {
                    section.run();
                    section.run();
                } catch (Throwable t) {
                    failure.compareAndSet(null, t);
                } finally {
                    stop.set(1);
                    done.release();
                }
            });
            for (int k = 0; k < 2; k++) {
                done.acquire();
            }
        });
        PreemptStats ps = s.preempt.snapshot();
        System.out.println("observed[" + what + "]: ticks=" + ticks.get() + " " + ps);
        assertNull(failure.get(), () -> "the section failed: " + failure.get());
        assertEquals(0, violations.get(), what + ": another goroutine ran inside the section: " + ps);
        return ps;
    }

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void reentrantReadWriteLockReadLockIsNeverPreempted() throws Exception {
        Method m = method("Locks", "observedSpin", Lock.class, long.class, AtomicReference.class, AtomicInteger.class);
        Lock read = new ReentrantReadWriteLock().readLock();
        AtomicLong ticks = new AtomicLong();
        AtomicReference<Thread> inSection = new AtomicReference<>();
        AtomicInteger violations = new AtomicInteger();
        PreemptStats ps =
                observed("readLock", () -> call(m, read, HOLD, inSection, violations), ticks, inSection, violations);
        assertTrue(ps.refusedLock() >= 1, ps.toString());
    }

    /**
     * A synchronized method that calls others gets no entry poll: it would run inside the monitor
     * before the monitor-depth hook (a request refused inside the previous call and re-armed at
     * its exit used to be honoured there).
     */
    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void noPreemptionAtTheEntryOfASynchronizedMethod() throws Exception {
        Method m = method("Locks", "syncSpin", long.class, long.class, AtomicLong.class, AtomicInteger.class);
        AtomicLong ticks = new AtomicLong();
        AtomicInteger violations = new AtomicInteger();
        observed(
                "synchronized method entry",
                () -> {
                    Scheduler rt = Scheduler.current();
                    long base = rt.preempt.snapshot().requested();
                    long deadline = System.nanoTime() + 20_000 * MS;
                    for (int k = 0;
                            k < 10 || (rt.preempt.snapshot().requested() < base + 3 && System.nanoTime() < deadline);
                            k++) {
                        call(m, ticks.get(), 3 * MS, ticks, violations);
                    }
                },
                ticks,
                violations);
    }

    /**
     * JDK code that holds a lock while it calls back into instrumented code, which no injected
     * counter sees: {@code ConcurrentHashMap.computeIfAbsent}'s bin lock around the mapping
     * function, {@code Collections.synchronizedMap}, {@code Hashtable},
     * {@code StringBuffer.append(Object)} and {@code PrintStream} / {@code PrintWriter}'s
     * {@code printf} around {@code toString()}, and a {@code BufferedReader} around the user
     * reader it wraps.
     */
    @ParameterizedTest
    @ValueSource(
            strings = {
                "ConcurrentHashMap.computeIfAbsent",
                "synchronizedMap.computeIfAbsent",
                "Hashtable.computeIfAbsent",
                "StringBuffer.append(Object)",
                "PrintStream.printf",
                "PrintWriter.printf",
                "BufferedReader.readLine"
            })
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void noPreemptionWhileAJdkFrameHoldsALock(String holder) throws Exception {
        Method m =
                method("Locks", "insideJdkLock", String.class, long.class, AtomicReference.class, AtomicInteger.class);
        AtomicLong ticks = new AtomicLong();
        AtomicReference<Thread> inSection = new AtomicReference<>();
        AtomicInteger violations = new AtomicInteger();
        PreemptStats ps =
                observed(holder, () -> call(m, holder, HOLD, inSection, violations), ticks, inSection, violations);
        assertTrue(ps.refusedJdkLock() >= 1, ps.toString());
    }

    /**
     * A goroutine parks on a gort primitive inside a callback that the JDK runs under its own
     * lock, an inflated monitor (contended or waited on before, as a shared collection's is): a
     * {@code Collections.synchronizedList}'s {@code forEach}, a {@code synchronizedMap}'s or a
     * {@code Hashtable}'s {@code computeIfAbsent}, and a user subclass's override of it that calls
     * {@code super.computeIfAbsent} ({@code Poll.jdkCallbackSuperEnter}: the receiver's own method
     * holds no lock, the JDK's it calls does). An inflated monitor belongs to the carrier
     * thread, so a yield there would let the next goroutine on that carrier into the same lock
     * (jdk25-continuations.md). The agent counts the call as a lock ({@code Poll.jdkCallbackEnter}):
     * the park blocks the carrier instead, and the other goroutine, on another carrier, waits for
     * the lock. On GOMAXPROCS=1, so that without the count both run on one carrier.
     */
    @ParameterizedTest
    @ValueSource(
            strings = {
                "synchronizedList.forEach",
                "synchronizedMap.computeIfAbsent",
                "Hashtable.computeIfAbsent",
                "super.computeIfAbsent"
            })
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void aParkInsideALockedJdkCallbackKeepsOtherGoroutinesOutOfTheLock(String holder) throws Exception {
        Method park = method("Callbacks", "parkInside", String.class, Object.class, Runnable.class);
        Method enter = method("Callbacks", "enterSeeing", String.class, Object.class, AtomicBoolean.class);
        Object target = switch (holder) {
            case "synchronizedList.forEach" ->
                java.util.Collections.synchronizedList(new java.util.ArrayList<>(java.util.List.of(1)));
            case "synchronizedMap.computeIfAbsent" -> java.util.Collections.synchronizedMap(new java.util.HashMap<>());
            // a user Hashtable whose computeIfAbsent override calls super.computeIfAbsent
            case "super.computeIfAbsent" -> call(method("Callbacks", "countingTable"));
            default -> new java.util.Hashtable<String, Integer>();
        };
        synchronized (target) {
            target.wait(1); // inflates the monitor the JDK locks (the wrapper, the table)
        }
        Scheduler s = AgentPreemptionTest.newScheduler(1);
        AtomicBoolean inside = new AtomicBoolean();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        AtomicBoolean sawInside = new AtomicBoolean();
        s.run(() -> {
            GoSema parked = new GoSema(0);
            GoSema resume = new GoSema(0);
            GoSema trying = new GoSema(0);
            GoSema done = new GoSema(0);
            Scheduler rt = Scheduler.current();
            go(
                    rt,
                    failure,
                    done,
                    () -> call(park, holder, target, (Runnable) () -> {
                        inside.set(true);
                        parked.release();
                        resume.acquire(); // a gort park inside the JDK's lock
                        inside.set(false);
                    }));
            parked.acquire();
            go(rt, failure, done, () -> {
                trying.release(); // main runs next, after this goroutine has tried the lock
                sawInside.set((boolean) call(enter, holder, target, inside));
            });
            trying.acquire();
            resume.release();
            done.acquire();
            done.acquire();
        });
        var st = s.syscallStats.snapshot(s);
        System.out.println("park inside " + holder + ": " + st);
        assertNull(failure.get(), () -> "a goroutine failed: " + failure.get());
        assertEquals(false, sawInside.get(), () -> "entered the lock while a parked goroutine held it: " + st);
    }

    /**
     * A park inside a callback that the JDK runs with its lock released ({@code LinkedBlockingQueue}'s
     * {@code forEach} copies a batch under the lock, then runs the action unlocked:
     * {@code LockFrames.UNLOCKED}) is an ordinary park: the goroutine yields its carrier instead of
     * blocking it (no pinned park), and another goroutine runs on that carrier meanwhile.
     */
    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void aParkInsideAnUnlockedJdkCallbackYieldsItsCarrier() throws Exception {
        Method park = method("Callbacks", "parkInside", String.class, Object.class, Runnable.class);
        var queue = new java.util.concurrent.LinkedBlockingQueue<Integer>(java.util.List.of(1));
        Scheduler s = AgentPreemptionTest.newScheduler(1);
        AtomicReference<Throwable> failure = new AtomicReference<>();
        s.run(() -> {
            GoSema parked = new GoSema(0);
            GoSema resume = new GoSema(0);
            GoSema done = new GoSema(0);
            go(
                    Scheduler.current(),
                    failure,
                    done,
                    () -> call(park, "LinkedBlockingQueue.forEach", queue, (Runnable) () -> {
                        parked.release();
                        resume.acquire(); // a gort park inside the action
                    }));
            parked.acquire();
            resume.release();
            done.acquire();
        });
        var st = s.syscallStats.snapshot(s);
        assertNull(failure.get(), () -> "the goroutine failed: " + failure.get());
        assertEquals(0, st.pinnedParks(), () -> "the park blocked its carrier: " + st);
    }

    /**
     * A goroutine's carrier blocks inside a JDK lock frame ({@code ConcurrentHashMap.computeIfAbsent}
     * holds the bin's monitor around the mapping function), so sysmon retakes the only P and hands
     * it to another goroutine; when it wakes, its first poll exits that "syscall" with no P free.
     * It must wait for one on its own carrier: a yield there would carry the JDK's monitor to
     * another carrier (jdk25-continuations.md: ownership may stay with the carrier, a lock leaked
     * and a hang). Bounded by the test's timeout.
     */
    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void aRetakenSyscallExitInsideAJdkLockWaitsForAPOnItsCarrier() throws Exception {
        Method inside =
                method("Locks", "blockedInsideComputeIfAbsent", CountDownLatch.class, CountDownLatch.class, long.class);
        Scheduler s = AgentPreemptionTest.newScheduler(1);
        CountDownLatch blocked = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        AtomicLong progress = new AtomicLong();
        int[] carriers = new int[1];
        Thread opener = new Thread(() -> {
            try {
                // Release the blocked goroutine once sysmon has retaken its P and the spinner runs
                // on it: its syscall exit finds no P free.
                blocked.await();
                awaitRetakenBesideTheSpinner(s, progress, System.nanoTime() + 20_000 * MS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } finally {
                release.countDown();
            }
        });
        opener.setDaemon(true);
        opener.start();
        Throwable failure =
                besideASpinner(s, progress, () -> carriers[0] = (int) call(inside, blocked, release, 30 * MS));
        var st = s.syscallStats.snapshot(s);
        System.out.println("retaken exit inside a JDK lock: " + st);
        assertNull(failure, () -> "the goroutine failed: " + failure);
        assertTrue(
                retaken(st) >= 1 && slowExits(s) >= 1,
                () -> "the scenario never happened (no syscall exit found its P gone): " + st);
        assertEquals(1, carriers[0], () -> "it left its carrier while the JDK held the bin's monitor: " + st);
    }

    /**
     * A goroutine blocks its carrier in the JVM (in {@code Object.wait}, on a contended monitor, in
     * {@code Lock.lock}) beside a spinner on the only P; sysmon retakes the P; the test releases
     * it. Right where the blocking call returns, before any poll, the goroutine must hold a P again
     * (it left the "syscall" sysmon made of the block, as Go's exitsyscall runs when the call
     * returns; here it waits on its carrier, holding the monitor or lock, until the spinner's slice
     * ends). It used to run on without a P until its next poll that took the slow path, and the
     * notice that sends a poll there is held back until sysmon sees the carrier run again, up to
     * a sysmon sleep later: H2's row-lock waiters, woken at GOMAXPROCS=1, ran transactions beside
     * the P's goroutine meanwhile.
     */
    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"wait", "monitor", "lock"})
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void aRetakenGoroutineHasAPWhereItsBlockingCallReturns(String how) throws Exception {
        Scheduler s = AgentPreemptionTest.newScheduler(1);
        Object o = new Object();
        ReentrantLock lock = new ReentrantLock();
        AtomicBoolean released = new AtomicBoolean();
        CountDownLatch blocked = new CountDownLatch(1);
        CountDownLatch holding = new CountDownLatch(1);
        AtomicLong progress = new AtomicLong();
        boolean[] hadP = new boolean[1];
        Thread releaser = new Thread(() -> {
            // Holds what the goroutine will block on (for "monitor" and "lock"), waits until
            // sysmon has retaken the goroutine's P and the spinner runs on it, then lets it go.
            Runnable waitAndRelease = () -> {
                try {
                    holding.countDown();
                    blocked.await();
                    awaitRetakenBesideTheSpinner(s, progress, System.nanoTime() + 20_000 * MS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            };
            switch (how) {
                case "monitor" -> {
                    synchronized (o) {
                        waitAndRelease.run();
                    }
                }
                case "lock" -> {
                    lock.lock();
                    try {
                        waitAndRelease.run();
                    } finally {
                        lock.unlock();
                    }
                }
                default -> {
                    waitAndRelease.run();
                    synchronized (o) {
                        released.set(true);
                        o.notifyAll();
                    }
                }
            }
        });
        releaser.setDaemon(true);
        releaser.start();
        holding.await();
        Method m = switch (how) {
            case "monitor" -> method("Locks", "hadAPAfterMonitorEntry", Object.class, CountDownLatch.class);
            case "lock" -> method("Locks", "hadAPAfterLock", Lock.class, CountDownLatch.class);
            default -> method("Locks", "hadAPAfterWait", Object.class, AtomicBoolean.class, CountDownLatch.class);
        };
        Object[] args = switch (how) {
            case "monitor" -> new Object[] {o, blocked};
            case "lock" -> new Object[] {lock, blocked};
            default -> new Object[] {o, released, blocked};
        };
        Throwable failure = besideASpinner(s, progress, () -> hadP[0] = (boolean) call(m, args));
        releaser.join();
        var st = s.syscallStats.snapshot(s);
        System.out.println("retaken " + how + ": " + st);
        assertNull(failure, () -> "the goroutine failed: " + failure);
        assertTrue(retaken(st) >= 1, () -> "the scenario never happened (no retake): " + st);
        assertTrue(hadP[0], () -> "it ran on without a P after its " + how + " returned: " + st);
    }

    /**
     * A goroutine waits like a Guava future's waiter ({@code Locks.waitLikeAFuture}): it names its
     * carrier for its waker, parks, and sysmon retakes the only P for another goroutine. A spurious
     * return from the park (a stale permit on the carrier) takes it round its loop, whose back-edge
     * poll exits that "syscall" with no P free. It must wait for one on the same carrier: moved, it
     * would park a thread its waker never unparks (RealLibrariesTest hung so in
     * {@code LocalCache$LoadingValueReference.waitForValue}). The real wake-up is sent while it
     * waits there; the carrier's sleep must not eat it (no park may then last its full 5 s).
     * Bounded: the waiter's parks time out.
     */
    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void aFutureWaiterNeverLeavesTheCarrierItsWakerUnparks() throws Exception {
        Method waitLikeAFuture = method(
                "Locks",
                "waitLikeAFuture",
                AtomicBoolean.class,
                AtomicReference.class,
                CountDownLatch.class,
                AtomicInteger.class,
                AtomicInteger.class);
        Scheduler s = AgentPreemptionTest.newScheduler(1);
        AtomicInteger lost = new AtomicInteger();
        AtomicBoolean done = new AtomicBoolean();
        AtomicReference<Thread> waiter = new AtomicReference<>();
        CountDownLatch parked = new CountDownLatch(1);
        AtomicInteger rounds = new AtomicInteger();
        AtomicLong progress = new AtomicLong();
        int[] carriers = new int[1];
        Thread waker = new Thread(() -> {
            try {
                // Once sysmon has retaken the waiter's P and the spinner runs on it: a spurious
                // unpark, then (after the waiter went round its loop and its poll found no P) the
                // real wake-up, addressed as a future's waker addresses it.
                parked.await();
                long deadline = System.nanoTime() + 20_000 * MS;
                awaitRetakenBesideTheSpinner(s, progress, deadline);
                LockSupport.unpark(waiter.get());
                while (slowExits(s) < 1 && System.nanoTime() < deadline) {
                    Thread.sleep(1);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } finally {
                done.set(true);
                LockSupport.unpark(waiter.get());
            }
        });
        waker.setDaemon(true);
        waker.start();
        Throwable failure = besideASpinner(
                s, progress, () -> carriers[0] = (int) call(waitLikeAFuture, done, waiter, parked, rounds, lost));
        var st = s.syscallStats.snapshot(s);
        System.out.println("future waiter: rounds=" + rounds.get() + " lost=" + lost.get() + " " + st);
        assertNull(failure, () -> "the waiter failed: " + failure);
        assertTrue(
                retaken(st) >= 1 && slowExits(s) >= 1,
                () -> "the scenario never happened (no syscall exit found its P gone): " + st);
        assertEquals(1, carriers[0], () -> "the waiter left the carrier its waker unparks: " + st);
        assertEquals(0, lost.get(), () -> "a park waited its full 5 s: the wake-up was lost; " + st);
    }

    /**
     * Runs {@code body} in a goroutine on {@code s} (one P) beside a spinner that burns CPU through
     * polls, counting it in {@code progress}, until the body ends. Returns what the body threw.
     */
    private static Throwable besideASpinner(Scheduler s, AtomicLong progress, Runnable body) throws Exception {
        Method spin = method("Spinners", "spinCpu", long.class, AtomicLong.class);
        AtomicInteger stop = new AtomicInteger();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        s.run(() -> {
            GoSema finished = new GoSema(0);
            Scheduler rt = Scheduler.current();
            rt.newproc(() -> {
                try {
                    body.run();
                } catch (Throwable t) {
                    failure.compareAndSet(null, t);
                } finally {
                    stop.set(1);
                    finished.release();
                }
            });
            rt.newproc(() -> {
                while (stop.get() == 0) {
                    call(spin, MS, progress);
                }
                finished.release();
            });
            finished.acquire();
            finished.acquire();
        });
        return failure.get();
    }

    /**
     * Ps sysmon retook from blocked carriers: those it found blocked in the JVM
     * ({@code Retake.retakeBlocked}) and those in the syscall the agent's hook entered around a
     * blocking JDK call ({@code CountDownLatch.await}, {@code Object.wait}, {@code LockSupport.park}:
     * {@code Poll.blockingEnter}).
     */
    private static long retaken(dev.gort.runtime.SyscallStats.Snapshot st) {
        return st.retakes() + st.blockedRetakes();
    }

    /**
     * From a thread outside the runtime: waits (bounded by {@code deadline}) until sysmon has retaken
     * a blocked carrier's P ({@link #retaken}) and {@link #besideASpinner}'s spinner has made progress since, so that
     * it holds the only P.
     */
    private static void awaitRetakenBesideTheSpinner(Scheduler s, AtomicLong progress, long deadline)
            throws InterruptedException {
        while (retaken(s.syscallStats.snapshot(s)) < 1 && System.nanoTime() < deadline) {
            Thread.sleep(1);
        }
        long seen = progress.get();
        while (progress.get() == seen && System.nanoTime() < deadline) {
            Thread.sleep(1);
        }
    }

    /**
     * Syscall exits that found no P at hand and either left the carrier (queued globally) or waited
     * on it; not those that yielded and then found an idle P (slowIdleP: no wait happened).
     */
    private static long slowExits(Scheduler s) {
        var st = s.syscallStats.snapshot(s);
        return st.slowGlobal() + st.slowLocked() + st.slowInPlace();
    }

    /**
     * Defect 3: a class initialiser blocks its carrier until sysmon has retaken the only P and
     * another goroutine, on the P's new M, waits for the same class (a wait the JVM reports as
     * RUNNABLE, so that M is retaken only after its time slice, on Linux); then it runs a CPU loop whose polls find the G in
     * sysmon's syscall state. Exiting that syscall would wait for a P forever: the poll must leave
     * the G running without one until the initialiser is done. Bounded by the test's timeout.
     */
    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void aPollInsideAClassInitialiserNeverWaitsForAP() throws Exception {
        Method prepare = method("Clinit", "prepare", CountDownLatch.class, CountDownLatch.class, long.class);
        Method value = prepare.getDeclaringClass().getMethod("value");
        CountDownLatch entered = new CountDownLatch(1);
        CountDownLatch gate = new CountDownLatch(1);
        call(prepare, entered, gate, 30 * MS);
        Scheduler s = AgentPreemptionTest.newScheduler(1);
        long[] got = new long[2];
        AtomicReference<Throwable> failure = new AtomicReference<>();
        Thread opener = new Thread(() -> {
            try {
                // The initialiser is waiting; now wait (bounded) until the other goroutine's carrier
                // waits for the class: its stack is in Clinit.value with no initialiser on it.
                entered.await();
                long deadline = System.nanoTime() + 20_000 * MS;
                while (!someoneWaitsForTheClass() && System.nanoTime() < deadline) {
                    Thread.onSpinWait();
                    Thread.yield();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } finally {
                gate.countDown();
            }
        });
        opener.setDaemon(true);
        opener.start();
        s.run(() -> {
            GoSema done = new GoSema(0);
            Scheduler rt = Scheduler.current();
            for (int g = 0; g < 2; g++) {
                int gg = g;
                go(rt, failure, done, () -> got[gg] = (long) call(value));
            }
            done.acquire();
            done.acquire();
        });
        PreemptStats ps = s.preempt.snapshot();
        System.out.println("clinit: " + ps + " " + s.syscallStats.snapshot(s));
        assertNull(failure.get(), () -> "initialisation failed: " + failure.get());
        assertTrue(got[0] != 0 && got[0] == got[1], "both goroutines see the initialised value");
        assertTrue(ps.syscallExitsDeferred() >= 1, "the scenario never happened: " + ps);
    }

    /** A carrier thread waits for Clinit$Slow's initialisation: in Clinit.value, with no <clinit> frame. */
    private static boolean someoneWaitsForTheClass() {
        for (Map.Entry<Thread, StackTraceElement[]> e :
                Thread.getAllStackTraces().entrySet()) {
            boolean inValue = false;
            boolean inInit = false;
            for (StackTraceElement f : e.getValue()) {
                if (f.getClassName().endsWith("work.Clinit")
                        && f.getMethodName().equals("value")) {
                    inValue = true;
                }
                if (f.getMethodName().equals("<clinit>")) {
                    inInit = true;
                }
            }
            if (inValue && !inInit) {
                return true;
            }
        }
        return false;
    }
}
