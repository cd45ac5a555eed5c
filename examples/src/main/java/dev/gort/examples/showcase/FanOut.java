package dev.gort.examples.showcase;

import dev.gort.Go;
import dev.gort.Time;
import dev.gort.runtime.trace.Ev;
import dev.gort.runtime.trace.Trace;
import dev.gort.sync.WaitGroup;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Fan-out: main starts N goroutines of W ms of CPU each. {@code go f()} puts the new goroutine in
 * P0's runnext and kicks the previous one to P0's local queue; the idle Ps wake up (wakep) and
 * steal half of P0's queue at a time. With stealing off, P0 runs everything alone.
 */
final class FanOut extends Scenario {
    FanOut() {
        super("fan-out", "Fan-out: one goroutine starts many, idle Ps steal");
    }

    @Override
    String explanation(Options o) {
        return "main starts " + o.goroutines + " goroutines of " + o.workMs
                + " ms of CPU each, all on P0. Each `go f()`\n"
                + "puts the new goroutine in P0's runnext and kicks the previous one to P0's local queue.\n"
                + "The idle Ps wake up (wakep), find P0's queue and steal half of it at a time (runqsteal).\n"
                + "Switch work stealing off and P0 does everything alone.";
    }

    @Override
    int defaultProcs() {
        return 4;
    }

    @Override
    int defaultSchedtrace() {
        return 4;
    }

    @Override
    List<Variant> variants(Options o) {
        if (o.stealing != null) {
            return super.variants(o);
        }
        int procs = o.gomaxprocs > 0 ? o.gomaxprocs : defaultProcs();
        boolean spin = o.spinning == null || o.spinning;
        String pre = o.preempt != null ? o.preempt : Showcase.jvmPreempt();
        List<Variant> v = new ArrayList<>();
        v.add(new Variant(id, "stealing-on", describe(procs, true, spin, pre), procs, true, spin, pre));
        v.add(new Variant(id, "stealing-off", describe(procs, false, spin, pre), procs, false, spin, pre));
        return v;
    }

    /** The workload, as main runs it. */
    static long play(int n, long work) {
        WaitGroup wg = new WaitGroup();
        for (int i = 0; i < n; i++) {
            wg.add(1);
            Go.go(() -> {
                try {
                    Lab.spin(work);
                } finally {
                    wg.done();
                }
            });
        }
        wg.await();
        return Go.goid();
    }

    @Override
    void warmUp(Options o, Variant v) {
        // Enough spawns that the JIT compiles the `go` path (a traced `go` walks the stack for its
        // creator): interpreted, main took 10-15 ms to start 48 goroutines, so sysmon preempted it
        // in the middle of the fan-out on every run and the idle Ps woke to a trickle.
        Lab.warm(v.config(), () -> {
            for (int i = 0; i < 8; i++) {
                play(256, 0);
            }
            play(8, 100 * Time.MICROSECOND);
        });
    }

    @Override
    Path run(Variant v, Options o, PrintStream out) throws Exception {
        int n = o.goroutines;
        long work = o.workMs * Time.MILLISECOND;
        Lab.Outcome<Long> r = Lab.run(
                v.config(),
                "fan-out (" + v.id() + ")",
                o.schedtrace > 0 ? o.schedtrace : defaultSchedtrace(),
                o.scheddetail,
                s -> play(n, work));
        Trace t = r.trace();
        Set<Long> workers = new LinkedHashSet<>(Facts.childrenOf(t, r.value()));
        Showcase.printSched(out, r.sched(), o, o.schedtrace > 0 ? o.schedtrace : defaultSchedtrace());
        Map<Integer, Set<Long>> ranOn = Facts.firstRunOn(t, workers);
        Map<Integer, Long> busy = Facts.busyOn(t, workers);
        Facts.Steals st = Facts.steals(t);
        int kicks = Facts.count(t, Ev.RUNQ_KICK, workers);
        long firstCreate = Long.MAX_VALUE;
        for (long g : workers) {
            firstCreate = Math.min(firstCreate, Facts.first(t, Ev.GO_CREATE, g));
        }
        long lastExit = Facts.last(t, Ev.GO_STOP, workers);
        out.println("  figures:");
        for (int p = 0; p < v.gomaxprocs(); p++) {
            int ran = ranOn.getOrDefault(p, Set.of()).size();
            int stole = st.gsByThief().getOrDefault(p, 0);
            out.printf(
                    "    P%d: ran %2d of %d goroutines (%5.1f ms of wall time on it)   stole %2d in %s%s%n",
                    p,
                    ran,
                    workers.size(),
                    busy.getOrDefault(p, 0L) / 1e6,
                    stole,
                    Facts.n(st.opsByThief().getOrDefault(p, 0), "steal"),
                    stole == 0 ? "" : " from " + victims(st.victims().get(p)));
        }
        out.printf("    runnext: %d goroutines kicked from runnext to the local queue by a newer `go`%n", kicks);
        out.printf("    steals: %d goroutines moved in %s%n", st.gs(), Facts.n(st.ops(), "steal"));
        Set<Long> mainAndWorkers = new LinkedHashSet<>(workers);
        mainAndWorkers.add(r.value());
        int preempted = Facts.stops(t, mainAndWorkers, Ev.S_PREEMPT);
        out.printf(
                "    preemptions: %d (only a goroutine that keeps its P 10 ms is preempted: none should here,%n"
                        + "      unless the machine is so busy that a 1 ms piece of work takes 10 ms of wall time)%n",
                preempted);
        long wall = lastExit - firstCreate;
        out.printf(
                "    wall time: %s for %d ms of CPU work on %d Ps (ideal %.1f ms)%n",
                Facts.ms(wall), n * o.workMs, v.gomaxprocs(), (double) n * o.workMs / v.gomaxprocs());
        int busyPs = ranOn.size();
        Facts.Looks looks = v.stealing() ? Facts.thiefLooks(t, r.value(), workers) : null;
        if (looks != null) {
            out.printf(
                    "    looks: %s by idle Ps' Ms while P%d's queue held goroutines (%s),"
                            + " %d of them came back empty (a scheduler bug if any)%n",
                    Facts.n(looks.during(), "spin"),
                    Math.max(looks.victim(), 0),
                    looks.to() < 0
                            ? "never: P" + Math.max(looks.victim(), 0) + " ran none of them after main's wait"
                            : Facts.ms(looks.from() - firstCreate) + " to " + Facts.ms(looks.to() - firstCreate)
                                    + " after the first `go`",
                    looks.empty());
        }
        if (v.stealing()) {
            out.printf(
                    "  => %s%n",
                    looks != null && looks.empty() > 0
                            ? "a scheduler bug: idle Ps came back empty from " + Facts.n(looks.empty(), "look")
                                    + " while P" + looks.victim() + "'s queue held goroutines"
                            : st.gs() > 0 && busyPs > 1
                                    ? "the idle Ps stole P0's goroutines: " + busyPs + " Ps shared the work"
                                    : busyPs > 1
                                            ? "no steal this time: " + preempted
                                                    + " preemptions sent goroutines (main among them) to the"
                                                    + " global queue, and " + busyPs + " Ps took them from there"
                                            : looks != null && looks.to() >= 0 && looks.during() == 0
                                                    ? "no P stole anything this time: no idle P's M ran while P"
                                                            + looks.victim() + "'s"
                                                            + " queue held goroutines (the machine was too busy to run"
                                                            + " their threads)"
                                                    : "no P stole anything this time (the machine may be too busy to"
                                                            + " wake the idle Ps)");
        } else {
            out.printf(
                    "  => %s%n",
                    busyPs == 1 && ranOn.containsKey(0)
                            ? "no stealing: P0 ran all " + workers.size()
                                    + " goroutines alone while the other Ps stayed idle"
                            : "no stealing, but " + preempted
                                    + " preemptions sent goroutines to the global queue, where the"
                                    + " other Ps found them: " + busyPs + " Ps ran goroutines");
        }
        return Showcase.writeTimeline(t, v, o, out);
    }

    private static String victims(Set<Integer> vs) {
        StringBuilder sb = new StringBuilder();
        for (int p : vs) {
            sb.append(sb.isEmpty() ? "" : ", ").append(p < 0 ? "?" : "P" + p);
        }
        return sb.toString();
    }
}
