package dev.gort.agent.work;

import dev.gort.runtime.M;
import dev.gort.runtime.Scheduler;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.Reader;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.util.Collections;
import java.util.HashMap;
import java.util.Hashtable;
import java.util.concurrent.ConcurrentHashMap;
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

/**
 * Critical sections that outlast a time slice: under a {@code java.util.concurrent} lock taken in
 * this (instrumented) code, and inside JDK code that holds a lock while it calls back into it.
 */
public final class Locks {
    private Locks() {}

    /**
     * Holds {@code lock} (through the {@code Lock} interface) for {@code cpuNanos} of CPU; counts
     * critical sections that overlapped another one in {@code overlaps}.
     */
    public static void lockedSpin(Lock lock, long cpuNanos, AtomicInteger inside, AtomicInteger overlaps) {
        lock.lock();
        try {
            section(cpuNanos, inside, overlaps);
        } finally {
            lock.unlock();
        }
    }

    /** The same through {@code ReentrantLock}'s own methods, taken with {@code tryLock(timeout)}. */
    public static void tryLockedSpin(ReentrantLock lock, long cpuNanos, AtomicInteger inside, AtomicInteger overlaps)
            throws InterruptedException {
        while (!lock.tryLock(1, TimeUnit.MILLISECONDS)) {
            Thread.onSpinWait();
        }
        try {
            section(cpuNanos, inside, overlaps);
        } finally {
            unlockElsewhere(lock);
        }
    }

    /** An unlock in another method than the lock. */
    private static void unlockElsewhere(Lock lock) {
        lock.unlock();
    }

    private static void section(long cpuNanos, AtomicInteger inside, AtomicInteger overlaps) {
        if (inside.incrementAndGet() != 1) {
            overlaps.incrementAndGet();
        }
        hold(cpuNanos);
        inside.decrementAndGet();
    }

    /**
     * Uses {@code cpuNanos} of CPU, and goes on until sysmon has raised two preemption requests
     * since it began (so the first one met a poll in here: a request is raised again only after a
     * poll consumed the last one), within a 20 s bound. Deterministic however loaded the machine.
     */
    static void hold(long cpuNanos) {
        Scheduler rt = Scheduler.current();
        long base = rt.preempt.snapshot().requested();
        Spinners.spinCpu(cpuNanos, new AtomicLong());
        long deadline = System.nanoTime() + 20_000_000_000L;
        while (rt.preempt.snapshot().requested() < base + 2 && System.nanoTime() < deadline) {
            Spinners.spinCpu(1_000_000L, new AtomicLong());
        }
    }

    /**
     * Holds {@code lock} for {@code cpuNanos} of CPU inside {@link #observed}: see there.
     */
    public static void observedSpin(
            Lock lock, long cpuNanos, AtomicReference<Thread> section, AtomicInteger violations) {
        lock.lock();
        try {
            observed(cpuNanos, section, violations);
        } finally {
            lock.unlock();
        }
    }

    /**
     * A section that holds a carrier-owned lock for {@code cpuNanos} of CPU: publishes its carrier
     * in {@code section} while it runs (another goroutine that runs on that carrier meanwhile, as
     * after a yield, counts a violation: it could enter the same lock), and counts one itself if
     * it ends on another carrier. A preemption in place lets others run on other carriers.
     */
    private static String observed(long cpuNanos, AtomicReference<Thread> section, AtomicInteger violations) {
        Thread carrier = M.current().thread(); // out of line: never a carrier C2 kept across a yield
        section.set(carrier);
        hold(cpuNanos);
        section.set(null);
        if (M.current().thread() != carrier) {
            violations.incrementAndGet();
        }
        return "v";
    }

    /**
     * A synchronized method that calls others: the JVM holds its monitor from the first
     * instruction, so no poll may yield before its first line, which checks that {@code ticks}
     * still has the value its caller read just before the call.
     */
    public static synchronized void syncSpin(
            long ticksAtCall, long cpuNanos, AtomicLong ticks, AtomicInteger violations) {
        if (ticks.get() != ticksAtCall) {
            violations.incrementAndGet();
        }
        Spinners.spinCpu(cpuNanos, new AtomicLong());
    }

    /** An object whose {@code toString()} runs {@link #observed} (the JDK calls it under its lock). */
    private static Object observedToString(long cpuNanos, AtomicReference<Thread> section, AtomicInteger violations) {
        return new Object() {
            @Override
            public String toString() {
                return observed(cpuNanos, section, violations);
            }
        };
    }

    /** A JDK method that holds a lock while it runs {@link #observed}; by name. */
    public static void insideJdkLock(
            String holder, long cpuNanos, AtomicReference<Thread> section, AtomicInteger violations) {
        switch (holder) {
            case "ConcurrentHashMap.computeIfAbsent" ->
                new ConcurrentHashMap<String, String>()
                        .computeIfAbsent("k", k -> observed(cpuNanos, section, violations));
            case "synchronizedMap.computeIfAbsent" ->
                Collections.synchronizedMap(new HashMap<String, String>())
                        .computeIfAbsent("k", k -> observed(cpuNanos, section, violations));
            case "Hashtable.computeIfAbsent" ->
                new Hashtable<String, String>().computeIfAbsent("k", k -> observed(cpuNanos, section, violations));
            case "StringBuffer.append(Object)" ->
                new StringBuffer().append(observedToString(cpuNanos, section, violations));
            case "PrintStream.printf" ->
                new PrintStream(OutputStream.nullOutputStream())
                        .printf("%s%n", observedToString(cpuNanos, section, violations));
            case "PrintWriter.printf" ->
                new PrintWriter(Writer.nullWriter()).printf("%s%n", observedToString(cpuNanos, section, violations));
            case "BufferedReader.readLine" -> {
                try {
                    new BufferedReader(new Reader() {
                                @Override
                                public int read(char[] cbuf, int off, int len) {
                                    observed(cpuNanos, section, violations);
                                    return -1;
                                }

                                @Override
                                public void close() {}
                            })
                            .readLine(); // the wrapped reader's read, under the reader's lock
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            }
            default -> throw new IllegalArgumentException(holder);
        }
    }

    /**
     * Inside {@code ConcurrentHashMap.computeIfAbsent}'s mapping function (the JDK holds the bin's
     * monitor around it): signals {@code blocked} and blocks the carrier on {@code release} (sysmon
     * retakes the P: the G is in its "syscall"), then burns {@code cpuNanos} of CPU through
     * instrumented polls, the first of which exits that syscall while the bin is held. Returns the
     * number of carriers it ran on (1: it never left its carrier inside the lock).
     */
    public static int blockedInsideComputeIfAbsent(CountDownLatch blocked, CountDownLatch release, long cpuNanos) {
        int[] carriers = new int[1];
        new ConcurrentHashMap<String, String>().computeIfAbsent("k", k -> {
            Thread first = M.current().thread(); // out of line: never a carrier C2 kept across a yield
            blocked.countDown();
            try {
                release.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            Spinners.spinCpu(cpuNanos, new AtomicLong());
            carriers[0] = M.current().thread() == first ? 1 : 2;
            return "v";
        });
        return carriers[0];
    }

    /**
     * Waits on {@code o}'s monitor until {@code released} (the test notifies once sysmon has retaken
     * the P of this blocked carrier) and reports whether the carrier held a P right after the last
     * {@code wait} returned, with no poll in between: a goroutine leaves the "syscall" sysmon made of
     * the block where the blocking call returns, as Go's exitsyscall does.
     */
    public static boolean hadAPAfterWait(Object o, AtomicBoolean released, CountDownLatch blocked)
            throws InterruptedException {
        synchronized (o) {
            blocked.countDown();
            boolean p = false;
            while (!released.get()) {
                o.wait();
                p = M.current().p() != null;
            }
            return p;
        }
    }

    /**
     * Enters {@code o}'s monitor, which the test holds until sysmon has retaken the P of this
     * blocked carrier, and reports whether the carrier held a P right after the entry.
     */
    public static boolean hadAPAfterMonitorEntry(Object o, CountDownLatch blocked) {
        blocked.countDown();
        synchronized (o) {
            return M.current().p() != null;
        }
    }

    /**
     * Takes {@code lock}, which the test holds until sysmon has retaken the P of this blocked
     * carrier, and reports whether the carrier held a P right after {@code lock()} returned.
     */
    public static boolean hadAPAfterLock(Lock lock, CountDownLatch blocked) {
        blocked.countDown();
        lock.lock();
        try {
            return M.current().p() != null;
        } finally {
            lock.unlock();
        }
    }

    /**
     * A waiter shaped like Guava's {@code AbstractFuture.get}: it names its carrier by
     * {@code Thread.currentThread()} for its waker ({@code waiter}), then parks in a loop until
     * {@code done}, counting each return from a park in {@code rounds}. After each return it burns
     * CPU through polls, 2 ms at least and then until its carrier holds a P again, so that a poll
     * inside the loop exits the "syscall" sysmon made of a retaken carrier's block. That poll needs
     * the notice that sysmon arms only when its next look finds the carrier running again, and
     * nothing bounds when that look comes (on a loaded 2-core machine, 30 to 100 ms after the
     * retake, while 2 ms of CPU took 20 to 60 ms): a park before it stays in the syscall, and the
     * test's waker, which sends the real wake-up only after that exit, left such a park to its full
     * 5 s (1 run in 10, "rounds=3 lost=1"), a wait the test built, not a lost wake-up. Each park
     * lasts at most 5 s, as does each spin: a park that lasted that long (its wake-up went to
     * another carrier, or was lost) is counted in {@code lost}, and the loop goes on, so the waiter
     * always ends. Returns the number of carriers it ran on (1: it stayed on the one its waker
     * unparks).
     */
    public static int waitLikeAFuture(
            AtomicBoolean done,
            AtomicReference<Thread> waiter,
            CountDownLatch parked,
            AtomicInteger rounds,
            AtomicInteger lost) {
        Thread first = M.current().thread(); // out of line: never a carrier C2 kept across a yield
        waiter.set(Thread.currentThread());
        parked.countDown();
        for (; ; ) {
            long t0 = System.nanoTime();
            LockSupport.parkNanos(done, 5_000_000_000L);
            if (System.nanoTime() - t0 >= 5_000_000_000L) {
                lost.incrementAndGet();
            }
            rounds.incrementAndGet();
            if (done.get()) {
                break;
            }
            // After the check, as in Guava's loop (read the value, poll at the back-edge, park):
            // a wait for a P in here is followed by a park with no check in between.
            long until = System.nanoTime() + 5_000_000_000L;
            do {
                Spinners.spinCpu(2_000_000L, new AtomicLong());
            } while (M.current().p() == null && System.nanoTime() - until < 0);
        }
        return M.current().thread() == first ? 1 : 2;
    }

    /**
     * {@code rounds} read holds of {@code rw} (through the {@code Lock} interface, so the agent counts
     * them): one reentrant now and then, a CPU loop inside each (polls there are refused while the
     * lock is held), a Gosched after each (to the global queue: the next hold may be on another
     * carrier). Counts in {@code wrong} each hold count that is not what this goroutine holds, in
     * {@code moves} each hold taken on another carrier than the last.
     */
    public static void readLockRounds(ReentrantReadWriteLock rw, int rounds, AtomicInteger wrong, AtomicInteger moves) {
        Lock read = rw.readLock();
        Thread last = M.current().thread(); // out of line: never a carrier C2 kept across a yield
        for (int r = 0; r < rounds; r++) {
            read.lock();
            try {
                Thread now = M.current().thread();
                if (now != last) {
                    moves.incrementAndGet();
                }
                last = now;
                if (rw.getReadHoldCount() != 1 || rw.isWriteLocked()) {
                    wrong.incrementAndGet();
                }
                if (r % 4 == 0) {
                    read.lock();
                    try {
                        if (rw.getReadHoldCount() != 2) {
                            wrong.incrementAndGet();
                        }
                    } finally {
                        read.unlock();
                    }
                }
                Spinners.spinCpu(300_000L, new AtomicLong());
                if (rw.getReadHoldCount() != 1) {
                    wrong.incrementAndGet();
                }
            } finally {
                read.unlock();
            }
            if (rw.getReadHoldCount() != 0) {
                wrong.incrementAndGet();
            }
            Scheduler.gosched();
        }
    }

    /** {@code rounds} write holds of {@code rw} beside {@link #readLockRounds}: no reader inside one. */
    public static void writeLockRounds(ReentrantReadWriteLock rw, int rounds, AtomicInteger wrong) {
        Lock write = rw.writeLock();
        for (int r = 0; r < rounds; r++) {
            write.lock();
            try {
                if (rw.getReadLockCount() != 0 || rw.getReadHoldCount() != 0) {
                    wrong.incrementAndGet();
                }
                Spinners.spinCpu(100_000L, new AtomicLong());
            } finally {
                write.unlock();
            }
            Scheduler.gosched();
        }
    }

    /**
     * {@code n} rounds of {@code lock(); counter[0]++; unlock()}, the loop polling between rounds:
     * once compiled, {@code ReentrantLock}'s code inlined here read the carrier once and kept it
     * across the polls' yields (see JitDirectives).
     */
    public static void counterRounds(ReentrantLock lock, long[] counter, int n) {
        for (int i = 0; i < n; i++) {
            lock.lock();
            try {
                counter[0]++;
            } finally {
                lock.unlock();
            }
        }
    }
}
