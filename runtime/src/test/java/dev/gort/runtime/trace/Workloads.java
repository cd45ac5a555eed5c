package dev.gort.runtime.trace;

import dev.gort.runtime.Config;
import dev.gort.runtime.G;
import dev.gort.runtime.GoSema;
import dev.gort.runtime.Scheduler;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The simulator's workloads (reference 004) as real gort programs, for the tracer's tests: fan-out,
 * ping-pong and a yielding loop (the tight loop needs the preemption layer; syscalls the syscall
 * layer). Each returns the busy work every goroutine declared, so the validator can check that its
 * run slices cover it. Built only on the public runtime API (gopark/goready), not on channels.
 */
public final class Workloads {
    private Workloads() {}

    /** A traced run: the trace and the work each G declared (goid -> ns). */
    public record Run(Trace trace, Map<Long, Long> work, Scheduler sched) {}

    public static Config config(int procs, boolean stealing) {
        return Config.fromEnvironment()
                .withGomaxprocs(procs)
                .withStealing(stealing)
                .withPanicExits(false);
    }

    /** Busy work of {@code ns} wall-clock nanoseconds with no yield point. */
    public static void spin(long ns) {
        long end = System.nanoTime() + ns;
        while (System.nanoTime() - end < 0) {
            Thread.onSpinWait();
        }
    }

    private static Run traced(Config cfg, String name, Map<Long, Long> work, Runnable main) {
        Scheduler s = new Scheduler(cfg);
        s.trace.start(new Tracer.Options().workload(name));
        s.run(main);
        Trace t = s.trace.stop();
        return new Run(t, work, s);
    }

    /** Fan-out: main starts {@code n} goroutines of {@code workNs} busy work each on P0 and waits for all. */
    public static Run fanOut(Config cfg, int n, long workNs) {
        Map<Long, Long> work = new ConcurrentHashMap<>();
        return traced(cfg, "fan-out", work, () -> {
            GoSema done = new GoSema("done", 0);
            Scheduler rt = Scheduler.current();
            for (int i = 0; i < n; i++) {
                G g = rt.newproc(() -> {
                    spin(workNs);
                    done.release();
                });
                work.put(g.goid, workNs);
            }
            for (int i = 0; i < n; i++) {
                done.acquire();
            }
        });
    }

    /** Ping-pong: two goroutines hand a token back and forth {@code rounds} times. */
    public static Run pingPong(Config cfg, int rounds) {
        return traced(cfg, "ping-pong", Map.of(), () -> pingPongBody(rounds));
    }

    static void pingPongBody(int rounds) {
        GoSema ping = new GoSema("ping", 0);
        GoSema pong = new GoSema("pong", 0);
        GoSema done = new GoSema("done", 0);
        Scheduler rt = Scheduler.current();
        rt.newproc(() -> {
            for (int i = 0; i < rounds; i++) {
                ping.acquire();
                pong.release();
            }
            done.release();
        });
        rt.newproc(() -> {
            for (int i = 0; i < rounds; i++) {
                ping.release();
                pong.acquire();
            }
            done.release();
        });
        done.acquire();
        done.acquire();
    }

    /**
     * Tight loop on one P (reference 004): a 40 ms loop without calls, with the poll the ASM agent
     * injects at its back-edge ({@code Poll.poll()}), and three 1 ms goroutines started after it.
     * With preemption sysmon stops the loop after ~10 ms and the short ones run.
     */
    public static Run tightLoop(Config cfg, long loopNs, long shortNs) {
        Map<Long, Long> work = new ConcurrentHashMap<>();
        return traced(cfg, "tight-loop", work, () -> {
            GoSema done = new GoSema("done", 0);
            Scheduler rt = Scheduler.current();
            java.util.concurrent.atomic.AtomicBoolean started = new java.util.concurrent.atomic.AtomicBoolean();
            G loop = rt.newproc(() -> {
                started.set(true);
                long spun = 0;
                long last = System.nanoTime();
                while (spun < loopNs) {
                    dev.gort.runtime.Poll.poll(); // the injected back-edge poll
                    long now = System.nanoTime();
                    long d = now - last;
                    last = now;
                    // Count only time we were surely running: an iteration takes well under a
                    // microsecond, while a preemption and a fast pick-up by another P make a gap of
                    // tens of microseconds that the goroutine did not run for.
                    if (d < 20_000) {
                        spun += d;
                    }
                }
                done.release();
            });
            work.put(loop.goid, loopNs);
            // Let the loop start first. On one P, main runs again only once sysmon has preempted
            // the loop, so the short goroutines below queue up behind a running loop.
            while (!started.get()) {
                Scheduler.gosched();
            }
            for (int i = 0; i < 3; i++) {
                G g = rt.newproc(() -> {
                    spin(shortNs);
                    done.release();
                });
                work.put(g.goid, shortNs);
            }
            for (int i = 0; i < 4; i++) {
                done.acquire();
            }
        });
    }

    /** Yield loop: {@code n} goroutines each do {@code rounds} x {@code sliceNs} of work, calling Gosched between. */
    public static Run yieldLoop(Config cfg, int n, int rounds, long sliceNs) {
        Map<Long, Long> work = new ConcurrentHashMap<>();
        return traced(cfg, "yield-loop", work, () -> {
            GoSema done = new GoSema("done", 0);
            Scheduler rt = Scheduler.current();
            for (int i = 0; i < n; i++) {
                G g = rt.newproc(() -> {
                    for (int r = 0; r < rounds; r++) {
                        spin(sliceNs);
                        Scheduler.gosched();
                    }
                    done.release();
                });
                work.put(g.goid, rounds * sliceNs);
            }
            for (int i = 0; i < n; i++) {
                done.acquire();
            }
        });
    }
}
