package dev.gort.runtime;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

/**
 * Every live goroutine, for dumps, scheddetail, checkdead and NumGoroutine. Go keeps an append-only
 * {@code allgs} slice under {@code allglock}; gort unlinks dead Gs (a dead continuation cannot be
 * reused) and stripes the lock by goid block so that spawning on two Ps does not contend.
 *
 * <p>Each stripe is an intrusive doubly-linked list through {@code g.allprev/allnext}, guarded by
 * the stripe's one-word lock ({@link Stripe}). {@link #count} is an Agrona-free LongAdder-like pair of padded
 * counters kept per stripe.
 *
 * <p>Go: proc.go allgadd, forEachG
 */
final class AllGs {
    private static final int STRIPES = 64; // power of two

    /**
     * Padding before a stripe's fields. The int fills the 4 bytes after the object header, where the
     * JVM would otherwise put the lock word (a subclass's int fills a superclass's hole), next to
     * whatever object lies before this one.
     */
    private abstract static class StripePad0 {
        int h0;
        long p00, p01, p02, p03, p04, p05, p06, p07;
    }

    /** A stripe's fields, with 64 bytes of padding on each side (RunQueue's layout). */
    private abstract static class StripeFields extends StripePad0 {
        /**
         * 0 free, 1 held: CAS by {@link #lock}, release store by {@link #unlock}, a volatile store
         * of 0 by a dying section's handler; the holder, any thread.
         */
        volatile int word;

        G head; // under this stripe's lock
        int n; // under this stripe's lock
    }

    private abstract static class StripePad1 extends StripeFields {
        long p10, p11, p12, p13, p14, p15, p16, p17;
    }

    /**
     * A stripe: its list and count, and the one-word lock that guards them (a monitor's exit costs a
     * second CAS; this lock's is a release store, and every goroutine's creation and exit take one
     * stripe). A stripe is held for a few field writes, so a waiter spins, then yields its CPU.
     * Every section releases the lock as its last call, and a handler of the section's exception
     * (a {@code StackOverflowError} at a call inside it, in a deep goroutine's {@code go}) stores
     * the word directly, a field store and no call, before it rethrows: a section that dies never
     * leaves its stripe held.
     */
    private static final class Stripe extends StripePad1 {
        void lock() {
            if (!WORD.compareAndSet(this, 0, 1)) {
                lockSlow();
            }
        }

        private void lockSlow() {
            for (int spins = 0; ; spins++) {
                if ((int) WORD.getOpaque(this) == 0 && WORD.compareAndSet(this, 0, 1)) {
                    return;
                }
                if (spins < 100) {
                    Thread.onSpinWait();
                } else {
                    Thread.yield(); // the holder may be a thread the OS descheduled
                }
            }
        }

        void unlock() {
            WORD.setRelease(this, 0);
        }

        private static final java.lang.invoke.VarHandle WORD;

        static {
            try {
                WORD = java.lang.invoke.MethodHandles.lookup().findVarHandle(StripeFields.class, "word", int.class);
            } catch (ReflectiveOperationException e) {
                throw new ExceptionInInitializerError(e);
            }
        }
    }

    private final Stripe[] stripes = new Stripe[STRIPES];

    /** log2 of {@link Sched#GOID_CACHE_BATCH}: a stripe holds whole aligned blocks of goids. */
    private static final int BATCH_SHIFT = Integer.numberOfTrailingZeros(Sched.GOID_CACHE_BATCH);

    /**
     * gp's stripe: that of its goid's aligned block of 16. A P's goid cache is always (part of) one
     * such block ({@link P#nextGoid}), so the Gs a P creates from one batch share one stripe, whose
     * line stays in that P's carrier's cache for the batch, and two Ps creating at once never share
     * a stripe unless their blocks are 64 apart. (With {@code goid & 63}, whenever the two Ps' refills
     * did not alternate strictly, each new G's stripe was one the other P had used a few batches
     * before: at GOMAXPROCS=2 AllGs took 4.4 times the CPU per created goroutine that it took at 1,
     * most of it in the stripe lock's CAS.) A goroutine created without a P takes one id of the
     * block being handed out and shares its stripe with the P that takes the rest.
     */
    private Stripe stripeOf(G gp) {
        return stripes[(int) (gp.goid >>> BATCH_SHIFT) & (STRIPES - 1)];
    }

    /**
     * Gs the goroutine leak profile has unlinked ({@link #detach}) and holds only weakly: still
     * counted by {@link #count} until re-linked, removed by their goexit, or found leaked (collected)
     * and {@link #forget}ten. Any thread, atomic.
     */
    private final AtomicInteger detached = new AtomicInteger();

    AllGs() {
        for (int i = 0; i < STRIPES; i++) {
            stripes[i] = new Stripe();
        }
    }

    void add(G gp) {
        Stripe s = stripeOf(gp);
        s.lock();
        try {
            linkLocked(s, gp);
            s.unlock();
        } catch (Throwable t) {
            s.word = 0; // see Stripe: no call between the throw and the release
            throw t;
        }
    }

    void remove(G gp) {
        Stripe s = stripeOf(gp);
        s.lock();
        try {
            if (gp.allDetached()) {
                // the leak profile unlinked it and then it ran and ended: nothing to unlink
                gp.rare().allDetached = false;
                detached.decrementAndGet();
            } else {
                unlinkLocked(s, gp);
            }
            s.unlock();
        } catch (Throwable t) {
            s.word = 0;
            throw t;
        }
    }

    /** Links gp at the head of its stripe's list; s's lock held. */
    private static void linkLocked(Stripe s, G gp) {
        gp.allnext = s.head;
        if (s.head != null) {
            s.head.allprev = gp;
        }
        s.head = gp;
        s.n++;
    }

    /** Unlinks gp from its stripe's list; s's lock held. */
    private static void unlinkLocked(Stripe s, G gp) {
        if (gp.allprev != null) {
            gp.allprev.allnext = gp.allnext;
        } else {
            s.head = gp.allnext;
        }
        if (gp.allnext != null) {
            gp.allnext.allprev = gp.allprev;
        }
        gp.allprev = gp.allnext = null;
        s.n--;
    }

    /**
     * Unlinks gp so that only a weak reference (and whatever can wake it) keeps it alive while the
     * leak profile collects; it stays counted. The caller holds gp's scan bit.
     */
    void detach(G gp) {
        Stripe s = stripeOf(gp);
        s.lock();
        try {
            if (!gp.allDetached()) {
                unlinkLocked(s, gp);
                gp.rare().allDetached = true;
                detached.incrementAndGet();
            }
            s.unlock();
        } catch (Throwable t) {
            s.word = 0;
            throw t;
        }
    }

    /** Links a G that survived the leak profile's collection back in, unless it ended meanwhile. */
    void reattach(G gp) {
        Stripe s = stripeOf(gp);
        s.lock();
        try {
            if (gp.allDetached()) { // else it ended while detached (remove() settled the count)
                gp.rare().allDetached = false;
                detached.decrementAndGet();
                linkLocked(s, gp);
            }
            s.unlock();
        } catch (Throwable t) {
            s.word = 0;
            throw t;
        }
    }

    /** {@code n} detached Gs were collected (leaked): they are no longer counted. */
    void forget(int n) {
        detached.addAndGet(-n);
    }

    int count() {
        int n = detached.get();
        for (Stripe s : stripes) {
            s.lock();
            try {
                n += s.n;
                s.unlock();
            } catch (Throwable t) {
                s.word = 0;
                throw t;
            }
        }
        return n;
    }

    /**
     * A snapshot in goid order (Go's allgs is in creation order; goid order is creation order only
     * within one P, which takes ids 16 at a time).
     */
    List<G> snapshot() {
        List<G> out = new ArrayList<>();
        for (Stripe s : stripes) {
            s.lock();
            try {
                for (G g = s.head; g != null; g = g.allnext) {
                    out.add(g);
                }
                s.unlock();
            } catch (Throwable t) {
                s.word = 0;
                throw t;
            }
        }
        out.sort((a, b) -> Long.compare(a.goid, b.goid));
        return out;
    }

    void forEach(Consumer<G> f) {
        for (G g : snapshot()) {
            f.accept(g);
        }
    }
}
