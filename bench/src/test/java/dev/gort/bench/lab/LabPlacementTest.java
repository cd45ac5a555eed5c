package dev.gort.bench.lab;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gort.agent.LoopLength;
import dev.gort.agent.PollInjector;
import dev.gort.agent.Strategies;
import dev.gort.agent.Strategy;
import dev.gort.agent.shaded.asm.ClassReader;
import dev.gort.agent.shaded.asm.Opcodes;
import dev.gort.agent.shaded.asm.tree.AbstractInsnNode;
import dev.gort.agent.shaded.asm.tree.ClassNode;
import dev.gort.agent.shaded.asm.tree.JumpInsnNode;
import dev.gort.agent.shaded.asm.tree.LabelNode;
import dev.gort.agent.shaded.asm.tree.MethodInsnNode;
import dev.gort.agent.shaded.asm.tree.MethodNode;
import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Each strategy's placement on the lab's workloads, per method (the agent's poll counts read back
 * from the rewritten bytecode), against the strategy's rule computed from the original bytecode.
 */
class LabPlacementTest {
    private static final String WORK = "dev/gort/bench/lab/work/Workloads$";

    private static byte[] bytes(String internal) throws IOException {
        try (InputStream in = LabPlacementTest.class.getClassLoader().getResourceAsStream(internal + ".class")) {
            return in.readAllBytes();
        }
    }

    private static List<MethodNode> methods(byte[] b) {
        ClassNode cn = new ClassNode();
        new ClassReader(b).accept(cn, 0);
        return cn.methods;
    }

    /** Yield points per method: name+desc to count of Poll.poll/budget calls. */
    private static Map<String, Integer> polls(byte[] b, String pollName) {
        Map<String, Integer> out = new LinkedHashMap<>();
        for (MethodNode mn : methods(b)) {
            int n = 0;
            for (AbstractInsnNode in = mn.instructions.getFirst(); in != null; in = in.getNext()) {
                if (in instanceof MethodInsnNode m
                        && m.owner.equals("dev/gort/runtime/Poll")
                        && m.name.equals(pollName)) {
                    n++;
                }
            }
            out.put(mn.name + mn.desc, n);
        }
        return out;
    }

    /** The backward jumps of the original method with their loop's body size (javac emits no backward switch). */
    private static List<Integer> backedgeBodies(MethodNode mn) {
        List<Integer> out = new ArrayList<>();
        Set<LabelNode> seen = new HashSet<>();
        for (AbstractInsnNode in = mn.instructions.getFirst(); in != null; in = in.getNext()) {
            if (in instanceof LabelNode l) {
                seen.add(l);
            } else if (in instanceof JumpInsnNode j && seen.contains(j.label)) {
                out.add(Strategy.bodySize(j.label, j));
            }
        }
        return out;
    }

    /** Polls right before a branch: a per-back-edge poll (a strip-mined loop polls after its test). */
    private static int pollsBeforeBranches(MethodNode mn) {
        int n = 0;
        for (AbstractInsnNode in = mn.instructions.getFirst(); in != null; in = in.getNext()) {
            if (in instanceof MethodInsnNode m
                    && m.owner.equals("dev/gort/runtime/Poll")
                    && m.name.equals("poll")
                    && in.getNext() instanceof JumpInsnNode) {
                n++;
            }
        }
        return n;
    }

    private static boolean callsAnother(MethodNode mn) {
        for (AbstractInsnNode in = mn.instructions.getFirst(); in != null; in = in.getNext()) {
            if (in.getType() == AbstractInsnNode.INVOKE_DYNAMIC_INSN) {
                return true;
            }
            if (in instanceof MethodInsnNode m
                    && !(m.getOpcode() == Opcodes.INVOKESPECIAL && m.name.equals("<init>"))) {
                return true;
            }
        }
        return false;
    }

    private static List<String> workloadClasses() {
        List<String> out = new ArrayList<>();
        for (String w : PreemptLab.WORKLOADS) {
            out.add(WORK + w);
        }
        out.add(WORK + "Iface$Sq");
        out.add(WORK + "TreeWalk$Node");
        return out;
    }

    private static boolean pollable(MethodNode mn) {
        return !mn.name.equals("<clinit>")
                && (mn.access & (Opcodes.ACC_ABSTRACT | Opcodes.ACC_NATIVE | Opcodes.ACC_SYNCHRONIZED)) == 0
                && mn.instructions.size() > 0;
    }

    @Test
    void noneEntryBackedgeEveryEdgeBudgetAndLooplenFollowTheirRulesOnEveryWorkloadMethod() throws Exception {
        for (String cls : workloadClasses()) {
            byte[] orig = bytes(cls);
            assertFalse(new PollInjector(Strategies.NONE, true).instrument(orig).changed(), cls + " under none");
            Map<String, Integer> entry = polls(
                    new PollInjector(Strategies.ENTRY, true).instrument(orig).bytes(), "poll");
            Map<String, Integer> every = polls(
                    new PollInjector(Strategies.backedge(0, true), true)
                            .instrument(orig)
                            .bytes(),
                    "poll");
            PollInjector.Result br = new PollInjector(Strategies.BUDGET, true).instrument(orig);
            Map<String, Integer> budget = polls(br.bytes(), "budget");
            LoopLength ll = new LoopLength(LoopLength.DEFAULT_THRESHOLD, true);
            PollInjector.Result lr = new PollInjector(ll, true).instrument(orig);
            Map<String, Integer> looplen = lr.changed() ? polls(lr.bytes(), "poll") : Map.of();
            for (MethodNode mn : methods(orig)) {
                String key = mn.name + mn.desc;
                String at = cls + "." + key;
                if (!pollable(mn)) {
                    assertEquals(0, entry.getOrDefault(key, 0), at);
                    continue;
                }
                List<Integer> bodies = backedgeBodies(mn);
                int caller = callsAnother(mn) ? 1 : 0;
                assertEquals(1, entry.get(key), "entry: one poll at " + at);
                assertEquals(
                        bodies.size() + caller, every.get(key), "backedge/s0: every back-edge + caller entry at " + at);
                assertEquals(bodies.size() + 1, budget.get(key), "budget: every back-edge + entry at " + at);
                long longLoops =
                        bodies.stream().filter(n -> n >= ll.threshold()).count();
                assertEquals(
                        longLoops + caller, (long) looplen.getOrDefault(key, 0), "looplen at " + at + " " + bodies);
            }
        }
    }

    @Test
    void stripMiningAndCallerPollsOnTheLabsKnownCases() throws Exception {
        byte[] longMethod = bytes(WORK + "LongMethod");
        // The counted loop calls its own class's mix: strip-mined, one poll per strip in run.
        Map<String, Integer> mined = polls(
                new PollInjector(Strategies.backedge(1024, true), true)
                        .instrument(longMethod)
                        .bytes(),
                "poll");
        assertEquals(
                2,
                mined.get("run(I)J"),
                "LongMethod.run under backedge/s1024: its entry (it calls mix) + one per strip");
        byte[] fib = bytes(WORK + "Fib");
        assertEquals(
                1,
                polls(
                                new PollInjector(Strategies.backedge(1024, true), true)
                                        .instrument(fib)
                                        .bytes(),
                                "poll")
                        .get("fib(I)I"),
                "recursion polls at entry");
        PollInjector.Result off = new PollInjector(Strategies.backedge(1024, false), true).instrument(fib);
        assertTrue(!off.changed() || polls(off.bytes(), "poll").get("fib(I)I") == 0, "no caller polls: fib has none");
        // ArraySum's inner loop runs to this.a.length (a field read at every test): strip-mined,
        // as its outer loop; neither back-edge polls (a poll there cost it +700-1700 %).
        for (int stride : new int[] {64, 1024, 16384}) {
            byte[] sum = new PollInjector(Strategies.backedge(stride, true), true)
                    .instrument(bytes(WORK + "ArraySum"))
                    .bytes();
            MethodNode run = methods(sum).stream()
                    .filter(m -> m.name.equals("run"))
                    .findFirst()
                    .orElseThrow();
            assertEquals(
                    2,
                    polls(sum, "poll").get("run(I)J"),
                    "ArraySum.run at stride " + stride + ": one per strip of each loop");
            assertEquals(0, pollsBeforeBranches(run), "ArraySum.run at stride " + stride + ": polls at back-edges");
        }
        byte[] spin = bytes(WORK + "Spin");
        // Spin's loop is not counted (a long counter): a poll at its back-edge under every backedge stride.
        for (int stride : new int[] {0, 64, 1024, 16384}) {
            assertEquals(
                    1,
                    polls(
                                    new PollInjector(Strategies.backedge(stride, true), true)
                                            .instrument(spin)
                                            .bytes(),
                                    "poll")
                            .get("run(I)J"),
                    "Spin.run at stride " + stride);
        }
    }
}
