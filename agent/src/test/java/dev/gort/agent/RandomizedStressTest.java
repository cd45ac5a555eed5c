package dev.gort.agent;

import static org.junit.jupiter.api.Assertions.fail;

import dev.gort.Chan;
import dev.gort.Go;
import dev.gort.Select;
import dev.gort.Syscall;
import dev.gort.Time;
import dev.gort.Timer;
import dev.gort.context.CancelContext;
import dev.gort.context.Context;
import dev.gort.runtime.Config;
import dev.gort.runtime.PreemptStrategy;
import dev.gort.runtime.Scheduler;
import dev.gort.runtime.trace.Trace;
import dev.gort.runtime.trace.TraceValidator;
import dev.gort.runtime.trace.Tracer;
import dev.gort.sync.Mutex;
import dev.gort.sync.WaitGroup;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The randomized stress of issue 12: seeded random trees of goroutines doing spawn, Gosched,
 * ping-pong, producer/consumer, select with timeouts, CPU loops that only injected polls can
 * preempt (loaded through {@link InstrumentingLoader} with each strategy), channel operations
 * inside {@code Syscall.block}, unwrapped {@code Thread.sleep} (sysmon retakes the P) followed by
 * channel operations, Mutex, timers with Stop/Reset, context fan-out and {@code afterFunc}, while
 * GOMAXPROCS changes at run time. Every goroutine must start and finish exactly once and every sum
 * must match; a run that does not end in time dumps its goroutines (Go's format) and fails with
 * its seed. Zero hangs is the bar: nothing is retried.
 *
 * <p>Reproduce a failure with {@code -Dgort.stress.seed=<seed>} (the seed printed); the short CI
 * mode covers GOMAXPROCS 1 to 8, stealing and spinning on and off and every preemption strategy
 * with debug checks on and a validated trace for some runs; {@link #longMode} (tag stress) runs the
 * whole product, {@code gort.stress.multiplier} times.
 */
class RandomizedStressTest {
    private static final String WORK = "dev.gort.agent.work.";
    private static final long RUN_LIMIT_MS = Long.getLong("gort.stress.limitMs", 60_000);

    /** One instrumented copy of StressWork.spin per strategy, loaded once. */
    private static final Map<PreemptStrategy, Method> SPIN = new EnumMap<>(PreemptStrategy.class);

    private static synchronized Method spin(PreemptStrategy st) throws Exception {
        Method m = SPIN.get(st);
        if (m == null) {
            Class<?> c = Class.forName(WORK + "StressWork", true, new InstrumentingLoader(WORK, st));
            m = c.getMethod("spin", long.class);
            SPIN.put(st, m);
        }
        return m;
    }

    record Run(
            long base,
            long seed,
            int procs,
            boolean stealing,
            boolean spinning,
            PreemptStrategy strategy,
            boolean traced) {
        @Override
        public String toString() {
            return "seed=" + seed + " GOMAXPROCS=" + procs + " stealing=" + stealing + " spinning=" + spinning
                    + " preempt=" + strategy.id() + (traced ? " traced" : "")
                    + " (reproduce: -Dgort.stress.seed=" + base + ")";
        }
    }

    /**
     * CI mode, about 10 runs: every GOMAXPROCS from 1 to 8 once, stealing, spinning and the strategy
     * varied across them, two runs traced and validated.
     */
    @Test
    void shortMode() throws Exception {
        long base = Long.getLong("gort.stress.seed", System.nanoTime());
        PreemptStrategy[] sts = PreemptStrategy.values();
        List<Run> runs = new ArrayList<>();
        for (int procs = 1; procs <= 8; procs++) {
            int i = procs - 1;
            runs.add(new Run(base, base + i, procs, i % 2 == 0, (i / 2) % 2 == 0, sts[i % sts.length], false));
        }
        runs.add(new Run(base, base + 8, 1, true, true, PreemptStrategy.BACKEDGE, true));
        runs.add(new Run(base, base + 9, 4, false, true, PreemptStrategy.BUDGET, true));
        for (Run r : runs) {
            runOnce(r, 2);
        }
    }

    /** The whole product, several seeds each (tag stress). */
    @Test
    @Tag("stress")
    void longMode() throws Exception {
        int mult = Integer.getInteger("gort.stress.multiplier", 1);
        long base = Long.getLong("gort.stress.seed", System.nanoTime());
        long n = 0;
        for (int rep = 0; rep < mult; rep++) {
            for (int procs = 1; procs <= 8; procs++) {
                for (boolean stealing : new boolean[] {true, false}) {
                    for (boolean spinning : new boolean[] {true, false}) {
                        for (PreemptStrategy st : PreemptStrategy.values()) {
                            runOnce(new Run(base, base + n, procs, stealing, spinning, st, n % 7 == 0), 3);
                            n++;
                        }
                    }
                }
            }
        }
    }

    /** Runs one random tree of depth {@code depth}; fails with the run's seed on any error or a hang. */
    static void runOnce(Run run, int depth) throws Exception {
        Method spin = spin(run.strategy);
        Config cfg = Config.fromEnvironment()
                .withGomaxprocs(run.procs)
                .withStealing(run.stealing)
                .withSpinning(run.spinning)
                .withDebugChecks(true)
                .withPanicExits(false);
        Scheduler s = new Scheduler(cfg);
        Stress st = new Stress(run, spin);
        if (run.traced) {
            s.trace.start(new Tracer.Options().workload("stress " + run));
        }
        AtomicReference<Throwable> failure = new AtomicReference<>();
        Thread t = new Thread(
                () -> {
                    try {
                        s.run(() -> st.main(depth));
                    } catch (Throwable e) {
                        failure.set(e);
                    }
                },
                "stress-main");
        t.setDaemon(true);
        t.start();
        t.join(RUN_LIMIT_MS);
        if (t.isAlive()) {
            System.err.println("RandomizedStressTest: no end after " + RUN_LIMIT_MS + " ms: " + run);
            s.dumpGoroutines(System.err);
            fail("hang: " + run + "; " + st.progress());
        }
        if (failure.get() != null) {
            throw new AssertionError("failed: " + run + "; " + st.progress(), failure.get());
        }
        st.verify();
        if (run.traced) {
            Trace tr = s.trace.stop();
            TraceValidator.Result res = TraceValidator.validate(tr, true, Map.of());
            if (!res.ok()) {
                fail("trace: " + run + ": " + res);
            }
        }
    }

    /** One run's workload and its books. */
    static final class Stress {
        static final int MAX_GS = 1 << 16;
        final Run run;
        final Method spin;
        final AtomicInteger nextId = new AtomicInteger();
        final AtomicIntegerArray starts = new AtomicIntegerArray(MAX_GS);
        final AtomicIntegerArray ends = new AtomicIntegerArray(MAX_GS);
        final WaitGroup all = new WaitGroup();
        final AtomicLong ops = new AtomicLong();

        Stress(Run run, Method spin) {
            this.run = run;
            this.spin = spin;
        }

        String progress() {
            int n = nextId.get();
            int started = 0;
            int ended = 0;
            for (int i = 0; i < n; i++) {
                started += starts.get(i);
                ended += ends.get(i);
            }
            return "goroutines spawned=" + n + " started=" + started + " finished=" + ended + " ops=" + ops.get();
        }

        /** Go's "go f()" with the books: start and finish counted per goroutine, local wg optional. */
        void spawn(WaitGroup local, Runnable body) {
            int id = nextId.getAndIncrement();
            if (id >= MAX_GS) {
                throw new AssertionError("too many goroutines for the books");
            }
            all.add(1);
            if (local != null) {
                local.add(1);
            }
            Go.go(() -> {
                starts.incrementAndGet(id);
                try {
                    body.run();
                } finally {
                    ends.incrementAndGet(id);
                    if (local != null) {
                        local.done();
                    }
                    all.done();
                }
            });
        }

        void main(int depth) {
            Random rnd = new Random(run.seed);
            if (!run.traced) {
                // GOMAXPROCS changes at run time (not in traced runs: procresize's trace events are
                // another issue's subject).
                long seed = rnd.nextLong();
                spawn(null, () -> {
                    Random r = new Random(seed);
                    for (int i = 0; i < 4; i++) {
                        Time.sleep(1_000_000L * (1 + r.nextInt(3)));
                        Go.gomaxprocs(1 + r.nextInt(8));
                    }
                });
            }
            int roots = 3 + rnd.nextInt(3);
            for (int i = 0; i < roots; i++) {
                long seed = rnd.nextLong();
                spawn(null, () -> node(depth, new Random(seed)));
            }
            all.await();
        }

        void verify() {
            int n = nextId.get();
            for (int i = 0; i < n; i++) {
                if (starts.get(i) != 1 || ends.get(i) != 1) {
                    fail(run + ": goroutine #" + i + " started " + starts.get(i) + " and finished " + ends.get(i)
                            + " times");
                }
            }
        }

        static void check(boolean ok, String what) {
            if (!ok) {
                throw new AssertionError(what);
            }
        }

        /** One node of the random tree: an operation, and children while depth lasts. */
        void node(int depth, Random r) {
            int ops = 2 + r.nextInt(3);
            for (int k = 0; k < ops; k++) {
                op(r.nextInt(12), r);
                this.ops.incrementAndGet();
            }
            if (depth > 0) {
                int kids = 1 + r.nextInt(3);
                for (int i = 0; i < kids; i++) {
                    long seed = r.nextLong();
                    spawn(null, () -> node(depth - 1, new Random(seed)));
                }
            }
        }

        void op(int which, Random r) {
            switch (which) {
                case 0 -> { // Gosched
                    int n = 1 + r.nextInt(20);
                    for (int i = 0; i < n; i++) {
                        Go.gosched();
                    }
                }
                case 1 -> pingPong(1 + r.nextInt(200));
                case 2 -> prodCons(r.nextInt(5), 1 + r.nextInt(3), 1 + r.nextInt(3), 1 + r.nextInt(100));
                case 3 -> selectWithTimeouts(r);
                case 4 -> cpu(10_000L + r.nextInt(2_000_000));
                case 5 -> chanInsideSyscall(r);
                case 6 -> chanAfterUnwrappedSleep(r);
                case 7 -> mutex(2 + r.nextInt(3), 1 + r.nextInt(100));
                case 8 -> timerStopReset(r);
                case 9 -> contextFanOut(1 + r.nextInt(6));
                case 10 -> afterFunc(r);
                default -> { // a nested small tree without depth
                    WaitGroup wg = new WaitGroup();
                    long seed = r.nextLong();
                    spawn(wg, () -> op(new Random(seed).nextInt(11), new Random(seed)));
                    wg.await();
                }
            }
        }

        void pingPong(int n) {
            Chan<Integer> a = Chan.make();
            Chan<Integer> b = Chan.make();
            WaitGroup wg = new WaitGroup();
            spawn(wg, () -> {
                for (int i = 0; i < n; i++) {
                    b.send(a.recv() + 1);
                }
            });
            long sum = 0;
            for (int i = 0; i < n; i++) {
                a.send(i);
                sum += b.recv();
            }
            wg.await();
            check(sum == (long) n * (n - 1) / 2 + n, "ping-pong sum " + sum + " for n=" + n);
        }

        void prodCons(int cap, int producers, int consumers, int m) {
            Chan<Integer> c = Chan.make(cap);
            AtomicLong got = new AtomicLong();
            AtomicLong count = new AtomicLong();
            WaitGroup prod = new WaitGroup();
            WaitGroup cons = new WaitGroup();
            for (int p = 0; p < producers; p++) {
                spawn(prod, () -> {
                    for (int v = 1; v <= m; v++) {
                        c.send(v);
                    }
                });
            }
            for (int q = 0; q < consumers; q++) {
                spawn(cons, () -> {
                    for (Integer v : c) {
                        got.addAndGet(v);
                        count.incrementAndGet();
                    }
                });
            }
            prod.await();
            c.close();
            cons.await();
            long want = (long) producers * m * (m + 1) / 2;
            check(
                    got.get() == want && count.get() == (long) producers * m,
                    "producer/consumer: got " + got + " in " + count + " values, want " + want);
        }

        void selectWithTimeouts(Random r) {
            Chan<Integer> c = Chan.make(r.nextInt(2));
            long delay = r.nextInt(3) * 1_000_000L;
            int want = r.nextInt(1000);
            spawn(null, () -> {
                if (delay > 0) {
                    Time.sleep(delay);
                }
                c.send(want);
            });
            int[] got = {-1};
            int rounds = 0;
            while (got[0] < 0) {
                Select.select(
                        Select.recv(c, (Integer v) -> got[0] = v),
                        Select.recv(Time.after(200_000L + r.nextInt(1_000_000)), () -> {}));
                check(++rounds < 100_000, "select never got the value");
            }
            check(got[0] == want, "select got " + got[0] + ", want " + want);
        }

        void cpu(long iterations) {
            long want = dev.gort.agent.work.StressWork.spin(iterations); // the plain copy
            long got;
            try {
                got = (long) spin.invoke(null, iterations);
            } catch (ReflectiveOperationException e) {
                throw new AssertionError(e);
            }
            check(got == want, "instrumented CPU loop gave " + got + ", plain " + want);
        }

        /** A channel operation inside Syscall.block (the documented pattern of defect 1). */
        void chanInsideSyscall(Random r) {
            Chan<Integer> c = Chan.make(r.nextInt(2));
            int v = r.nextInt(1000);
            AtomicInteger got = new AtomicInteger(-1);
            WaitGroup wg = new WaitGroup();
            spawn(wg, () -> got.set(c.recv()));
            long sleep = r.nextInt(2);
            try {
                Syscall.block(() -> {
                    if (sleep > 0) {
                        Thread.sleep(sleep);
                    }
                    c.send(v);
                });
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            }
            wg.await();
            check(got.get() == v, "recv after a send in a syscall got " + got.get());
        }

        /** An unwrapped blocking call (sysmon may retake the P), then channel operations. */
        void chanAfterUnwrappedSleep(Random r) {
            Chan<Integer> c = Chan.make();
            Chan<Integer> back = Chan.make();
            WaitGroup wg = new WaitGroup();
            spawn(wg, () -> back.send(c.recv() * 2));
            try {
                Thread.sleep(1 + r.nextInt(2));
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            }
            c.send(21);
            check(back.recv() == 42, "echo after an unwrapped sleep");
            wg.await();
        }

        void mutex(int gs, int n) {
            Mutex mu = new Mutex();
            long[] counter = {0};
            WaitGroup wg = new WaitGroup();
            for (int g = 0; g < gs; g++) {
                spawn(wg, () -> {
                    for (int i = 0; i < n; i++) {
                        mu.lock();
                        counter[0]++;
                        if ((i & 15) == 0) {
                            Go.gosched(); // holding the Mutex across a yield is legal
                        }
                        mu.unlock();
                    }
                });
            }
            wg.await();
            mu.lock();
            long got = counter[0];
            mu.unlock();
            check(got == (long) gs * n, "mutex counter " + got + ", want " + (long) gs * n);
        }

        /** Go 1.23 timers: after Stop or Reset no stale value; after Reset the value comes. */
        void timerStopReset(Random r) {
            Timer t = Time.newTimer(r.nextInt(3) * 1_000_000L + 1);
            if (r.nextBoolean()) {
                Time.sleep(r.nextInt(2) * 1_000_000L);
                t.stop();
            }
            t.reset(r.nextInt(2_000_000) + 1);
            t.c().recv();
            check(t.c().tryRecv() == null, "a stale timer value after the receive");
        }

        void contextFanOut(int n) {
            CancelContext ctx = Context.withCancel(Context.background());
            AtomicInteger done = new AtomicInteger();
            WaitGroup wg = new WaitGroup();
            for (int i = 0; i < n; i++) {
                CancelContext child = Context.withCancel(ctx);
                spawn(wg, () -> {
                    child.done().recv();
                    done.incrementAndGet();
                    child.cancel();
                });
            }
            ctx.cancel();
            wg.await();
            check(done.get() == n, "context fan-out: " + done.get() + " of " + n + " saw the cancel");
        }

        void afterFunc(Random r) {
            Chan<Boolean> fired = Chan.make(1);
            Time.afterFunc(r.nextInt(1_000_000) + 1, () -> fired.send(true));
            check(fired.recv(), "afterFunc");
        }
    }
}
