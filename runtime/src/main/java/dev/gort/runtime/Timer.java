package dev.gort.runtime;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * A runtime timer: a possibly repeating trigger for {@code f.run(arg, seq, delay)}. It lives in at
 * most one P's {@link TimerHeap} and is run by whichever M checks that heap (the owner in
 * findRunnable, or a thief on its last steal pass): there is no timer thread or timer goroutine.
 *
 * <h2>Locking and lazy updates (Go 1.23+)</h2>
 *
 * <p>A timer is used by one client goroutine at a time, but the M managing its heap touches it
 * concurrently, so every field below is guarded by this object's monitor ({@code t.mu}), with a
 * copy of the state bits published in {@link #astate} (volatile) at every unlock, so that heap fast
 * paths can decide without the lock. {@link #stop} and {@link #modify} never touch the heap: they
 * only mark the timer ({@link #timerModified}, {@link #timerZombie}) and the P whose heap holds it
 * fixes the heap later ({@code cleanHead}, {@code adjust}, {@code updateHeap}), dropping stopped
 * timers when it meets them and sweeping them all when they exceed a quarter of the heap. A timer
 * that is not in a heap is added to the <em>current</em> P's heap by {@link #maybeAdd}.
 *
 * <p>Lock order: {@code sendLock} &rarr; channel lock &rarr; heap ({@code ts}) &rarr; timer. No lock
 * is held while {@code f} runs, except {@code sendLock} for channel timers, exactly as in Go.
 *
 * <h2>Channel timers</h2>
 *
 * <p>A timer with a channel ({@link #isChan}) follows Go 1.23's synchronous timer channels: it is in
 * a heap only while a goroutine is blocked on its channel ({@link #blocked} &gt; 0), a receive runs
 * an overdue timer lazily ({@link #maybeRunChan}), and stop/reset bump {@link #seq} under
 * {@code sendLock} and drain the channel, so no stale value is received after they return.
 *
 * <p>Go: time.go type timer, (*timer).modify, reset, stop, needsAdd, maybeAdd, updateHeap,
 * unlockAndRun, maybeRunChan, blockTimerChan, unblockTimerChan
 */
public final class Timer {
    /** The timer is in some P's heap ({@link #ts} non-null). */
    static final int timerHeaped = 1;
    /** {@link #when} changed but the heap's copy of it has not been updated yet. Only with timerHeaped. */
    static final int timerModified = 2;
    /** Stopped (or a channel timer nobody waits on) but still in a heap. Only with timerHeaped. */
    static final int timerZombie = 4;

    /** The largest when. Go: maxWhen. */
    static final long maxWhen = Long.MAX_VALUE;

    private static final VarHandle IS_SENDING;

    static {
        try {
            IS_SENDING = MethodHandles.lookup().findVarHandle(Timer.class, "isSending", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** A timer's action, run on the M that runs the timer, with no lock held but sendLock. */
    @FunctionalInterface
    public interface Func {
        /**
         * @param arg   the timer's argument
         * @param seq   the timer's sequence number when it was claimed to run
         * @param delay how late the timer runs: {@code now - when}, in nanoseconds
         */
        void run(Object arg, long seq, long delay);
    }

    /**
     * The channel behind a channel timer, as the timer sees it. Implemented by the channel layer.
     * Go: chan.go timerchandrain.
     */
    public interface TimerChan {
        /** Empties the channel's buffer; true if it held a value. Called with sendLock held. */
        boolean timerchandrain();
    }

    /** Immutable: the runtime whose Ps' heaps hold this timer. */
    final Scheduler sched;
    /**
     * Immutable: the synctest bubble of the goroutine that made this timer, else null (always null
     * for a {@link #runtimeTimer}); when set, the timer runs in the bubble's fake time, in the
     * bubble's heap (Go: t.isFake).
     */
    final Bubble bubble;
    /** Immutable: this is a channel timer (Go 1.23 semantics). */
    final boolean isChan;
    /** Immutable: the channel of a channel timer, else null. */
    final TimerChan chan;
    /** Channel timers only: protects sends on the channel and, with the monitor, {@link #seq}. */
    private final Object sendLock;

    // ---- guarded by this object's monitor (t.mu) ----
    /** State bits. */
    int state;
    /** Goroutines blocked on this timer's channel. */
    int blocked;
    /** When to run, in {@link Scheduler#nanotime()} time; 0 = not running (stopped or fired). */
    long when;
    /** If &gt; 0, run again every period ns. */
    long period;

    Func f;
    Object arg;
    /** Channel timers: bumped by stop/modify to squelch sends of a stale configuration. */
    long seq;
    /** The heap holding this timer, or null; written under both the heap's and this monitor. */
    TimerHeap ts;
    /** For time.Sleep (a goroutine's own timer): when the sleep ends. Go: g.sleepWhen. */
    long sleepWhen;
    /**
     * A bubble's timer: a random rank drawn each time it enters the bubble's heap, which orders
     * timers due at the same instant (so that no test comes to rely on an order Go leaves open);
     * 0 for other timers. Written with both the heap's and this monitor held. Go: t.rand.
     */
    int rand;

    /** Copy of {@link #state} at the last unlock: written under the monitor, read lock-free. */
    private volatile int astate;

    /**
     * Channel timers, one-shot: sends in progress for the current {@link #seq} (claimed by
     * prepareRun, not yet under sendLock). Incremented under the monitor; decremented under sendLock
     * by a firing whose seq is still current; zeroed with both held when stop or modify moves seq
     * (every send then in progress is stale and will not send); read with both held; VarHandle
     * atomics. gort: Go counts stale firings too, so a Stop or Reset while a stale firing waits for
     * sendLock reports a timer that was stopped, or whose value was received, as pending; Go's window
     * is nanoseconds, a carrier woken late from the sendLock monitor's wait held it for a millisecond.
     */
    @SuppressWarnings("unused")
    private volatile int isSending;

    /**
     * A timer with no channel; armed later by {@link #modify} or {@link #reset}. Made by a bubble
     * goroutine, it is that bubble's (fake time). Go: newTimer, timeSleep (isFake set from
     * getg().bubble).
     */
    public Timer(Scheduler sched, Func f, Object arg) {
        this(sched, f, arg, null);
    }

    /** A channel timer when {@code chan} is non-null (Go 1.23 synchronous timer channel). */
    public Timer(Scheduler sched, Func f, Object arg, TimerChan chan) {
        this(sched, f, arg, chan, Bubble.current());
    }

    private Timer(Scheduler sched, Func f, Object arg, TimerChan chan, Bubble bubble) {
        if (sched == null) {
            throw new NullPointerException("sched");
        }
        this.sched = sched;
        this.bubble = bubble;
        this.f = f;
        this.arg = arg;
        this.chan = chan;
        this.isChan = chan != null;
        this.sendLock = chan != null ? new Object() : null;
    }

    /**
     * A runtime timer, on the runtime's clock whoever makes it, even a bubble goroutine: the
     * network poller's deadline timers, whose when is a {@link Scheduler#nanotime()} (a read or
     * write blocked on the network is not durably blocked, so a bubble's clock would never reach
     * it). Go: (*timer).init, which never sets isFake (pollCache.alloc's pd.rt and pd.wt).
     */
    static Timer runtimeTimer(Scheduler sched) {
        return new Timer(sched, null, null, null, null);
    }

    /** State bits as of the last unlock. */
    int astate() {
        return astate;
    }

    /** Publishes the state bits; every monitor section that changes {@link #state} ends with it. */
    void publish() {
        astate = state;
    }

    int isSendingAdd(int delta) {
        return (int) IS_SENDING.getAndAdd(this, delta) + delta;
    }

    // ------------------------------------------------------------------------------------------
    // Client operations.

    /**
     * Resets the time when the timer fires ({@code period > 0}: then every period). Reports whether
     * the timer was running (not stopped, not yet fired) before. Go: (*timer).reset.
     */
    public boolean reset(long when, long period) {
        return modify(when, period, null, null, 0);
    }

    // modify's results, packed so that the monitor sections can stay blocks.
    private static final int PENDING = 1;
    private static final int WAKE = 2;
    private static final int ADD = 4;
    /** A bubble's timer due at once: claimed to run by the caller (the Firing is filled). */
    private static final int RUN_NOW = 8;

    /**
     * Modifies the timer; if {@code f} is non-null, also its function, argument and sequence. The
     * heap is not touched: a heaped timer is marked modified and its P fixes the heap; an unheaped
     * one is added to the current P's heap. Reports whether the timer was running before.
     *
     * <p>A synctest bubble's timer that would be added already due ({@code when} not after the
     * bubble's clock: {@code afterFunc(0, f)}, a reset to 0 while a goroutine waits on the
     * channel) runs now, in the caller, rather than when the bubble next blocks: Go's, so that
     * {@code afterFunc(0, f)} starts f while the caller keeps running (it waited for every
     * goroutine of the bubble to block before).
     *
     * <p>Go: time.go (*timer).modify
     */
    boolean modify(long when, long period, Func f, Object arg, long seq) {
        if (when <= 0) {
            throw Fatal.fatal(sched, "timer when must be positive");
        }
        if (period < 0) {
            throw Fatal.fatal(sched, "timer period must be non-negative");
        }
        Firing fr = bubble != null ? new Firing() : null;
        int r;
        if (isChan) {
            synchronized (sendLock) {
                r = modifyLocked(when, period, f, arg, seq, fr);
                if ((r & RUN_NOW) == 0 && chan.timerchandrain()) {
                    r |= PENDING;
                }
            }
        } else {
            r = modifyLocked(when, period, f, arg, seq, fr);
        }
        if ((r & RUN_NOW) != 0) {
            runUnlocked(fr); // sendLock released first, as Go's: a channel timer's send takes it
            return (r & PENDING) != 0;
        }
        if ((r & ADD) != 0) {
            maybeAdd();
        }
        if ((r & WAKE) != 0 && bubble == null) {
            sched.wakeNetPoller(when);
        }
        return (r & PENDING) != 0;
    }

    private int modifyLocked(long when, long period, Func f, Object arg, long seq, Firing fr) {
        synchronized (this) {
            long oldPeriod = this.period;
            this.period = period;
            if (f != null) {
                this.f = f;
                this.arg = arg;
                this.seq = seq;
            }
            int r = 0;
            if (this.when > 0) {
                r |= PENDING;
            }
            this.when = when;
            if ((state & timerHeaped) != 0) {
                state |= timerModified;
                if ((state & timerZombie) != 0) {
                    // In the heap but marked for removal (by a Stop). Unmark it, since it has been
                    // Reset and will be running again.
                    ts.zombies.decrementAndGet();
                    state &= ~timerZombie;
                }
                // The heap's copy of when is updated later (adjust/updateHeap).
                long min = ts.minWhenModified();
                if (min == 0 || when < min) {
                    r |= WAKE;
                    // Publish timerModified before lowering minWhenModified, so that a concurrent
                    // adjust that clears minWhenModified sees the bit and picks this timer up.
                    publish();
                    ts.updateMinWhenModified(when);
                }
            }
            if (needsAdd()) {
                r |= ADD;
                // A bubble's timer due already (Go: add && t.isFake): run it now rather than wait
                // for the bubble's root, which runs timers only once every goroutine of the bubble
                // is blocked. Only timers made by the time package are in a bubble, and they may
                // run in the caller.
                long now;
                if (bubble != null && (state & timerHeaped) == 0 && when <= (now = bubble.now())) {
                    prepareRun(now, fr);
                    return r | RUN_NOW;
                }
            }
            if (isChan) {
                // Stop any future sends with stale values (see runUnlocked).
                this.seq++;
                // A send in progress is cancelled by the seq bump: the timer was still pending.
                if (oldPeriod == 0 && (int) IS_SENDING.getVolatile(this) > 0) {
                    r |= PENDING;
                }
                IS_SENDING.setVolatile(this, 0); // those sends are stale now
            }
            publish();
            return r;
        }
    }

    /**
     * Stops the timer. It may be in another P's heap, so it is only marked: that P removes it later.
     * Reports whether the timer was stopped before it ran.
     *
     * <p>Go: time.go (*timer).stop
     */
    public boolean stop() {
        boolean pending;
        if (isChan) {
            synchronized (sendLock) {
                pending = stopLocked();
            }
            if (chan.timerchandrain()) {
                pending = true;
            }
        } else {
            pending = stopLocked();
        }
        return pending;
    }

    private boolean stopLocked() {
        synchronized (this) {
            if ((state & timerHeaped) != 0) {
                state |= timerModified;
                if ((state & timerZombie) == 0) {
                    state |= timerZombie;
                    ts.zombies.incrementAndGet();
                }
            }
            boolean pending = when > 0;
            when = 0;
            if (isChan) {
                seq++;
                if (period == 0 && (int) IS_SENDING.getVolatile(this) > 0) {
                    pending = true;
                }
                IS_SENDING.setVolatile(this, 0); // those sends are stale now
            }
            publish();
            return pending;
        }
    }

    /** Whether t must be added to a heap. Monitor held. Go: (*timer).needsAdd. */
    boolean needsAdd() {
        return (state & timerHeaped) == 0 && when > 0 && (!isChan || blocked > 0);
    }

    /**
     * Adds t to the current P's heap if it needs to be in one, and wakes the poller if it became
     * that heap's earliest timer. Called with no lock held (heap before timer). From a thread that
     * is not an M of this runtime, or an M without a P, the timer goes to P0's heap (P0 always
     * exists) and the wake-up covers it.
     *
     * <p>Go: time.go (*timer).maybeAdd
     */
    void maybeAdd() {
        // In gort a goroutine changes M only at a yield, and runtime code has no yield points, so
        // the P read here stays ours until we are done (Go uses acquirem for this).
        M mp = M.current();
        P pp = mp != null && mp.sched == sched ? mp.p : null;
        for (; ; ) {
            TimerHeap heap = bubble != null ? bubble.timers : pp != null ? pp.timers : sched.allp[0].timers;
            long addWhen = 0;
            boolean wake = false;
            synchronized (heap) {
                if (heap.dead) {
                    // The P was destroyed by procresize between our read and the lock: use P0.
                    pp = null;
                    continue;
                }
                heap.cleanHead();
                synchronized (this) {
                    if (needsAdd()) {
                        if (bubble != null) {
                            // Re-randomise the order of timers due at the same instant (Go does it
                            // only for bubbles: other timers hardly ever share a when). From the
                            // M's generator: seeded runs repeat it, decision traces record it.
                            rand = mp != null ? mp.rand.timerOrder() : 0;
                        }
                        state |= timerHeaped;
                        addWhen = when;
                        long wakeTime = heap.wakeTime();
                        wake = wakeTime == 0 || addWhen < wakeTime;
                        heap.addHeap(this);
                    }
                    publish();
                }
                heap.publishLen();
            }
            if (wake && bubble == null) {
                sched.wakeNetPoller(addWhen); // a bubble's timers are run by its root, in fake time
            }
            return;
        }
    }

    /**
     * Applies the pending update of a heaped timer that is at the top of {@code heap}: removes a
     * zombie, or moves a modified timer to its new place. Both monitors held. Returns whether
     * anything changed. Go: (*timer).updateHeap.
     */
    boolean updateHeap(TimerHeap heap) {
        if (ts == null || ts != heap || heap.top() != this) {
            throw TimerHeap.badTimer(sched);
        }
        if ((state & timerZombie) != 0) {
            // Take timer out of heap.
            state &= ~(timerHeaped | timerZombie | timerModified);
            heap.zombies.decrementAndGet();
            heap.deleteMin();
            return true;
        }
        if ((state & timerModified) != 0) {
            // Update heap[0].when and move within heap.
            state &= ~timerModified;
            heap.setTopWhen(when);
            return true;
        }
        return false;
    }

    // ------------------------------------------------------------------------------------------
    // Running (the monitor part of unlockAndRun, then the call without the monitor).

    /**
     * First half of Go's unlockAndRun, with the monitor (and, if heaped, the heap's) held: computes
     * the next when (periodic) or 0, marks the heap entry, and returns what {@link #runUnlocked} must
     * call: the function, argument, seq and delay are stored into {@code out}.
     */
    void prepareRun(long now, Firing out) {
        if ((state & (timerModified | timerZombie)) != 0) {
            throw TimerHeap.badTimer(sched);
        }
        out.t = this;
        out.f = f;
        out.arg = arg;
        out.seq = seq;
        long delay = now - when;
        out.delay = delay;
        long next;
        if (period > 0) {
            // Leave in heap but adjust next time to fire.
            next = when + period * (1 + delay / period);
            if (next < 0) { // overflow
                next = maxWhen;
            }
        } else {
            next = 0;
        }
        when = next;
        if ((state & timerHeaped) != 0) {
            state |= timerModified;
            if (next == 0) {
                state |= timerZombie;
                ts.zombies.incrementAndGet();
            }
            updateHeap(ts);
        }
        out.sending = isChan && period == 0;
        if (out.sending) {
            // Tell Stop/Reset that we are sending a value.
            if (isSendingAdd(1) < 0) {
                throw Fatal.fatal(sched, "too many concurrent timer firings");
            }
        }
        publish();
    }

    /**
     * Second half of Go's unlockAndRun, with no lock held: calls the function. A channel timer
     * takes sendLock and skips the send if stop/modify bumped seq since it was claimed.
     */
    static void runUnlocked(Firing fr) {
        Timer t = fr.t;
        if (t.sched.trace.on)
            t.sched.trace.timerFire(
                    M.current(), M.current() == null ? null : M.current().p, fr.arg instanceof G g ? g : null);
        if (t.isChan) {
            synchronized (t.sendLock) {
                if (fr.sending && t.seq == fr.seq) {
                    // Committed to possibly sending a value based on seq (a stale firing's count
                    // was zeroed when seq moved).
                    if (t.isSendingAdd(-1) < 0) {
                        throw Fatal.fatal(t.sched, "mismatched isSending updates");
                    }
                }
                if (t.seq != fr.seq) {
                    return; // stale: the timer was stopped or reset since it was claimed
                }
                fr.f.run(fr.arg, fr.seq, fr.delay);
            }
            return;
        }
        fr.f.run(fr.arg, fr.seq, fr.delay);
    }

    /** What a claimed timer must run once the locks are released (a caller-owned scratch). */
    static final class Firing {
        Timer t;
        Func f;
        Object arg;
        long seq;
        long delay;
        /** A one-shot channel timer's firing, counted in isSending. */
        boolean sending;

        void clear() {
            t = null;
            f = null;
            arg = null;
        }
    }

    // ------------------------------------------------------------------------------------------
    // Channel timers (called by the channel layer).

    /**
     * Before a receive on this timer's channel: if the timer is not in a heap and is overdue, run it
     * now, so that the value is there. Must hold no lock. Go: (*timer).maybeRunChan.
     */
    public void maybeRunChan() {
        if ((astate & timerHeaped) != 0) {
            // In a heap: the ordinary timer code sends when due.
            return;
        }
        Firing fr;
        synchronized (this) {
            long now = bubble != null ? bubble.now() : Scheduler.nanotime();
            if ((state & timerHeaped) != 0 || when == 0 || when > now) {
                return; // in a heap, not running, or not yet due
            }
            fr = new Firing();
            prepareRun(now, fr);
        }
        runUnlocked(fr);
    }

    /**
     * A channel operation decided to block on this timer's channel (channel lock held): make sure
     * the timer is in a heap. Go: chan.go blockTimerChan.
     */
    public void blockTimerChan() {
        boolean add;
        synchronized (this) {
            if (!isChan) {
                throw TimerHeap.badTimer(sched);
            }
            blocked++;
            // If this is the first enqueue after a recent dequeue, the timer may still be in the
            // heap but marked as a zombie. Unmark it if it is still pending.
            if ((state & timerHeaped) != 0 && (state & timerZombie) != 0 && when > 0) {
                state &= ~timerZombie;
                ts.zombies.decrementAndGet();
            }
            add = needsAdd();
            publish();
        }
        if (add) {
            maybeAdd();
        }
    }

    /**
     * Pairs with {@link #blockTimerChan}: when nobody waits any more, mark the timer for removal
     * (keeping when, so that a later receive still knows when it is due). Go: unblockTimerChan.
     */
    public void unblockTimerChan() {
        synchronized (this) {
            if (!isChan || blocked == 0) {
                throw TimerHeap.badTimer(sched);
            }
            blocked--;
            if (blocked == 0 && (state & timerHeaped) != 0 && (state & timerZombie) == 0) {
                // Last goroutine that was blocked on this timer.
                state |= timerZombie;
                ts.zombies.incrementAndGet();
            }
            publish();
        }
    }

    // ------------------------------------------------------------------------------------------
    // time.Sleep.

    /**
     * Puts the current goroutine to sleep for at least {@code ns} nanoseconds. {@code ns <= 0}
     * returns at once without yielding. The goroutine's own timer is armed only after the
     * goroutine is parked ({@link #resetForSleep} runs as gopark's unlock function on the M), so a
     * short sleep can never be readied before it has parked.
     *
     * <p>Go: time.go timeSleep
     */
    public static void timeSleep(long ns) {
        if (ns <= 0) {
            return;
        }
        M mp = M.current();
        G gp = mp == null ? null : mp.curg;
        if (gp == null) {
            throw new IllegalStateException("gort: time.Sleep called outside a goroutine");
        }
        G.Rare rare = gp.rare(); // a sleeper keeps its timer there (Go: gp.timer)
        Timer t = (Timer) rare.timer;
        if (t == null || t.bubble != gp.bubble()) {
            // gort: a root's timer made before its Test stays outside the bubble (Go throws
            // "synctest root goroutine has a fake timer"; a root sleeps only outside Test).
            t = new Timer(gp.sched, Timer::goroutineReady, gp);
            rare.timer = t;
        }
        Bubble gb = gp.bubble();
        long when = (gb != null ? gb.now() : Scheduler.nanotime()) + ns;
        if (when < 0) { // overflow
            when = maxWhen;
        }
        t.sleepWhen = when; // only this G and, after the park, its M touch it
        Scheduler.gopark(Timer::resetForSleep, t, WaitReason.SLEEP, null);
    }

    /**
     * gopark's unlock function for a sleep: arms the G's timer now that the G is parked.
     * Go: time.go resetForSleep.
     */
    private static boolean resetForSleep(G gp, Timer t) {
        t.reset(t.sleepWhen, 0);
        return true;
    }

    /** Readies the goroutine {@code arg}: it goes to the runnext of the P running the timer. */
    static void goroutineReady(Object arg, long seq, long delay) {
        G gp = (G) arg;
        gp.sched.goready(gp);
    }

    /**
     * Go's time.when: the when of a timer firing after {@code d} ns; {@code d <= 0} means now.
     * Go: time/sleep.go when.
     */
    public static long when(long d) {
        long now = nanotime();
        if (d <= 0) {
            return now;
        }
        long t = now + d;
        if (t < 0) {
            t = maxWhen; // overflow (now and d positive, so t is never 0)
        }
        return t;
    }

    /**
     * The clock of the calling goroutine's timers: its bubble's fake clock inside a synctest
     * bubble, else {@link Scheduler#nanotime()}. Go: time.go runtimeNano in a bubble.
     */
    public static long nanotime() {
        Bubble b = Bubble.current();
        return b != null ? b.now() : Scheduler.nanotime();
    }

    /** The bubble of this timer (it runs in that bubble's fake time), or null. */
    public Bubble bubble() {
        return bubble;
    }

    /** The runtime this timer belongs to. */
    Scheduler scheduler() {
        return sched;
    }

    @Override
    public String toString() {
        synchronized (this) {
            return "timer[when=" + when + " period=" + period + " state=" + state + "]";
        }
    }
}
