package dev.gort.runtime;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.lang.ref.WeakReference;
import java.util.ArrayList;
import java.util.List;

/**
 * Go 1.27's goroutine leak detection, done by the JVM's collector. A goroutine blocked on a
 * concurrency primitive (channel, select, nil channel, {@code select {}}, sync.Mutex, RWMutex,
 * Cond, WaitGroup: {@link WaitReason#leakable}) is leaked when no other goroutine can ever reach
 * that primitive. Go finds them with a GC cycle that does not treat blocked goroutines as roots and
 * marks the rest {@code _Gleaked}. gort gets the same answer from the JVM:
 *
 * <ol>
 *   <li><b>Capture.</b> Every candidate (waiting for a leakable reason, not locked to a thread,
 *       not parked in place on its carrier, not main, not the caller) gets its scan bit
 *       ({@link G#castogscanWaiting}, so it cannot be readied meanwhile) and its frames and the
 *       few fields its header and {@code created by} need are recorded (after the collection it
 *       may be gone); their text is made only for the goroutines found leaked.
 *   <li><b>Isolate.</b> The runtime's own strong holds on a parked G become weak for the profile:
 *       it is unlinked from {@link AllGs} (still counted) and held by a {@link WeakReference}; the
 *       stale copies the scheduler leaves behind are cleared: consumed run-queue ring slots and
 *       {@code schedlink}s of dequeued Gs (Go's are {@code guintptr}s, invisible to its GC; gort's
 *       are references). Both are cleared by CAS while the candidate's scan bit is held, so a slot
 *       or link is only cleared while it cannot legitimately hold that G (a waiting G is in no
 *       queue). Nothing changes on the park path: no allocation, no extra store.
 *   <li><b>Collect.</b> The scan bits are released (the program runs on), then
 *       one {@code System.gc()}, which clears the references of the unreachable candidates.
 *       A candidate stays strongly reachable exactly when something live can still wake it: the
 *       primitive's wait queue holds its sudog, the sudog holds the G, and the primitive is
 *       reachable from a live goroutine's stack or a global. A timer, the network poller, a syscall's
 *       M or a locked M hold theirs, so those are never reported (nor are they candidates).
 *   <li><b>Report.</b> Survivors are linked back into AllGs (unless they ended meanwhile); the
 *       collected ones are the leaked goroutines.
 * </ol>
 *
 * <p><b>Afterwards.</b> Go keeps a leaked goroutine forever in {@code _Gleaked} (its stack and
 * everything it references stay allocated), and every later profile lists it again. In gort the
 * JVM has already reclaimed it when the profile learns of it: nothing could ever reach or wake it,
 * so no program can observe the difference, except that it no longer counts in NumGoroutine or
 * appears in goroutine dumps, and that Cleaners of objects only it referenced may run. Its
 * {@code finally} blocks never run (as Go never runs a leaked goroutine's defers). The profile keeps
 * what it captured ({@link LeakedGoroutine}) and lists it in every later profile, as Go does.
 *
 * <p>With {@code -XX:+DisableExplicitGC} nothing is collected and nothing is reported.
 *
 * <p>Go: mgc.go findGoroutineLeaks, (*g).isMaybeRunnable, gcDiscoverMoreStackRoots; runtime/pprof
 * goroutineleak profile
 */
final class GoroutineLeaks {
    private static final VarHandle SLOT = MethodHandles.arrayElementVarHandle(G[].class);
    private static final VarHandle SCHEDLINK;

    static {
        try {
            SCHEDLINK = MethodHandles.lookup().findVarHandle(G.class, "schedlink", G.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final Scheduler s;

    /** Every goroutine found leaked so far, in the order found; under this object's monitor. */
    private final List<LeakedGoroutine> leaked = new ArrayList<>();

    /** {@code leaked.size()}, for the metric: written under the monitor, read volatile. */
    private volatile int nleaked;

    /** Figures of the last profile, for tests and the report: written under the monitor, read volatile. */
    private volatile Stats last = new Stats(0, 0, 0, 0, 0, 0);

    /**
     * @param candidates goroutines held weakly
     * @param found newly found leaked
     * @param rounds collections run
     * @param pauseNanos the whole profile, from the snapshot of allgs to the last re-link
     * @param captureNanos of which capturing and isolating the candidates (their scan bits held)
     * @param collectNanos of which the collections
     */
    record Stats(int candidates, int found, int rounds, long pauseNanos, long captureNanos, long collectNanos) {}

    GoroutineLeaks(Scheduler s) {
        this.s = s;
    }

    int count() {
        return nleaked;
    }

    Stats lastStats() {
        return last;
    }

    /** The candidates of one profile, held weakly, and what was captured of each. */
    private record Isolated(WeakReference<G>[] refs, Captured[] captured, long now, int level) {}

    /**
     * What the profile keeps of a candidate until it knows whether it leaked, taken under its scan
     * bit: nothing that reaches the G (not its function, which may hold what it waits on). The
     * frames are the walker's (method and bytecode index, no locals); names, lines and the dump's
     * text are made only for the goroutines found leaked: walking is most of a capture's cost,
     * {@code StackTraceElement}s and strings for every candidate were as much again.
     */
    private record Captured(
            long goid,
            int gpHash,
            WaitReason waitReason,
            long waitsince,
            long parentGoid,
            StackTraceElement createdAt,
            Class<?> fnClass,
            StackWalker.StackFrame[] frames) {
        LeakedGoroutine leaked(long now, int level) {
            StackTraceElement[] all = new StackTraceElement[frames.length];
            for (int i = 0; i < all.length; i++) {
                all[i] = frames[i].toStackTraceElement();
            }
            StackTraceElement[] st = Traceback.goFrames(all, false);
            return new LeakedGoroutine(
                    goid,
                    Traceback.leakedHeader(goid, gpHash, waitReason, waitsince, now, level),
                    st,
                    Traceback.createdBy(goid, parentGoid, createdAt, fnClass, st, level),
                    waitReason);
        }
    }

    /** What {@link G#stackTrace} walks (reflection frames shown), without making StackTraceElements. */
    private static final java.util.Set<StackWalker.Option> WALK =
            java.util.EnumSet.of(StackWalker.Option.SHOW_REFLECT_FRAMES);

    private static StackWalker.StackFrame[] frames(G gp) {
        try {
            return gp.stackWalker(WALK).walk(st -> st.toArray(StackWalker.StackFrame[]::new));
        } catch (Throwable t) {
            return new StackWalker.StackFrame[0];
        }
    }

    /**
     * Runs one detection and returns every goroutine found leaked so far (this run's last).
     *
     * <p>Go: mgc.go findGoroutineLeaks (a leak-detection GC cycle, as pprof's goroutineleak
     * profile triggers)
     */
    synchronized List<LeakedGoroutine> profile() {
        long t0 = System.nanoTime();
        Isolated iso = isolate();
        long t1 = System.nanoTime();
        int rounds = collect(iso);
        long t2 = System.nanoTime();
        int found = settle(iso);
        last = new Stats(iso.refs().length, found, rounds, System.nanoTime() - t0, t1 - t0, t2 - t1);
        return List.copyOf(leaked);
    }

    /** Steps 1 and 2; every strong reference to a candidate lives and dies in this frame. */
    @SuppressWarnings("unchecked")
    private Isolated isolate() {
        G self = Scheduler.getg();
        G main = s.mainG();
        List<G> all = s.allgs.snapshot();
        List<G> held = new ArrayList<>();
        List<Captured> captured = new ArrayList<>();
        long now = System.nanoTime();
        int level = Traceback.level();
        WeakReference<G>[] refs;
        try {
            for (G gp : all) {
                if (gp == self || gp == main || !gp.waitReason().leakable() || !gp.castogscanWaiting()) {
                    continue;
                }
                // Under the scan bit the G cannot be readied: look again at what it waits for.
                if (!gp.waitReason().leakable() || gp.lockedm() != null || gp.parkedOn() != null || gp.m != null) {
                    gp.casfromgscanstatus();
                    continue;
                }
                gp.rare().leakScan = true;
                held.add(gp);
                captured.add(new Captured(
                        gp.goid,
                        System.identityHashCode(gp),
                        gp.waitReason(),
                        gp.waitsince,
                        gp.parentGoid,
                        gp.createdAt(),
                        gp.fn.getClass(),
                        frames(gp)));
            }
            clearStale(all);
            refs = new WeakReference[held.size()];
            for (int i = 0; i < refs.length; i++) {
                G gp = held.get(i);
                s.allgs.detach(gp);
                refs[i] = new WeakReference<>(gp);
            }
        } finally {
            for (G gp : held) {
                gp.rare().leakScan = false;
                gp.casfromgscanstatus();
            }
        }
        return new Isolated(refs, captured.toArray(new Captured[0]), now, level);
    }

    /**
     * Clears the scheduler's stale strong copies of held candidates: ring slots outside a run
     * queue's live window and the schedlinks of Gs that left a queue. A candidate is waiting with
     * its scan bit held, so no queue can legitimately hold it: any slot or link still naming it is
     * stale, and a CAS clears exactly that (an owner storing a new G there wins the race).
     */
    private void clearStale(List<G> all) {
        for (P pp : s.allp) {
            G[] ring = pp.runq.runq;
            for (int i = 0; i < ring.length; i++) {
                G x = (G) SLOT.getAcquire(ring, i);
                if (x != null && x.leakScan()) {
                    SLOT.compareAndSet(ring, i, x, null);
                }
            }
        }
        for (G gp : all) {
            G l = gp.schedlink;
            if (l != null && l.leakScan()) {
                SCHEDLINK.compareAndSet(gp, l, null);
            }
        }
    }

    /**
     * Step 3: one collection, as Go's detection is one GC cycle. A full collection clears every
     * weak reference whose referent it found unreachable, all at once and before it returns, so a
     * chain (a leaked G whose stack alone holds the channel another leaked G waits on) goes in the
     * same cycle; a second one could only add what a finalizer resurrected in the first. (Earlier
     * profiles ran at least two and waited 20 ms after each for a reference queue nobody needed:
     * half of the pause for 100,000 goroutines.) Returns the collections run.
     */
    private static int collect(Isolated iso) {
        if (iso.refs().length == 0) {
            return 0;
        }
        System.gc();
        return 1;
    }

    /** Step 4: survivors back into AllGs; the collected ones recorded. Returns how many were found. */
    private int settle(Isolated iso) {
        WeakReference<G>[] refs = iso.refs();
        int found = 0;
        for (int i = 0; i < refs.length; i++) {
            G gp = refs[i].get();
            if (gp != null) {
                s.allgs.reattach(gp);
            } else {
                leaked.add(iso.captured()[i].leaked(iso.now(), iso.level()));
                found++;
            }
        }
        s.allgs.forget(found);
        nleaked = leaked.size();
        return found;
    }
}
