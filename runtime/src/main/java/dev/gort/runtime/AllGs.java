package dev.gort.runtime;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

/**
 * Every live goroutine, for dumps, scheddetail, checkdead and NumGoroutine. Go keeps an append-only
 * {@code allgs} slice under {@code allglock}; gort unlinks dead Gs (a dead continuation cannot be
 * reused) and stripes the lock by goid so that spawning on two Ps does not contend.
 *
 * <p>Each stripe is an intrusive doubly-linked list through {@code g.allprev/allnext}, guarded by
 * the stripe object's monitor. {@link #count} is an Agrona-free LongAdder-like pair of padded
 * counters kept per stripe.
 *
 * <p>Go: proc.go allgadd, forEachG
 */
final class AllGs {
    private static final int STRIPES = 64; // power of two

    private static final class Stripe {
        long p0, p1, p2, p3, p4, p5, p6; // keep stripes on separate cache lines
        G head; // under this stripe's monitor
        int n; // under this stripe's monitor
    }

    private final Stripe[] stripes = new Stripe[STRIPES];

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
        Stripe s = stripes[(int) gp.goid & (STRIPES - 1)];
        synchronized (s) {
            gp.allnext = s.head;
            if (s.head != null) {
                s.head.allprev = gp;
            }
            s.head = gp;
            s.n++;
        }
    }

    void remove(G gp) {
        Stripe s = stripes[(int) gp.goid & (STRIPES - 1)];
        synchronized (s) {
            if (gp.allDetached()) {
                // the leak profile unlinked it and then it ran and ended: nothing to unlink
                gp.rare().allDetached = false;
                detached.decrementAndGet();
                return;
            }
            unlinkLocked(s, gp);
        }
    }

    /** Unlinks gp from its stripe's list; s's monitor held. */
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
        Stripe s = stripes[(int) gp.goid & (STRIPES - 1)];
        synchronized (s) {
            if (gp.allDetached()) {
                return;
            }
            unlinkLocked(s, gp);
            gp.rare().allDetached = true;
            detached.incrementAndGet();
        }
    }

    /** Links a G that survived the leak profile's collection back in, unless it ended meanwhile. */
    void reattach(G gp) {
        Stripe s = stripes[(int) gp.goid & (STRIPES - 1)];
        synchronized (s) {
            if (!gp.allDetached()) {
                return; // ended while detached (remove() settled the count)
            }
            gp.rare().allDetached = false;
            detached.decrementAndGet();
            gp.allnext = s.head;
            if (s.head != null) {
                s.head.allprev = gp;
            }
            s.head = gp;
            s.n++;
        }
    }

    /** {@code n} detached Gs were collected (leaked): they are no longer counted. */
    void forget(int n) {
        detached.addAndGet(-n);
    }

    int count() {
        int n = detached.get();
        for (Stripe s : stripes) {
            synchronized (s) {
                n += s.n;
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
            synchronized (s) {
                for (G g = s.head; g != null; g = g.allnext) {
                    out.add(g);
                }
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
