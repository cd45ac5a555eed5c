package dev.gort.runtime.trace;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gort.runtime.G;
import dev.gort.runtime.GoSema;
import dev.gort.runtime.Poll;
import dev.gort.runtime.Scheduler;
import dev.gort.runtime.Syscalls;
import dev.gort.runtime.Timer;
import dev.gort.runtime.WaitReason;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link GoTraceWriter}: gort's traces in Go 1.19's binary format. Each workload's trace is written,
 * read back by the tests' own reader of the format ({@link GoTraceDecoder}: the framing, the batches,
 * the merge by sequence numbers and the state machine of Go's internal/trace), and by {@code go tool
 * trace -d} of Go 1.19 and, if installed, Go 1.23 (skipped, saying so, without Go), and the events of
 * each kind are counted against gort's own records.
 */
class GoTraceWriterTest {
    @TempDir
    Path tmp;

    /**
     * Channel-like hand-offs (parks as chan receive and chan send), a select, a sync.Mutex and a
     * sync.Cond wait, Gosched, a sleep, a syscall that hands its P off, and, at GOMAXPROCS=1, a
     * CPU-bound goroutine that sysmon preempts while another goroutine waits for the P.
     */
    static void workload(int rounds) {
        Scheduler rt = Scheduler.current();
        GoSema done = new GoSema("done", 0);
        GoSema recv = new GoSema("recv", 0, WaitReason.CHAN_RECEIVE);
        GoSema send = new GoSema("send", 0, WaitReason.CHAN_SEND);
        GoSema sel = new GoSema("select", 0, WaitReason.SELECT);
        GoSema mu = new GoSema("mutex", 0, WaitReason.SYNC_MUTEX_LOCK);
        GoSema cond = new GoSema("cond", 0, WaitReason.SYNC_COND_WAIT);
        int gs = 0;
        rt.newproc(
                () -> { // "receiver"
                    for (int i = 0; i < rounds; i++) {
                        recv.acquire();
                        send.release();
                    }
                    done.release();
                });
        rt.newproc(
                () -> { // "sender"
                    for (int i = 0; i < rounds; i++) {
                        recv.release();
                        send.acquire();
                    }
                    done.release();
                });
        gs += 2;
        rt.newproc(() -> {
            sel.acquire();
            mu.acquire();
            cond.acquire();
            done.release();
        });
        gs++;
        rt.newproc(() -> {
            for (int i = 0; i < 5; i++) {
                Scheduler.gosched();
            }
            Timer.timeSleep(1_000_000L);
            sel.release();
            mu.release();
            cond.release();
            done.release();
        });
        gs++;
        rt.newproc(
                () -> { // a call known to block: its P is handed off at once
                    G g = Syscalls.entersyscallblock();
                    Workloads.spin(2_000_000L);
                    Syscalls.exitsyscall(g);
                    done.release();
                });
        gs++;
        AtomicBoolean looping = new AtomicBoolean();
        rt.newproc(
                () -> { // CPU-bound, with the agent's back-edge poll: preempted by sysmon after ~10 ms
                    looping.set(true);
                    // 30 ms, and on until a preemption was honoured (a loaded machine may not run
                    // this carrier long enough in 30 ms of wall time for sysmon's request to meet a
                    // poll); bounded, so that a runtime that never preempts fails the assertion
                    long preempted = rt.stats.preemptions.get();
                    long start = System.nanoTime();
                    long now;
                    do {
                        Poll.poll();
                        now = System.nanoTime();
                    } while (now - start < 30_000_000L
                            || (rt.stats.preemptions.get() == preempted && now - start < 20_000_000_000L));
                    done.release();
                });
        gs++;
        while (!looping.get()) {
            Scheduler.gosched();
        }
        for (int i = 0; i < gs; i++) {
            done.acquire();
        }
    }

    private static Trace traced(int procs, Tracer.Options o, Runnable main) {
        Scheduler s = new Scheduler(Workloads.config(procs, true));
        s.trace.start(o);
        s.run(main);
        return s.trace.stop();
    }

    @Test
    void aTraceAtGomaxprocs1ReadsBackInGoTools() throws Exception {
        Trace t = traced(1, new Tracer.Options().workload("go-format"), () -> workload(200));
        Checked c = check(t, "p1.trace");
        assertTrue(c.stats.count(GoTraceWriter.EV_GO_PREEMPT) > 0, "no preemption at GOMAXPROCS=1");
        assertTrue(c.stats.count(GoTraceWriter.EV_GO_SYS_BLOCK) > 0, "no syscall hand-off");
    }

    @Test
    void aTraceAtGomaxprocs2ReadsBackInGoTools() throws Exception {
        Trace t = traced(2, new Tracer.Options().workload("go-format"), () -> workload(200));
        check(t, "p2.trace");
    }

    /**
     * A trace started mid-run: goroutines already waiting, runnable, running and in a syscall when it
     * starts get Go's start-of-trace events (EvGoCreate, then EvGoWaiting, EvGoInSyscall or EvGoStart).
     */
    @Test
    void aTraceStartedMidRunDescribesTheGoroutinesAliveThen() throws Exception {
        Trace[] out = new Trace[1];
        Scheduler s = new Scheduler(Workloads.config(2, true));
        s.run(() -> {
            Scheduler rt = Scheduler.current();
            GoSema parked = new GoSema("recv", 0, WaitReason.CHAN_RECEIVE);
            GoSema done = new GoSema("done", 0);
            CountDownLatch inSyscall = new CountDownLatch(1);
            CountDownLatch leave = new CountDownLatch(1);
            rt.newproc(() -> {
                parked.acquire();
                done.release();
            });
            rt.newproc(() -> {
                G g = Syscalls.entersyscallblock();
                inSyscall.countDown();
                try {
                    leave.await(10, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                Syscalls.exitsyscall(g);
                done.release();
            });
            try {
                assertTrue(inSyscall.await(10, TimeUnit.SECONDS));
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            }
            while (rt.trace.recording() || !waiting(rt)) {
                Scheduler.gosched();
            }
            rt.trace.start(new Tracer.Options().workload("mid-run"));
            leave.countDown();
            parked.release();
            workload(50);
            done.acquire();
            done.acquire();
            out[0] = rt.trace.stop();
        });
        Trace t = out[0];
        Checked c = check(t, "mid.trace");
        assertTrue(c.stats.count(GoTraceWriter.EV_GO_WAITING) >= 1, "no EvGoWaiting");
        // the goroutine in its syscall (and any whose blocked carrier sysmon took for one)
        assertTrue(c.stats.count(GoTraceWriter.EV_GO_IN_SYSCALL) >= 1, "no EvGoInSyscall");
    }

    /** Whether some goroutine other than the caller is parked (the receiver above). */
    private static boolean waiting(Scheduler rt) {
        return rt.numGoroutine() >= 3;
    }

    /**
     * Traces started and stopped again and again while both Ps go idle and are taken again (two
     * workloads beside): every one of them in Go's model with nothing to repair. Tracer.start
     * snapshots with the world stopped; a snapshot taken while the Ms ran missed transitions
     * between it and the hooks' start (a goroutine started while the snapshot had it waiting, a P
     * acquired with no ProcStart): it failed in each of 3 runs. The world stopped, an M leaving a
     * syscall without a P still could (about 1 run in 4), until the trace sections
     * ({@link #tracesStartedBesideGoroutinesWithoutAPNeedNoRepair}).
     */
    @Test
    void tracesStartedMidRunMissNoTransition() {
        List<String> repaired = new ArrayList<>();
        Scheduler s = new Scheduler(Workloads.config(2, true));
        s.run(() -> {
            Scheduler rt = Scheduler.current();
            java.util.concurrent.atomic.AtomicBoolean stop = new java.util.concurrent.atomic.AtomicBoolean();
            GoSema done = new GoSema("done", 0);
            for (int w = 0; w < 2; w++) {
                rt.newproc(() -> {
                    while (!stop.get()) {
                        workload(20);
                    }
                    done.release();
                });
            }
            for (int i = 0; i < 150 && repaired.isEmpty(); i++) {
                rt.trace.start(new Tracer.Options().workload("again " + i));
                Scheduler.gosched();
                Trace t = rt.trace.stop();
                try {
                    repaired.addAll(GoTraceWriter.write(t, OutputStream.nullOutputStream())
                            .adjustments());
                } catch (java.io.IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            }
            stop.set(true);
            done.acquire();
            done.acquire();
        });
        assertEquals(List.of(), repaired, "the writer had to repair a trace started mid-run");
    }

    /**
     * Traces started and stopped over and over beside every way a goroutine changes status on a
     * thread that holds no P, which a start's stopped world does not stop (Tracer.sectionBegin):
     * syscalls that hand their P off and find none free at their exit (exitsyscall0), goroutines
     * that park and yield inside a syscall whose P the start took (M.run's departures), a
     * goroutine readied by a thread outside the runtime, and goroutines readied by a goroutine in a
     * syscall. Not one trace may need a repair. Without the sections, four runs had their first
     * repair after 12 to 48 traces ("G leaves a syscall while runnable": an exitsyscall0), and a
     * park cancelled in a syscall without a P went untraced (its goroutine "starts while waiting").
     */
    @Test
    @org.junit.jupiter.api.Tag("stress")
    void tracesStartedBesideGoroutinesWithoutAPNeedNoRepair() throws Exception {
        for (boolean psyscall : new boolean[] {false, true}) {
            List<String> repaired = new ArrayList<>();
            int[] traces = new int[1];
            dev.gort.runtime.Config c = Workloads.config(2, true);
            dev.gort.runtime.Config.Settings st = c.settings();
            c = c.withSettings(st.withGodebug(st.godebug().with("psyscall=" + (psyscall ? 1 : 0))));
            Scheduler s = new Scheduler(c);
            s.run(() -> {
                Scheduler rt = Scheduler.current();
                AtomicBoolean stop = new AtomicBoolean();
                GoSema done = new GoSema("done", 0);
                int gs = 0;
                for (int w = 0; w < 2; w++, gs++) {
                    rt.newproc(
                            () -> { // a syscall that hands its P off; at its exit, often none is free
                                while (!stop.get()) {
                                    G g = Syscalls.entersyscallblock();
                                    Workloads.spin(20_000L);
                                    Syscalls.exitsyscall(g);
                                }
                                done.release();
                            });
                }
                GoSema ping = new GoSema("ping", 0, WaitReason.CHAN_RECEIVE);
                GoSema pong = new GoSema("pong", 0, WaitReason.CHAN_RECEIVE);
                AtomicBoolean last = new AtomicBoolean();
                rt.newproc(
                        () -> { // parks and yields inside its syscall; readies from it too
                            while (!last.get()) {
                                G g = Syscalls.entersyscall();
                                ping.acquire();
                                last.set(stop.get());
                                Scheduler.gosched();
                                pong.release();
                                Syscalls.exitsyscall(g);
                            }
                            done.release();
                        });
                gs++;
                rt.newproc(() -> {
                    do {
                        ping.release();
                        pong.acquire();
                    } while (!last.get());
                    done.release();
                });
                gs++;
                GoSema outside = new GoSema("outside", 0, WaitReason.CHAN_RECEIVE);
                dev.gort.runtime.ExternalWaker waker = rt.externalWaker();
                Thread t = new Thread(
                        () -> { // readies a goroutine from outside the runtime
                            try (waker) {
                                while (!stop.get()) {
                                    outside.release();
                                    Thread.onSpinWait();
                                }
                                outside.release();
                            }
                        });
                t.start();
                rt.newproc(() -> {
                    while (!stop.get()) {
                        outside.acquire();
                    }
                    done.release();
                });
                gs++;
                traces[0] = traceAgainAndAgain(rt, 300, 200_000L, false, repaired);
                stop.set(true);
                for (int i = 0; i < gs; i++) {
                    done.acquire();
                }
                try {
                    t.join();
                } catch (InterruptedException e) {
                    throw new AssertionError(e);
                }
            });
            assertEquals(List.of(), repaired, "psyscall=" + psyscall + ": repaired after " + traces[0] + " traces");
        }
    }

    /**
     * Traces started again while one records ({@code alreadyOn}: the hooks are on throughout) or
     * after a stop, beside a thread outside the runtime creating goroutines (newproc with no P,
     * whose CAS, hook and global-queue put are ordered so that no section is needed while the
     * hooks are off). With them on, the new session was published before its snapshot, and a
     * creation's record went into it as well as the snapshot's status: "created twice" after 10
     * traces (the review of the trace sections). The session is now published after its snapshot.
     */
    @org.junit.jupiter.params.ParameterizedTest(name = "alreadyOn={0}")
    @org.junit.jupiter.params.provider.ValueSource(booleans = {false, true})
    @org.junit.jupiter.api.Tag("stress")
    void tracesRestartedBesideGoroutinesCreatedOutsideNeedNoRepair(boolean alreadyOn) {
        List<String> repaired = new ArrayList<>();
        int[] traces = new int[1];
        Scheduler s = new Scheduler(Workloads.config(2, true));
        s.run(() -> {
            Scheduler rt = Scheduler.current();
            AtomicBoolean stop = new AtomicBoolean();
            java.util.concurrent.atomic.AtomicInteger live = new java.util.concurrent.atomic.AtomicInteger();
            dev.gort.runtime.ExternalWaker waker = rt.externalWaker();
            Thread spawner = new Thread(() -> {
                try (waker) {
                    while (!stop.get()) {
                        if (live.get() < 64) {
                            live.incrementAndGet();
                            rt.newproc(live::decrementAndGet);
                        } else {
                            Thread.onSpinWait();
                        }
                    }
                }
            });
            spawner.start();
            traces[0] = traceAgainAndAgain(rt, 300, 100_000L, alreadyOn, repaired);
            stop.set(true);
            try {
                spawner.join();
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            }
            while (live.get() > 0) {
                Scheduler.gosched();
            }
        });
        assertEquals(List.of(), repaired, "alreadyOn=" + alreadyOn + ": repaired after " + traces[0] + " traces");
    }

    /**
     * Starts and stops a trace up to {@code n} times, {@code ns} apart, until one needs a repair
     * (its repairs go to {@code repaired}); with {@code restart}, each over a first trace started
     * {@code ns / 2} before, so that the hooks are on throughout. Returns how many were read.
     */
    private static int traceAgainAndAgain(Scheduler rt, int n, long ns, boolean restart, List<String> repaired) {
        int traces = 0;
        for (int i = 0; i < n && repaired.isEmpty(); i++) {
            if (restart) {
                rt.trace.start(new Tracer.Options().workload("first " + i));
                Timer.timeSleep(ns / 2);
            }
            rt.trace.start(new Tracer.Options().workload("again " + i)); // replaces the first, if any
            Timer.timeSleep(ns);
            Trace tr = rt.trace.stop();
            traces++;
            try {
                repaired.addAll(
                        GoTraceWriter.write(tr, OutputStream.nullOutputStream()).adjustments());
            } catch (IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        }
        return traces;
    }

    /** A flight-recorder window: the trace starts mid-stream, with no status events; the first event of each goroutine places it. */
    @Test
    void aFlightRecorderWindowReadsBackInGoTools() throws Exception {
        Trace t = traced(2, new Tracer.Options().window(60), () -> {
            for (int i = 0; i < 6; i++) {
                workload(300);
            }
        });
        assertFalse(t.complete, "the window cut nothing");
        check(t, "window.trace");
    }

    /** {@code -Dgort.trace=trace.out} and {@code *.trace} choose this format; {@code out.txt} still none. */
    @Test
    void theGoFormatIsChosenByItsNames() {
        assertEquals(TraceFormat.GO, TraceFormat.of("run.trace"));
        assertEquals(TraceFormat.GO, TraceFormat.of("run.TRACE"));
        assertEquals(TraceFormat.GO, TraceFormat.of("trace.out"));
        assertEquals(TraceFormat.GO, TraceFormat.of("/tmp/x/trace.out"));
        assertEquals(TraceFormat.GO, TraceFormat.of("sieve.trace.out"));
        for (String none : new String[] {"run.out", "xtrace.out", ".trace", "run.trace/"}) {
            assertEquals(null, TraceFormat.of(none), none);
        }
    }

    // ------------------------------------------------------------------------------------------

    record Checked(GoTraceWriter.Stats stats, GoTraceDecoder decoded) {}

    /**
     * Writes {@code t} in Go's format (through {@link TraceFiles}, as {@code -Dgort.trace} does), reads it
     * back with the tests' reader and with Go's tools, and counts.
     */
    Checked check(Trace t, String name) throws Exception {
        TraceValidator.Result v = TraceValidator.validate(t);
        assertTrue(v.ok(), v::toString);
        ByteArrayOutputStream bo = new ByteArrayOutputStream();
        GoTraceWriter.Stats stats = GoTraceWriter.write(t, bo);
        assertEquals(List.of(), stats.adjustments(), "the writer had to adjust");
        Path file = tmp.resolve(name);
        TraceFiles.write(t, file);
        byte[] bytes = Files.readAllBytes(file);
        assertTrue(java.util.Arrays.equals(bo.toByteArray(), bytes), "TraceFiles wrote another file");
        GoTraceDecoder d = GoTraceDecoder.decode(bytes);
        // Everything written was read, by kind.
        Map<Integer, Integer> written = new TreeMap<>(stats.counts());
        assertEquals(written, d.rawCounts, "events written vs read");
        expectCounts(t, stats, d);
        goTool(file, d);
        System.out.println("GoTraceWriterTest: " + name + ": " + t.size() + " gort events, " + d.events.size()
                + " Go events " + named(d.counts));
        return new Checked(stats, d);
    }

    private static Map<String, Integer> named(Map<Integer, Integer> counts) {
        Map<String, Integer> m = new TreeMap<>();
        counts.forEach((k, v) -> m.put(GoTraceWriter.NAMES.get(k), v));
        return m;
    }

    /** The Go events of each kind against gort's own records. */
    static void expectCounts(Trace t, GoTraceWriter.Stats st, GoTraceDecoder d) {
        Map<Long, Integer> first = new HashMap<>();
        Set<Long> statusGs = new HashSet<>();
        int running = 0;
        int inSyscall = 0;
        int waitingAtStart = 0;
        Map<String, Integer> gort = new TreeMap<>();
        for (int i = 0; i < t.size(); i++) {
            int c = t.code(i);
            long g = t.g(i);
            if (g != 0) {
                first.putIfAbsent(g, c);
            }
            if (c == Ev.GO_STATUS) {
                statusGs.add(g);
                switch (t.small(i)) {
                    case Ev.L_RUNNING -> running++;
                    case Ev.L_SYSCALL -> inSyscall++;
                    case Ev.L_WAITING -> waitingAtStart++;
                    default -> {}
                }
            }
            String k = switch (c) {
                case Ev.GO_CREATE -> "create";
                case Ev.GO_START -> t.small(i) == Ev.F_RESUME ? "resume" : "start";
                case Ev.GO_UNBLOCK -> "unblock";
                case Ev.SYSCALL_ENTER -> "syscall";
                case Ev.SYSCALL_EXIT -> "sysexit";
                case Ev.GO_STOP ->
                    switch (t.small(i)) {
                        case Ev.S_PARK -> "park " + WaitReason.values()[(int) t.a(i)];
                        case Ev.S_GOSCHED -> "gosched";
                        case Ev.S_PREEMPT, Ev.S_YIELD -> "preempt";
                        default -> "exit";
                    };
                default -> null;
            };
            if (k != null) {
                gort.merge(k, 1, Integer::sum);
            }
        }
        int alive = 0; // goroutines that existed when the trace began
        for (Map.Entry<Long, Integer> e : first.entrySet()) {
            if (e.getValue() != Ev.GO_CREATE) {
                alive++;
            }
        }
        if (!t.complete) { // a window: a goroutine first seen stopping or entering a syscall ran at its start
            Set<Long> seen = new HashSet<>();
            for (int i = 0; i < t.size(); i++) {
                int c = t.code(i);
                if (t.g(i) != 0
                        && seen.add(t.g(i))
                        && t.p(i) >= 0
                        && (c == Ev.GO_STOP || c == Ev.SYSCALL_ENTER || c == Ev.PREEMPT_REQ || c == Ev.PREEMPT_YIELD)) {
                    running++;
                }
            }
        }
        if (t.complete) {
            assertEquals(statusGs.size(), alive, "goroutines alive at the start: their status events");
        }
        assertEquals(gort.getOrDefault("create", 0) + alive, d.count(GoTraceWriter.EV_GO_CREATE), "EvGoCreate");
        assertEquals(
                gort.getOrDefault("park " + WaitReason.CHAN_RECEIVE, 0),
                d.count(GoTraceWriter.EV_GO_BLOCK_RECV),
                "EvGoBlockRecv");
        assertEquals(
                gort.getOrDefault("park " + WaitReason.CHAN_SEND, 0),
                d.count(GoTraceWriter.EV_GO_BLOCK_SEND),
                "EvGoBlockSend");
        assertEquals(
                gort.getOrDefault("park " + WaitReason.SELECT, 0),
                d.count(GoTraceWriter.EV_GO_BLOCK_SELECT),
                "EvGoBlockSelect");
        assertEquals(
                gort.getOrDefault("park " + WaitReason.SEMACQUIRE, 0)
                        + gort.getOrDefault("park " + WaitReason.SYNC_MUTEX_LOCK, 0),
                d.count(GoTraceWriter.EV_GO_BLOCK_SYNC),
                "EvGoBlockSync");
        assertEquals(
                gort.getOrDefault("park " + WaitReason.SYNC_COND_WAIT, 0),
                d.count(GoTraceWriter.EV_GO_BLOCK_COND),
                "EvGoBlockCond");
        assertEquals(gort.getOrDefault("park " + WaitReason.SLEEP, 0), d.count(GoTraceWriter.EV_GO_SLEEP), "EvGoSleep");
        // and one for each goroutine still running at the end (Go's StopTrace's traceGoSched)
        assertTrue(st.closed() <= t.procs(0), "more goroutines running at the end than Ps");
        assertEquals(gort.getOrDefault("gosched", 0) + st.closed(), d.count(GoTraceWriter.EV_GO_SCHED), "EvGoSched");
        assertEquals(gort.getOrDefault("preempt", 0), d.count(GoTraceWriter.EV_GO_PREEMPT), "EvGoPreempt");
        assertEquals(gort.getOrDefault("exit", 0), d.count(GoTraceWriter.EV_GO_END), "EvGoEnd");
        assertEquals(gort.getOrDefault("syscall", 0), d.count(GoTraceWriter.EV_GO_SYS_CALL), "EvGoSysCall");
        // a cancelled park is Go's park_m: an unblock and a start of its own
        assertEquals(
                gort.getOrDefault("unblock", 0) + gort.getOrDefault("resume", 0),
                d.count(GoTraceWriter.EV_GO_UNBLOCK),
                "EvGoUnblock");
        // starts: gort's, those running at the start, and one after each exit from a handed-off syscall
        int starts = gort.getOrDefault("start", 0) + gort.getOrDefault("resume", 0) + running;
        int exits = d.count(GoTraceWriter.EV_GO_SYS_EXIT);
        assertTrue(exits <= gort.getOrDefault("sysexit", 0) + 0, "more EvGoSysExit than syscall exits");
        int goStarts = d.count(GoTraceWriter.EV_GO_START);
        assertTrue(
                goStarts >= starts && goStarts <= starts + exits,
                "EvGoStart " + goStarts + " for " + starts + " starts and " + exits + " syscall exits");
        if (t.complete) {
            assertEquals(waitingAtStart, d.count(GoTraceWriter.EV_GO_WAITING), "EvGoWaiting");
            assertEquals(inSyscall, d.count(GoTraceWriter.EV_GO_IN_SYSCALL), "EvGoInSyscall");
        }
        // every blocked syscall that is not still blocked at the end was left
        assertTrue(d.count(GoTraceWriter.EV_GO_SYS_BLOCK) + d.count(GoTraceWriter.EV_GO_IN_SYSCALL) >= exits);
        assertEquals(
                1 + count(t, Ev.GOMAXPROCS) - (t.size() > 0 && t.code(0) == Ev.GOMAXPROCS ? 1 : 0),
                d.count(GoTraceWriter.EV_GOMAXPROCS),
                "EvGomaxprocs");
    }

    private static int count(Trace t, int code) {
        return t.count(code);
    }

    // ---- Go's tools

    /**
     * Go toolchains to check with: the first of $GORT_GO, Debian's golang-1.19-go, /usr/local/go, /usr/bin/go
     * (as PprofTest finds one), and Go 1.23 where installed.
     */
    static List<Path> goBinaries() {
        List<Path> out = new ArrayList<>();
        List<String> c = new ArrayList<>();
        if (System.getenv("GORT_GO") != null) {
            c.add(System.getenv("GORT_GO"));
        }
        c.addAll(List.of("/usr/lib/go-1.19/bin/go", "/usr/local/go/bin/go", "/usr/bin/go"));
        for (String p : c) {
            if (Files.isExecutable(Path.of(p))) {
                out.add(Path.of(p));
                break;
            }
        }
        Path go123 = Path.of("/usr/lib/go-1.23/bin/go");
        if (Files.isExecutable(go123) && !out.contains(go123)) {
            out.add(go123);
        }
        return out;
    }

    /** Runs {@code go ARGS}; returns {exit code, stdout, stderr}. */
    static String[] go(Path go, Path dir, String... args) throws Exception {
        List<String> cmd = new ArrayList<>(List.of(go.toString()));
        cmd.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(cmd).directory(dir.toFile());
        pb.environment().put("GOCACHE", dir.resolve("gocache").toString());
        pb.environment().put("GOTOOLCHAIN", "local");
        Path outF = dir.resolve("go.out");
        Path errF = dir.resolve("go.err");
        pb.redirectOutput(outF.toFile()).redirectError(errF.toFile());
        Process pr = pb.start();
        assertTrue(pr.waitFor(180, TimeUnit.SECONDS), "go " + String.join(" ", args) + " did not finish");
        return new String[] {
            String.valueOf(pr.exitValue()),
            Files.readString(outF, StandardCharsets.ISO_8859_1),
            Files.readString(errF, StandardCharsets.UTF_8)
        };
    }

    /**
     * {@code go tool trace -d} parses the file (Go 1.19: every event, merged, by name; the counts must be
     * the tests' reader's) and {@code -pprof=sched} writes a profile with samples; Go 1.23 reads it too.
     */
    void goTool(Path file, GoTraceDecoder d) throws Exception {
        List<Path> gos = goBinaries();
        if (gos.isEmpty()) {
            System.out.println("GoTraceWriterTest: skipped go tool trace: no go binary (GORT_GO, "
                    + "/usr/lib/go-1.19/bin/go, go on PATH); install Debian's golang-1.19-go to run it");
            return;
        }
        for (Path go : gos) {
            boolean old = go.toString().contains("1.19") || version(go).startsWith("go1.19");
            String[] r = go(go, tmp, "tool", "trace", old ? "-d" : "-d=1", file.toString());
            assertEquals("0", r[0], () -> go + " tool trace -d failed: " + r[2] + tail(r[1]));
            if (old) {
                Map<String, Integer> byName = new TreeMap<>();
                for (String line : r[1].split("\n")) {
                    String[] f = line.split(" ");
                    if (f.length > 2 && f[2].startsWith("p=")) {
                        byName.merge(f[1], 1, Integer::sum);
                    }
                }
                Map<String, Integer> mine = new TreeMap<>();
                for (Map.Entry<Integer, Integer> e : d.counts.entrySet()) {
                    mine.put(GoTraceWriter.NAMES.get(e.getKey()), e.getValue());
                }
                assertEquals(mine, byName, "go tool trace -d's events vs the tests' reader's");
            } else {
                assertTrue(r[1].lines().count() > d.events.size() / 2, "go 1.23 printed too few events");
            }
            viewer(go, file);
            String[] p = go(go, tmp, "tool", "trace", "-pprof=sched", file.toString());
            assertEquals("0", p[0], () -> go + " tool trace -pprof=sched failed: " + p[2]);
            Path prof = tmp.resolve("sched.pb");
            Files.writeString(prof, p[1], StandardCharsets.ISO_8859_1);
            String[] raw = go(go, tmp, "tool", "pprof", "-raw", prof.toString());
            assertEquals("0", raw[0], () -> "go tool pprof -raw: " + raw[2]);
            assertTrue(
                    raw[1].contains("Samples:") && raw[1].matches("(?s).*\\n\\s+\\d+\\s+\\d+: \\d.*"),
                    () -> "no samples in the sched profile:\n" + raw[1]);
        }
    }

    /**
     * {@code go tool trace -http}: the tool analyses the whole trace at start (Go 1.19 builds the
     * viewer's ranges, Go 1.23 its goroutine summaries) and serves the timeline's data, the goroutine
     * analysis and a goroutine group's page.
     */
    void viewer(Path go, Path file) throws Exception {
        ProcessBuilder pb = new ProcessBuilder(go.toString(), "tool", "trace", "-http=127.0.0.1:0", file.toString());
        pb.environment().put("GOCACHE", tmp.resolve("gocache").toString());
        pb.environment().put("BROWSER", "true"); // no browser
        Path errF = tmp.resolve("viewer.err");
        pb.redirectErrorStream(true).redirectOutput(errF.toFile());
        Process pr = pb.start();
        try {
            java.util.regex.Pattern addr = java.util.regex.Pattern.compile("http://(127\\.0\\.0\\.1:\\d+)");
            String base = null;
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
            while (base == null) { // wait-for-condition: the tool prints its address once it serves
                java.util.regex.Matcher m = addr.matcher(Files.readString(errF));
                if (m.find()) {
                    base = "http://" + m.group(1);
                } else {
                    assertTrue(pr.isAlive(), () -> go + " tool trace -http exited: " + read(errF));
                    assertTrue(System.nanoTime() < deadline, "go tool trace -http did not start");
                    Thread.sleep(50);
                }
            }
            java.net.http.HttpClient http = java.net.http.HttpClient.newHttpClient();
            String goroutines = null;
            for (String path : new String[] {"/jsontrace", "/goroutines"}) {
                java.net.http.HttpResponse<String> r = http.send(
                        java.net.http.HttpRequest.newBuilder(java.net.URI.create(base + path))
                                .build(),
                        java.net.http.HttpResponse.BodyHandlers.ofString());
                String b = base;
                assertEquals(200, r.statusCode(), () -> b + path + ": " + r.body() + read(errF));
                goroutines = r.body();
            }
            java.util.regex.Matcher link = java.util.regex.Pattern.compile("href=\"/?(goroutine\\?[^\"]+)\"")
                    .matcher(goroutines);
            assertTrue(link.find(), () -> "no goroutine group in " + go + "'s analysis");
            String url = base + "/" + link.group(1).replace("&amp;", "&");
            java.net.http.HttpResponse<String> r = http.send(
                    java.net.http.HttpRequest.newBuilder(java.net.URI.create(url.replace(" ", "%20")))
                            .build(),
                    java.net.http.HttpResponse.BodyHandlers.ofString());
            assertEquals(200, r.statusCode(), () -> url + ": " + r.body() + read(errF));
            assertTrue(pr.isAlive(), () -> "go tool trace died: " + read(errF));
        } finally {
            pr.destroy();
            pr.waitFor(10, TimeUnit.SECONDS);
        }
    }

    private static String read(Path f) {
        try {
            return Files.readString(f);
        } catch (IOException e) {
            return e.toString();
        }
    }

    private static String version(Path go) throws IOException {
        Path root = go.getParent().getParent().resolve("VERSION");
        return Files.exists(root) ? Files.readString(root).trim() : "";
    }

    private static String tail(String s) {
        return s.length() > 2000 ? s.substring(s.length() - 2000) : s;
    }
}
