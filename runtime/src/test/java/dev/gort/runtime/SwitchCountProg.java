package dev.gort.runtime;

import java.util.Map;

/**
 * A child-JVM program for {@link SwitchCountTest}: runs one switch-bound workload under
 * {@code -Dgort.debug.counts=true} and prints {@link SchedCounts}' counters, one
 * {@code name=value} a line, after {@code COUNTS}. Argument: {@code workload:rounds} (workload:
 * pingpong, gosched).
 * GOMAXPROCS from {@code -Dgort.gomaxprocs}.
 */
public final class SwitchCountProg {
    private SwitchCountProg() {}

    public static void main(String[] args) {
        String what = args[0].substring(0, args[0].indexOf(':'));
        int rounds = Integer.parseInt(args[0].substring(args[0].indexOf(':') + 1));
        Scheduler s = new Scheduler(Config.fromEnvironment().withPanicExits(false));
        Map<String, Long>[] result = new Map[1];
        s.run(() -> {
            // warm up (JIT, carriers started), then count one measured run
            run(what, rounds);
            SchedCounts.reset();
            MOVES.reset();
            long blocked0 = monitorBlocks();
            long sysmon0 = s.sysmon().rounds();
            long t0 = System.nanoTime();
            run(what, rounds);
            long t1 = System.nanoTime();
            System.out.println("info: ns per round " + (t1 - t0) / rounds + " (wall, not asserted)");
            result[0] = SchedCounts.snapshot();
            result[0].put("monitorBlocks", monitorBlocks() - blocked0);
            result[0].put("moves", MOVES.sum());
            result[0].put("sysmonRounds", s.sysmon().rounds() - sysmon0);
        });
        System.out.println("COUNTS");
        result[0].forEach((k, v) -> System.out.println(k + "=" + v));
    }

    /** Times the carriers blocked entering a contended Java monitor (ThreadMXBean's blocked count). */
    static long monitorBlocks() {
        long n = 0;
        for (java.lang.management.ThreadInfo ti :
                java.lang.management.ManagementFactory.getThreadMXBean().dumpAllThreads(false, false)) {
            if (ti.getThreadName().contains("-M")) {
                n += ti.getBlockedCount();
            }
        }
        return n;
    }

    /** Carrier changes seen by the workload's goroutines (a G resumed on another M than before). */
    static final java.util.concurrent.atomic.LongAdder MOVES = new java.util.concurrent.atomic.LongAdder();

    static void run(String what, int rounds) {
        switch (what) {
            case "pingpong" -> pingpong(rounds);
            case "gosched" -> gosched(rounds);
            case "pairs" -> pairs(rounds);
            default -> throw new IllegalArgumentException(what);
        }
    }

    /** Two goroutines hand a token back and forth through two semaphores: a round trip = 2 switches. */
    static void pingpong(int rounds) {
        Scheduler s = Scheduler.current();
        GoSema ping = new GoSema(0);
        GoSema pong = new GoSema(0);
        GoSema done = new GoSema(0);
        s.newproc(() -> {
            M last = M.current();
            long moved = 0;
            for (int i = 0; i < rounds; i++) {
                ping.acquire();
                M now = M.current();
                if (now != last) {
                    moved++;
                    last = now;
                }
                pong.release();
            }
            MOVES.add(moved);
            done.release();
        });
        for (int i = 0; i < rounds; i++) {
            ping.release();
            pong.acquire();
        }
        done.acquire();
    }

    /** 1,000 ping-pong pairs at once (the bench's ManyPairs shape): rounds / 1,000 round trips each. */
    static void pairs(int rounds) {
        Scheduler s = Scheduler.current();
        int pairs = 1000;
        int each = Math.max(1, rounds / pairs);
        GoSema done = new GoSema(0);
        for (int p = 0; p < pairs; p++) {
            GoSema ping = new GoSema(0);
            GoSema pong = new GoSema(0);
            s.newproc(() -> {
                for (int i = 0; i < each; i++) {
                    ping.acquire();
                    pong.release();
                }
            });
            s.newproc(() -> {
                for (int i = 0; i < each; i++) {
                    ping.release();
                    pong.acquire();
                }
                done.release();
            });
        }
        for (int p = 0; p < pairs; p++) {
            done.acquire();
        }
    }

    /** Two goroutines call Gosched in a loop (the bench's Gosched, goroutines=2). */
    static void gosched(int rounds) {
        Scheduler s = Scheduler.current();
        GoSema done = new GoSema(0);
        for (int g = 0; g < 2; g++) {
            s.newproc(() -> {
                M last = M.current();
                long moved = 0;
                for (int i = 0; i < rounds; i++) {
                    Scheduler.gosched();
                    M now = M.current();
                    if (now != last) {
                        moved++;
                        last = now;
                    }
                }
                MOVES.add(moved);
                done.release();
            });
        }
        done.acquire();
        done.acquire();
    }
}
