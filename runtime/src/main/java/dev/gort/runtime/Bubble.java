package dev.gort.runtime;

import java.util.concurrent.atomic.AtomicLong;

/**
 * A synctest bubble: the goroutines started, directly or not, by one {@code synctest.Test}'s
 * function, with a fake clock of their own. Their timers live in the bubble's own heap
 * ({@link #timers}) and run in fake time; the clock starts at Go's epoch (2000-01-01T00:00:00Z,
 * {@link #synctestBaseTime}) and moves only when every goroutine of the bubble is durably blocked
 * (its wait reason is {@link WaitReason#isIdleInSynctest}), and then to the next timer of the bubble.
 *
 * <p>The bubble counts its goroutines through {@link G#casgstatus}, which calls
 * {@link #changegstatus} for a G whose {@link G#bubble} is set (one null check on every status
 * change: nothing else on the scheduler's paths knows about bubbles). The root, the goroutine that
 * called {@code Test}, is a member too (as in Go): it runs the bubble's timers and parks
 * ({@link WaitReason#SYNCTEST_RUN}, durable) until the bubble is idle.
 *
 * <p>Locking: every counter is guarded by this object's monitor, a leaf lock (nothing is readied
 * while it is held: {@link #changegstatus} and {@link #decActive} ready the G to wake after
 * releasing it).
 *
 * <p>Go: synctest.go type synctestBubble, changegstatus, incActive, decActive, maybeWakeLocked,
 * synctestRun, synctestidle_c, synctestWait, synctestwait_c
 */
public final class Bubble {
    /** Midnight UTC 2000-01-01, in Unix nanoseconds: the fake clock's start. Go: synctestBaseTime. */
    static final long synctestBaseTime = 946684800000000000L;

    private static final AtomicLong bubbleGen = new AtomicLong();

    /**
     * Bubbles running in this JVM: while 0, {@link #current()} answers null without looking up the
     * caller's M, so code outside bubbles pays one load. Incremented by a root before its bubble's
     * first goroutine exists (newproc's publication orders it for every member), decremented when
     * the bubble is over; volatile.
     */
    private static volatile int bubblesRunning;

    /** Immutable: the runtime of the bubble's goroutines. */
    final Scheduler sched;
    /** Immutable: a unique id (Go: bubble.id). */
    final long id;
    /** Immutable: the bubble's timers (Go: bubble.timers); run only by the root, in fake time. */
    final TimerHeap timers;
    /** Immutable: the caller of Test (Go: bubble.root). */
    final G root;

    // ---- guarded by this object's monitor, except now (see there) ----
    /**
     * The fake clock, in Unix nanoseconds: written by the root under the monitor while every other
     * goroutine of the bubble is durably blocked; read by bubble goroutines (volatile) whenever
     * they ask the time.
     */
    private volatile long now = synctestBaseTime;
    /** The caller of Wait while it is parked there, else null (Go: bubble.waiter). */
    private G waiter;
    /** The goroutine started by Test (Go: bubble.main): set by newproc before the G is published. */
    G main;
    /** A goroutine is calling Wait (Go: bubble.waiting). */
    private boolean waiting;
    /** main has exited (Go: bubble.done). */
    private boolean done;
    /** Goroutines of the bubble, the root included (Go: bubble.total). */
    private int total;
    /** Goroutines not durably blocked: running, runnable, or blocked non-durably (Go: bubble.running). */
    private int running;
    /** Other sources of activity that keep the bubble from being idle (Go: bubble.active). */
    private int active;

    private Bubble(Scheduler sched, G root) {
        this.sched = sched;
        this.id = bubbleGen.incrementAndGet();
        this.timers = new TimerHeap(this);
        this.root = root;
        this.total = 1; // the root
        this.running = 1;
    }

    /** The bubble of the calling goroutine, or null (outside a bubble, or outside a goroutine). */
    public static Bubble current() {
        if (bubblesRunning == 0) {
            return null;
        }
        G gp = Scheduler.getg();
        return gp == null ? null : gp.bubble();
    }

    /**
     * Runs {@code f} as if the calling goroutine were outside its bubble, for values that belong
     * to no bubble whoever makes them first (a class's static channel, as Go's are made at init).
     * {@code f} must not block: the goroutine stays a member of its bubble meanwhile.
     */
    public static <T> T outside(java.util.function.Supplier<T> f) {
        G gp = Scheduler.getg();
        Bubble b = gp == null ? null : gp.bubble();
        if (b == null) {
            return f.get();
        }
        gp.setBubble(null);
        try {
            return f.get();
        } finally {
            gp.setBubble(b);
        }
    }

    /** Goroutines of the bubble that are not durably blocked (the root included while it runs). */
    public synchronized int running() {
        return running;
    }

    /** Goroutines of the bubble, the root included. */
    public synchronized int total() {
        return total;
    }

    /** The fake clock in Unix nanoseconds (Go: bubble.now). */
    public long now() {
        return now;
    }

    /**
     * A status change of gp, a member of this bubble: keeps {@link #total} and {@link #running},
     * and wakes the root or the waiter when the bubble becomes idle. Called by casgstatus after
     * its CAS, with no bubble lock held; {@code reason} is gp's wait reason as casgstatus read it
     * before the CAS (the wait left or entered: afterwards a G parked in place may already have
     * cleared it).
     *
     * <p>Go: synctest.go (*synctestBubble).changegstatus
     */
    void changegstatus(G gp, int oldval, int newval, WaitReason reason) {
        int totalDelta = 0;
        boolean wasRunning = true;
        switch (oldval) {
            case G._Gidle -> { // gort: a new G starts from _Gidle (Go reuses _Gdead ones)
                wasRunning = false;
                totalDelta++;
            }
            case G._Gwaiting -> {
                if (reason.isIdleInSynctest()) {
                    wasRunning = false;
                }
            }
            default -> {}
        }
        boolean isRunning = true;
        switch (newval) {
            case G._Gdead -> {
                isRunning = false;
                totalDelta--;
            }
            case G._Gwaiting -> {
                if (reason.isIdleInSynctest()) {
                    isRunning = false;
                }
            }
            default -> {}
        }
        // A new goroutine may be created in a non-running state: wasRunning == isRunning while
        // totalDelta != 0.
        if (wasRunning == isRunning && totalDelta == 0) {
            return;
        }
        G wake;
        synchronized (this) {
            total += totalDelta;
            if (newval == G._Gdead && gp == main) {
                done = true;
            }
            if (wasRunning != isRunning) {
                if (isRunning) {
                    running++;
                } else {
                    running--;
                }
            }
            if (total < 0) {
                throw Fatal.fatal(sched, "total < 0");
            }
            if (running < 0) {
                throw Fatal.fatal(sched, "running < 0");
            }
            wake = maybeWakeLocked();
        }
        if (wake != null) {
            sched.goready(wake);
        }
    }

    /** A bubble does not become idle while the active count is non-zero. Go: incActive. */
    void incActive() {
        synchronized (this) {
            active++;
        }
    }

    /** Go: (*synctestBubble).decActive. */
    void decActive() {
        G wake;
        synchronized (this) {
            active--;
            if (active < 0) {
                throw Fatal.fatal(sched, "active < 0");
            }
            wake = maybeWakeLocked();
        }
        if (wake != null) {
            sched.goready(wake);
        }
    }

    /**
     * The G to wake if the bubble is idle: the root if a timer is due (or nothing waits), else the
     * goroutine in Wait. Counts the wake as activity: the woken goroutine takes it over. Monitor held.
     *
     * <p>Go: synctest.go (*synctestBubble).maybeWakeLocked
     */
    private G maybeWakeLocked() {
        if (running > 0 || active > 0) {
            return null;
        }
        // Two wakes at the same time lead to very confusing failures: the woken goroutine owns
        // this activity until it decides what to do.
        active++;
        long next = timers.wakeTime();
        if (next > 0 && next <= now) {
            return root; // a timer is due: the root runs it
        }
        if (waiter != null) {
            return waiter;
        }
        return root; // all durably blocked and nobody in Wait: the root decides (time or deadlock)
    }

    // ------------------------------------------------------------------------------------------
    // Test and Wait.

    /**
     * Runs {@code f} in a new goroutine, the main goroutine of a new bubble whose root is the
     * calling goroutine, and returns once every goroutine of the bubble has exited; or, when the
     * bubble is deadlocked, Go's reason ({@code deadlock: ...}) for the caller to panic with.
     * Returns null on success. The caller checked that it is a goroutine outside any bubble.
     *
     * <p>Go: synctest.go synctestRun
     */
    public static String run(Runnable f) {
        G gp = Scheduler.getg();
        if (gp == null || gp.bubble() != null) {
            throw new IllegalStateException("gort: synctest run outside a goroutine or inside a bubble");
        }
        Bubble bubble = new Bubble(gp.sched, gp);
        synchronized (Bubble.class) {
            bubblesRunning++;
        }
        gp.setBubble(bubble);
        try {
            // newproc inherits the bubble and records the new G as bubble.main (it is the root's
            // first goroutine in this bubble).
            gp.sched.newproc(f);
            int total;
            synchronized (bubble) {
                bubble.active++;
            }
            for (; ; ) {
                bubble.timers.check(bubble.now, true);
                Scheduler.gopark(Bubble::synctestidle, bubble, WaitReason.SYNCTEST_RUN, bubble);
                synchronized (bubble) {
                    if (bubble.active < 0) {
                        throw Fatal.fatal(bubble.sched, "active < 0");
                    }
                    long next = bubble.timers.cleanWakeTime(bubble.now);
                    if (next == 0) {
                        break;
                    }
                    if (next < bubble.now) {
                        throw Fatal.fatal(bubble.sched, "time went backwards");
                    }
                    if (bubble.done) {
                        break; // time stops once the bubble's main goroutine has exited
                    }
                    if (next > bubble.now) {
                        bubble.now = next;
                    }
                }
            }
            boolean mainDone;
            synchronized (bubble) {
                total = bubble.total;
                mainDone = bubble.done;
            }
            if (total != 1) {
                return mainDone
                        ? "deadlock: main bubble goroutine has exited but blocked goroutines remain"
                        : "deadlock: all goroutines in bubble are blocked";
            }
            return null;
        } finally {
            gp.setBubble(null);
            synchronized (Bubble.class) {
                bubblesRunning--;
            }
        }
    }

    /**
     * The root's park: gives up the root's activity, so that the bubble can become idle (then
     * park_m's own activity, released right after, wakes whom maybeWakeLocked picks). gort: Go
     * cancels the park when the bubble is already idle; here the wake-up always goes through
     * maybeWakeLocked, which also prefers a goroutine in Wait when no timer is due.
     *
     * <p>Go: synctest.go synctestidle_c
     */
    private static boolean synctestidle(G gp, Bubble bubble) {
        synchronized (bubble) {
            bubble.active--;
        }
        return true;
    }

    /**
     * Blocks until every other goroutine of the calling goroutine's bubble is durably blocked.
     * Go's panics, as {@link IllegalStateException}s the api rewords: outside a bubble ({@code
     * goroutine is not in a bubble}), two concurrent calls ({@code wait already in progress}).
     *
     * <p>Go: synctest.go synctestWait
     */
    public static void synctestWait() {
        G gp = Scheduler.getg();
        Bubble bubble = gp == null ? null : gp.bubble();
        if (bubble == null) {
            throw new IllegalStateException("goroutine is not in a bubble");
        }
        if (bubble.root == gp) {
            throw new IllegalStateException("goroutine is not in a bubble"); // gort: the root runs no user code
        }
        synchronized (bubble) {
            // A waiting flag, not waiter != null: the waiter is set only once the G has parked.
            if (bubble.waiting) {
                throw new IllegalStateException("wait already in progress");
            }
            bubble.waiting = true;
        }
        Scheduler.gopark(Bubble::synctestwait, bubble, WaitReason.SYNCTEST_WAIT, bubble);
        synchronized (bubble) {
            bubble.active--;
            if (bubble.active < 0) {
                throw Fatal.fatal(bubble.sched, "active < 0");
            }
            bubble.waiter = null;
            bubble.waiting = false;
        }
    }

    /** Go: synctest.go synctestwait_c. */
    private static boolean synctestwait(G gp, Bubble bubble) {
        synchronized (bubble) {
            if (bubble.running == 0 && bubble.active == 0) {
                // Impossible: park_m holds the bubble active while the unlock function runs.
                throw Fatal.fatal(bubble.sched, "running == 0 && active == 0");
            }
            bubble.waiter = gp;
        }
        return true;
    }

    @Override
    public String toString() {
        return "bubble#" + id;
    }
}
