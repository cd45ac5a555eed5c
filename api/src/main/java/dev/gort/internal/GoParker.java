package dev.gort.internal;

import dev.gort.runtime.G;
import dev.gort.runtime.M;
import dev.gort.runtime.P;
import dev.gort.runtime.Scheduler;
import dev.gort.runtime.WaitReason;

/**
 * The production {@link Parker}: waiters are goroutines; park is {@link Scheduler#gopark} (the
 * commit runs on the M after the continuation has yielded), ready is {@link Scheduler#goready}
 * (the current P's runnext, time slice inherited). Stateless: the runtime is found through the
 * waiter or the current M, so one instance serves every runtime in the JVM.
 */
public final class GoParker implements Parker {
    public static final GoParker INSTANCE = new GoParker();

    private GoParker() {}

    @Override
    public Object current() {
        return Scheduler.currentG();
    }

    /**
     * One sudog per goroutine, kept in {@code G.waiting} between uses: a goroutine blocks in one
     * channel or semaphore operation at a time, and nobody touches a sudog after readying its
     * goroutine, so it is free again as soon as its owner runs. (A select uses its own sudogs.)
     */
    @Override
    public Sudog acquireSudog(Object w) {
        G g = (G) w;
        if (g.waiting instanceof Sudog s) {
            return s;
        }
        Sudog s = new Sudog();
        g.waiting = s;
        return s;
    }

    @Override
    public <L> void park(Object w, ParkCommit<L> commit, L lock, WaitReason reason, Object waitingOn) {
        Scheduler.gopark((G) w, commit, lock, reason, waitingOn); // w is current(): getg()
    }

    @Override
    public void ready(Object w) {
        G g = (G) w;
        g.scheduler().goready(g);
    }

    @Override
    public Object param(Object w) {
        return ((G) w).param;
    }

    @Override
    public void setParam(Object w, Object v) {
        ((G) w).param = v;
    }

    @Override
    public boolean casSelectDone(Object w) {
        return ((G) w).casSelectDone(false, true);
    }

    @Override
    public void clearSelectDone(Object w) {
        ((G) w).setSelectDone(false);
    }

    @Override
    public int cheaprandn(int n) {
        return M.cheaprandn(n);
    }

    /**
     * Spin only a few times, only on a multicore machine with another P running and nothing queued
     * locally (sync.Mutex is cooperative).
     *
     * <p>Go: proc.go sync_runtime_canSpin
     */
    @Override
    public boolean canSpin(int iter) {
        if (iter >= ACTIVE_SPIN || NCPU <= 1) {
            return false;
        }
        M mp = M.current();
        if (mp == null) {
            return false;
        }
        Scheduler s = mp.scheduler();
        if (s.gomaxprocs() <= s.npidle() + s.nmspinning() + 1) {
            return false;
        }
        P p = mp.p();
        return p != null && p.runq.runqempty();
    }

    /** Go: proc.go active_spin. */
    static final int ACTIVE_SPIN = 4;

    static final int NCPU = Runtime.getRuntime().availableProcessors();

    @Override
    public void goyield() {
        Scheduler.goyield();
    }

    @Override
    public long nanotime() {
        return System.nanoTime();
    }

    /** Found through the goroutine (two field reads), not the carrier. */
    @Override
    public long blockProfileRate(Object w) {
        return ((G) w).scheduler().blockprof.blockProfileRate();
    }

    @Override
    public long mutexProfileRate(Object w) {
        return ((G) w).scheduler().blockprof.mutexProfileRate();
    }

    @Override
    public void blockevent(long cycles, int skip) {
        M mp = M.current();
        if (mp != null) {
            mp.scheduler().blockprof.blockevent(cycles, skip + 1); // + this frame
        }
    }

    @Override
    public void mutexevent(long cycles, int skip) {
        M mp = M.current();
        if (mp != null) {
            mp.scheduler().blockprof.mutexevent(cycles, skip + 1);
        }
    }
}
