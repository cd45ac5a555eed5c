package dev.gort.sync;

import dev.gort.internal.GoParker;
import dev.gort.internal.Parker;

/**
 * Go's {@code sync.Once}: runs a function exactly once; every caller returns only after it has
 * finished (if it panics, Once still counts it as done).
 *
 * <p>Go: sync/once.go
 */
public class Once {
    /** 0 until f has returned: written under m (volatile), read volatile on the fast path. */
    private volatile int done;

    private final Mutex m;

    public Once() {
        this(GoParker.INSTANCE);
    }

    Once(Parker parker) {
        m = new Mutex(parker);
    }

    /**
     * Calls f if and only if do is being called for the first time for this Once. A recursive call
     * from f deadlocks, as in Go.
     *
     * <p>Go: (*Once).Do
     */
    public void run(Runnable f) {
        // Note: a CAS of done here would be wrong: "done" must mean "f has returned", so that a
        // second caller that loses the race waits for f instead of returning before f is done.
        if (done == 0) {
            // Outlined slow path to allow inlining of the fast path.
            doSlow(f);
        }
    }

    private void doSlow(Runnable f) {
        m.lock();
        try {
            if (done == 0) {
                try {
                    f.run();
                } finally {
                    done = 1;
                }
            }
        } finally {
            m.unlock();
        }
    }

    public boolean isDone() {
        return done != 0;
    }
}
