package dev.gort;

import static dev.gort.GoroutineLeakProfileTest.awaitWaiting;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gort.runtime.BlockProfiles.Record;
import dev.gort.runtime.Scheduler;
import dev.gort.runtime.WaitReason;
import dev.gort.sync.Cond;
import dev.gort.sync.Mutex;
import dev.gort.sync.RWMutex;
import dev.gort.sync.WaitGroup;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * Go's block and mutex profiles (runtime.SetBlockProfileRate, SetMutexProfileFraction; mprof.go
 * blockevent, mutexevent) on gort's channels, selects and sync primitives: who is recorded, with
 * which stack, for how long. Each wait is made at least {@link #HOLD_NS} long by sleeping only
 * after the waiter is seen parked, so the lower bound on the delay is certain.
 */
class ContentionProfileTest {
    static final long HOLD_NS = TimeUnit.MILLISECONDS.toNanos(5);

    static List<Record> block() {
        return Scheduler.current().blockprof.blockProfile();
    }

    static List<Record> mutex() {
        return Scheduler.current().blockprof.mutexProfile();
    }

    /** The records whose stack has a frame of {@code method} (a method of this class). */
    static List<Record> at(List<Record> rs, String method) {
        return rs.stream()
                .filter(r -> Arrays.stream(r.stack())
                        .anyMatch(e -> e.getClassName().startsWith(ContentionProfileTest.class.getName())
                                && e.getMethodName().contains(method)))
                .toList();
    }

    static void receiveOnce(Chan<Integer> c) {
        c.recv();
    }

    static void selectOnce(Chan<Integer> a, Chan<Integer> b) {
        Select.select(Select.recv(a, v -> {}), Select.recv(b, v -> {}));
    }

    @Test
    void offByDefaultNothingIsRecorded() {
        AtomicReference<int[]> got = new AtomicReference<>();
        GortTesting.run(1, () -> {
            Chan<Integer> c = Chan.make();
            Go.go(() -> c.send(1));
            receiveOnce(c);
            Mutex mu = new Mutex();
            mu.lock();
            Go.go(() -> {
                mu.lock();
                mu.unlock();
            });
            awaitWaiting(1, w -> w == WaitReason.SYNC_MUTEX_LOCK);
            mu.unlock();
            got.set(new int[] {block().size(), mutex().size()});
        });
        assertEquals(0, got.get()[0]);
        assertEquals(0, got.get()[1]);
    }

    /** A blocked receive: one event, the receiver's own stack, at least as long as it waited. */
    @Test
    void blockedChannelReceiveIsRecordedWithTheReceiversStackAndDelay() {
        AtomicReference<List<Record>> got = new AtomicReference<>();
        GortTesting.run(1, () -> {
            Go.setBlockProfileRate(1);
            Chan<Integer> c = Chan.make();
            WaitGroup wg = new WaitGroup();
            wg.add(1);
            Go.go(() -> {
                receiveOnce(c);
                wg.done();
            });
            awaitWaiting(1, w -> w == WaitReason.CHAN_RECEIVE);
            Time.sleep(HOLD_NS);
            c.send(7);
            wg.await();
            got.set(at(block(), "receiveOnce"));
        });
        List<Record> rs = got.get();
        assertEquals(1, rs.size(), rs::toString);
        assertEquals(1, rs.get(0).count());
        assertTrue(rs.get(0).cycles() >= HOLD_NS, "delay " + rs.get(0).cycles());
        assertEquals(
                "dev.gort.Chan",
                rs.get(0).stack()[0].getClassName(),
                "starts in the channel code, as Go's in chanrecv1");
    }

    /** A blocked send, a blocked select and a receive ended by close are block events too. */
    @Test
    void blockedSendSelectAndCloseAreRecorded() {
        AtomicReference<int[]> got = new AtomicReference<>();
        GortTesting.run(1, () -> {
            Go.setBlockProfileRate(1);
            Chan<Integer> c = Chan.make();
            Chan<Integer> a = Chan.make();
            Chan<Integer> b = Chan.make();
            Chan<Integer> closed = Chan.make();
            WaitGroup wg = new WaitGroup();
            wg.add(3);
            Go.go(() -> {
                sendOnce(c);
                wg.done();
            });
            Go.go(() -> {
                selectOnce(a, b);
                wg.done();
            });
            Go.go(() -> {
                receiveOnce(closed);
                wg.done();
            });
            awaitWaiting(1, w -> w == WaitReason.CHAN_SEND);
            awaitWaiting(1, w -> w == WaitReason.SELECT);
            awaitWaiting(1, w -> w == WaitReason.CHAN_RECEIVE);
            Time.sleep(HOLD_NS);
            c.recv();
            b.send(2);
            closed.close();
            wg.await();
            List<Record> all = block();
            got.set(new int[] {
                at(all, "sendOnce").size(),
                at(all, "selectOnce").size(),
                at(all, "receiveOnce").size()
            });
        });
        assertEquals(1, got.get()[0], "send");
        assertEquals(1, got.get()[1], "select");
        assertEquals(1, got.get()[2], "receive ended by close");
    }

    static void sendOnce(Chan<Integer> c) {
        c.send(1);
    }

    static void holdAndRelease(Mutex mu) {
        awaitWaiting(1, w -> w == WaitReason.SYNC_MUTEX_LOCK);
        Time.sleep(HOLD_NS);
        mu.unlock();
    }

    static void lockContended(Mutex mu) {
        mu.lock();
        mu.unlock();
    }

    /**
     * A contended Mutex: the mutex profile charges the unlock (the holder's stack) with the
     * waiter's delay; the block profile records the waiter's lock.
     */
    @Test
    void contendedMutexChargesTheUnlockerAndBlocksTheWaiter() {
        AtomicReference<List<List<Record>>> got = new AtomicReference<>();
        GortTesting.run(1, () -> {
            Go.setBlockProfileRate(1);
            Go.setMutexProfileFraction(1);
            Mutex mu = new Mutex();
            mu.lock();
            WaitGroup wg = new WaitGroup();
            wg.add(1);
            Go.go(() -> {
                lockContended(mu);
                wg.done();
            });
            holdAndRelease(mu);
            wg.await();
            got.set(List.of(at(mutex(), "holdAndRelease"), at(mutex(), "lockContended"), at(block(), "lockContended")));
        });
        List<Record> unlocker = got.get().get(0);
        assertEquals(1, unlocker.size(), unlocker::toString);
        assertTrue(
                unlocker.get(0).cycles() >= HOLD_NS, "delay " + unlocker.get(0).cycles());
        assertEquals(0, got.get().get(1).size(), "the waiter is not charged in the mutex profile");
        assertEquals(1, got.get().get(2).size(), "the waiter's lock is a block event");
        assertTrue(got.get().get(2).get(0).cycles() >= HOLD_NS);
    }

    /** Returns when the unlock began (System.nanoTime). */
    static long holdWhileTwoWait(Mutex mu, long hold) {
        awaitWaiting(2, w -> w == WaitReason.SYNC_MUTEX_LOCK);
        Time.sleep(hold);
        long unlocking = System.nanoTime();
        mu.unlock();
        return unlocking;
    }

    /**
     * Go 1.22's charge, each wait once: the unlock that wakes the first of two queued waiters is
     * charged both waits up to then (the head's, and the average of the head's and the tail's for
     * the one behind it), and the waits of those still queued start again (Go's dequeue sets the
     * new head's and the tail's acquiretime to now), so the next unlock is charged only what the
     * second waited after the first unlock, not its whole wait a second time.
     */
    @Test
    void aQueuedWaitIsChargedOnceAcrossUnlocks() {
        long hold = TimeUnit.MILLISECONDS.toNanos(100);
        AtomicReference<List<List<Record>>> got = new AtomicReference<>();
        long[] window = new long[1];
        GortTesting.run(1, () -> {
            Go.setMutexProfileFraction(1);
            Mutex mu = new Mutex();
            mu.lock();
            WaitGroup wg = new WaitGroup();
            wg.add(2);
            long[] unlocked = new long[2];
            for (int i = 0; i < 2; i++) {
                int k = i;
                Go.go(() -> {
                    lockContended(mu);
                    unlocked[k] = System.nanoTime();
                    wg.done();
                });
            }
            long firstUnlock = holdWhileTwoWait(mu, hold);
            wg.await();
            // the first waiter's unlock, which stamps the charge, comes before either returns
            window[0] = Math.min(unlocked[0], unlocked[1]) - firstUnlock;
            got.set(List.of(at(mutex(), "holdWhileTwoWait"), at(mutex(), "lockContended")));
        });
        List<Record> first = got.get().get(0);
        List<Record> second = got.get().get(1);
        assertEquals(1, first.size(), first::toString);
        assertTrue(
                first.get(0).cycles() >= 2 * hold, "both waits: " + first.get(0).cycles());
        assertEquals(1, second.size(), second::toString);
        // What the second waiter waited after the first unlock lies inside the window from that
        // unlock to the first waiter's return (a few microseconds, more on a loaded machine); its
        // whole wait charged again would add the hold (100 ms) to it.
        assertTrue(
                second.get(0).cycles() <= window[0],
                "the second waiter's wait before the first unlock charged again: "
                        + second.get(0).cycles() + " ns charged, " + window[0] + " ns from the first unlock on");
    }

    static void waitForGroup(WaitGroup wg) {
        wg.await();
    }

    static void waitOnCond(Mutex mu, Cond cond, boolean[] ready) {
        mu.lock();
        while (!ready[0]) {
            cond.await();
        }
        mu.unlock();
    }

    /** WaitGroup.await and Cond.await are block events and never mutex events (Go's profile flags). */
    @Test
    void waitGroupAndCondWaitsAreBlockEventsOnly() {
        AtomicReference<int[]> got = new AtomicReference<>();
        GortTesting.run(1, () -> {
            Go.setBlockProfileRate(1);
            Go.setMutexProfileFraction(1);
            WaitGroup wg = new WaitGroup();
            wg.add(1);
            WaitGroup done = new WaitGroup();
            done.add(2);
            Mutex mu = new Mutex();
            Cond cond = new Cond(mu);
            boolean[] ready = {false};
            Go.go(() -> {
                waitForGroup(wg);
                done.done();
            });
            Go.go(() -> {
                waitOnCond(mu, cond, ready);
                done.done();
            });
            awaitWaiting(1, w -> w == WaitReason.SYNC_WAITGROUP_WAIT);
            awaitWaiting(1, w -> w == WaitReason.SYNC_COND_WAIT);
            wg.done();
            mu.lock();
            ready[0] = true;
            cond.signal();
            mu.unlock();
            done.await();
            got.set(new int[] {
                at(block(), "waitForGroup").size(),
                at(block(), "waitOnCond").size(),
                mutex().size() // the only Mutex here is never contended (P=1: the signalled waiter runs after the
                // unlock)
            });
        });
        assertEquals(1, got.get()[0], "WaitGroup.await");
        assertEquals(1, got.get()[1], "Cond.await");
        assertEquals(0, got.get()[2], "neither is a mutex event");
    }

    static void readerBlockedByWriter(RWMutex rw) {
        rw.rlock();
        rw.runlock();
    }

    static void writerBlockedByReader(RWMutex rw) {
        rw.lock();
        rw.unlock();
    }

    static void releaseWriteLock(RWMutex rw) {
        rw.unlock();
    }

    static void releaseReadLock(RWMutex rw) {
        rw.runlock();
    }

    /** The one record of {@code rs} that has a frame of {@code helper}, which must be its second. */
    static String firstFrameUnder(List<Record> rs, String helper) {
        List<Record> mine = at(rs, helper);
        assertEquals(1, mine.size(), helper + ": " + mine);
        StackTraceElement[] st = mine.get(0).stack();
        assertEquals(helper, st[1].getMethodName(), Arrays.toString(st));
        return st[0].getClassName() + "." + st[0].getMethodName();
    }

    /**
     * Every event's stack starts at the call the goroutine made (Go's skip counts hide the runtime
     * beneath it: chansend1, chanrecv1, selectgo, sync.(*Mutex).Lock and Unlock, (*RWMutex).RLock,
     * Lock, Unlock and RUnlock, (*WaitGroup).Wait, (*Cond).Wait come first in Go's profiles,
     * never semacquire1 or semrelease1), so the innermost frame, pprof's "flat", is the
     * channel or sync operation, and the next one the user's.
     */
    @Test
    void eachEventsStackStartsAtTheCallTheGoroutineMade() {
        AtomicReference<List<List<Record>>> got = new AtomicReference<>();
        GortTesting.run(1, () -> {
            Go.setBlockProfileRate(1);
            Go.setMutexProfileFraction(1);
            WaitGroup wg = new WaitGroup();
            wg.add(8);
            Chan<Integer> c = Chan.make();
            Chan<Integer> d = Chan.make();
            Chan<Integer> a = Chan.make();
            Chan<Integer> b = Chan.make();
            Go.go(() -> {
                receiveOnce(c);
                wg.done();
            });
            Go.go(() -> {
                sendOnce(d);
                wg.done();
            });
            Go.go(() -> {
                selectOnce(a, b);
                wg.done();
            });
            awaitWaiting(1, w -> w == WaitReason.CHAN_RECEIVE);
            awaitWaiting(1, w -> w == WaitReason.CHAN_SEND);
            awaitWaiting(1, w -> w == WaitReason.SELECT);
            c.send(1);
            d.recv();
            a.send(2);

            Mutex mu = new Mutex();
            mu.lock();
            Go.go(() -> {
                lockContended(mu);
                wg.done();
            });
            holdAndRelease(mu);

            WaitGroup gate = new WaitGroup();
            gate.add(1);
            Go.go(() -> {
                waitForGroup(gate);
                wg.done();
            });
            awaitWaiting(1, w -> w == WaitReason.SYNC_WAITGROUP_WAIT);
            gate.done();

            Mutex cmu = new Mutex();
            Cond cond = new Cond(cmu);
            boolean[] ready = {false};
            Go.go(() -> {
                waitOnCond(cmu, cond, ready);
                wg.done();
            });
            awaitWaiting(1, w -> w == WaitReason.SYNC_COND_WAIT);
            cmu.lock();
            ready[0] = true;
            cond.signal();
            cmu.unlock();

            RWMutex rw = new RWMutex();
            rw.lock();
            Go.go(() -> {
                readerBlockedByWriter(rw);
                wg.done();
            });
            awaitWaiting(1, w -> w == WaitReason.SYNC_RWMUTEX_RLOCK);
            releaseWriteLock(rw);
            rw.rlock();
            Go.go(() -> {
                writerBlockedByReader(rw);
                wg.done();
            });
            awaitWaiting(1, w -> w == WaitReason.SYNC_RWMUTEX_LOCK);
            releaseReadLock(rw);
            wg.await();
            got.set(List.of(block(), mutex()));
        });
        List<Record> blk = got.get().get(0);
        List<Record> mtx = got.get().get(1);
        assertEquals("dev.gort.Chan.recv", firstFrameUnder(blk, "receiveOnce"));
        assertEquals("dev.gort.Chan.send", firstFrameUnder(blk, "sendOnce"));
        assertEquals("dev.gort.Select.select", firstFrameUnder(blk, "selectOnce"));
        assertEquals("dev.gort.sync.Mutex.lock", firstFrameUnder(blk, "lockContended"));
        assertEquals("dev.gort.sync.WaitGroup.await", firstFrameUnder(blk, "waitForGroup"));
        assertEquals("dev.gort.sync.Cond.await", firstFrameUnder(blk, "waitOnCond"));
        assertEquals("dev.gort.sync.RWMutex.rlock", firstFrameUnder(blk, "readerBlockedByWriter"));
        assertEquals("dev.gort.sync.RWMutex.lock", firstFrameUnder(blk, "writerBlockedByReader"));
        assertEquals("dev.gort.sync.Mutex.unlock", firstFrameUnder(mtx, "holdAndRelease"));
        assertEquals("dev.gort.sync.RWMutex.unlock", firstFrameUnder(mtx, "releaseWriteLock"));
        assertEquals("dev.gort.sync.RWMutex.runlock", firstFrameUnder(mtx, "releaseReadLock"));
    }

    /**
     * With the rate above every wait, the profile keeps each short wait only by chance (the rule,
     * with its draws given: {@code BlockSampledTest}); turned off again, it keeps none. The waits'
     * lengths depend on the machine's load, so what the chance kept is not asserted here.
     */
    @Test
    void aRateAboveEveryWaitSamplesAndCanBeTurnedOff() {
        AtomicReference<Integer> got = new AtomicReference<>();
        GortTesting.run(1, () -> {
            Go.setBlockProfileRate(Integer.MAX_VALUE);
            assertEquals(Integer.MAX_VALUE, Scheduler.current().blockprof.blockProfileRate());
            Chan<Integer> c = Chan.make();
            Go.go(() -> {
                for (int i = 0; i < 400; i++) {
                    c.send(i);
                }
            });
            for (int i = 0; i < 200; i++) {
                receiveOnce(c);
            }
            int sampled = at(block(), "receiveOnce").size();
            Go.setBlockProfileRate(0);
            assertEquals(0, Scheduler.current().blockprof.blockProfileRate());
            for (int i = 0; i < 200; i++) {
                receiveOnce(c); // off: none of these is kept (records made before stay, as in Go)
            }
            got.set(at(block(), "receiveOnce").size() - sampled);
        });
        assertEquals(0, got.get());
    }

    /** The profiles through {@code GoRuntime.writeProfile}, Go's {@code pprof.Lookup(name).WriteTo}. */
    @Test
    void writeProfileWritesGosText() {
        AtomicReference<String[]> got = new AtomicReference<>();
        GortTesting.run(1, () -> {
            GoRuntime rt = Go.current();
            rt.setBlockProfileRate(1);
            Chan<Integer> c = Chan.make();
            Go.go(() -> c.send(1));
            receiveOnce(c);
            try {
                ByteArrayOutputStream b = new ByteArrayOutputStream();
                rt.writeProfile("block", b, 1);
                ByteArrayOutputStream m = new ByteArrayOutputStream();
                rt.writeProfile("mutex", m, 1);
                got.set(new String[] {b.toString(StandardCharsets.UTF_8), m.toString(StandardCharsets.UTF_8)});
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        });
        assertTrue(got.get()[0].startsWith("--- contention:\ncycles/second=1000000000\n"), got.get()[0]);
        assertTrue(got.get()[0].contains(ContentionProfileTest.class.getName() + ".receiveOnce+0x0"), got.get()[0]);
        assertEquals("--- mutex:\ncycles/second=1000000000\nsampling period=0\n", got.get()[1]);
    }
}
