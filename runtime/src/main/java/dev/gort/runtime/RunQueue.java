package dev.gort.runtime;

import dev.gort.runtime.trace.Tracer;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * head (written by thieves) shares a cache line neither with the object before this one in the heap
 * ({@link CacheLinePad}'s line, whose int keeps head from the 4 bytes after the object header) nor
 * with tail (the owner's; {@link RunQueuePad1}).
 */
abstract class RunQueueHead extends CacheLinePad {
    /** Any thread: read getAcquire, advanced by CAS (release). Go: p.runqhead. */
    volatile int head;

    /** Fills the 4 bytes after head, where the JVM would otherwise put tail. */
    int h1;
}

abstract class RunQueuePad1 extends RunQueueHead {
    long p10, p11, p12, p13, p14, p15, p16, p17;
}

abstract class RunQueueTail extends RunQueuePad1 {
    /** Owner only writes (setRelease); the owner reads it plain, thieves getAcquire. Go: p.runqtail. */
    volatile int tail;
}

abstract class RunQueuePad2 extends RunQueueTail {
    long p20, p21, p22, p23, p24, p25, p26, p27;
}

/**
 * A P's local run queue: the {@code runnext} slot plus a lock-free single-producer /
 * multi-consumer ring of {@code capacity} slots (256 in production; a power of two so tests can
 * shrink it to 4).
 *
 * <pre>
 *   head, tail: ever-growing int counters (uint32 in Go), slot = counter & (capacity-1)
 *   owner:   put at tail (plain slot store, then setRelease(tail)), pop at head (CAS head)
 *   thieves: getAcquire(head), getAcquire(tail), read slots, CAS(head, h, h+n)
 *   runnext: owner CASes nil->G; anyone may CAS G->nil (that is a take or a steal)
 * </pre>
 *
 * <p>Two handles, as tokio's {@code Local} and {@code Steal}: this object is the owner's (the M
 * holding the P, or whoever holds the world stopped): {@link #runqput}, {@link #runqget},
 * {@link #runqputbatch}, {@link #runqdrain} and {@link #runqsteal} (into this queue) are owner-only.
 * Other threads get {@link #steal}: a thief's grab of the older half ({@link Steal#runqgrab}, reached
 * only through it: {@code runqsteal} takes the victim's {@code Steal}) and the read-only queries
 * that any thread may make ({@link #runqempty}, {@link #size}, {@link #snapshot}, {@link #runnext},
 * which are on both).
 *
 * <p>Go: proc.go runqput, runqputslow, runqget, runqgrab, runqsteal, runqempty, runqputbatch, runqdrain
 */
public sealed class RunQueue extends RunQueuePad2 permits RunQueue.Padded {
    private static final VarHandle HEAD;
    private static final VarHandle TAIL;
    private static final VarHandle RUNNEXT;

    static {
        try {
            MethodHandles.Lookup l = MethodHandles.lookup();
            HEAD = l.findVarHandle(RunQueueHead.class, "head", int.class);
            TAIL = l.findVarHandle(RunQueueTail.class, "tail", int.class);
            RUNNEXT = l.findVarHandle(RunQueue.class, "runnext", G.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /**
     * Slots: written plain by the owner before the tail is published with release; read plain by
     * whoever then acquired the tail. A thief's read of a slot the owner has since overwritten is
     * harmless: the CAS of head that would claim it fails.
     */
    final G[] runq;

    final int mask;
    /** The P owning this queue (for the runnext back-off and fatal messages); null in unit tests. */
    final P pp;
    /** Global queue for spills; null in unit tests that never overflow. */
    final GlobalRunQueue global;

    /** Owner CAS nil->G, anyone CAS G->nil. Go: p.runnext. */
    @SuppressWarnings("unused")
    private volatile G runnext;

    /** Immutable: the stealers' handle on this queue. */
    final Steal steal = new Steal();

    /** Counters for observability: owner only writes (plain), others read racily. */
    long kicks, spills;
    /** Immutable: the runtime's tracer ({@link Tracer#NOOP} for a queue outside a runtime). */
    final Tracer trace;

    RunQueue(int capacity) {
        this(capacity, null, null);
    }

    /**
     * A P's queue ({@link P}'s constructor): 64 bytes after the fields (runnext is CASed at every
     * hand-off), so that no object after it in the heap shares their line ({@link CacheLinePad}).
     * Tests make plain queues.
     */
    static final class Padded extends RunQueue {
        long q00, q01, q02, q03, q04, q05, q06, q07;

        Padded(int capacity, P pp, GlobalRunQueue global) {
            super(capacity, pp, global);
        }
    }

    RunQueue(int capacity, P pp, GlobalRunQueue global) {
        if (capacity < 2 || Integer.bitCount(capacity) != 1) {
            throw new IllegalArgumentException("run queue capacity must be a power of two >= 2: " + capacity);
        }
        this.runq = new G[capacity];
        this.mask = capacity - 1;
        this.pp = pp;
        this.global = global;
        this.trace = pp == null ? Tracer.NOOP : pp.sched.trace;
    }

    int capacity() {
        return runq.length;
    }

    private int headAcquire() {
        return (int) HEAD.getAcquire(this);
    }

    private int tailAcquire() {
        return (int) TAIL.getAcquire(this);
    }

    private int tailPlain() {
        return (int) TAIL.get(this);
    }

    private void setTailRelease(int t) {
        TAIL.setRelease(this, t);
    }

    private boolean casHead(int h, int nh) {
        return HEAD.compareAndSet(this, h, nh);
    }

    public G runnext() {
        return (G) RUNNEXT.getVolatile(this);
    }

    boolean casRunnext(G old, G nw) {
        return RUNNEXT.compareAndSet(this, old, nw);
    }

    /**
     * Owner only. With {@code next}, gp goes into runnext and the G it displaces is kicked to the
     * tail; otherwise gp goes to the tail. A full ring spills half of itself plus gp to the global
     * queue.
     *
     * <p>Go: proc.go runqput
     */
    void runqput(G gp, boolean next) {
        if (next) {
            G old;
            do {
                old = runnext();
            } while (!casRunnext(old, gp));
            if (old == null) {
                return;
            }
            kicks++;
            if (trace.on) trace.runqKick(pp, old);
            gp = old; // kick the old runnext to the regular run queue
        }
        for (; ; ) {
            int h = headAcquire(); // load-acquire, synchronize with consumers
            int t = tailPlain();
            if (t - h < runq.length) {
                runq[t & mask] = gp;
                setTailRelease(t + 1); // store-release, makes the item available for consumption
                return;
            }
            if (runqputslow(gp, h, t)) {
                return;
            }
            // the queue is not full now, the put above must succeed
        }
    }

    /**
     * Owner only: moves the oldest half of a full ring plus gp to the global queue in one batch.
     *
     * <p>Go: proc.go runqputslow
     */
    boolean runqputslow(G gp, int h, int t) {
        int n = (t - h) / 2;
        if (n != runq.length / 2) {
            throw Fatal.fatal(sched(), "runqputslow: queue is not full");
        }
        G[] batch = new G[n + 1];
        for (int i = 0; i < n; i++) {
            batch[i] = runq[(h + i) & mask];
        }
        if (!casHead(h, h + n)) { // cas-release, commits consume
            return false;
        }
        batch[n] = gp;
        // Link the goroutines, oldest first.
        for (int i = 0; i < n; i++) {
            batch[i].schedlink = batch[i + 1];
        }
        batch[n].schedlink = null;
        if (global == null) {
            throw Fatal.fatal("runqputslow: no global queue");
        }
        if (trace.on) trace.runqSpill(pp, batch[0]);
        global.putBatch(batch[0], batch[n], n + 1);
        spills++;
        return true;
    }

    /**
     * Owner only: appends as much of the linked list {@code q} as fits, publishing the tail once.
     * Returns the part that did not fit (its head), or null.
     *
     * <p>Go: proc.go runqputbatch
     */
    G runqputbatch(G qhead, int qsize) {
        int h = headAcquire();
        int t = tailPlain();
        int n = 0;
        while (qhead != null && t - h < runq.length) {
            G gp = qhead;
            qhead = gp.schedlink;
            gp.schedlink = null;
            runq[t & mask] = gp;
            t++;
            n++;
        }
        setTailRelease(t);
        return qhead;
    }

    /**
     * Owner only. Takes runnext first (then {@code out.inheritTime} is true) and never retries a lost
     * runnext CAS (a thief took it); then the head of the ring.
     *
     * <p>Go: proc.go runqget
     */
    G runqget(Found out) {
        G next = runnext();
        // If the runnext is non-0 and the CAS fails, it could only have been stolen by another P,
        // because other Ps can race to set runnext to 0, but only the current P can set it to non-0.
        if (next != null && casRunnext(next, null)) {
            out.inheritTime = true;
            return next;
        }
        out.inheritTime = false;
        for (; ; ) {
            int h = headAcquire(); // load-acquire, synchronize with other consumers
            int t = tailPlain();
            if (t == h) {
                return null;
            }
            G gp = runq[h & mask];
            if (casHead(h, h + 1)) { // cas-release, commits consume
                return gp;
            }
        }
    }

    /**
     * {@link #runqget(Found)} for an owner that does not need to know where the G came from (tests,
     * tools): allocates a holder, so never from the M loop, which passes its own.
     */
    G runqget() {
        return runqget(new Found());
    }

    /**
     * Owner only: drains runnext and the ring, runnext first. Go: proc.go runqdrain.
     * Returns the number of Gs appended to {@code out}.
     */
    int runqdrain(java.util.List<G> out) {
        int n = 0;
        G next = runnext();
        if (next != null && casRunnext(next, null)) {
            out.add(next);
            n++;
        }
        for (; ; ) {
            int h = headAcquire();
            int t = tailPlain();
            int qn = t - h;
            if (qn == 0) {
                return n;
            }
            if (qn > runq.length) { // read inconsistent h and t
                continue;
            }
            if (!casHead(h, h + qn)) {
                continue;
            }
            // We've inverted the order: the CAS of head comes before reading the slots; safe because
            // only the owner (us) can write the slots we just claimed.
            for (int i = 0; i < qn; i++) {
                out.add(runq[(h + i) & mask]);
            }
            return n + qn;
        }
    }

    /**
     * Thief side: grabs the older half of this queue into {@code batch} starting at
     * {@code batchHead} (ring positions of the thief). Returns how many were grabbed. Reached through
     * {@link Steal#runqgrab} only.
     *
     * <p>Go: proc.go runqgrab
     */
    private int runqgrab(G[] batch, int batchHead, boolean stealRunNextG) {
        int bmask = batch.length - 1;
        for (; ; ) {
            int h = headAcquire(); // load-acquire, synchronize with other consumers
            int t = tailAcquire(); // load-acquire, synchronize with the producer
            int n = t - h;
            n = n - n / 2;
            if (n == 0) {
                if (stealRunNextG) {
                    // Try to steal from pp.runnext.
                    G next = runnext();
                    if (next != null) {
                        if (pp != null && pp.status() == P._Prunning && mayRunNextSoon(pp)) {
                            // Sleep to ensure that pp isn't about to run the G we are about to
                            // steal. The important use case here is when the G running on pp
                            // ready()s another G and then almost immediately blocks. Go sleeps
                            // (usleep(3), which lasts at least Linux's timer slack, ~50 us): so does
                            // gort (a busy-wait kept the thief's core and let it steal the pair's
                            // runnext; see usleep). Not when pp's G is in a syscall (Go 1.26+, where
                            // such a P stays _Prunning: it will not run runnext soon; CL 720441).
                            if (SchedCounts.ON) SchedCounts.runnextBackoffs.increment();
                            usleep(3);
                        }
                        if (!casRunnext(next, null)) {
                            continue;
                        }
                        if (SchedCounts.ON) SchedCounts.runnextSteals.increment();
                        batch[batchHead & bmask] = next;
                        return 1;
                    }
                }
                return 0;
            }
            if (n > runq.length / 2) { // read inconsistent h and t
                continue;
            }
            for (int i = 0; i < n; i++) {
                G g = runq[(h + i) & mask];
                batch[(batchHead + i) & bmask] = g;
            }
            if (casHead(h, h + n)) { // cas-release, commits consume
                return n;
            }
        }
    }

    /**
     * The running pp may schedule its runnext soon: it has an M whose G is not in a syscall (none:
     * it is likely in the scheduler). Racy reads, as Go's. Go: runqgrab's back-off test (Go 1.26+).
     */
    private static boolean mayRunNextSoon(P pp) {
        M mp = pp.mOpaque();
        if (mp == null) {
            return false;
        }
        G gp = mp.curg;
        return gp == null || (gp.readgstatusRaw() & ~G._Gscan) != G._Gsyscall;
    }

    /**
     * Sleeps (gives up the CPU) for at least {@code us} microseconds, as Go's usleep: a timed park,
     * which on Linux lasts at least the thread's timer slack (50 us by default), as Go's nanosleep
     * does. It must be a real sleep, not a busy-wait: on a loaded machine the owner's carrier may
     * share the thief's core, and only a sleep lets it run its runnext meanwhile. A busy-wait of 3
     * us here (gort before issue 19) let the idle P's spinning M steal the runnext of a
     * communicating pair on about every wake-up at GOMAXPROCS=2 (3,500 steals and carrier unparks
     * per 20,000 ping-pong round trips; SwitchCountTest), splitting the pair across carriers.
     * Interrupts and stray unpark permits do not shorten it (see {@link Note}).
     *
     * <p>Go: os_linux.go usleep
     */
    private static void usleep(long us) {
        long deadline = System.nanoTime() + us * 1_000;
        do {
            java.util.concurrent.locks.LockSupport.parkNanos(us * 1_000);
            Thread.interrupted(); // EINTR: retry (a carrier's interrupt status is not the runtime's)
        } while (System.nanoTime() - deadline < 0);
    }

    /**
     * Steals half of {@code victim}'s Gs into this (the thief's) ring and returns one of them to run,
     * or null; {@code out.stolen} is how many Gs the steal moved, the one returned included (0 when
     * it returns null). Owner of {@code this} only; the victim is reached through its stealers'
     * handle.
     *
     * <p>Go: proc.go runqsteal (Go returns only the G; gort's caller counts the stolen Gs)
     */
    G runqsteal(Steal victim, boolean stealRunNextG, Found out) {
        int t = tailPlain();
        int n = victim.runqgrab(runq, t, stealRunNextG);
        out.stolen = n;
        if (n == 0) {
            return null;
        }
        if (trace.on) trace.steal(pp, victim.pp(), runq, t, n, mask);
        n--;
        G gp = runq[(t + n) & mask];
        if (n == 0) {
            return gp;
        }
        int h = headAcquire(); // load-acquire, synchronize with consumers
        if (t - h + n >= runq.length) {
            throw Fatal.fatal(sched(), "runqsteal: runq overflow");
        }
        setTailRelease(t + n); // store-release, makes the item available for consumption
        return gp;
    }

    /**
     * {@link #runqsteal(Steal, boolean, Found)} for a thief that does not count the Gs it moved
     * (tests, the jcstress tests): allocates a holder, so never from the M loop, which passes its own.
     */
    G runqsteal(Steal victim, boolean stealRunNextG) {
        return runqsteal(victim, stealRunNextG, new Found());
    }

    /**
     * Whether the queue (ring and runnext) is empty. Never reports empty while the owner is kicking
     * runnext into the ring: the tail is re-read until it is the same before and after runnext.
     *
     * <p>Go: proc.go runqempty
     */
    public boolean runqempty() {
        for (; ; ) {
            int head = headAcquire();
            int tail = tailAcquire();
            G next = runnext();
            if (tail == tailAcquire()) {
                return head == tail && next == null;
            }
        }
    }

    /** Length of the ring, excluding runnext (what schedtrace prints). Any thread, racy. */
    public int size() {
        for (; ; ) {
            int h = headAcquire();
            int t = tailAcquire();
            int n = t - h;
            if (n >= 0 && n <= runq.length) {
                return n;
            }
        }
    }

    /** A racy snapshot of runnext then the ring head-to-tail, for observers (cards, dumps). */
    public G[] snapshot() {
        int h = headAcquire();
        int t = tailAcquire();
        int n = Math.max(0, Math.min(t - h, runq.length));
        G[] out = new G[n];
        for (int i = 0; i < n; i++) {
            out[i] = runq[(h + i) & mask];
        }
        return out;
    }

    private Scheduler sched() {
        return pp == null ? null : pp.sched;
    }

    /**
     * The stealers' handle on a run queue (tokio's {@code Steal}): what a thread other than the owner
     * may do with it. One per queue, immutable.
     */
    final class Steal {
        private Steal() {}

        /** A thief grabs the older half (see {@link RunQueue#runqgrab}). Go: proc.go runqgrab. */
        int runqgrab(G[] batch, int batchHead, boolean stealRunNextG) {
            return RunQueue.this.runqgrab(batch, batchHead, stealRunNextG);
        }

        /** Go: proc.go runqempty (any thread). */
        boolean runqempty() {
            return RunQueue.this.runqempty();
        }

        /** Length of the ring, racy (any thread). */
        int size() {
            return RunQueue.this.size();
        }

        /** Racy snapshot of the ring (any thread). */
        G[] snapshot() {
            return RunQueue.this.snapshot();
        }

        /** The runnext slot (volatile read, any thread). */
        G runnext() {
            return RunQueue.this.runnext();
        }

        /** The P owning the queue (null outside a runtime). */
        P pp() {
            return pp;
        }
    }
}
