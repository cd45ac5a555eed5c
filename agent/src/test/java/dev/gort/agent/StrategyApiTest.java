package dev.gort.agent;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gort.agent.work.LoopShapes;
import dev.gort.agent.work.LoopSizes;
import dev.gort.runtime.PreemptStrategy;
import java.io.InputStream;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.objectweb.asm.ClassReader;
import org.objectweb.asm.tree.AbstractInsnNode;
import org.objectweb.asm.tree.ClassNode;
import org.objectweb.asm.tree.LabelNode;
import org.objectweb.asm.tree.MethodInsnNode;
import org.objectweb.asm.tree.MethodNode;

/** The strategy API: registration by name, the built-ins on it, and the looplen strategy's placement. */
class StrategyApiTest {
    private static byte[] bytes(Class<?> c) throws Exception {
        try (InputStream in = c.getClassLoader().getResourceAsStream(c.getName().replace('.', '/') + ".class")) {
            return in.readAllBytes();
        }
    }

    /** Yield points ({@code Poll.poll}/{@code budget}) per method of an instrumented class. */
    static Map<String, Integer> pollsPerMethod(byte[] b) {
        ClassNode cn = new ClassNode();
        new ClassReader(b).accept(cn, 0);
        Map<String, Integer> out = new LinkedHashMap<>();
        for (MethodNode mn : cn.methods) {
            int n = 0;
            for (AbstractInsnNode in = mn.instructions.getFirst(); in != null; in = in.getNext()) {
                if (in instanceof MethodInsnNode m
                        && m.owner.equals(PollInjector.POLL)
                        && (m.name.equals("poll") || m.name.equals("budget"))) {
                    n++;
                }
            }
            out.put(mn.name, n);
        }
        return out;
    }

    /** A researcher's strategy: polls at the entry of methods whose name starts with "fib" only. */
    public static final class FibOnly implements Strategy {
        @Override
        public String name() {
            return "fibonly";
        }

        @Override
        public PreemptStrategy family() {
            return PreemptStrategy.ENTRY;
        }

        @Override
        public boolean pollAtEntry(String owner, MethodNode mn) {
            return mn.name.startsWith("fib");
        }

        @Override
        public boolean pollAtBackedge(String owner, MethodNode mn, AbstractInsnNode branch, LabelNode target) {
            return false;
        }
    }

    @Test
    void strategiesAreRegisteredByNameWithTheRuntime() {
        assertInstanceOf(LoopLength.class, Strategies.named("looplen"));
        assertEquals(PreemptStrategy.BACKEDGE, PreemptStrategy.familyOf("looplen"));
        assertSame(Strategies.NONE, Strategies.named("none"));
        assertEquals(new Strategies.Backedge(64, true), Strategies.of(PreemptStrategy.BACKEDGE, 64, true));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Strategies.named("nosuch"));
        assertTrue(e.getMessage().contains("looplen"), e.getMessage());

        // A class name on the command line registers the class under both names.
        String cls = FibOnly.class.getName();
        assertNull(PreemptStrategy.familyOf(cls));
        assertInstanceOf(FibOnly.class, Strategies.named(cls));
        assertEquals(PreemptStrategy.ENTRY, PreemptStrategy.familyOf(cls));
        assertInstanceOf(FibOnly.class, Strategies.named("fibonly"));
        String old = System.getProperty("gort.preempt");
        try {
            System.setProperty("gort.preempt", "fibonly");
            assertEquals("fibonly", PreemptStrategy.nameFromEnvironment());
            assertEquals(PreemptStrategy.ENTRY, PreemptStrategy.fromEnvironment());
            assertInstanceOf(FibOnly.class, Strategies.fromEnvironment());
            System.setProperty("gort.preempt", "nosuch");
            assertThrows(dev.gort.runtime.GortFatalError.class, PreemptStrategy::nameFromEnvironment);
            assertThrows(dev.gort.runtime.GortFatalError.class, Strategies::fromEnvironment);
        } finally {
            if (old == null) {
                System.clearProperty("gort.preempt");
            } else {
                System.setProperty("gort.preempt", old);
            }
        }
        assertThrows(IllegalArgumentException.class, () -> PreemptStrategy.register("fibonly", PreemptStrategy.BUDGET));
    }

    /**
     * {@code -Dgort.preempt=com.acme.Missing} (a strategy class misspelt, or not on the class path)
     * said only "want one of none, entry, backedge, budget, looplen (other strategies are registered
     * by the agent)", never that the class could not be loaded.
     */
    @Test
    void aStrategyClassThatCannotBeLoadedIsAFatalErrorThatSaysWhy() {
        String old = System.getProperty("gort.preempt");
        try {
            System.setProperty("gort.preempt", "com.acme.NoSuchStrategy");
            String msg = assertThrows(dev.gort.runtime.GortFatalError.class, Strategies::fromEnvironment)
                    .getMessage();
            assertTrue(msg.startsWith("malformed -Dgort.preempt=com.acme.NoSuchStrategy: "), msg);
            assertTrue(msg.contains("ClassNotFoundException: com.acme.NoSuchStrategy"), msg);
            System.setProperty("gort.preempt", "java.lang.String");
            msg = assertThrows(dev.gort.runtime.GortFatalError.class, Strategies::fromEnvironment)
                    .getMessage();
            assertTrue(msg.contains("java.lang.String is not a dev.gort.agent.Strategy"), msg);
        } finally {
            if (old == null) {
                System.clearProperty("gort.preempt");
            } else {
                System.setProperty("gort.preempt", old);
            }
        }
    }

    @Test
    void aResearchersStrategyPlacesPollsWhereItSays() throws Exception {
        Map<String, Integer> polls = pollsPerMethod(new PollInjector(new FibOnly(), true)
                .instrument(bytes(LoopSizes.class))
                .bytes());
        assertEquals(1, polls.get("fib"));
        assertEquals(0, polls.get("shortLoop"));
        assertEquals(0, polls.get("longLoop"));
        assertEquals(0, polls.get("caller"));
    }

    @Test
    void builtInsOnTheApiPlaceWhatTheyPlacedBefore() throws Exception {
        // backedge, stride 1024: the counted short loop is strip-mined (one poll in its outer head),
        // the while loop polls at its back-edge, callers poll at entry.
        Map<String, Integer> be = pollsPerMethod(new PollInjector(PreemptStrategy.BACKEDGE, true)
                .instrument(bytes(LoopSizes.class))
                .bytes());
        assertEquals(1, be.get("shortLoop"));
        assertEquals(1, be.get("shortWhile"));
        assertEquals(1, be.get("longLoop"));
        assertEquals(1, be.get("caller"));
        assertEquals(1, be.get("fib"));
        Map<String, Integer> entry = pollsPerMethod(new PollInjector(PreemptStrategy.ENTRY, true)
                .instrument(bytes(LoopSizes.class))
                .bytes());
        entry.forEach((m, n) -> assertEquals(1, n, m)); // every method, constructor included, no back-edges
        assertFalse(new PollInjector(Strategies.NONE, true)
                .instrument(bytes(LoopSizes.class))
                .changed());
    }

    @Test
    void looplenPollsOnlyLongLoopsAndCallers() throws Exception {
        PollInjector.Result r = new PollInjector(new LoopLength(24, true), true).instrument(bytes(LoopSizes.class));
        Map<String, Integer> polls = pollsPerMethod(r.bytes());
        assertEquals(0, polls.get("shortLoop"), "short counted loop: no poll, not strip-mined");
        assertEquals(0, polls.get("shortWhile"), "short loop: no poll");
        assertEquals(1, polls.get("longLoop"), "long body: a poll at its back-edge");
        assertEquals(1, polls.get("caller"), "a caller polls at entry");
        assertEquals(1, polls.get("fib"), "recursion polls at entry");
        assertEquals(1, polls.get("all"), "a caller without loops: its entry only");
    }

    @Test
    void looplenThresholdZeroIsEveryBackedgeAndNoCallersDropsEntries() throws Exception {
        Map<String, Integer> every = pollsPerMethod(new PollInjector(new LoopLength(0, false), true)
                .instrument(bytes(LoopSizes.class))
                .bytes());
        assertEquals(1, every.get("shortLoop"));
        assertEquals(1, every.get("shortWhile"));
        assertEquals(1, every.get("longLoop"));
        assertEquals(0, every.get("caller"));
        assertEquals(0, every.get("fib"));
    }

    @Test
    void looplenGivesTheSameResults() throws Exception {
        String work = "dev.gort.agent.work.";
        Class<?> sizes = Class.forName(
                work + "LoopSizes",
                true,
                new InstrumentingLoader(work, new LoopLength(LoopLength.DEFAULT_THRESHOLD, true)));
        assertArrayEquals(
                LoopSizes.all(5000), (long[]) sizes.getMethod("all", int.class).invoke(null, 5000));
        for (int t : new int[] {0, 8, LoopLength.DEFAULT_THRESHOLD, 1000}) {
            Class<?> shapes =
                    Class.forName(work + "LoopShapes", true, new InstrumentingLoader(work, new LoopLength(t, true)));
            assertArrayEquals(
                    LoopShapes.all(50),
                    (long[]) shapes.getMethod("all", int.class).invoke(null, 50),
                    "threshold " + t);
        }
    }
}
