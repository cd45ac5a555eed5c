package dev.gort.sync;

import dev.gort.runtime.Scheduler;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.lang.ref.Cleaner;
import java.lang.ref.WeakReference;
import java.util.Iterator;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.function.Supplier;

/**
 * Go's {@code sync.Pool}: a set of temporary objects that may be saved and retrieved individually,
 * to reuse allocated but unused objects (Go's fmt keeps its print buffers in one). Any object in a
 * pool may be dropped at any time without notice; {@link #get} may ignore the pool and treat it as
 * empty; callers must assume no relation between what they put and what they get.
 *
 * <h2>Per-P, as Go's</h2>
 * Each P of the runtime has a {@link PoolLocal}: a private slot that only the goroutine running on
 * that P uses (plain accesses), and a shared {@link PoolChain} (a port of Go's lock-free poolChain)
 * into which only that P pushes and pops at the head, while any P steals at the tail. Put fills the
 * private slot, else pushes; Get takes the private slot, else pops its own head, else steals one
 * from each other P in turn, else tries the victim cache, else calls New. While it touches its
 * PoolLocal the goroutine is pinned to its P with {@link Scheduler#procPin} (the M's lock count, as
 * Go's runtime_procPin): no preemption, no retake, so no other goroutine can use that P's slot. The
 * per-P array belongs to one runtime: a pool used from another runtime's goroutines (or after
 * GOMAXPROCS grew) gets a new array, and what the old one held is dropped, as Go drops it when
 * GOMAXPROCS changes.
 *
 * <h2>Outside a goroutine</h2>
 * A thread that is not running a goroutine (or a goroutine inside a syscall) has no P: its Put drops
 * x, and its Get only steals (from the shared chains) or calls New. Go has no such callers.
 *
 * <h2>Cleanup at GC (the victim cache)</h2>
 * Go's GC, at the start of each cycle and with the world stopped, moves every pool's per-P caches to
 * its victim cache and drops the previous victims: an object survives at least one GC and goes at
 * the second if nobody took it. Here a {@link Cleaner} watches a sentinel object that nothing
 * references; when a GC has collected it, the cleaner's thread does the same move for every pool
 * and sets a new sentinel. With G1 (the default collector, and the tests') a sentinel is young and
 * so is collected by the next young collection: pools are cleaned at about every GC, as in Go
 * (other collectors may clean less often: an unreachable sentinel goes when its generation is
 * collected; Go's contract allows both), only later (when the cleaner's thread runs) and without
 * stopping the world: a goroutine that read the old caches just before the move finishes its
 * operation on them (an object it puts lands in the victim cache). The
 * registry of pools holds them weakly; a pool is registered at its first per-P use and stays so
 * while it is alive (Go's allPools keeps only pools with something cached).
 *
 * <p>A Put of {@code x} happens-before the Get that returns that x (Go: "synchronizes before"), as
 * does New's return of x.
 *
 * <p>Go: sync/pool.go
 */
public final class Pool<T> {
    /** Go: Pool.New. Immutable (Go: "may not be changed concurrently with calls to Get"). */
    private final Supplier<? extends T> newFn;

    /** One per-P array and its runtime. Immutable once published. */
    record Locals(Scheduler owner, PoolLocal[] slots) {}

    /** The primary caches and the victims: an immutable pair, replaced as a whole. */
    record Caches(Locals local, Locals victim) {
        static final Caches EMPTY = new Caches(null, null);
    }

    private static final VarHandle CACHES;
    private static final VarHandle REGISTERED;

    static {
        try {
            MethodHandles.Lookup l = MethodHandles.lookup();
            CACHES = l.findVarHandle(Pool.class, "caches", Caches.class);
            REGISTERED = l.findVarHandle(Pool.class, "registered", boolean.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /**
     * Go's local/localSize and victim/victimSize. Replaced (CAS) by pinSlow (a new local), by
     * getSlow (the victim found empty) and by cleanup (local becomes victim); read volatile once
     * per operation, which then works on the arrays it read. Go: written under allPoolsMu and
     * pinning, or with the world stopped.
     */
    private volatile Caches caches = Caches.EMPTY;
    /** Whether this pool is in {@link #ALL_POOLS}: false to true once (CAS); false for test pools. */
    private volatile boolean registered;

    /** A pool whose Get returns null when empty. Go: {@code var p sync.Pool}. */
    public Pool() {
        this(null, true);
    }

    /**
     * A pool whose Get calls {@code newFn} instead of returning null when it has nothing. Go:
     * {@code sync.Pool{New: newFn}}.
     */
    public Pool(Supplier<? extends T> newFn) {
        this(newFn, true);
    }

    /** With {@code gcCleanup} false the pool is never cleaned by the GC, only by {@link #cleanup}. */
    Pool(Supplier<? extends T> newFn, boolean gcCleanup) {
        this.newFn = newFn;
        this.registered = !gcCleanup;
    }

    /**
     * Adds x to the pool; a null x is ignored.
     *
     * <p>Go: (*Pool).Put
     */
    public void put(T x) {
        if (x == null) {
            return;
        }
        int pid = Scheduler.procPin();
        try {
            if (pid < 0) {
                return; // no P: dropped (see the class comment)
            }
            PoolLocal l = pin(pid);
            if (l.priv == null) {
                l.priv = x;
            } else {
                l.shared.pushHead(x);
            }
        } finally {
            Scheduler.procUnpin();
        }
    }

    /**
     * Removes an arbitrary object from the pool and returns it; if there is none, New's result
     * (null without New). Get may ignore the pool and treat it as empty.
     *
     * <p>Go: (*Pool).Get
     */
    @SuppressWarnings("unchecked")
    public T get() {
        Object x;
        int pid = Scheduler.procPin();
        try {
            if (pid < 0) {
                x = getSlow(-1, null);
            } else {
                PoolLocal l = pin(pid);
                x = l.priv;
                l.priv = null;
                if (x == null) {
                    // Try the head of our own shard first: the most recently put, for temporal
                    // locality of reuse.
                    x = l.shared.popHead();
                    if (x == null) {
                        x = getSlow(pid, Scheduler.current());
                    }
                }
            }
        } finally {
            Scheduler.procUnpin();
        }
        if (x == null && newFn != null) {
            x = newFn.get();
        }
        return (T) x;
    }

    /**
     * Steals one object from the other Ps' shared chains, then tries the victim cache; null if all
     * are empty. pid is -1 (and cur null) for a caller without a P: it only steals.
     *
     * <p>Go: (*Pool).getSlow
     */
    private Object getSlow(int pid, Scheduler cur) {
        Caches c = caches;
        Locals local = c.local;
        if (local != null) {
            // Try to steal one element from other Ps (our own last).
            int size = local.slots.length;
            for (int i = 0; i < size; i++) {
                Object x = local.slots[Math.floorMod(pid + i + 1, size)].shared.popTail();
                if (x != null) {
                    return x;
                }
            }
        }
        // Try the victim cache, after the primary caches, so that its objects age out if they can.
        Locals victim = c.victim;
        if (victim == null) {
            return null;
        }
        int size = victim.slots.length;
        if (pid >= 0 && pid < size && victim.owner == cur) {
            PoolLocal l = victim.slots[pid];
            Object x = l.priv;
            if (x != null) {
                l.priv = null;
                return x;
            }
        }
        for (int i = 0; i < size; i++) {
            Object x = victim.slots[Math.floorMod(pid + i, size)].shared.popTail();
            if (x != null) {
                return x;
            }
        }
        // Mark the victim cache empty so that later Gets do not bother with it. (Only a private
        // slot of another P may still hold an object: dropped, as Go's victimSize = 0 drops it.)
        for (Caches now = c; now.victim == victim; now = caches) {
            if (CACHES.compareAndSet(this, now, new Caches(now.local, null))) {
                break;
            }
        }
        return null;
    }

    /**
     * The PoolLocal of P {@code pid} in this pool's caches for the current runtime, making them if
     * needed. The caller is pinned (pid >= 0).
     *
     * <p>Go: (*Pool).pin, pinSlow
     */
    private PoolLocal pin(int pid) {
        Locals l = caches.local;
        Scheduler cur = Scheduler.current();
        if (l != null && l.owner == cur && pid < l.slots.length) {
            return l.slots[pid];
        }
        return pinSlow(pid, cur);
    }

    private PoolLocal pinSlow(int pid, Scheduler cur) {
        register();
        for (; ; ) {
            Caches c = caches;
            Locals l = c.local;
            if (l != null && l.owner == cur && pid < l.slots.length) {
                return l.slots[pid];
            }
            // If GOMAXPROCS changed (or another runtime's goroutines use the pool), a new array;
            // the old one is lost.
            PoolLocal[] slots = new PoolLocal[Math.max(cur.gomaxprocs(), pid + 1)];
            for (int i = 0; i < slots.length; i++) {
                slots[i] = new PoolLocal();
            }
            Locals nl = new Locals(cur, slots);
            if (CACHES.compareAndSet(this, c, new Caches(nl, c.victim))) {
                return slots[pid];
            }
        }
    }

    /**
     * Moves this pool's primary caches to the victim cache and drops the previous victim, as a GC
     * does (see the class comment). Go: poolCleanup's work for one pool.
     */
    void cleanup() {
        for (; ; ) {
            Caches c = caches;
            if (c.local == null && c.victim == null) {
                return;
            }
            if (CACHES.compareAndSet(this, c, new Caches(null, c.local))) {
                return;
            }
        }
    }

    private void register() {
        if (!registered && REGISTERED.compareAndSet(this, false, true)) {
            ALL_POOLS.add(new WeakReference<>(this));
        }
    }

    @Override
    public String toString() {
        return "sync.Pool@" + Integer.toHexString(System.identityHashCode(this));
    }

    /**
     * One P's part of a pool: the private slot (Go: "can be used only by the respective P") and the
     * shared chain. Padded so that two Ps' slots do not share a cache line. Go: poolLocal.
     */
    static final class PoolLocal extends PoolLocalFields {
        @SuppressWarnings("unused")
        private long p01, p02, p03, p04, p05, p06, p07, p08, p09, p10, p11, p12, p13, p14;
    }

    /** Go: poolLocalInternal. */
    static class PoolLocalFields {
        /** The owner P's goroutine only (pinned), plain. Go: private. */
        Object priv;
        /** The owner P pushes and pops its head; any P pops its tail. Go: shared. */
        final PoolChain shared = new PoolChain();
    }

    // ---------------------------------------------------------------------------------------------
    // The GC hook. One per JVM, as the GC is: Go's allPools and runtime_registerPoolCleanup.

    /**
     * Every registered pool, held weakly (a pool nobody references goes with its contents). Added
     * to by any goroutine (register), pruned by the cleaner thread; a concurrent queue.
     */
    private static final ConcurrentLinkedQueue<WeakReference<Pool<?>>> ALL_POOLS = new ConcurrentLinkedQueue<>();

    /** The daemon thread that runs {@link #poolCleanup} after each GC that collected a sentinel. */
    private static final Cleaner GC = Cleaner.create(r -> {
        Thread t = new Thread(r, "gort sync.Pool cleanup");
        t.setDaemon(true);
        return t;
    });

    static {
        armGcHook();
    }

    /** Registers a new unreferenced sentinel: the next GC that collects it runs poolCleanup. */
    private static void armGcHook() {
        GC.register(new Object(), () -> {
            try {
                poolCleanup();
            } finally {
                armGcHook();
            }
        });
    }

    /**
     * Moves every pool's primary caches to its victim cache and drops the previous victims; drops
     * the pools that have been collected. Runs on the cleaner thread after a GC.
     *
     * <p>Go: sync/pool.go poolCleanup
     */
    static void poolCleanup() {
        for (Iterator<WeakReference<Pool<?>>> it = ALL_POOLS.iterator(); it.hasNext(); ) {
            Pool<?> p = it.next().get();
            if (p == null) {
                it.remove();
            } else {
                p.cleanup();
            }
        }
    }
}
