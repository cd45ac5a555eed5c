package dev.gort.runtime.trace;

import dev.gort.runtime.G;
import dev.gort.runtime.M;
import dev.gort.runtime.P;
import dev.gort.runtime.Scheduler;
import java.lang.ref.WeakReference;
import java.util.ArrayList;
import java.util.List;
import jdk.jfr.Category;
import jdk.jfr.Description;
import jdk.jfr.Enabled;
import jdk.jfr.Event;
import jdk.jfr.EventType;
import jdk.jfr.FlightRecorder;
import jdk.jfr.FlightRecorderListener;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.Period;
import jdk.jfr.Recording;
import jdk.jfr.StackTrace;
import jdk.jfr.Threshold;
import jdk.jfr.Timespan;

/**
 * gort's JFR events, so that JDK Mission Control and {@code jfr print --events 'gort.*'} show
 * goroutines. JFR attributes every event to the carrier (M) thread, so each carries {@code goid}
 * and {@code p}.
 *
 * <p>Every event fed by the hooks is off by default: a JFR recording started with the JDK's default
 * or profile settings does not turn gort's hooks on (that would put every hook on its slow path,
 * for every program that runs with JFR on). {@code -Dgort.jfr=true} (or {@code GORT_JFR=1}) turns
 * them on in every recording, the JDK's {@code default} and {@code profile} ones included, with no
 * {@code .jfc} to extract: gort enables its events on each recording as it starts ({@link
 * Recording#enable}). Otherwise enable them with the shipped settings file ({@code jcmd <pid>
 * JFR.start settings=gort.jfc}, the resource {@code dev/gort/runtime/trace/gort.jfc}) or per event
 * ({@code gort.Park#enabled=true}). Only the periodic SchedStats is on by default (it costs nothing
 * between periods).
 *
 * <p>The events ride on the tracer's hooks: a listener on the flight recorder turns every runtime's
 * {@link Tracer#on} on while a recording enables any {@code gort.*} event, and off again after (no
 * buffering happens unless a trace session is also running). {@code gort.SchedStats} is periodic
 * (every second by default) and costs nothing between periods.
 */
public final class JfrEvents {
    private JfrEvents() {}

    // ---- events ----

    @Name("gort.GoroutineStart")
    @Enabled(false)
    @Label("Goroutine Start")
    @Category({"gort", "Goroutines"})
    @Description("A goroutine was created (go statement)")
    @StackTrace(false)
    public static final class GoroutineStart extends Event {
        @Label("Goroutine")
        public long goid;

        @Label("Parent Goroutine")
        public long parent;

        @Label("P")
        public int p;

        @Label("Function")
        public String function;
    }

    @Name("gort.GoroutineEnd")
    @Enabled(false)
    @Label("Goroutine End")
    @Category({"gort", "Goroutines"})
    @StackTrace(false)
    public static final class GoroutineEnd extends Event {
        @Label("Goroutine")
        public long goid;
    }

    @Name("gort.GoroutineRun")
    @Enabled(false)
    @Label("Goroutine Run")
    @Category({"gort", "Scheduler"})
    @Description("A goroutine ran on a P, from start to stop")
    @StackTrace(false)
    @Threshold("0 ms")
    public static final class GoroutineRun extends Event {
        @Label("Goroutine")
        public long goid;

        @Label("P")
        public int p;

        @Label("From")
        public String from;

        @Label("Stop Reason")
        public String stopReason;
    }

    @Name("gort.Park")
    @Enabled(false)
    @Label("Goroutine Park")
    @Category({"gort", "Goroutines"})
    @Description("A goroutine blocked (gopark) with Go's wait reason")
    @StackTrace(false)
    public static final class Park extends Event {
        @Label("Goroutine")
        public long goid;

        @Label("Wait Reason")
        public String reason;

        @Label("Object Id")
        public long objectId;
    }

    @Name("gort.Unblock")
    @Enabled(false)
    @Label("Goroutine Unblock")
    @Category({"gort", "Goroutines"})
    @StackTrace(false)
    public static final class Unblock extends Event {
        @Label("Goroutine")
        public long goid;

        @Label("Woken By")
        public long waker;

        @Label("Blocked For")
        @Timespan(Timespan.NANOSECONDS)
        public long blockedNanos;
    }

    @Name("gort.Preemption")
    @Enabled(false)
    @Label("Preemption")
    @Category({"gort", "Scheduler"})
    @Description("A goroutine yielded at a preemption poll after sysmon asked it to")
    @StackTrace(false)
    public static final class Preemption extends Event {
        @Label("Goroutine")
        public long goid;

        @Label("P")
        public int p;

        @Label("Request To Yield")
        @Timespan(Timespan.NANOSECONDS)
        public long latencyNanos;
    }

    @Name("gort.SyscallHandoff")
    @Enabled(false)
    @Label("Syscall Handoff")
    @Category({"gort", "Scheduler"})
    @Description("A P was taken from an M blocked in a syscall and handed to another M")
    @StackTrace(false)
    public static final class SyscallHandoff extends Event {
        @Label("P")
        public int p;

        @Label("From M")
        public long fromM;
    }

    @Name("gort.Steal")
    @Enabled(false)
    @Label("Work Steal")
    @Category({"gort", "Scheduler"})
    @StackTrace(false)
    public static final class Steal extends Event {
        @Label("Thief P")
        public int thief;

        @Label("Victim P")
        public int victim;

        @Label("Goroutines")
        public int count;
    }

    @Name("gort.SchedStats")
    @Label("Scheduler Statistics")
    @Category({"gort", "Scheduler"})
    @Description("The schedtrace summary line, sampled")
    @Period("1 s")
    @StackTrace(false)
    @Enabled(true)
    public static final class SchedStats extends Event {
        @Label("GOMAXPROCS")
        public int gomaxprocs;

        @Label("Idle Ps")
        public int idleprocs;

        @Label("Threads")
        public long threads;

        @Label("Spinning Threads")
        public int spinningthreads;

        @Label("Idle Threads")
        public int idlethreads;

        @Label("Global Run Queue")
        public int runqueue;

        @Label("Goroutines")
        public int goroutines;

        @Label("Local Run Queues")
        public String localRunqueues;
    }

    static final Class<?>[] HOOKED = {
        GoroutineStart.class,
        GoroutineEnd.class,
        GoroutineRun.class,
        Park.class,
        Unblock.class,
        Preemption.class,
        SyscallHandoff.class,
        Steal.class,
    };

    // ---- the gate: which runtimes exist, and whether a recording wants our events ----

    private static final List<WeakReference<Tracer>> TRACERS = new ArrayList<>();
    private static boolean listening;
    private static boolean periodic;

    /**
     * Registers the periodic SchedStats once JFR is up: addPeriodicEvent initializes JFR (about a
     * second on a loaded 2-core machine), so a runtime never calls it at creation unless a
     * recording already runs.
     */
    private static synchronized void ensurePeriodic() {
        if (!periodic) {
            periodic = true;
            FlightRecorder.addPeriodicEvent(SchedStats.class, JfrEvents::emitSchedStats);
        }
    }

    /** {@code -Dgort.jfr=true} / {@code GORT_JFR=1}: gort's events in every recording. Read at each use. */
    public static boolean gortJfr() {
        return dev.gort.runtime.Config.boolSetting("gort.jfr", "GORT_JFR", false);
    }

    /**
     * Under {@code -Dgort.jfr=true}: enables every gort event in {@code r} (run events from 0 ms, no
     * stack traces), as if its settings had them. Go has no JFR; this is the JVM's analogue of
     * starting {@code runtime/trace} with the program.
     */
    private static void enableIn(Recording r) {
        jdk.jfr.RecordingState st = r.getState();
        if (st != jdk.jfr.RecordingState.NEW
                && st != jdk.jfr.RecordingState.DELAYED
                && st != jdk.jfr.RecordingState.RUNNING) {
            return;
        }
        for (Class<?> c : HOOKED) {
            var es = r.enable(c.asSubclass(Event.class)).withoutStackTrace();
            if (c == GoroutineRun.class) {
                es.withThreshold(java.time.Duration.ZERO);
            }
        }
    }

    static synchronized void register(Tracer t) {
        TRACERS.removeIf(r -> r.get() == null);
        TRACERS.add(new WeakReference<>(t));
        if (!listening) {
            listening = true;
            try {
                FlightRecorder.addListener(new FlightRecorderListener() {
                    @Override
                    public void recordingStateChanged(Recording recording) {
                        if (gortJfr()) {
                            enableIn(recording);
                        }
                        ensurePeriodic();
                        refresh();
                    }
                });
            } catch (RuntimeException | Error e) {
                // JFR unavailable (e.g. a JVM built without it): the events stay off.
                return;
            }
        }
        if (FlightRecorder.isInitialized()) {
            if (gortJfr()) {
                for (Recording r : FlightRecorder.getFlightRecorder().getRecordings()) {
                    enableIn(r);
                }
            }
            ensurePeriodic();
            t.setJfr(wanted());
        }
    }

    static boolean wanted() {
        for (Class<?> c : HOOKED) {
            if (EventType.getEventType(c.asSubclass(Event.class)).isEnabled()) {
                return true;
            }
        }
        return false;
    }

    static synchronized void refresh() {
        boolean w = wanted();
        for (WeakReference<Tracer> r : TRACERS) {
            Tracer t = r.get();
            if (t != null) {
                t.setJfr(w);
            }
        }
    }

    private static void emitSchedStats() {
        List<Tracer> live = new ArrayList<>();
        synchronized (JfrEvents.class) {
            for (WeakReference<Tracer> r : TRACERS) {
                Tracer t = r.get();
                if (t != null && t.scheduler() != null) {
                    live.add(t);
                }
            }
        }
        for (Tracer t : live) {
            Scheduler s = t.scheduler();
            SchedStats e = new SchedStats();
            e.gomaxprocs = s.gomaxprocs();
            e.idleprocs = s.npidle();
            e.threads = s.mcountPublic();
            e.spinningthreads = s.nmspinning();
            e.idlethreads = s.nmidle();
            e.runqueue = s.globalRunqSize();
            e.goroutines = s.numGoroutine();
            StringBuilder sb = new StringBuilder("[");
            for (P pp : s.allp()) {
                sb.append(' ').append(pp.runq.size());
            }
            e.localRunqueues = sb.append(" ]").toString();
            e.commit();
        }
    }

    // ---- emitters (called from the tracer's hooks when jfr is on) ----

    static void goroutineStart(G gp, G parent, P pp) {
        GoroutineStart e = new GoroutineStart();
        if (e.shouldCommit()) {
            e.goid = gp.goid;
            e.parent = parent == null ? 0 : parent.goid;
            e.p = pp == null ? -1 : pp.id;
            e.function = Trace.GInfo.startName(gp);
            e.commit();
        }
    }

    static void goroutineEnd(G gp) {
        GoroutineEnd e = new GoroutineEnd();
        if (e.shouldCommit()) {
            e.goid = gp.goid;
            e.commit();
        }
    }

    /** The run event of the G now on this M: begun at start, committed at stop. Per M, in its buffer. */
    static void runBegin(TraceBuf b, G gp, P pp, int from) {
        GoroutineRun e = new GoroutineRun();
        if (!e.isEnabled()) {
            b.jfrRun = null;
            return;
        }
        e.begin();
        e.goid = gp.goid;
        e.p = pp == null ? -1 : pp.id;
        e.from = Ev.from(from);
        b.jfrRun = e;
    }

    static void runEnd(TraceBuf b, G gp, int why) {
        Object o = b.jfrRun;
        b.jfrRun = null;
        if (o instanceof GoroutineRun e && e.goid == gp.goid) {
            e.end();
            if (e.shouldCommit()) {
                e.stopReason = Ev.stop(why);
                e.commit();
            }
        }
    }

    static void park(G gp, long objectId) {
        if (new Unblock().isEnabled()) {
            gp.setJfrParkNanos(System.nanoTime()); // the start of the Unblock's blockedNanos
        }
        Park e = new Park();
        if (e.shouldCommit()) {
            e.goid = gp.goid;
            e.reason = gp.waitReason().go();
            e.objectId = objectId;
            e.commit();
        }
    }

    static void unblock(G gp, G waker) {
        long since = gp.jfrParkNanos(); // 0: the park was not seen by this recording
        if (since != 0) {
            gp.setJfrParkNanos(0); // never the start of a later wait's blockedNanos
        }
        Unblock e = new Unblock();
        if (e.shouldCommit()) {
            e.goid = gp.goid;
            e.waker = waker == null ? 0 : waker.goid;
            e.blockedNanos = since == 0 ? 0 : System.nanoTime() - since;
            e.commit();
        }
    }

    static void preemption(G gp, P pp, long latency) {
        Preemption e = new Preemption();
        if (e.shouldCommit()) {
            e.goid = gp.goid;
            e.p = pp == null ? -1 : pp.id;
            e.latencyNanos = latency;
            e.commit();
        }
    }

    static void handoff(P pp, M from) {
        SyscallHandoff e = new SyscallHandoff();
        if (e.shouldCommit()) {
            e.p = pp.id;
            e.fromM = from == null ? -1 : from.id;
            e.commit();
        }
    }

    static void steal(P thief, P victim, int n) {
        Steal e = new Steal();
        if (e.shouldCommit()) {
            e.thief = thief == null ? -1 : thief.id;
            e.victim = victim == null ? -1 : victim.id;
            e.count = n;
            e.commit();
        }
    }
}
