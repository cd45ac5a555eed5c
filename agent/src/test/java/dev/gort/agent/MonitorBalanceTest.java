package dev.gort.agent;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gort.agent.work.LoopShapes;
import dev.gort.agent.work.Spinners;
import dev.gort.runtime.PreemptStrategy;
import java.io.InputStream;
import org.junit.jupiter.api.Test;
import org.objectweb.asm.ClassReader;
import org.objectweb.asm.Opcodes;
import org.objectweb.asm.tree.AbstractInsnNode;
import org.objectweb.asm.tree.ClassNode;
import org.objectweb.asm.tree.MethodInsnNode;
import org.objectweb.asm.tree.MethodNode;
import org.objectweb.asm.tree.TryCatchBlockNode;

/**
 * The monitor hooks keep a synchronized block's monitors balanced in HotSpot's sense (every
 * instruction that may throw while the monitor is held is covered by a catch-any handler), or C1
 * and C2 refuse the method ("not compilable (unbalanced monitors)") and it runs interpreted forever:
 * the preemption lab's Monitor workload ran 300-800 times slower under every strategy.
 */
class MonitorBalanceTest {
    private static byte[] bytes(Class<?> c) throws Exception {
        try (InputStream in = c.getClassLoader().getResourceAsStream(c.getName().replace('.', '/') + ".class")) {
            return in.readAllBytes();
        }
    }

    private static boolean coveredByCatchAny(MethodNode mn, AbstractInsnNode insn) {
        int at = mn.instructions.indexOf(insn);
        for (TryCatchBlockNode t : mn.tryCatchBlocks) {
            if (t.type == null && mn.instructions.indexOf(t.start) <= at && at < mn.instructions.indexOf(t.end)) {
                return true;
            }
        }
        return false;
    }

    private static int check(byte[] instrumented) {
        ClassNode cn = new ClassNode();
        new ClassReader(instrumented).accept(cn, 0);
        int hooks = 0;
        for (MethodNode mn : cn.methods) {
            if ((mn.access & Opcodes.ACC_SYNCHRONIZED) != 0) {
                continue; // the JVM releases a synchronized method's monitor itself
            }
            for (AbstractInsnNode in = mn.instructions.getFirst(); in != null; in = in.getNext()) {
                if (!(in instanceof MethodInsnNode m && m.owner.equals(PollInjector.POLL))) {
                    continue;
                }
                String at = cn.name + "." + mn.name + " " + m.name + " at " + mn.instructions.indexOf(in);
                if (m.name.equals("monitorEnter")) {
                    hooks++;
                    AbstractInsnNode prev = in.getPrevious();
                    while (prev.getOpcode() < 0) {
                        prev = prev.getPrevious();
                    }
                    assertEquals(Opcodes.MONITORENTER, prev.getOpcode(), at + ": right after MONITORENTER");
                    assertTrue(coveredByCatchAny(mn, in), at + ": the monitor is held, a catch-any must cover it");
                } else if (m.name.equals("monitorExit")) {
                    hooks++;
                    AbstractInsnNode next = in.getNext();
                    while (next.getOpcode() < 0) {
                        next = next.getNext();
                    }
                    assertEquals(Opcodes.MONITOREXIT, next.getOpcode(), at + ": right before MONITOREXIT (still held)");
                }
            }
        }
        return hooks;
    }

    @Test
    void monitorHooksSitInsideTheBlocksCatchAnyRange() throws Exception {
        for (PreemptStrategy st :
                new PreemptStrategy[] {PreemptStrategy.ENTRY, PreemptStrategy.BACKEDGE, PreemptStrategy.BUDGET}) {
            for (Class<?> c : new Class<?>[] {LoopShapes.class, Spinners.class}) {
                PollInjector.Result r = new PollInjector(st, true).instrument(bytes(c));
                assertTrue(check(r.bytes()) >= 2, c + " has synchronized blocks");
            }
        }
    }
}
