package dev.gort.examples.showcase;

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
 * A tight loop on one P: a goroutine runs a call-free loop for L ms while three short goroutines
 * wait in the same P's local queue. sysmon notices the same goroutine on the P for 10 ms and asks
 * it to stop; with back-edge yield points (the agent's {@code backedge} strategy, gort's answer to
 * Go 1.14's asynchronous preemption) the loop yields at its next iteration, goes to the global
 * queue and the short goroutines run. With {@code none} (Go before 1.14, for a loop without calls)
 * nobody can stop the loop and they wait for all of it.
 */
final class TightLoop extends Scenario {
    static final int SHORTS = 3;

    TightLoop() {
        super("tight-loop", "Tight loop on one P: preempted after 10 ms, or not at all");
    }

    @Override
    String explanation(Options o) {
        return "A " + o.loopMs + " ms loop without calls and " + SHORTS
                + " short goroutines share one P: the loop runs first, the\n"
                + "short ones wait in the P's local queue. sysmon sees the same goroutine on the P for 10 ms and\n"
                + "asks it to stop. With back-edge yield points (-Dgort.preempt=backedge, the java agent's\n"
                + "answer to Go 1.14's asynchronous preemption) the loop yields at its next iteration and the\n"
                + "short goroutines run; with -Dgort.preempt=none (Go before 1.14) they wait for the whole loop.";
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

    /** What the workload measured: when the loop started and ended, when each short goroutine started. */
    record Seen(long loopGoid, long loopStart, long loopEnd, long[] shortStart) {}

    /** The workload, as main runs it. */
    static Seen play(long loopNanos) {
        // A fresh runtime's P has schedtick 0, and schedule() looks at the global queue first
        // whenever schedtick % 61 == 0: the preempted loop (it goes to the global queue) would get
        // its second slice at once. A real program has scheduled other goroutines by then; one
        // Gosched (main goes to the global queue and comes back: a fresh slice) does the same here.
        Go.gosched(); // main's fresh slice, which the loop will inherit through runnext
        WaitGroup wg = new WaitGroup();
        long[] shortStart = new long[SHORTS];
        long[] loop = new long[3];
        // The short goroutines first, the loop last: the loop lands in runnext and runs
        // first, the short ones wait behind it in the local queue.
        for (int k = 0; k < SHORTS; k++) {
            int i = k;
            wg.add(1);
            Go.go(() -> {
                try {
                    shortStart[i] = Time.nanotime();
                } finally {
                    wg.done();
                }
            });
        }
        wg.add(1);
        Go.go(() -> {
            try {
                loop[0] = Go.goid();
                loop[1] = Time.nanotime();
                Lab.spin(loopNanos);
                loop[2] = Time.nanotime();
            } finally {
                wg.done();
            }
        });
        wg.await();
        return new Seen(loop[0], loop[1], loop[2], shortStart);
    }

    @Override
    void warmUp(Options o, Variant v) {
        Lab.warm(v.config(), () -> play(Time.MILLISECOND));
    }

    @Override
    Path run(Variant v, Options o, PrintStream out) throws Exception {
        long loopNanos = o.loopMs * Time.MILLISECOND;
        Lab.Outcome<Seen> r = Lab.run(
                v.config(),
                "tight loop (" + v.id() + ")",
                o.schedtrace > 0 ? o.schedtrace : defaultSchedtrace(),
                o.scheddetail,
                s -> play(loopNanos));
        Trace t = r.trace();
        Seen seen = r.value();
        Showcase.printSched(out, r.sched(), o, o.schedtrace > 0 ? o.schedtrace : defaultSchedtrace());
        Set<Long> loopG = Set.of(seen.loopGoid());
        int preempted = Facts.stops(t, loopG, Ev.S_PREEMPT);
        long maxLat = 0;
        long minLat = Long.MAX_VALUE;
        StringBuilder lats = new StringBuilder();
        for (long st : seen.shortStart()) {
            long lat = Math.max(0, st - seen.loopStart());
            maxLat = Math.max(maxLat, lat);
            minLat = Math.min(minLat, lat);
            lats.append(lats.isEmpty() ? "" : ", ").append(Facts.ms(lat));
        }
        out.println("  figures:");
        out.printf("    short goroutines started %s after the loop began%n", lats);
        out.printf(
                "    loop: %s of spinning, preempted %s%n",
                Facts.ms(seen.loopEnd() - seen.loopStart()), Facts.n(preempted, "time"));
        // The slice as the scheduler stamped it (main's fresh start, which the loop inherited, and
        // the loop's first preemption): sysmon counts the slice from when the P's schedtick moved,
        // not from when main read the clock after its Gosched, which a descheduled carrier can
        // delay by milliseconds on a loaded machine (with two busy loops on the 2-CPU machine,
        // main's read came 7.9 ms after the slice began; ShowcaseIT once saw a 7.3 ms "slice").
        long sliceAt = Facts.sliceStartOfFirstRun(t, seen.loopGoid());
        long loopAt = Facts.first(t, Ev.GO_START, seen.loopGoid());
        long stopAt = Facts.firstStop(t, seen.loopGoid(), Ev.S_PREEMPT);
        if (sliceAt >= 0 && loopAt >= sliceAt) {
            out.printf(
                    "    the loop took over main's time slice through runnext: the slice began %s before the loop%n",
                    Facts.ms(loopAt - sliceAt));
        }
        long sliceRan = sliceAt >= 0 && stopAt >= sliceAt ? stopAt - sliceAt : -1;
        if (sliceRan >= 0) {
            out.printf(
                    "    the slice ran %s before sysmon's request stopped the loop the first time%n",
                    Facts.ms(sliceRan));
        }
        out.printf(
                "    sysmon: %s%s%n",
                Facts.preemptions(r.preempt()),
                r.preempt().honoured() == 0
                        ? ""
                        : "; request to yield p50 "
                                + Facts.ms(r.preempt().requestToYield().p50()));
        out.printf(
                "    preemption figures %s%n",
                Facts.preemptBalance(r.preempt(), t, r.tracedRequestsMin(), r.tracedRequestsMax()));
        if (v.gomaxprocs() > 1) {
            out.printf(
                    "  => with %d Ps the short goroutines did not need to wait: another P stole them%n",
                    v.gomaxprocs());
        } else if (preempted > 0) {
            out.printf(
                    "  => sysmon preempted the loop after %s: the short goroutines waited one time slice, not the whole loop%n",
                    sliceRan >= 0 ? Facts.ms(sliceRan) + " of its slice" : Facts.ms(maxLat));
        } else if (v.preempt().equals("none")) {
            out.printf(
                    "  => no yield points: sysmon asked %s in vain and the short goroutines waited for the whole loop (%s)%n",
                    Facts.n(r.preempt().requested(), "time"), Facts.ms(minLat));
        } else if (v.preempt().equals("entry") && Showcase.agentActive()) {
            // entry polls sit at the entry of methods that call others: the loop's body calls none
            // that is instrumented (System.nanoTime is the JDK's), so it never reaches a yield point
            long ran = seen.loopEnd() - seen.loopStart();
            out.printf(
                    "  => entry yield points only: the loop's body calls no instrumented method, so it never reached"
                            + " one; sysmon asked %s in vain and the short goroutines %s (as in Go before 1.14, whose"
                            + " only checks were in function prologues)%n",
                    Facts.n(r.preempt().requested(), "time"),
                    minLat >= ran - 200_000
                            ? "waited for the whole loop (" + Facts.ms(minLat) + ")"
                            : "started " + Facts.ms(minLat) + " after it began");
        } else {
            out.printf(
                    "  => the loop was not preempted: %s%n",
                    Showcase.agentActive() ? "sysmon did not get to it in time" : Showcase.agentLine());
        }
        return Showcase.writeTimeline(t, v, o, out);
    }
}
