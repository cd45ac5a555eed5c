package dev.gort.runtime;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;

/**
 * A runtime's two contention profiles, Go's {@code block} and {@code mutex} profiles: buckets of
 * (count, delay) keyed by stack, filled by the sync and channel code when a goroutine that blocked
 * is woken ({@link #blockevent}: its own stack, the time from blocking to being readied) and when
 * a contended {@code sync.Mutex}/{@code RWMutex} is released with waiters ({@link #mutexevent}:
 * the releaser's stack, the delay the waiters suffered).
 *
 * <p>Who blocks and who wakes follows Go: a blocked channel send or receive, a blocked select, a
 * {@code Cond.Wait}, a {@code WaitGroup.Wait} and a contended {@code Mutex.Lock},
 * {@code RWMutex.Lock}/{@code RLock} record block events; only the mutex kinds record mutex
 * events, charged to the unlock that ended the wait (with Go 1.22's charge for the waiters still
 * queued behind the one woken). Sleeps, timers, the network and syscalls are not in either
 * profile, as in Go.
 *
 * <p>Sampling is Go's: a block event of {@code d} ns is kept when {@code d >= rate}, else with
 * probability {@code d / rate}, and then counts {@code rate / d} times (the bias removal of Go CL
 * 299991); a mutex event is kept with probability {@code 1 / fraction} and counts
 * {@code fraction} times with {@code fraction * d} delay. Both are off by default (rate 0), as in
 * Go; while off, the blocking paths read one field and take no timestamps.
 *
 * <p>Differences from Go: each runtime has its own profiles (Go has one per process); times are
 * {@code System.nanoTime} nanoseconds (Go's cputicks converted by cycles/second, here 1e9); the
 * random sampling uses {@code ThreadLocalRandom}, not the scheduler's per-M generator, so that
 * turning a profile on does not change a seeded run's scheduling decisions.
 *
 * <p>Go: mprof.go SetBlockProfileRate, SetMutexProfileFraction, blockevent, blocksampled,
 * mutexevent, saveblockevent, saveBlockEventStack, BlockProfile, MutexProfile
 */
public final class BlockProfiles {
    /** One bucket's figures, as Go's {@code runtime.BlockProfileRecord}: delay in nanoseconds. */
    public record Record(long count, long cycles, StackTraceElement[] stack) {}

    /** Go: mprof.go maxStack. A deeper stack is cut (innermost frames kept). */
    static final int MAX_STACK = 32;

    /**
     * Block profile rate in ns (0: off, 1: everything). Written by {@link #setBlockProfileRate}
     * from any thread; read opaque on the blocking paths. Go: blockprofilerate.
     */
    private volatile long blockprofilerate;
    /** 1 in this many mutex events is kept (0: off). Written by {@link #setMutexProfileFraction}. Go: mutexprofilerate. */
    private volatile long mutexprofilerate;

    /** Guards both bucket maps and every record in them (Go: profBlockLock + profInsertLock). */
    private final Object lock = new Object();
    /** Stack -&gt; {count, cycles}; under {@link #lock}. Go: bbuckets. */
    private final Map<List<StackTraceElement>, double[]> block = new HashMap<>();
    /** Stack -&gt; {count, cycles}; under {@link #lock}. Go: xbuckets. */
    private final Map<List<StackTraceElement>, double[]> mutex = new HashMap<>();

    BlockProfiles() {}

    /**
     * Go's {@code runtime.SetBlockProfileRate}: one blocking event sampled per {@code rate} ns
     * spent blocked on average; 1 keeps every event, {@code <= 0} turns the profile off (its
     * records stay, as in Go).
     */
    public void setBlockProfileRate(int rate) {
        blockprofilerate = rate <= 0 ? 0 : rate;
    }

    /** The block profile rate in ns, 0 when off (racy read: the blocking paths' one check). */
    public long blockProfileRate() {
        return blockprofilerate;
    }

    /**
     * Go's {@code runtime.SetMutexProfileFraction}: on average 1 in {@code rate} mutex contention
     * events is reported; 0 turns it off; a negative rate only reads. Returns the previous rate.
     */
    public int setMutexProfileFraction(int rate) {
        long old = mutexprofilerate;
        if (rate < 0) {
            return (int) old;
        }
        mutexprofilerate = rate;
        return (int) old;
    }

    /** The mutex profile fraction, 0 when off (racy read). */
    public long mutexProfileRate() {
        return mutexprofilerate;
    }

    /**
     * A goroutine was blocked for {@code cycles} ns; records it, sampled, with its stack from the
     * caller of this method, less {@code skip} more frames. The channel and sync code skip their
     * own frames, so that the stack starts at the method the user called ({@code Chan.recv},
     * {@code Select.select}, {@code Mutex.lock}, {@code WaitGroup.await}, ...), as Go's starts at
     * runtime.chanrecv1, runtime.selectgo or sync.(*Mutex).Lock. Go: mprof.go blockevent.
     */
    public void blockevent(long cycles, int skip) {
        if (cycles <= 0) {
            cycles = 1;
        }
        long rate = blockprofilerate;
        if (blocksampled(cycles, rate)) {
            saveblockevent(cycles, rate, skip, block, false);
        }
    }

    /** Go: mprof.go blocksampled: every event at least {@code rate} long, shorter ones by chance. */
    static boolean blocksampled(long cycles, long rate) {
        return blocksampled(cycles, rate, ThreadLocalRandom.current().nextLong());
    }

    /**
     * {@link #blocksampled(long, long)} with its draw {@code rand} (any long, uniform): an event of
     * {@code cycles} ns shorter than {@code rate} is kept if the draw modulo the rate is at most
     * {@code cycles}, so with probability {@code (cycles + 1) / rate}.
     */
    static boolean blocksampled(long cycles, long rate, long rand) {
        return rate > 0 && (rate <= cycles || Math.floorMod(rand, rate) <= cycles);
    }

    /**
     * A contended mutex was released; {@code cycles} is the delay its waiters suffered; the stack
     * is the releaser's, from the caller of this method less {@code skip} frames (the sync code's
     * own: it starts at {@code Mutex.unlock} or {@code RWMutex.unlock}/{@code runlock}, as Go's at
     * sync.(*Mutex).Unlock). Go: mprof.go mutexevent.
     */
    public void mutexevent(long cycles, int skip) {
        if (cycles < 0) {
            cycles = 0;
        }
        long rate = mutexprofilerate;
        if (rate > 0 && Math.floorMod(ThreadLocalRandom.current().nextLong(), rate) == 0) {
            saveblockevent(cycles, rate, skip, mutex, true);
        }
    }

    /** Go: mprof.go saveblockevent + saveBlockEventStack. */
    private void saveblockevent(
            long cycles, long rate, int skip, Map<List<StackTraceElement>, double[]> which, boolean isMutex) {
        List<StackTraceElement> stk = callers(skip);
        synchronized (lock) {
            double[] bp = which.computeIfAbsent(stk, k -> new double[2]);
            if (!isMutex && cycles < rate) {
                // Remove sampling bias, see discussion on http://golang.org/cl/299991.
                bp[0] += (double) rate / (double) cycles;
                bp[1] += rate;
            } else if (isMutex) {
                bp[0] += rate;
                bp[1] += (double) rate * cycles;
            } else {
                bp[0]++;
                bp[1] += cycles;
            }
        }
    }

    /**
     * The calling goroutine's stack without this class's frames and the {@code skip} frames after
     * them, cut at the continuation's entry (the carrier's loop is not the goroutine's), at most
     * {@link #MAX_STACK} frames. Go: traceback.go callers.
     */
    private static List<StackTraceElement> callers(int skip) {
        StackTraceElement[] all = new Throwable().getStackTrace();
        int i = 0;
        while (i < all.length && all[i].getClassName().equals(BlockProfiles.class.getName())) {
            i++;
        }
        i += skip;
        List<StackTraceElement> out = new ArrayList<>();
        for (; i < all.length && out.size() < MAX_STACK; i++) {
            StackTraceElement e = all[i];
            if (e.getClassName().equals("jdk.internal.vm.Continuation")) {
                break; // below: the carrier's scheduling loop
            }
            out.add(e);
        }
        return List.copyOf(out);
    }

    /** Go's {@code runtime.BlockProfile}: the block profile's records, most delay first. */
    public List<Record> blockProfile() {
        return records(block);
    }

    /** Go's {@code runtime.MutexProfile}: the mutex profile's records, most delay first. */
    public List<Record> mutexProfile() {
        return records(mutex);
    }

    private List<Record> records(Map<List<StackTraceElement>, double[]> which) {
        List<Record> out = new ArrayList<>();
        synchronized (lock) {
            for (Map.Entry<List<StackTraceElement>, double[]> e : which.entrySet()) {
                long count = (long) e.getValue()[0];
                // Prevent callers from having to worry about division by zero errors (Go: CL 299991).
                out.add(new Record(
                        count == 0 ? 1 : count,
                        (long) e.getValue()[1],
                        e.getKey().toArray(new StackTraceElement[0])));
            }
        }
        out.sort((a, b) -> Long.compare(b.cycles(), a.cycles()));
        return out;
    }
}
