package dev.gort.runtime;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A goroutine's time slice survives its syscalls (go-scheduler-rules.md §3: the fast exit keeps
 * schedtick). Two goroutines share one P and loop on short syscalls, never parking: they still take
 * turns, each turn lasting about one slice (10 ms + up to two sysmon ticks). If syscall exits
 * started new slices, sysmon would never see a slice expire and the first would run alone.
 */
@Timeout(30)
class SyscallSliceTest {
    /** The goroutines loop until sysmon has preempted them this often (each turn needs a slice to expire). */
    static final long PREEMPTIONS = 3;

    /**
     * The bound, counted from the first goroutine's start (not from before they are created: under
     * load they once started after a 600 ms budget had run out, and looped zero times).
     */
    static final long LIMIT_S = 20;

    @Test
    void loopsOnShortSyscallsArePreemptedEverySlice() throws Exception {
        Scheduler s = new Scheduler(TestSupport.config(1));
        AtomicLong owner = new AtomicLong();
        List<Long> turns = Collections.synchronizedList(new ArrayList<>());
        AtomicLong turnStart = new AtomicLong();
        AtomicLong syscalls = new AtomicLong();
        s.run(() -> {
            GoSema done = new GoSema(0);
            AtomicLong endAt = new AtomicLong();
            for (long id = 1; id <= 2; id++) {
                long me = id;
                s.newproc(() -> {
                    endAt.compareAndSet(0, System.nanoTime() + TimeUnit.SECONDS.toNanos(LIMIT_S));
                    long end = endAt.get();
                    // Until both took turns and sysmon preempted them PREEMPTIONS times; if syscall
                    // exits restarted the slice, no slice would expire and the bound ends the loop.
                    while ((turns.size() < 2 || s.stats.preemptions.get() < PREEMPTIONS) && System.nanoTime() < end) {
                        if (owner.get() != me) { // the other one ran: a new turn starts
                            long now = System.nanoTime();
                            long prev = turnStart.getAndSet(now);
                            if (owner.getAndSet(me) != 0) {
                                turns.add(now - prev);
                            }
                        }
                        Syscalls.entersyscall();
                        syscalls.incrementAndGet(); // a "short syscall"
                        Syscalls.exitsyscall();
                    }
                    done.release();
                });
            }
            done.acquire();
            done.acquire();
        });
        List<Long> ms = turns.stream().map(t -> t / 1_000_000).sorted().toList();
        long preemptions = s.stats.preemptions.get();
        long requests = s.preempt.requests();
        System.out.printf(
                "turns (ms): %s, syscalls %d, preempt requests %d, preemptions %d, %s%n",
                ms, syscalls.get(), requests, preemptions, s.syscallStats.snapshot(s));
        // sysmon saw slices run out although the running goroutine kept making syscalls (exits
        // did not restart them), and the goroutine yielded at a syscall exit because of it. Turns
        // can also end early: a carrier the OS deschedules in the middle of a "syscall" looks like
        // a blocking syscall to sysmon and loses its P by the ordinary syscall retake. On a loaded
        // machine that is frequent, so the turn lengths are reported, not asserted.
        assertTrue(requests > 0, "no slice ever expired: syscall exits restart the slice");
        assertTrue(
                preemptions >= PREEMPTIONS,
                "the looping goroutines were preempted only " + preemptions + " times in " + LIMIT_S + " s");
        assertTrue(ms.size() >= 2, "the goroutines took turns only " + ms.size() + " times in " + LIMIT_S + " s");
    }
}
