package dev.gort.runtime;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One P's timers: a 4-ary min-heap ({@link #timerHeapN}) of {@link Timer}s ordered by a copy of
 * each timer's when. The heap is per P, but a thief's M runs other Ps' timers on its last steal
 * pass, so it is guarded by this object's monitor ({@code ts.mu}); {@link #wakeTime()} and
 * {@link #len()} are lock-free.
 *
 * <p>The heap copy of a timer's when can be stale: {@link Timer#modify} and {@link Timer#stop} only
 * mark the timer, and lower {@link #minWhenModified} if it now runs earlier. The heap is repaired by
 * whoever holds the lock: {@link #cleanHead} (before adding), {@link #adjust} (when the earliest
 * modified timer is due, or, on the owning P, when zombies exceed a quarter of the heap) and
 * {@link Timer#updateHeap} (on the head while running timers). So {@code wakeTime() =
 * min(minWhenHeap, minWhenModified)} is never later than the true earliest timer, and may be
 * earlier (a spurious wake-up, never a missed one).
 *
 * <p>Go: time.go type timers and its methods (check, run, adjust, cleanHead, take, wakeTime,
 * addHeap, deleteMin, siftUp, siftDown, initHeap)
 */
final class TimerHeap {
    /** Go: timerHeapN. */
    static final int timerHeapN = 4;

    private static final VarHandle MIN_WHEN_MODIFIED;

    static {
        try {
            MIN_WHEN_MODIFIED = MethodHandles.lookup().findVarHandle(TimerHeap.class, "minWhenModified", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** Immutable: the P owning this heap; null for a synctest bubble's heap. */
    final P pp;
    /** Immutable: the synctest bubble owning this heap (Go: bubble.timers); null for a P's. */
    final Bubble bubble;

    // ---- guarded by this object's monitor ----
    /** heap[i].timer. */
    private Timer[] timers = new Timer[4];
    /** heap[i].when: the heap's (possibly stale) copy of the timer's when. */
    private long[] whens = new long[4];
    /** len(heap). */
    private int n;
    /** The P was destroyed and its timers moved (take): nothing may be added any more. */
    boolean dead;

    /**
     * Copy of n, published at the end of every locked section that changes the heap (Go stores it at
     * unlock, so that it is never transiently 0 while a timer moves). Volatile.
     */
    private volatile int len;
    /** Timers in the heap marked timerZombie: changed under a timer's monitor; atomic. */
    final AtomicInteger zombies = new AtomicInteger();
    /** heap[0].when, or 0 if empty: written under the monitor, read lock-free (volatile). */
    private volatile long minWhenHeap;
    /**
     * A lower bound on the when of the timerModified timers, or 0 if none: lowered by CAS from
     * Timer.modify (timer's monitor only), cleared by adjust under the heap monitor. Volatile/CAS.
     */
    @SuppressWarnings("unused")
    private volatile long minWhenModified;

    TimerHeap(P pp) {
        this.pp = pp;
        this.bubble = null;
    }

    /** A synctest bubble's heap: its timers run in fake time, on the bubble's root goroutine. */
    TimerHeap(Bubble bubble) {
        this.pp = null;
        this.bubble = bubble;
    }

    /** The runtime of this heap's P or bubble. */
    Scheduler sched() {
        return pp != null ? pp.sched : bubble.sched;
    }

    /**
     * A bubble's root, before it reads the next timer: makes {@link #wakeTime()} the when of a live
     * timer (a stopped timer must not move the fake clock). A timer moved earlier may lie anywhere in
     * the heap ({@code minWhenModified} says so): then every modification is applied; otherwise only
     * the head's stopped or moved timers are taken out or put in place until a live one leads, so a
     * step of the fake clock does not cost a scan of every pending timer (it did: 189 µs a step with
     * 100,000 timers pending). gort: Go reads wakeTime as it is.
     */
    synchronized long cleanWakeTime(long now) {
        if (n > 0 && minWhenModified != 0) {
            adjust(now, true);
        }
        while (n > 0) {
            Timer t = timers[0];
            if ((t.astate() & (Timer.timerModified | Timer.timerZombie)) == 0) {
                break;
            }
            synchronized (t) {
                boolean moved = t.updateHeap(this);
                t.publish();
                if (!moved) {
                    break;
                }
            }
        }
        publishLen();
        return wakeTime();
    }

    /** Number of timers in the heap (zombies included), as of the last unlock. Lock-free. */
    int len() {
        return len;
    }

    void publishLen() {
        len = n;
    }

    long minWhenModified() {
        return minWhenModified;
    }

    /** Go: (*timers).updateMinWhenModified: lowers minWhenModified to when. Any thread, CAS. */
    void updateMinWhenModified(long when) {
        for (; ; ) {
            long old = minWhenModified;
            if (old != 0 && old < when) {
                return;
            }
            if (MIN_WHEN_MODIFIED.compareAndSet(this, old, when)) {
                return;
            }
        }
    }

    /** Go: (*timers).updateMinWhenHeap. Monitor held. */
    private void updateMinWhenHeap() {
        minWhenHeap = n == 0 ? 0 : whens[0];
    }

    /**
     * When this P's timers need attention next (0 = no timers): lock-free. Reads minWhenModified
     * before minWhenHeap: adjust raises minWhenHeap's coverage before clearing minWhenModified, so a
     * cleared minWhenModified implies the minWhenHeap that follows includes it.
     *
     * <p>Go: (*timers).wakeTime
     */
    long wakeTime() {
        long nextWhen = minWhenModified;
        long when = minWhenHeap;
        if (when == 0 || (nextWhen != 0 && nextWhen < when)) {
            when = nextWhen;
        }
        return when;
    }

    Timer top() {
        return n == 0 ? null : timers[0];
    }

    /** Sets heap[0].when to the timer's new when and sifts it down. Monitor held. */
    void setTopWhen(long when) {
        whens[0] = when;
        siftDown(0);
        updateMinWhenHeap();
    }

    // ------------------------------------------------------------------------------------------
    // Adding and removing (monitor held).

    /** Go: (*timers).addHeap: the caller checked needsAdd; both monitors held. */
    void addHeap(Timer t) {
        if (t.ts != null) {
            throw Fatal.fatal(sched(), "ts set in timer");
        }
        t.ts = this;
        if (n == timers.length) {
            timers = java.util.Arrays.copyOf(timers, n * 2);
            whens = java.util.Arrays.copyOf(whens, n * 2);
        }
        timers[n] = t;
        whens[n] = t.when;
        n++;
        siftUp(n - 1);
        if (timers[0] == t) {
            updateMinWhenHeap();
        }
    }

    /** Removes heap[0]. Go: (*timers).deleteMin. */
    void deleteMin() {
        Timer t = timers[0];
        if (t.ts != this) {
            throw Fatal.fatal(sched(), "wrong timers");
        }
        t.ts = null;
        int last = n - 1;
        if (last > 0) {
            timers[0] = timers[last];
            whens[0] = whens[last];
        }
        timers[last] = null;
        whens[last] = 0;
        n = last;
        if (last > 0) {
            siftDown(0);
        }
        updateMinWhenHeap();
        if (last == 0) {
            // If there are no timers, then clearly there are no timerModified timers.
            minWhenModified = 0;
        }
    }

    /**
     * Removes zombies from the tail and fixes the head until the head needs no update, so that adds
     * do not pile up behind stopped timers. Go: (*timers).cleanHead.
     */
    void cleanHead() {
        for (; ; ) {
            if (n == 0) {
                return;
            }
            // Delete zombies from the tail: no heap adjustment needed, and it makes swapping a zombie
            // head for the tail more likely to bring a live timer up.
            Timer tail = timers[n - 1];
            if ((tail.astate() & Timer.timerZombie) != 0) {
                synchronized (tail) {
                    if ((tail.state & Timer.timerZombie) != 0) {
                        tail.state &= ~(Timer.timerHeaped | Timer.timerZombie | Timer.timerModified);
                        tail.ts = null;
                        zombies.decrementAndGet();
                        timers[n - 1] = null;
                        whens[n - 1] = 0;
                        n--;
                        if (n == 0) {
                            updateMinWhenHeap();
                        }
                    }
                    tail.publish();
                }
                continue;
            }
            Timer t = timers[0];
            if (t.ts != this) {
                throw Fatal.fatal(sched(), "bad ts");
            }
            if ((t.astate() & (Timer.timerModified | Timer.timerZombie)) == 0) {
                return; // fast path: head needs no adjustment
            }
            boolean updated;
            synchronized (t) {
                updated = t.updateHeap(this);
                t.publish();
            }
            if (!updated) {
                return;
            }
        }
    }

    /**
     * Moves every live timer of a destroyed P ({@code src}) into this heap; zombies are dropped.
     * Called by procresize with the world stopped, but timers may still be stopped or reset from
     * outside the runtime, so both heaps and each timer are locked (only take ever holds two heaps).
     *
     * <p>Go: (*timers).take
     */
    void take(TimerHeap src) {
        synchronized (src) {
            synchronized (this) {
                src.dead = true;
                for (int i = 0; i < src.n; i++) {
                    Timer t = src.timers[i];
                    synchronized (t) {
                        t.ts = null;
                        if ((t.state & Timer.timerZombie) != 0) {
                            t.state &= ~(Timer.timerHeaped | Timer.timerZombie | Timer.timerModified);
                        } else {
                            t.state &= ~Timer.timerModified;
                            addHeap(t);
                        }
                        t.publish();
                    }
                    src.timers[i] = null;
                }
                src.n = 0;
                src.zombies.set(0);
                src.minWhenHeap = 0;
                src.minWhenModified = 0;
                src.publishLen();
                publishLen();
            }
        }
    }

    /**
     * Moves timers modified to run earlier (or later) to their place and removes zombies. Unless
     * forced, does nothing before the earliest modified timer is due. Monitor held.
     *
     * <p>Go: (*timers).adjust
     */
    void adjust(long now, boolean force) {
        if (!force) {
            long first = minWhenModified;
            if (first == 0 || first > now) {
                return;
            }
        }
        // Keep wakeTime accurate throughout: (1) fold minWhenModified into minWhenHeap, (2) clear
        // minWhenModified (concurrent modifies may lower it again from now on), (3) scan, (4) set
        // minWhenHeap exactly. A modify racing with (2) published timerModified in its astate
        // before lowering minWhenModified, so the scan below sees the bit.
        minWhenHeap = wakeTime();
        minWhenModified = 0;

        boolean changed = false;
        for (int i = 0; i < n; i++) {
            Timer t = timers[i];
            if (t.ts != this) {
                throw Fatal.fatal(sched(), "bad ts");
            }
            if ((t.astate() & (Timer.timerModified | Timer.timerZombie)) == 0) {
                continue; // does not need adjustment
            }
            synchronized (t) {
                if ((t.state & Timer.timerHeaped) == 0) {
                    throw badTimer(sched());
                } else if ((t.state & Timer.timerZombie) != 0) {
                    zombies.decrementAndGet();
                    t.state &= ~(Timer.timerHeaped | Timer.timerZombie | Timer.timerModified);
                    int last = n - 1;
                    timers[i] = timers[last];
                    whens[i] = whens[last];
                    timers[last] = null;
                    whens[last] = 0;
                    n = last;
                    t.ts = null;
                    i--;
                    changed = true;
                } else if ((t.state & Timer.timerModified) != 0) {
                    whens[i] = t.when;
                    t.state &= ~Timer.timerModified;
                    changed = true;
                }
                t.publish();
            }
        }
        if (changed) {
            initHeap();
        }
        updateMinWhenHeap();
    }

    // ------------------------------------------------------------------------------------------
    // Running timers.

    /**
     * Runs every due timer of this heap on the calling M. {@code local} is true when this is the
     * calling M's own P (only then are zombies swept when they exceed a quarter of the heap).
     * Returns the time the next timer is due, or 0 if there is none. Timer functions run with no
     * heap lock held; a goroutine they ready goes to the runnext of the calling M's P.
     *
     * <p>Go: (*timers).check, run, (*timer).unlockAndRun
     */
    long check(long now, boolean local) {
        // If it's not yet time for the first timer, or the first adjusted timer, there is nothing to do.
        long next = wakeTime();
        if (next == 0) {
            return 0;
        }
        if (now == 0) {
            now = Scheduler.nanotime();
        }
        // If this is the local P and there are a lot of deleted timers, clear them out (only for
        // the local P, to reduce lock contention).
        int z = zombies.get();
        if (z < 0) {
            throw badTimer(sched());
        }
        boolean force = local && z > len / 4;
        if (now < next && !force) {
            return next;
        }
        long pollUntil = 0;
        Timer.Firing fr = null;
        boolean adjusted = false;
        for (; ; ) {
            boolean fire = false;
            synchronized (this) {
                if (!adjusted) {
                    adjusted = true;
                    if (n > 0) {
                        adjust(now, false);
                    }
                }
                // Go: (*timers).run: examine the head; run it if due.
                while (n > 0) {
                    Timer t = timers[0];
                    if (t.ts != this) {
                        throw Fatal.fatal(sched(), "bad ts");
                    }
                    if ((t.astate() & (Timer.timerModified | Timer.timerZombie)) == 0 && whens[0] > now) {
                        pollUntil = whens[0]; // fast path: not ready to run
                        break;
                    }
                    synchronized (t) {
                        if (t.updateHeap(this)) {
                            t.publish();
                            continue; // Redo
                        }
                        if ((t.state & Timer.timerHeaped) == 0 || (t.state & Timer.timerModified) != 0) {
                            throw badTimer(sched());
                        }
                        if (t.when > now) {
                            pollUntil = t.when; // not ready to run
                            break;
                        }
                        if (fr == null) {
                            fr = new Timer.Firing();
                        }
                        t.prepareRun(now, fr);
                        fire = true;
                    }
                    break;
                }
                if (!fire) {
                    // Done: sweep zombies of the local P if they are a quarter of the heap. (Go
                    // delays the forced adjust until after running: faster under contention.)
                    if (local && n > 0 && zombies.get() > n / 4) {
                        adjust(now, true);
                        if (n > 0 && (pollUntil == 0 || whens[0] < pollUntil)) {
                            pollUntil = whens[0];
                        }
                    }
                    publishLen();
                    return pollUntil;
                }
                publishLen();
            }
            // Run the timer function with no heap lock held (it may ready goroutines, start one,
            // or send on a channel).
            Timer.runUnlocked(fr);
            fr.clear();
        }
    }

    // ------------------------------------------------------------------------------------------
    // Heap maintenance (monitor held). 4-ary: parent (i-1)/4, children 4i+1 .. 4i+4.

    /** Go: (*timers).siftUp. */
    private void siftUp(int i) {
        if (i >= n) {
            throw badTimer(sched());
        }
        Timer t = timers[i];
        long when = whens[i];
        if (when <= 0) {
            throw badTimer(sched());
        }
        while (i > 0) {
            int p = (i - 1) / timerHeapN; // parent
            if (!less(when, t, whens[p], timers[p])) {
                break;
            }
            timers[i] = timers[p];
            whens[i] = whens[p];
            i = p;
        }
        timers[i] = t;
        whens[i] = when;
    }

    /** Go: (*timers).siftDown. */
    private void siftDown(int i) {
        if (i >= n) {
            throw badTimer(sched());
        }
        if (i * timerHeapN + 1 >= n) {
            return;
        }
        Timer t = timers[i];
        long when = whens[i];
        if (when <= 0) {
            throw badTimer(sched());
        }
        for (; ; ) {
            int leftChild = i * timerHeapN + 1;
            if (leftChild >= n) {
                break;
            }
            long w = when;
            int c = -1;
            int end = Math.min(leftChild + timerHeapN, n);
            Timer wt = t;
            for (int j = leftChild; j < end; j++) {
                if (less(whens[j], timers[j], w, wt)) {
                    w = whens[j];
                    wt = timers[j];
                    c = j;
                }
            }
            if (c < 0) {
                break;
            }
            timers[i] = timers[c];
            whens[i] = whens[c];
            i = c;
        }
        timers[i] = t;
        whens[i] = when;
    }

    /**
     * Heap order: by when, then, for timers due at the same instant, by their random rank (only
     * a bubble's timers have one; others tie as before). Go: timerWhen.less.
     */
    private static boolean less(long when, Timer t, long otherWhen, Timer other) {
        if (when != otherWhen) {
            return when < otherWhen;
        }
        return t.rand < other.rand;
    }

    /** Re-establishes heap order in O(n). Go: (*timers).initHeap. */
    private void initHeap() {
        if (n <= 1) {
            return;
        }
        for (int i = (n - 1 - 1) / timerHeapN; i >= 0; i--) {
            siftDown(i);
        }
    }

    /** Debug check of the heap invariant (tests). Go: (*timers).verify. */
    synchronized void verify() {
        for (int i = 1; i < n; i++) {
            int p = (i - 1) / timerHeapN;
            if (less(whens[i], timers[i], whens[p], timers[p])) {
                System.err.println("bad timer heap at " + i + ": " + p + ": " + whens[p] + ", " + i + ": " + whens[i]);
                throw Fatal.fatal(sched(), "bad timer heap");
            }
        }
        if (len != n) {
            System.err.println("timer heap len " + n + " != atomic len " + len);
            throw Fatal.fatal(sched(), "bad timer heap len");
        }
    }

    /** The timer structures are corrupt (racy use). Go: badTimer. */
    static GortFatalError badTimer(Scheduler sched) {
        return Fatal.fatal(sched, "timer data corruption");
    }
}
