package dev.gort.examples.showcase;

import dev.gort.runtime.trace.Ev;
import dev.gort.runtime.trace.Trace;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/** Figures read from an execution trace (everything the showcase claims is counted here). */
final class Facts {
    private Facts() {}

    /** Goroutines whose creator was {@code parent}, in creation order. */
    static List<Long> childrenOf(Trace t, long parent) {
        List<Long> r = new java.util.ArrayList<>();
        for (int i = 0; i < t.size(); i++) {
            if (t.code(i) == Ev.GO_CREATE && t.a(i) == parent) {
                r.add(t.g(i));
            }
        }
        return r;
    }

    /** Per P: which of {@code gs} it started at least once, first start only. */
    static Map<Integer, Set<Long>> firstRunOn(Trace t, Set<Long> gs) {
        Map<Integer, Set<Long>> r = new TreeMap<>();
        Set<Long> seen = new HashSet<>();
        for (int i = 0; i < t.size(); i++) {
            if (t.code(i) == Ev.GO_START && gs.contains(t.g(i)) && seen.add(t.g(i))) {
                r.computeIfAbsent(t.p(i), k -> new TreeSet<>()).add(t.g(i));
            }
        }
        return r;
    }

    /** Per P: nanoseconds that goroutines in {@code gs} ran on it. */
    static Map<Integer, Long> busyOn(Trace t, Set<Long> gs) {
        Map<Integer, Long> r = new TreeMap<>();
        Map<Long, Long> startedAt = new java.util.HashMap<>();
        Map<Long, Integer> startedOn = new java.util.HashMap<>();
        for (int i = 0; i < t.size(); i++) {
            long g = t.g(i);
            if (!gs.contains(g)) {
                continue;
            }
            if (t.code(i) == Ev.GO_START) {
                startedAt.put(g, t.ts(i));
                startedOn.put(g, t.p(i));
            } else if (t.code(i) == Ev.GO_STOP || t.code(i) == Ev.SYSCALL_ENTER) {
                Long s = startedAt.remove(g);
                if (s != null) {
                    r.merge(startedOn.get(g), t.ts(i) - s, Long::sum);
                }
            }
        }
        return r;
    }

    /** What the thieves did: per thief P, the goroutines it took and in how many steals, from which victims. */
    record Steals(
            Map<Integer, Integer> gsByThief, Map<Integer, Integer> opsByThief, Map<Integer, Set<Integer>> victims) {
        int gs() {
            return gsByThief.values().stream().mapToInt(Integer::intValue).sum();
        }

        int ops() {
            return opsByThief.values().stream().mapToInt(Integer::intValue).sum();
        }
    }

    /** Counts the STEAL events: one per goroutine moved, the events of one steal share a timestamp and thief. */
    static Steals steals(Trace t) {
        Map<Integer, Integer> gs = new TreeMap<>();
        Map<Integer, Integer> ops = new TreeMap<>();
        Map<Integer, Set<Integer>> victims = new TreeMap<>();
        Map<Integer, Long> lastTs = new java.util.HashMap<>();
        Map<Integer, Integer> left = new java.util.HashMap<>();
        for (int i = 0; i < t.size(); i++) {
            if (t.code(i) != Ev.STEAL) {
                continue;
            }
            int thief = t.p(i);
            gs.merge(thief, 1, Integer::sum);
            victims.computeIfAbsent(thief, k -> new TreeSet<>()).add((int) t.a(i));
            int l = left.getOrDefault(thief, 0);
            Long last = lastTs.get(thief);
            if (l <= 0 || last == null || last != t.ts(i)) {
                ops.merge(thief, 1, Integer::sum);
                l = (int) t.x(i);
            }
            left.put(thief, l - 1);
            lastTs.put(thief, t.ts(i));
        }
        return new Steals(gs, ops, victims);
    }

    /**
     * The idle Ps' looks for work while a fan-out's queue surely held work. The window opens when the
     * spawner parks (by then every one of {@code gs} it created on its P, the victim, is created and
     * queued) and closes at the last stop on the victim before the victim picked, from its own
     * runnext or ring, the last of them that never left its queue (no steal, no spill to the global
     * queue, no batch from it): until then that goroutine sat in the victim's runnext or ring, and a
     * stop is recorded before the next pick, so a descheduled carrier cannot move the bound. A
     * goroutine preempted and run again, or one that went round another P's queue, does not count:
     * where it was in between, the trace does not say. A look is a spin of an M on another P: from
     * its SpinStart to its SpinStop; it came back empty when that SpinStop follows the M's release of
     * its P (findRunnable's delicate dance). A spinning M tries every running P's runnext and ring,
     * so an empty look wholly inside the window is a scheduler bug.
     *
     * @param during looks that overlap the window, whatever they found
     * @param empty looks wholly inside the window that came back empty
     * @param from the window's opening, or -1 when the trace has no park of the spawner
     * @param to the window's close (-1: the victim ran none of {@code gs} after the spawner parked)
     * @param victim the spawner's P when it parked (-1: no park)
     */
    record Looks(int during, int empty, long from, long to, int victim) {}

    static Looks thiefLooks(Trace t, long spawner, Set<Long> gs) {
        long from = -1;
        int victim = -1;
        long lastCreate = -1;
        for (int i = 0; i < t.size(); i++) {
            if (t.code(i) == Ev.GO_CREATE && gs.contains(t.g(i))) {
                lastCreate = t.ts(i);
            } else if (t.code(i) == Ev.GO_STOP
                    && t.g(i) == spawner
                    && t.small(i) == Ev.S_PARK
                    && lastCreate >= 0
                    && from < 0) {
                from = t.ts(i);
                victim = t.p(i);
            }
        }
        if (from < 0 || victim < 0) {
            return new Looks(0, 0, -1, -1, -1);
        }
        long to = -1;
        long lastStop = -1;
        Set<Long> onVictim = new HashSet<>(); // created on the victim, not moved since
        Set<Long> started = new HashSet<>();
        for (int i = 0; i < t.size(); i++) {
            int code = t.code(i);
            long g = t.g(i);
            if (code == Ev.GO_CREATE && gs.contains(g) && t.p(i) == victim) {
                onVictim.add(g);
            } else if (code == Ev.STEAL || code == Ev.RUNQ_TO_GLOBAL || code == Ev.GLOBAL_TO_LOCAL) {
                onVictim.remove(g);
            } else if (code == Ev.GO_STOP && t.p(i) == victim) {
                lastStop = t.ts(i);
            } else if (code == Ev.GO_START && gs.contains(g) && started.add(g)) {
                if (t.p(i) == victim
                        && onVictim.contains(g)
                        && (t.small(i) == Ev.F_RUNNEXT || t.small(i) == Ev.F_LOCAL)
                        && lastStop >= from) {
                    to = Math.max(to, lastStop);
                }
            }
        }
        int during = 0;
        int empty = 0;
        Map<Long, Long> spinSince = new java.util.HashMap<>();
        for (int i = 0; i < t.size(); i++) {
            long m = t.m(i);
            if (t.code(i) == Ev.SPIN_START && t.p(i) != victim) {
                spinSince.put(m, t.ts(i));
            } else if (t.code(i) == Ev.SPIN_STOP) {
                Long s = spinSince.remove(m);
                long e = t.ts(i);
                if (s == null || to < 0 || s >= to || e <= from) {
                    continue;
                }
                during++;
                if (t.p(i) < 0 && s >= from && e <= to) {
                    empty++;
                }
            }
        }
        return new Looks(during, empty, from, to, victim);
    }

    /** Number of events with {@code code} about a goroutine in {@code gs} (null: any). */
    static int count(Trace t, int code, Set<Long> gs) {
        int n = 0;
        for (int i = 0; i < t.size(); i++) {
            if (t.code(i) == code && (gs == null || gs.contains(t.g(i)))) {
                n++;
            }
        }
        return n;
    }

    /** GO_STOP events of goroutines in {@code gs} with reason {@code why} (Ev.S_*). */
    static int stops(Trace t, Set<Long> gs, int why) {
        int n = 0;
        for (int i = 0; i < t.size(); i++) {
            if (t.code(i) == Ev.GO_STOP && t.small(i) == why && gs.contains(t.g(i))) {
                n++;
            }
        }
        return n;
    }

    /** Timestamp of the first event with {@code code} about goroutine g, or -1. */
    static long first(Trace t, int code, long g) {
        for (int i = 0; i < t.size(); i++) {
            if (t.code(i) == code && t.g(i) == g) {
                return t.ts(i);
            }
        }
        return -1;
    }

    /** Timestamp of goroutine g's first stop for reason {@code why} (Ev.S_*), or -1. */
    static long firstStop(Trace t, long g, int why) {
        for (int i = 0; i < t.size(); i++) {
            if (t.code(i) == Ev.GO_STOP && t.g(i) == g && t.small(i) == why) {
                return t.ts(i);
            }
        }
        return -1;
    }

    /**
     * When the time slice of goroutine g's first run began, as the scheduler stamped it: that run's
     * GoStart if it began a fresh slice, else the last fresh GoStart on the same P before it (the
     * slice it inherited through runnext, which sysmon counts from). -1 if g never ran, or if the
     * inherited slice began before the trace did. Stamped by the carrier as it starts the slice,
     * not by the goroutine once it runs again, which a descheduled carrier can delay by
     * milliseconds.
     */
    static long sliceStartOfFirstRun(Trace t, long g) {
        for (int i = 0; i < t.size(); i++) {
            if (t.code(i) == Ev.GO_START && t.g(i) == g) {
                return t.x(i) == 0 ? t.ts(i) : freshStartBefore(t, t.p(i), i);
            }
        }
        return -1;
    }

    /**
     * The last GoStart on P p before event {@code before} that began a fresh slice (not inherited
     * through runnext): the start of the slice running on p then. -1 if it began before the trace.
     */
    private static long freshStartBefore(Trace t, int p, int before) {
        for (int k = before - 1; k >= 0; k--) {
            if (t.code(k) == Ev.GO_START && t.x(k) == 0 && t.p(k) == p) {
                return t.ts(k);
            }
        }
        return -1;
    }

    /**
     * How long after its time slice began goroutine g's first run came, when that run followed a
     * preemption: the slice is the one the last preemption before that run ended (its P's last fresh
     * GoStart before the preempted stop, which runs through runnext inherit). -1 if g never ran, no
     * preemption came before its first run, or that slice began before the trace did. Both ends are
     * the scheduler's stamps, so a carrier descheduled before g reads a clock does not move it.
     */
    static long afterPreemptedSlice(Trace t, long g) {
        int stop = -1;
        for (int i = 0; i < t.size(); i++) {
            if (t.code(i) == Ev.GO_STOP && t.small(i) == Ev.S_PREEMPT) {
                stop = i;
            } else if (t.code(i) == Ev.GO_START && t.g(i) == g) {
                long began = stop < 0 ? -1 : freshStartBefore(t, t.p(stop), stop);
                return began < 0 ? -1 : t.ts(i) - began;
            }
        }
        return -1;
    }

    /** Timestamp of the last event with {@code code} about a goroutine in gs, or -1. */
    static long last(Trace t, int code, Set<Long> gs) {
        for (int i = t.size() - 1; i >= 0; i--) {
            if (t.code(i) == code && gs.contains(t.g(i))) {
                return t.ts(i);
            }
        }
        return -1;
    }

    /** How the syscalls of gs ended (Ev.X_* outcome -> count). */
    static Map<String, Integer> syscallExits(Trace t, Set<Long> gs) {
        Map<String, Integer> r = new LinkedHashMap<>();
        for (int i = 0; i < t.size(); i++) {
            if (t.code(i) == Ev.SYSCALL_EXIT && gs.contains(t.g(i))) {
                r.merge(Ev.outcome(t.small(i)), 1, Integer::sum);
            }
        }
        return r;
    }

    /** One time slice of a group of goroutines: runs chained through runnext with an inherited slice. */
    /**
     * One time slice of a group of goroutines: {@code start} is its first run's start, which is the
     * slice's own start unless {@code inherited}: then that run inherited a slice that a goroutine
     * outside the group began earlier (its spawner's, through runnext), and sysmon counts from then.
     */
    record Slice(long start, long end, int runs, boolean preempted, boolean inherited) {
        long length() {
            return end - start;
        }
    }

    /**
     * The time slices used by the goroutines in gs: a slice begins with a run that did not inherit
     * a slice and goes on through every run that did; it ends with the last stop before the next
     * fresh start (preempted if one of its runs ended in a preemption). The group's first run may
     * inherit a slice begun outside it: that slice is marked {@code inherited}.
     */
    static List<Slice> slices(Trace t, Set<Long> gs) {
        List<Slice> r = new java.util.ArrayList<>();
        long start = -1;
        long end = -1;
        int runs = 0;
        boolean pre = false;
        boolean inherited = false;
        for (int i = 0; i < t.size(); i++) {
            if (!gs.contains(t.g(i))) {
                continue;
            }
            int c = t.code(i);
            if (c == Ev.GO_START) {
                if (t.x(i) == 0 || start < 0) {
                    if (start >= 0) {
                        r.add(new Slice(start, end, runs, pre, inherited));
                    }
                    start = t.ts(i);
                    end = t.ts(i);
                    runs = 0;
                    pre = false;
                    inherited = t.x(i) != 0;
                }
                runs++;
            } else if (c == Ev.GO_STOP && start >= 0) {
                end = t.ts(i);
                // A preempted goroutine's partner may still be in runnext and finish the slice.
                pre |= t.small(i) == Ev.S_PREEMPT;
            }
        }
        if (start >= 0) {
            r.add(new Slice(start, end, runs, pre, inherited));
        }
        return r;
    }

    /**
     * sysmon's preemption figures in one line: the requests, then every way they ended that occurred
     * (honoured, never reached, refused by reason, stale), so that the parts shown are all there are.
     */
    static String preemptions(dev.gort.runtime.PreemptStats p) {
        StringBuilder sb = new StringBuilder(n(p.requested(), "preemption request"));
        sb.append("; ").append(p.honoured()).append(" honoured at a yield point, ");
        sb.append(p.unhonoured()).append(" never reached one");
        long refused = p.refused();
        if (refused > 0) {
            sb.append(", ").append(refused).append(" refused (Java monitor ").append(p.refusedMonitor());
            sb.append(", j.u.c lock ").append(p.refusedLock()).append(", JDK lock frame ");
            sb.append(p.refusedJdkLock()).append(", class initialiser ").append(p.refusedClinit());
            sb.append(", pinned ").append(p.refusedPinned()).append(", runtime lock ");
            sb.append(p.refusedRuntimeLock()).append(")");
        }
        if (p.stale() > 0) {
            sb.append(", ").append(p.stale()).append(" stale (the goroutine had left)");
        }
        return sb.toString();
    }

    /**
     * Whether sysmon's figures add up: requests = honoured + never reached + refused + stale (the
     * whole runtime's, read once its carriers ended), and whether the trace's PreemptRequest events
     * are the requests raised while it recorded (between {@code tracedMin} and {@code tracedMax},
     * read around its start and stop as {@code Preempt.requestsTraced()} says: sysmon runs
     * meanwhile, and may stop between a request's count and its event). Says which does not.
     */
    static String preemptBalance(dev.gort.runtime.PreemptStats p, Trace t, long tracedMin, long tracedMax) {
        long refused = p.refused();
        long parts = p.honoured() + p.unhonoured() + refused + p.stale();
        int traced = t == null ? -1 : count(t, Ev.PREEMPT_REQ, null);
        StringBuilder sb = new StringBuilder();
        sb.append(parts == p.requested() ? "adds up: " : "DOES NOT add up: ")
                .append(p.requested())
                .append(" requests, ")
                .append(p.honoured())
                .append(" + ")
                .append(p.unhonoured())
                .append(" + ")
                .append(refused)
                .append(" + ")
                .append(p.stale())
                .append(" = ")
                .append(parts)
                .append(" (honoured + never reached + refused + stale)");
        if (traced >= 0) {
            String events = Facts.n(traced, "PreemptRequest event");
            if (traced >= tracedMin && traced <= tracedMax) {
                sb.append("; the trace has ").append(events).append(", one per request raised while it recorded");
            } else {
                String range = tracedMin == tracedMax ? Long.toString(tracedMin) : tracedMin + "-" + tracedMax;
                sb.append("; but the trace has ")
                        .append(events)
                        .append(" for the ")
                        .append(range)
                        .append(" requests raised while it recorded");
            }
        }
        return sb.toString();
    }

    /** "1 steal", "2 steals". */
    static String n(long n, String what) {
        return n + " " + what + (n == 1 ? "" : "s");
    }

    static String ms(long nanos) {
        return String.format("%.1f ms", nanos / 1e6);
    }
}
