package dev.gort.examples.showcase;

import dev.gort.Go;
import dev.gort.Syscall;
import dev.gort.Time;
import dev.gort.runtime.trace.Ev;
import dev.gort.runtime.trace.Trace;
import dev.gort.sync.WaitGroup;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Blocking system calls: S goroutines block their threads in a call ({@code Syscall.block} around
 * {@code Thread.sleep}, standing for a file read), while C goroutines have CPU work to do. Each
 * blocked goroutine keeps its M and, loosely, its P; sysmon sees the P stuck in a syscall for more
 * than a tick while work waits, takes it (retake) and hands it to another M (handoffp, startm), so
 * the thread count climbs past GOMAXPROCS and the CPU work does not wait for the calls.
 */
final class Syscalls extends Scenario {
    Syscalls() {
        super("syscalls", "Blocking syscalls: sysmon hands Ps away, threads climb past GOMAXPROCS");
    }

    @Override
    String explanation(Options o) {
        return o.syscalls + " goroutines block their threads for " + o.syscallMs
                + " ms in a system call (Thread.sleep, standing\n"
                + "for a file read) while others have CPU work. A blocked goroutine keeps its thread (M); sysmon\n"
                + "sees the P held by a blocked thread for more than a tick while work waits, retakes it and\n"
                + "hands it to another thread: the thread count climbs past GOMAXPROCS and the CPU work goes on.\n"
                + "Run twice: with the calls wrapped in Syscall.block (Go's entersyscall: "
                + (psyscall()
                        ? "with GODEBUG=psyscall=1, Go 1.25's model,\n"
                                + "the P leaves its thread and waits in _Psyscall until sysmon or the returning call takes it),\n"
                        : "the goroutine goes to _Gsyscall and,\n"
                                + "as in Go 1.26, its P stays _Prunning with the thread until sysmon takes it),\n")
                + "and unwrapped (a sleep the agent cannot see, as in a library it does not instrument: sysmon\n"
                + "sees the carrier thread blocked while it holds its P).";
    }

    /**
     * Whether the runs follow Go 1.25's {@code _Psyscall} model ({@code GODEBUG=psyscall=1}, read
     * as each run's runtime reads it) rather than Go 1.26's, the default.
     */
    static boolean psyscall() {
        return dev.gort.runtime.Config.Settings.fromEnvironment().psyscall();
    }

    @Override
    List<Variant> variants(Options o) {
        int procs = o.gomaxprocs > 0 ? o.gomaxprocs : defaultProcs();
        boolean steal = o.stealing == null || o.stealing;
        boolean spin = o.spinning == null || o.spinning;
        String pre = o.preempt != null ? o.preempt : Showcase.jvmPreempt();
        List<Variant> v = new java.util.ArrayList<>();
        for (String mode : o.syscall != null ? List.of(o.syscall) : List.of("wrapped", "unwrapped")) {
            String how = mode.equals("wrapped")
                    ? "calls wrapped in Syscall.block"
                    : "unwrapped calls (sysmon sees the blocked carriers)";
            v.add(new Variant(id, mode, describe(procs, steal, spin, pre) + "; " + how, procs, steal, spin, pre, mode));
        }
        return v;
    }

    @Override
    int defaultProcs() {
        return 2;
    }

    @Override
    int defaultSchedtrace() {
        return 10;
    }

    /** What the workload saw. */
    record Seen(long mainGoid, long cpuDoneAt, long callsDoneAt, int cpuGoroutines) {}

    /**
     * A call that blocks its thread (Go's read(2) on a slow file): announced with
     * {@code Syscall.block} (entersyscall/exitsyscall), or not at all (sysmon then finds the carrier
     * blocked while it holds a P). Unannounced, the sleep is reached through a method handle, where
     * the agent does not see it, as it does not see a blocking call inside a library it does not
     * instrument: the agent makes a plain {@code Thread.sleep} in a goroutine {@code time.Sleep}
     * (the goroutine parks, its carrier runs on) and wraps the JDK calls it knows to block in a
     * syscall itself.
     */
    static void blockingCall(long ms, boolean wrapped) {
        try {
            if (wrapped) {
                Syscall.block(() -> Thread.sleep(ms));
            } else {
                UNSEEN_SLEEP.invokeExact(ms);
            }
        } catch (InterruptedException e) {
            throw new IllegalStateException("interrupted in a blocking call", e);
        } catch (Throwable t) {
            throw new IllegalStateException("the blocking call failed", t);
        }
    }

    /** {@code Thread.sleep(long)}, called where the agent cannot see the call (a handle). */
    private static final java.lang.invoke.MethodHandle UNSEEN_SLEEP;

    static {
        try {
            UNSEEN_SLEEP = java.lang.invoke.MethodHandles.publicLookup()
                    .findStatic(Thread.class, "sleep", java.lang.invoke.MethodType.methodType(void.class, long.class));
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** The workload, as main runs it. */
    static Seen play(int calls, long callMs, int cpu, long cpuWork, boolean wrapped) {
        long t0 = Time.nanotime();
        WaitGroup wg = new WaitGroup();
        java.util.concurrent.atomic.AtomicLong callsDone = new java.util.concurrent.atomic.AtomicLong();
        java.util.concurrent.atomic.AtomicLong cpuDone = new java.util.concurrent.atomic.AtomicLong();
        // The callers first: they take the Ps and block in their calls; the CPU goroutines queue.
        for (int i = 0; i < calls; i++) {
            wg.add(1);
            Go.go(() -> {
                try {
                    blockingCall(callMs, wrapped);
                    callsDone.accumulateAndGet(Time.since(t0), Math::max);
                } finally {
                    wg.done();
                }
            });
        }
        for (int i = 0; i < cpu; i++) {
            wg.add(1);
            Go.go(() -> {
                try {
                    Lab.spin(cpuWork);
                    cpuDone.accumulateAndGet(Time.since(t0), Math::max);
                } finally {
                    wg.done();
                }
            });
        }
        wg.await();
        return new Seen(Go.goid(), cpuDone.get(), callsDone.get(), cpu);
    }

    @Override
    void warmUp(Options o, Variant v) {
        Lab.warm(v.config(), () -> play(2, 1, 2, 100 * Time.MICROSECOND, !"unwrapped".equals(v.mode())));
    }

    @Override
    Path run(Variant v, Options o, PrintStream out) throws Exception {
        int calls = o.syscalls;
        long callMs = o.syscallMs;
        int cpu = 4 * v.gomaxprocs();
        long cpuWork = 2 * Time.MILLISECOND;
        Lab.Outcome<Seen> r = Lab.run(
                v.config(),
                "blocking syscalls (" + v.id() + ")",
                o.schedtrace > 0 ? o.schedtrace : defaultSchedtrace(),
                o.scheddetail,
                s -> play(calls, callMs, cpu, cpuWork, !"unwrapped".equals(v.mode())));
        Trace t = r.trace();
        Seen seen = r.value();
        List<Long> kids = Facts.childrenOf(t, seen.mainGoid());
        Set<Long> callers = new LinkedHashSet<>(kids.subList(0, Math.min(calls, kids.size())));
        Showcase.printSched(out, r.sched(), o, o.schedtrace > 0 ? o.schedtrace : defaultSchedtrace());
        int maxThreads = (int) Math.max(r.threads(), Showcase.maxField(r.sched(), "threads"));
        int handoffs = Facts.count(t, Ev.HANDOFF, null);
        int mcreated = Facts.count(t, Ev.M_CREATE, null);
        Map<String, Integer> exits = Facts.syscallExits(t, callers);
        out.println("  figures:");
        out.printf(
                "    threads: %d at most (GOMAXPROCS=%d; %d threads created during the run, sysmon included, as threads= counts)%n",
                maxThreads, v.gomaxprocs(), mcreated);
        out.printf(
                "    handoffs: %d Ps taken from threads blocked in a syscall and handed to another thread%n", handoffs);
        if ("unwrapped".equals(v.mode())) {
            out.printf(
                    "    syscall exits: none (unwrapped calls do not enter a syscall: sysmon found the carriers blocked)%n");
        } else {
            out.printf(
                    "    syscall exits (which P the goroutine came back on): %s%n",
                    exits.isEmpty()
                            ? "none traced"
                            : exits.toString().replace("{", "").replace("}", ""));
        }
        out.printf(
                "    CPU work: %d goroutines x %d ms, the last done at +%s; the %d calls of %d ms, the last returned at +%s%n",
                seen.cpuGoroutines(),
                cpuWork / Time.MILLISECOND,
                Facts.ms(seen.cpuDoneAt()),
                calls,
                callMs,
                Facts.ms(seen.callsDoneAt()));
        if (maxThreads > v.gomaxprocs() + 1) {
            out.printf(
                    "  => the thread count climbed past GOMAXPROCS=%d to %d: each blocked call holds a thread, and%n"
                            + "     sysmon handed its P to another thread (%s)%s%n",
                    v.gomaxprocs(),
                    maxThreads,
                    Facts.n(handoffs, "handoff"),
                    seen.cpuDoneAt() < seen.callsDoneAt()
                            ? ", so the CPU work finished before the calls returned"
                            : "");
        } else {
            out.printf("  => threads stayed at %d: no P was handed off this time%n", maxThreads);
        }
        return Showcase.writeTimeline(t, v, o, out);
    }
}
