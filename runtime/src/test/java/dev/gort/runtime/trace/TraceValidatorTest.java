package dev.gort.runtime.trace;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The trace validator on real runs of the simulator's workloads under GOMAXPROCS 1..4 with stealing
 * on and off: every G finishes, its slices cover its declared work, no G is in two places, P lanes
 * never overlap, queue moves conserve Gs.
 */
class TraceValidatorTest {
    static Stream<Arguments> grid() {
        Stream.Builder<Arguments> b = Stream.builder();
        for (int procs = 1; procs <= 4; procs++) {
            b.add(Arguments.of(procs, true));
            b.add(Arguments.of(procs, false));
        }
        return b.build();
    }

    private static void check(Workloads.Run r, int procs) {
        Trace t = r.trace();
        assertNotNull(t);
        TraceValidator.Result res = TraceValidator.validate(t, true, r.work());
        assertTrue(res.ok(), () -> t.workload + " GOMAXPROCS=" + procs + ": " + res);
        assertEquals(r.sched().config().gomaxprocs(), t.initialProcs);
        // every G created in the run appears, and all are dead at the end (main included)
        assertEquals(t.goroutines.size(), res.goroutines.size());
        assertEquals(
                res.goroutines.size(),
                res.count(TraceValidator.DEAD),
                () -> t.workload + ": not all Gs finished: " + res.goroutines);
    }

    @ParameterizedTest(name = "fan-out GOMAXPROCS={0} stealing={1}")
    @MethodSource("grid")
    void fanOut(int procs, boolean stealing) {
        Workloads.Run r = Workloads.fanOut(Workloads.config(procs, stealing), 48, 200_000);
        check(r, procs);
        Trace t = r.trace();
        assertEquals(48, t.count(Ev.GO_CREATE) - 1); // + main
        // go f() puts each new G in runnext and kicks the previous one to the local queue (reference 004).
        // Fewer than 47 when a thief empties runnext first (last steal pass) or main is preempted in
        // newproc and resumes elsewhere; on one P only the preemptions can interfere.
        int kicks = t.count(Ev.RUNQ_KICK);
        assertTrue(procs == 1 ? kicks >= 30 : kicks >= 1, "kicks: " + kicks);
        if (!stealing) {
            assertEquals(0, t.count(Ev.STEAL));
            for (int i = 0; i < t.size(); i++) {
                if (t.code(i) == Ev.GO_START) {
                    assertTrue(t.small(i) != Ev.F_STOLEN);
                }
            }
        }
    }

    @ParameterizedTest(name = "ping-pong GOMAXPROCS={0} stealing={1}")
    @MethodSource("grid")
    void pingPong(int procs, boolean stealing) {
        Workloads.Run r = Workloads.pingPong(Workloads.config(procs, stealing), 2000);
        check(r, procs);
        Trace t = r.trace();
        // hand-offs unblock the partner into runnext (on two Ps a release can find the partner not yet
        // parked, so not every one of the 4000 releases unblocks)
        assertTrue(t.count(Ev.GO_UNBLOCK) >= 500, "unblocks: " + t.count(Ev.GO_UNBLOCK));
        assertTrue(t.objects.values().stream().anyMatch(d -> d.startsWith("sema ping")), t.objects::toString);
    }

    @ParameterizedTest(name = "yield-loop GOMAXPROCS={0} stealing={1}")
    @MethodSource("grid")
    void yieldLoop(int procs, boolean stealing) {
        Workloads.Run r = Workloads.yieldLoop(Workloads.config(procs, stealing), 6, 10, 100_000);
        check(r, procs);
        assertTrue(r.trace().count(Ev.GO_STOP) >= 60);
    }

    @ParameterizedTest(name = "tight-loop GOMAXPROCS={0} stealing={1}")
    @MethodSource("grid")
    void tightLoop(int procs, boolean stealing) {
        Workloads.Run r = Workloads.tightLoop(Workloads.config(procs, stealing), 40_000_000, 1_000_000);
        check(r, procs);
        Trace t = r.trace();
        if (procs == 1) {
            // one P: the short goroutines can only run because sysmon preempted the loop
            assertTrue(t.count(Ev.PREEMPT_REQ) >= 1, "no preempt request");
            int preempted = 0;
            for (int i = 0; i < t.size(); i++) {
                if (t.code(i) == Ev.GO_STOP && t.small(i) == Ev.S_PREEMPT) {
                    preempted++;
                }
            }
            assertTrue(preempted >= 1, "the loop was never preempted");
            assertTrue(t.count(Ev.PREEMPT_YIELD) >= 1);
        }
    }

    /** The validator is not a rubber stamp: corrupting a real trace is caught. */
    @Test
    void detectsAGoroutineInTwoPlaces() {
        Workloads.Run r = Workloads.fanOut(Workloads.config(2, true), 8, 50_000);
        Trace t = r.trace();
        assertTrue(TraceValidator.validate(t).ok());
        // make the second GoStart claim the G of the first one while that one may still be anywhere
        int first = -1;
        int second = -1;
        for (int i = 0; i < t.size(); i++) {
            if (t.code(i) == Ev.GO_START) {
                if (first < 0) {
                    first = i;
                } else if (t.g(i) != t.g(first)) {
                    second = i;
                    break;
                }
            }
        }
        assertTrue(second > 0);
        long saved = t.g[second];
        t.g[second] = t.g[first];
        TraceValidator.Result res = TraceValidator.validate(t);
        assertFalse(res.ok(), "a G started twice was not noticed");
        t.g[second] = saved;
        // overlapping lanes: drop a GoStop so the next start on that P overlaps
        for (int i = 0; i < t.size(); i++) {
            if (t.code(i) == Ev.GO_STOP && t.small(i) == Ev.S_EXIT) {
                t.code[i] = Ev.TIMER_FIRE; // an event that moves no G
                break;
            }
        }
        TraceValidator.Result res2 = TraceValidator.validate(t, true, r.work());
        assertFalse(res2.ok(), "a missing stop was not noticed");
        assertTrue(
                res2.errors.stream().anyMatch(e -> e.contains("overlap") || e.contains("neither finished")),
                res2::toString);
    }

    /**
     * Every spin in a real trace pairs up on its M: the Ms that wakep wakes (or starts) already
     * spinning record their SpinStart too (they did not: a four-P fan-out of 48 had 15 starts and 19
     * stops, and the HTML timeline's count of spinning Ms missed the woken ones). Dropping one start
     * is caught.
     */
    @Test
    void everySpinStopHasItsStart() {
        Workloads.Run r = Workloads.fanOut(Workloads.config(4, true), 48, 200_000);
        Trace t = r.trace();
        TraceValidator.Result ok = TraceValidator.validate(t, true, r.work());
        assertTrue(ok.ok(), ok::toString);
        // a spin of an M whose idleness the trace already showed (its creation, a park or a wake-up)
        java.util.Set<Long> known = new java.util.HashSet<>();
        int start = -1;
        for (int i = 0; i < t.size() && start < 0; i++) {
            switch (t.code(i)) {
                case Ev.M_CREATE -> known.add(t.a(i));
                case Ev.M_PARK, Ev.M_UNPARK -> known.add(t.m(i));
                case Ev.SPIN_START -> {
                    if (known.contains(t.m(i)) && stopFollows(t, i)) {
                        start = i;
                    }
                }
                default -> {}
            }
        }
        assertTrue(start >= 0, "no M spun in a four-P fan-out");
        long m = t.m(start);
        t.code[start] = Ev.TIMER_FIRE; // an event that moves no G
        TraceValidator.Result res = TraceValidator.validate(t, true, r.work());
        assertTrue(
                res.errors.stream().anyMatch(e -> e.contains("M" + m + " stops spinning with no SpinStart")),
                res::toString);
    }

    /** Whether the spin that starts at event {@code start} ends in the trace (a SpinStop of its M). */
    private static boolean stopFollows(Trace t, int start) {
        for (int i = start + 1; i < t.size(); i++) {
            if (t.m(i) == t.m(start) && t.code(i) == Ev.SPIN_STOP) {
                return true;
            }
        }
        return false;
    }

    /**
     * One G in a P's runnext, as the HTML timeline's card shows it. A runnext steal records no
     * event until the thief's GoStart, so when the thief's carrier is descheduled between its
     * steal and that start (seen in CI: 5 ms, on the 2-CPU machine under the test run's load), the
     * owner's next put lands with no kick and the replay still has the stolen G in that runnext.
     * Emulated on a real trace: a kick dropped, and that G's start made a thief's start from P0.
     */
    @Test
    void aRunnextPutWithoutAKickLeavesOneGInRunnext() {
        Workloads.Run r = Workloads.fanOut(Workloads.config(1, true), 8, 50_000);
        Trace t = r.trace();
        int kick = -1;
        for (int i = 0; i < t.size() && kick < 0; i++) {
            if (t.code(i) == Ev.RUNQ_KICK) {
                kick = i;
            }
        }
        assertTrue(kick > 0, "no kick in a one-P fan-out");
        long taken = t.g(kick);
        int pp = t.p(kick);
        // As recorded, the kick follows the put that displaced the G (the grid above replays that:
        // the G is taken from the put until its kick). Stolen instead: no kick, and the G starts as a
        // thief's (from stolen, victim P0).
        int start = -1;
        for (int i = kick + 1; i < t.size() && start < 0; i++) {
            if (t.code(i) == Ev.GO_START && t.g(i) == taken) {
                start = i;
            }
        }
        assertTrue(start > kick, "G" + taken + " never started");
        t.code[kick] = Ev.TIMER_FIRE; // an event that moves no G
        t.small[start] = Ev.F_STOLEN;
        t.a[start] = pp;
        TraceValidator.Result mid = TraceValidator.stateAt(t, t.ts(start) - 1);
        assertTrue(runnextOf(mid, pp).size() <= 1, () -> "P" + pp + "'s runnext holds " + runnextOf(mid, pp));
        assertEquals("taken", TraceValidator.loc(mid.goroutines.get(taken)));
        TraceValidator.Result all = TraceValidator.validate(t, true, r.work());
        assertTrue(all.ok(), all::toString);
    }

    private static List<Long> runnextOf(TraceValidator.Result r, int p) {
        List<Long> in = new ArrayList<>();
        r.goroutines.forEach((g, s) -> {
            if (TraceValidator.loc(s).equals("runnext") && TraceValidator.p(s) == p) {
                in.add(g);
            }
        });
        return in;
    }

    @Test
    void declaredWorkMustBeCovered() {
        Workloads.Run r = Workloads.fanOut(Workloads.config(2, true), 4, 100_000);
        java.util.Map<Long, Long> tooMuch = new java.util.HashMap<>();
        r.work().forEach((g, w) -> tooMuch.put(g, w * 1000));
        assertFalse(TraceValidator.validate(r.trace(), true, tooMuch).ok());
        assertTrue(TraceValidator.validate(r.trace(), true, r.work()).ok());
    }
}
