package dev.gort.runtime;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.jetbrains.kotlinx.lincheck.Actor;
import org.jetbrains.kotlinx.lincheck.execution.ExecutionScenario;
import org.jetbrains.lincheck.Lincheck;
import org.jetbrains.lincheck.datastructures.ManagedStrategyGuaranteeKt;
import org.jetbrains.lincheck.datastructures.ModelCheckingOptions;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.StressOptions;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Model checking of a P's run queue (style-guide.md §3, "Applying them to the SPMC run queue"),
 * at capacity 4 so that overflow to the global queue and wrap-around are reached in a few steps.
 *
 * <p>Two checks:
 * <ol>
 *   <li><b>Linearizability</b> ({@link RingTest}): the owner's {@code runqput} (tail and runnext)
 *       and {@code runqget} run in one non-parallel group (only the owner P calls them); any thread
 *       steals half of the ring. The sequential specification ({@link Spec}) is a bounded FIFO plus a
 *       runnext slot plus the global queue that overflow spills into.
 *   <li><b>Conservation of runnext</b> ({@link #runnextIsNeverLostOrDuplicated}): stealing runnext
 *       (Go's last steal pass, {@code runqgrab(..., stealRunNextG=true)}) is <i>not</i> linearizable
 *       against that spec, in Go as here: the thief reads the ring and runnext one after the other, so
 *       it can see the ring empty before an owner {@code runqput} and runnext empty after an owner
 *       {@code runqget}, and report "nothing" although the queue was never empty (Lincheck shows
 *       exactly that interleaving if {@code steal} passes true). Go accepts it (a thief that misses
 *       work only spins again; runqempty, which must not miss it, re-reads the tail). What must hold
 *       is that no G is lost or taken twice, which Lincheck's general model checker verifies over
 *       the interleavings of an owner put-next/get against two runnext thieves.
 * </ol>
 *
 * <p>Seeded bugs both checks catch (tried while writing them, then reverted): a plain
 * {@code setRelease(head)} instead of the CAS in {@code runqget} (owner pop vs thief steal of the
 * last element returns G1 twice; found in ~3 s), and a plain store of null instead of the CAS of
 * runnext in {@code runqgrab} (a G taken twice; found in ~2-4 s).
 * </ol>
 */
class RunQueueLincheckTest {
    static final int CAPACITY = 4;

    // ------------------------------------------------------------------------------------------
    // 1. Linearizability of the ring + runnext + spill, thieves without runnext.

    /** The concurrent object Lincheck drives: one per invocation (instance fields only, no statics). */
    public static class RingTest {
        private final Object schedLock = new Object();
        private final GlobalRunQueue global = new GlobalRunQueue(schedLock);
        private final RunQueue q = new RunQueue(CAPACITY, null, global);
        /** The owner's result holder (M.found): the owner's operations never run in parallel. */
        private final Found found = new Found();
        /** Next G id for the owner's puts; owner group only. */
        private int nextId = 1;

        private G newG() {
            return new G(null, nextId++, 0, null, RingTest::noop);
        }

        private static void noop() {}

        /** Owner: runqput(g, false). Returns the global queue's size afterwards (grows only on a spill). */
        @Operation(nonParallelGroup = "owner")
        public int put() {
            q.runqput(newG(), false);
            return global.sizeAcquire();
        }

        /** Owner: runqput(g, true) (newproc / goready). Returns the global queue's size afterwards. */
        @Operation(nonParallelGroup = "owner")
        public int putNext() {
            q.runqput(newG(), true);
            return global.sizeAcquire();
        }

        /** Owner: runqget. "G3+" = G3 from runnext (inherits the slice), "G3" = from the ring, "-" = empty. */
        @Operation(nonParallelGroup = "owner")
        public String get() {
            G gp = q.runqget(found);
            if (gp == null) {
                return "-";
            }
            return "G" + gp.goid + (found.inheritTime ? "+" : "");
        }

        /** Any thread: runqgrab of the older half of the ring (stealWork's first three passes). */
        @Operation
        public List<Long> steal() {
            G[] batch = new G[CAPACITY];
            int n = q.steal.runqgrab(batch, 0, false);
            List<Long> out = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                out.add(batch[i].goid);
            }
            return out;
        }
    }

    /** Sequential specification: bounded FIFO + runnext slot + the global queue spills go to. */
    public static class Spec {
        private final ArrayDeque<Long> ring = new ArrayDeque<>();
        private Long runnext;
        private int global;
        private long nextId = 1;

        private void putTail(long id) {
            if (ring.size() < CAPACITY) {
                ring.addLast(id);
                return;
            }
            // runqputslow: the older half plus the new G, one batch.
            for (int i = 0; i < CAPACITY / 2; i++) {
                ring.pollFirst();
            }
            global += CAPACITY / 2 + 1;
        }

        public int put() {
            putTail(nextId++);
            return global;
        }

        public int putNext() {
            Long old = runnext;
            runnext = nextId++;
            if (old != null) {
                putTail(old);
            }
            return global;
        }

        public String get() {
            if (runnext != null) {
                long id = runnext;
                runnext = null;
                return "G" + id + "+";
            }
            Long id = ring.pollFirst();
            return id == null ? "-" : "G" + id;
        }

        public List<Long> steal() {
            int n = ring.size();
            n = n - n / 2;
            List<Long> out = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                out.add(ring.pollFirst());
            }
            return out;
        }

        // Lincheck compares states of the specification when it caches LTS transitions.
        @Override
        public boolean equals(Object o) {
            return o instanceof Spec s
                    && s.global == global
                    && s.nextId == nextId
                    && java.util.Objects.equals(s.runnext, runnext)
                    && List.copyOf(s.ring).equals(List.copyOf(ring));
        }

        @Override
        public int hashCode() {
            return java.util.Objects.hash(List.copyOf(ring), runnext, global, nextId);
        }
    }

    @Test
    void ringIsLinearizable() {
        ModelCheckingOptions opts = new ModelCheckingOptions()
                .iterations(Integer.getInteger("gort.lincheck.iterations", 6))
                .invocationsPerIteration(Integer.getInteger("gort.lincheck.invocations", 1000))
                .threads(3)
                .actorsPerThread(3)
                .actorsBefore(2)
                .actorsAfter(1)
                .sequentialSpecification(Spec.class)
                // Only the owner spills into the global queue, under sched.lock; Lincheck's managed
                // monitors are invisible to GlobalRunQueue's Thread.holdsLock check, so the global
                // queue is left unmanaged (ignored: run as plain code, with real monitors).
                .addGuarantee(ManagedStrategyGuaranteeKt.forClasses(GlobalRunQueue.class.getName())
                        .allMethods()
                        .ignore());
        // The races that matter, explored on every run rather than left to the random generator:
        // owner pop vs thief steal of the last element;
        opts.addCustomScenario(scenario(List.of("put"), List.of(List.of("get"), List.of("steal")), List.of("get")));
        // owner pops vs a thief taking half of two;
        opts.addCustomScenario(
                scenario(List.of("put", "put"), List.of(List.of("get", "get"), List.of("steal")), List.of("get")));
        // a spill of a full ring (runqputslow's CAS of head) vs a thief;
        opts.addCustomScenario(scenario(
                List.of("put", "put", "put", "put"),
                List.of(List.of("put", "get"), List.of("steal")),
                List.of("get", "get")));
        // runnext kicks into the ring vs two thieves.
        opts.addCustomScenario(scenario(
                List.of("putNext", "put"),
                List.of(List.of("putNext", "get"), List.of("steal"), List.of("steal")),
                List.of("get", "get")));
        opts.check(RingTest.class);
    }

    /** A hand-written Lincheck scenario of RingTest operations (all take no arguments). */
    static ExecutionScenario scenario(List<String> init, List<List<String>> parallel, List<String> post) {
        return new ExecutionScenario(
                actors(init),
                parallel.stream().map(RunQueueLincheckTest::actors).toList(),
                actors(post),
                null);
    }

    static List<Actor> actors(List<String> names) {
        List<Actor> out = new ArrayList<>();
        for (String n : names) {
            try {
                out.add(new Actor(RingTest.class.getMethod(n), List.of(), false, false, false, false, false));
            } catch (NoSuchMethodException e) {
                throw new AssertionError(e);
            }
        }
        return out;
    }

    @Test
    @Tag("stress")
    void ringIsLinearizableUnderStress() {
        new StressOptions()
                .iterations(100)
                .invocationsPerIteration(10_000)
                .threads(3)
                .actorsPerThread(4)
                .actorsBefore(2)
                .sequentialSpecification(Spec.class)
                .check(RingTest.class);
    }

    // ------------------------------------------------------------------------------------------
    // 2. runnext: owner get / put-next vs thieves stealing runnext (Go's last pass).

    /**
     * The owner holds G1 in runnext (and, with {@code withRing}, G2 in the ring); it then puts G3 with
     * next=true (kicking G1 to the ring) and takes one G, while two thieves each steal with
     * stealRunNextG=true. Afterwards the owner drains. Every G must come out exactly once.
     */
    @org.junit.jupiter.params.ParameterizedTest(name = "G2 in the ring: {0}")
    @org.junit.jupiter.params.provider.ValueSource(booleans = {false, true})
    void runnextIsNeverLostOrDuplicated(boolean withRing) {
        Lincheck.runConcurrentTest(Integer.getInteger("gort.lincheck.invocations", 1000), () -> {
            RunQueue q = new RunQueue(CAPACITY);
            G[] gs = {
                new G(null, 1, 0, null, RunQueueLincheckTest::noop),
                new G(null, 2, 0, null, RunQueueLincheckTest::noop),
                new G(null, 3, 0, null, RunQueueLincheckTest::noop),
            };
            q.runqput(gs[0], true);
            if (withRing) {
                q.runqput(gs[1], false);
            }
            AtomicInteger[] seen = {new AtomicInteger(), new AtomicInteger(), new AtomicInteger()};
            Runnable thief = () -> {
                G[] batch = new G[CAPACITY];
                int n = q.steal.runqgrab(batch, 0, true);
                for (int i = 0; i < n; i++) {
                    seen[(int) batch[i].goid - 1].incrementAndGet();
                }
            };
            Thread t1 = new Thread(thief);
            Thread t2 = new Thread(thief);
            t1.start();
            t2.start();
            q.runqput(gs[2], true);
            G got = q.runqget();
            if (got != null) {
                seen[(int) got.goid - 1].incrementAndGet();
            }
            join(t1);
            join(t2);
            List<G> rest = new ArrayList<>();
            q.runqdrain(rest);
            for (G gp : rest) {
                seen[(int) gp.goid - 1].incrementAndGet();
            }
            int want2 = withRing ? 1 : 0;
            if (seen[0].get() != 1 || seen[1].get() != want2 || seen[2].get() != 1) {
                throw new AssertionError("times seen: G1 " + seen[0] + ", G2 " + seen[1] + ", G3 " + seen[2]
                        + " (want 1, " + want2 + ", 1)");
            }
        });
    }

    static void noop() {}

    static void join(Thread t) {
        try {
            t.join();
        } catch (InterruptedException e) {
            throw new AssertionError(e);
        }
    }
}
