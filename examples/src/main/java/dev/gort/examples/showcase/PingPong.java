package dev.gort.examples.showcase;

import dev.gort.Chan;
import dev.gort.Go;
import dev.gort.Time;
import dev.gort.runtime.trace.Ev;
import dev.gort.runtime.trace.Trace;
import dev.gort.sync.WaitGroup;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * Ping-pong: two goroutines pass a ball over unbuffered channels, with a little CPU work per hop.
 * Each send readies the partner into runnext; the partner then runs on the same P with the time
 * slice it inherits, so the pair runs back to back as one unit: one {@code schedtick} for the whole
 * exchange. When they have used 10 ms between them, sysmon preempts the one that is running (its
 * partner is blocked on it), and a third goroutine waiting in the local queue finally runs.
 */
final class PingPong extends Scenario {
    PingPong() {
        super("ping-pong", "Ping-pong: a pair shares one time slice through runnext");
    }

    @Override
    String explanation(Options o) {
        return "Two goroutines pass a ball over unbuffered channels for " + o.pairMs + " ms, " + o.hopUs
                + " us of CPU per hop.\n"
                + "Each send readies the partner into runnext, and a goroutine taken from runnext inherits the\n"
                + "time slice: the pair runs back to back on one P as a unit. When they have used a 10 ms slice\n"
                + "between them, sysmon preempts the one running (its partner is blocked on it), and a bystander\n"
                + "goroutine waiting in the local queue runs. Without yield points (none) it waits for the game.";
    }

    @Override
    int defaultProcs() {
        return 1;
    }

    @Override
    int defaultSchedtrace() {
        return 10;
    }

    @Override
    List<Variant> variants(Options o) {
        if (o.preempt != null) {
            return super.variants(o);
        }
        int procs = o.gomaxprocs > 0 ? o.gomaxprocs : defaultProcs();
        boolean steal = o.stealing == null || o.stealing;
        boolean spin = o.spinning == null || o.spinning;
        List<Variant> v = new ArrayList<>();
        for (String pre : List.of("backedge", "none")) {
            v.add(new Variant(id, label(steal, spin, pre), describe(procs, steal, spin, pre), procs, steal, spin, pre));
        }
        return v;
    }

    /** What the workload measured. */
    record Seen(long ping, long pong, long bystander, long start, long bystanderAt, long end, int hops) {}

    /** The workload, as main runs it. */
    static Seen play(long pairNanos, long hopNanos) {
        Chan<Integer> toPong = Chan.make();
        Chan<Integer> toPing = Chan.make();
        WaitGroup wg = new WaitGroup();
        long[] ids = new long[3];
        long[] at = new long[3];
        int[] hops = new int[1];
        // Main yields first, so that the slice ping inherits from it through runnext began a moment
        // ago and its start is in the trace (main's first slice began before the trace did).
        Go.gosched();
        // Spawn order pong, bystander, ping: ping lands in runnext and serves first;
        // pong waits ahead of the bystander in the local queue, takes the ball from the
        // blocked ping and from then on the pair wakes each other through runnext.
        wg.add(1); // pong: returns the ball until told to stop
        Go.go(() -> {
            try {
                ids[1] = Go.goid();
                for (; ; ) {
                    int ball = toPong.recv();
                    if (ball < 0) {
                        return;
                    }
                    Lab.spin(hopNanos);
                    toPing.send(ball + 1);
                }
            } finally {
                wg.done();
            }
        });
        wg.add(1); // the bystander: waits in the local queue
        Go.go(() -> {
            try {
                ids[2] = Go.goid();
                at[1] = Time.nanotime();
            } finally {
                wg.done();
            }
        });
        wg.add(1); // ping: serves until the game is over
        Go.go(() -> {
            try {
                ids[0] = Go.goid();
                at[0] = Time.nanotime();
                long end = at[0] + pairNanos;
                int ball = 0;
                while (Time.nanotime() < end) {
                    Lab.spin(hopNanos);
                    toPong.send(ball);
                    ball = toPing.recv();
                    hops[0] += 2;
                }
                toPong.send(-1);
                at[2] = Time.nanotime();
            } finally {
                wg.done();
            }
        });
        wg.await();
        return new Seen(ids[0], ids[1], ids[2], at[0], at[1], at[2], hops[0]);
    }

    @Override
    void warmUp(Options o, Variant v) {
        Lab.warm(v.config(), () -> play(2 * Time.MILLISECOND, 10 * Time.MICROSECOND));
    }

    @Override
    Path run(Variant v, Options o, PrintStream out) throws Exception {
        long pairNanos = o.pairMs * Time.MILLISECOND;
        long hopNanos = o.hopUs * Time.MICROSECOND;
        Lab.Outcome<Seen> r = Lab.run(
                v.config(),
                "ping-pong (" + v.id() + ")",
                o.schedtrace > 0 ? o.schedtrace : defaultSchedtrace(),
                o.scheddetail,
                s -> play(pairNanos, hopNanos));
        Trace t = r.trace();
        Seen seen = r.value();
        Showcase.printSched(out, r.sched(), o, o.schedtrace > 0 ? o.schedtrace : defaultSchedtrace());
        Set<Long> pair = Set.of(seen.ping(), seen.pong());
        List<Facts.Slice> slices = Facts.slices(t, pair);
        int preempted = Facts.stops(t, pair, Ev.S_PREEMPT);
        long bystanderWait = seen.bystanderAt() - seen.start();
        out.println("  figures:");
        out.printf(
                "    the pair: %d hops in %s; %s; preempted %s%n",
                seen.hops(),
                Facts.ms(seen.end() - seen.start()),
                Facts.n(slices.size(), "time slice"),
                Facts.n(preempted, "time"));
        out.printf("    sysmon: %s%n", Facts.preemptions(r.preempt()));
        out.printf(
                "    preemption figures %s%n",
                Facts.preemptBalance(r.preempt(), t, r.tracedRequestsMin(), r.tracedRequestsMax()));
        int shown = 0;
        for (Facts.Slice sl : slices) {
            if (shown++ == 4) {
                out.printf("      ... %d more slices%n", slices.size() - 4);
                break;
            }
            out.printf(
                    "      slice %d: %s, %s back to back through runnext%s%s%n",
                    shown,
                    Facts.ms(sl.length()),
                    Facts.n(sl.runs(), "run"),
                    sl.preempted() ? ", ended by a preemption" : "",
                    sl.inherited() ? " (its first run inherited its spawner's slice, begun before the game)" : "");
        }
        out.printf("    bystander started %s after the game began%n", Facts.ms(bystanderWait));
        long afterSlice = Facts.afterPreemptedSlice(t, seen.bystander());
        if (v.gomaxprocs() == 1 && afterSlice >= 0) {
            // sysmon's rule, in the scheduler's stamps: the bystander ran once a slice that had
            // lasted 10 ms was preempted (the game's clock reads can lag the slice's start).
            out.printf(
                    "    bystander started %s after the time slice that was preempted for it began%n",
                    Facts.ms(afterSlice));
        }
        // The pair's own first slice: a first run that inherited its spawner's slice (Go's runnext
        // rule) can be preempted early, on the spawner's time, which says nothing of the pair.
        Facts.Slice first = slices.stream()
                .filter(sl -> sl.preempted() && !sl.inherited())
                .findFirst()
                .orElse(null);
        if (v.gomaxprocs() > 1) {
            out.printf(
                    "  => with %d Ps the bystander was stolen by another P and did not wait for the pair%n",
                    v.gomaxprocs());
        } else if (preempted > 0 && first != null) {
            out.printf(
                    "  => the pair shared one slice of %s (%d runs inherited it through runnext), was preempted,%n"
                            + "     and only then did the bystander run%n",
                    Facts.ms(first.length()), first.runs() - 1);
        } else if (v.preempt().equals("none")) {
            out.printf(
                    "  => no yield points: the pair was never preempted and the bystander waited for the whole game%n");
        } else {
            out.printf(
                    "  => the pair was not preempted: %s%n",
                    Showcase.agentActive() ? "sysmon did not get to it in time" : Showcase.agentLine());
        }
        return Showcase.writeTimeline(t, v, o, out);
    }
}
