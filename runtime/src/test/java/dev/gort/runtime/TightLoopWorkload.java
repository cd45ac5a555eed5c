package dev.gort.runtime;

import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.function.Consumer;

/**
 * The simulator's tight-loop workload, shared by the runtime's SysmonPreemptTest (loops that poll
 * by hand) and the agent's AgentPreemptionTest (loops the agent instruments): on GOMAXPROCS=1 a G
 * starts a call-free loop on a fresh slice, and three short Gs become runnable just before it.
 *
 * <p>sysmon's retake waits until the loop begins ({@link RetakeGate}): its first look at the loop's
 * slice, and the clock read that starts it, come after {@code t0} and after the three newproc calls
 * (which poll), so no request can reach the G before its loop, however long a loaded machine stalls
 * it there, and none can come sooner than 10 ms after {@code t0}.
 */
public final class TightLoopWorkload {
    private TightLoopWorkload() {}

    /**
     * hogEnd: when the loop ended; starts: when each short G started; both in wall ns after the loop's
     * G read {@code t0}. progressAtStart: the loop's CPU ns used when each short G started.
     */
    public record Result(long hogEnd, long[] starts, long[] progressAtStart, PreemptStats stats) {}

    /**
     * Runs the workload on {@code s} (a fresh runtime with GOMAXPROCS=1); {@code loop} is the loop,
     * which stores the CPU ns it has used so far in the {@code AtomicLong} it is given.
     */
    public static Result run(Scheduler s, Consumer<AtomicLong> loop) {
        AtomicLongArray starts = new AtomicLongArray(3);
        AtomicLongArray progressAt = new AtomicLongArray(3);
        AtomicLong progress = new AtomicLong();
        AtomicLong t0 = new AtomicLong();
        AtomicLong hogEnd = new AtomicLong();
        try (RetakeGate looping = RetakeGate.hold()) {
            s.run(() -> {
                GoSema done = new GoSema(0);
                Scheduler rt = Scheduler.current();
                rt.newproc(() -> {
                    Scheduler.gosched(); // start the loop on a fresh slice (not main's inherited one)
                    t0.set(System.nanoTime());
                    for (int k = 0; k < 3; k++) {
                        int idx = k;
                        rt.newproc(() -> {
                            starts.set(idx, System.nanoTime());
                            progressAt.set(idx, progress.get());
                            done.release();
                        });
                    }
                    looping.open();
                    loop.accept(progress);
                    hogEnd.set(System.nanoTime());
                    done.release();
                });
                for (int i = 0; i < 4; i++) {
                    done.acquire();
                }
            });
        }
        long[] rel = new long[3];
        long[] prog = new long[3];
        for (int k = 0; k < 3; k++) {
            rel[k] = starts.get(k) - t0.get();
            prog[k] = progressAt.get(k);
        }
        return new Result(hogEnd.get() - t0.get(), rel, prog, s.preempt.snapshot());
    }
}
