package dev.gort.agent;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.objectweb.asm.Opcodes;
import org.objectweb.asm.tree.AbstractInsnNode;
import org.objectweb.asm.tree.FieldInsnNode;
import org.objectweb.asm.tree.FrameNode;
import org.objectweb.asm.tree.IincInsnNode;
import org.objectweb.asm.tree.InsnList;
import org.objectweb.asm.tree.InsnNode;
import org.objectweb.asm.tree.JumpInsnNode;
import org.objectweb.asm.tree.LabelNode;
import org.objectweb.asm.tree.LdcInsnNode;
import org.objectweb.asm.tree.LineNumberNode;
import org.objectweb.asm.tree.LookupSwitchInsnNode;
import org.objectweb.asm.tree.MethodInsnNode;
import org.objectweb.asm.tree.MethodNode;
import org.objectweb.asm.tree.TableSwitchInsnNode;
import org.objectweb.asm.tree.TryCatchBlockNode;
import org.objectweb.asm.tree.VarInsnNode;

/**
 * Strip-mines javac's counted loops so that the {@code backedge} poll runs once per
 * {@code stride} iterations instead of once per iteration, which keeps C2's loop optimisations
 * (unrolling, range-check elimination, SuperWord vectorisation) on the inner loop. This is what C2
 * itself does for its safepoint poll ({@code -XX:LoopStripMiningIter}); it cannot do it for ours
 * because an opaque load is an ordered memory access that no loop transformation may move.
 *
 * <p><b>The shape</b> (javac's {@code for (int i = ..; i < limit; i++)}, enhanced-for over an
 * array, and {@code while (i < n) { ..; i++; }}):
 * <pre>
 *   H: [frame, empty stack]  iload i; LIMIT; if_icmpge X
 *      BODY
 *      iinc i 1
 *      goto H                                 (the back-edge)
 * </pre>
 * where LIMIT is {@code iload n}, {@code aload a; arraylength}, an int constant, or a field of
 * the class being rewritten read at every test ({@code this.arr.length}, {@code o.n},
 * {@code ARR.length}: {@code aload a; getfield f; [arraylength]} or {@code getstatic f;
 * [arraylength]}, an int field or an array field's length), and BODY stores neither {@code i} nor
 * the local LIMIT reads (so LIMIT has the same value at every test), calls nothing but methods of
 * its own class and {@code java.lang.Math}/{@code StrictMath} (a call into uninstrumented code
 * repeated {@code stride} times would stretch the time between polls), holds no monitor, and is
 * entered only through H. A field LIMIT must also keep its value through BODY: the field is
 * declared by this class and not volatile (a volatile read may not be hoisted out of the strip;
 * a plain one may, as C2 itself hoists it out of a loop without a safepoint), BODY writes no field
 * of that name and type, and unless the field is final BODY calls nothing but {@code Math}/
 * {@code StrictMath} (a method of the class could assign it). It becomes:
 * <pre>
 *   H: [frame]  iload i; LIMIT; if_icmpge X
 *      Poll.poll("class.method")                             (once per strip)
 *      lim = (int) Math.min((long) i + stride, (long) LIMIT)    (no overflow: done in long)
 *   I: [frame + lim:int]
 *      BODY                                                  (its frames gain lim:int)
 *      iinc i 1
 *      iload i; iload lim; if_icmplt I                       (inner back-edge: no poll)
 *      goto H                                                (outer back-edge: no poll)
 * </pre>
 * The iterations, their order and every value are the original's: the inner loop runs while
 * {@code i < lim <= LIMIT}, and the outer test is the original test. A {@code continue} jumps to
 * the {@code iinc}, a {@code break} or return leaves both loops, a jump back to H is an ordinary
 * back-edge (it keeps its own poll). Each back-edge is matched on its own: of a {@code while} loop
 * with a {@code continue} after its own {@code i++} and a final {@code i++}, the continue path is
 * mined (its body, up to that {@code i++}, stores {@code i} nowhere else) and the final one, whose
 * body contains the other {@code i++}, keeps its poll. Any other shape keeps a poll at every
 * back-edge.
 *
 * <p><b>Frames.</b> The class is read with expanded frames, so every frame lists all its locals:
 * the new local is set to {@code int} in the frames inside the inner loop (only reachable from I,
 * after {@code lim} is stored) and the frame at I is H's plus {@code lim}. Class files without
 * StackMapTable (before 50) need nothing.
 *
 * <p>Latency bound: between two polls at most {@code stride} iterations of a body that has no
 * unpolled loop (nested loops poll on their own) and calls only its own class (whose loops poll)
 * and Math.
 */
final class StripMiner {
    private StripMiner() {}

    /** One loop found by {@link #find}: everything the rewrite needs. */
    private record Loop(
            FrameNode headFrame,
            int iv,
            List<AbstractInsnNode> limit,
            JumpInsnNode test,
            IincInsnNode step,
            JumpInsnNode backedge) {}

    /**
     * Rewrites every matching loop of {@code mn} and returns the branches that must not get a
     * per-branch poll (each strip-mined loop's outer and inner back-edges). {@code fields}: the
     * access flags of the fields {@code owner} declares ({@code name:desc} to flags), for loops
     * whose limit reads one. {@code frames}: the class has StackMapTable frames (read expanded).
     */
    static Set<AbstractInsnNode> stripMine(
            String owner, Map<String, Integer> fields, MethodNode mn, int stride, boolean frames, String site) {
        List<Loop> loops = find(owner, fields, mn, frames);
        Set<AbstractInsnNode> noPoll = new HashSet<>();
        for (Loop l : loops) {
            noPoll.add(l.backedge);
            noPoll.add(rewrite(mn, l, stride, frames, site));
        }
        return noPoll;
    }

    private static List<Loop> find(String owner, Map<String, Integer> fields, MethodNode mn, boolean frames) {
        // Positions come from InsnList.indexOf: its index cache is built on the first call (only in a
        // method with a GOTO) and stays valid, since nothing here changes the list.
        InsnList index = mn.instructions;
        List<Loop> out = new ArrayList<>();
        for (AbstractInsnNode in = index.getFirst(); in != null; in = in.getNext()) {
            if (in.getOpcode() != Opcodes.GOTO) {
                continue;
            }
            JumpInsnNode g = (JumpInsnNode) in;
            if (index.indexOf(g.label) >= index.indexOf(g)) {
                continue; // forward
            }
            Loop l = match(owner, fields, mn, g, index, frames);
            if (l != null) {
                out.add(l);
            }
        }
        return out;
    }

    /** The loop closed by back-edge {@code g}, if it has the shape; else null. */
    private static Loop match(
            String owner, Map<String, Integer> fields, MethodNode mn, JumpInsnNode g, InsnList index, boolean frames) {
        if (!(previousReal(g.getPrevious()) instanceof IincInsnNode step) || step.incr != 1) {
            return null;
        }
        int iv = step.var;
        LabelNode head = g.label;
        FrameNode headFrame = null;
        AbstractInsnNode p = head.getNext();
        while (p != null && (p instanceof LabelNode || p instanceof LineNumberNode || p instanceof FrameNode)) {
            if (p instanceof FrameNode f) {
                headFrame = f;
            }
            p = p.getNext();
        }
        if (frames
                && (headFrame == null
                        || headFrame.type != Opcodes.F_NEW
                        || (headFrame.stack != null && !headFrame.stack.isEmpty()))) {
            return null;
        }
        if (!(p instanceof VarInsnNode load) || load.getOpcode() != Opcodes.ILOAD || load.var != iv) {
            return null;
        }
        List<AbstractInsnNode> limit = new ArrayList<>();
        int limitVar = -1;
        FieldInsnNode field = null; // a field LIMIT reads
        boolean fieldFinal = false;
        AbstractInsnNode q = p.getNext();
        if (q instanceof VarInsnNode v && v.getOpcode() == Opcodes.ILOAD && v.var != iv) {
            limitVar = v.var;
            limit.add(q);
            q = q.getNext();
        } else if (q instanceof VarInsnNode v
                && v.getOpcode() == Opcodes.ALOAD
                && q.getNext() != null
                && q.getNext().getOpcode() == Opcodes.ARRAYLENGTH) {
            limitVar = v.var;
            limit.add(q);
            limit.add(q.getNext());
            q = q.getNext().getNext();
        } else if (isIntConstant(q)) {
            limit.add(q);
            q = q.getNext();
        } else if (fieldLimit(owner, fields, q) instanceof FieldInsnNode f) {
            // this.arr.length, o.n, ARR.length, N: the field is read again at every test.
            field = f;
            if (q instanceof VarInsnNode v) {
                limitVar = v.var;
                limit.add(q);
                q = q.getNext();
            }
            limit.add(q);
            q = q.getNext();
            if (f.desc.startsWith("[")) {
                limit.add(q);
                q = q.getNext();
            }
            fieldFinal = (fields.get(f.name + ":" + f.desc) & Opcodes.ACC_FINAL) != 0;
        } else {
            return null;
        }
        if (!(q instanceof JumpInsnNode test) || test.getOpcode() != Opcodes.IF_ICMPGE) {
            return null;
        }
        int from = index.indexOf(test);
        int to = index.indexOf(g);
        if (index.indexOf(test.label) <= to) {
            return null; // the exit must lie after the loop
        }
        // BODY = (test, step); the region the rewrite touches = [head, g].
        Set<LabelNode> bodyLabels = new HashSet<>();
        for (AbstractInsnNode in = test.getNext(); in != g; in = in.getNext()) {
            if (in instanceof LabelNode l) {
                bodyLabels.add(l);
            }
        }
        for (AbstractInsnNode in = test.getNext(); in != step; in = in.getNext()) {
            int op = in.getOpcode();
            if (in instanceof VarInsnNode v
                    && v.getOpcode() >= Opcodes.ISTORE
                    && v.getOpcode() <= Opcodes.ASTORE
                    && (v.var == iv || v.var == limitVar)) {
                return null;
            }
            if (in instanceof IincInsnNode inc && (inc.var == iv || inc.var == limitVar)) {
                return null;
            }
            if (op == Opcodes.MONITORENTER
                    || op == Opcodes.MONITOREXIT
                    || op == Opcodes.INVOKEDYNAMIC
                    || op == Opcodes.JSR
                    || op == Opcodes.RET) {
                return null;
            }
            if (in instanceof MethodInsnNode m
                    && !m.owner.equals("java/lang/Math")
                    && !m.owner.equals("java/lang/StrictMath")
                    && (!m.owner.equals(owner) || (field != null && !fieldFinal))) {
                return null;
            }
            if (field != null
                    && in instanceof FieldInsnNode f
                    && (op == Opcodes.PUTFIELD || op == Opcodes.PUTSTATIC)
                    && f.name.equals(field.name)
                    && f.desc.equals(field.desc)) {
                return null; // the body may change the limit
            }
        }
        // Entered only through the head: no branch or handler from outside [head, g] lands inside BODY.
        for (AbstractInsnNode in = mn.instructions.getFirst(); in != null; in = in.getNext()) {
            int i = index.indexOf(in);
            if (i > from && i <= to) {
                continue;
            }
            for (LabelNode t : targets(in)) {
                if (bodyLabels.contains(t)) {
                    return null;
                }
            }
        }
        for (TryCatchBlockNode tc : mn.tryCatchBlocks) {
            boolean s = inside(tc.start, from, to, index);
            boolean e = inside(tc.end, from, to, index);
            boolean h = bodyLabels.contains(tc.handler);
            if (s != e || (h && !s)) {
                return null; // a range that straddles the loop's edge, or a handler reached from outside
            }
        }
        return new Loop(headFrame, iv, limit, test, step, g);
    }

    private static boolean inside(LabelNode l, int from, int to, InsnList index) {
        int i = index.indexOf(l);
        return i > from && i <= to;
    }

    private static List<LabelNode> targets(AbstractInsnNode in) {
        if (in instanceof JumpInsnNode j) {
            return List.of(j.label);
        }
        if (in instanceof TableSwitchInsnNode t) {
            List<LabelNode> l = new ArrayList<>(t.labels);
            l.add(t.dflt);
            return l;
        }
        if (in instanceof LookupSwitchInsnNode t) {
            List<LabelNode> l = new ArrayList<>(t.labels);
            l.add(t.dflt);
            return l;
        }
        return List.of();
    }

    /**
     * The field read of a field LIMIT starting at {@code in} ({@code aload a; getfield f}
     * or {@code getstatic f}, then {@code arraylength} if f is an array, or f is an int), or
     * null: f must be declared by {@code owner} (in {@code fields}) and not volatile.
     */
    private static FieldInsnNode fieldLimit(String owner, Map<String, Integer> fields, AbstractInsnNode in) {
        AbstractInsnNode r = in;
        if (in instanceof VarInsnNode v && v.getOpcode() == Opcodes.ALOAD) {
            r = in.getNext();
            if (r == null || r.getOpcode() != Opcodes.GETFIELD) {
                return null;
            }
        } else if (in.getOpcode() != Opcodes.GETSTATIC) {
            return null;
        }
        FieldInsnNode f = (FieldInsnNode) r;
        Integer access = fields.get(f.name + ":" + f.desc);
        if (!f.owner.equals(owner)
                || access == null
                || (access & Opcodes.ACC_VOLATILE) != 0
                || ((access & Opcodes.ACC_STATIC) != 0) != (f.getOpcode() == Opcodes.GETSTATIC)) {
            return null;
        }
        if (f.desc.equals("I")) {
            return f;
        }
        if (f.desc.startsWith("[") && f.getNext() != null && f.getNext().getOpcode() == Opcodes.ARRAYLENGTH) {
            return f;
        }
        return null;
    }

    private static boolean isIntConstant(AbstractInsnNode in) {
        int op = in.getOpcode();
        return (op >= Opcodes.ICONST_M1 && op <= Opcodes.ICONST_5)
                || op == Opcodes.BIPUSH
                || op == Opcodes.SIPUSH
                || (op == Opcodes.LDC && ((LdcInsnNode) in).cst instanceof Integer);
    }

    /** The nearest instruction at or before {@code in} that is not a label, line number or frame. */
    private static AbstractInsnNode previousReal(AbstractInsnNode in) {
        while (in != null && in.getOpcode() < 0) {
            in = in.getPrevious();
        }
        return in;
    }

    /** Applies the rewrite; returns the new inner back-edge. */
    private static JumpInsnNode rewrite(MethodNode mn, Loop l, int stride, boolean frames, String site) {
        InsnList insns = mn.instructions;
        int lim = mn.maxLocals;
        mn.maxLocals = lim + 1;
        // After the test: poll once per strip, then lim = (int) min((long) i + stride, (long) LIMIT).
        InsnList pre = new InsnList();
        pre.add(PollInjector.pollAt("poll", site));
        pre.add(new VarInsnNode(Opcodes.ILOAD, l.iv));
        pre.add(new InsnNode(Opcodes.I2L));
        pre.add(new LdcInsnNode((long) stride));
        pre.add(new InsnNode(Opcodes.LADD));
        for (AbstractInsnNode in : l.limit) {
            pre.add(in.clone(Map.of()));
        }
        pre.add(new InsnNode(Opcodes.I2L));
        pre.add(new MethodInsnNode(Opcodes.INVOKESTATIC, "java/lang/Math", "min", "(JJ)J", false));
        pre.add(new InsnNode(Opcodes.L2I));
        pre.add(new VarInsnNode(Opcodes.ISTORE, lim));
        LabelNode inner = new LabelNode();
        pre.add(inner);
        if (frames) {
            // Every frame already inside the body gains lim:int (they are reached only from I).
            for (AbstractInsnNode in = l.test.getNext(); in != l.backedge; in = in.getNext()) {
                if (in instanceof FrameNode f) {
                    f.local = withInt(f.local, lim);
                }
            }
            List<Object> locals = withInt(l.headFrame.local, lim);
            pre.add(new FrameNode(Opcodes.F_NEW, locals.size(), locals.toArray(), 0, new Object[0]));
        }
        insns.insert(l.test, pre);
        // After the step: the inner back-edge.
        InsnList post = new InsnList();
        post.add(new VarInsnNode(Opcodes.ILOAD, l.iv));
        post.add(new VarInsnNode(Opcodes.ILOAD, lim));
        JumpInsnNode innerEdge = new JumpInsnNode(Opcodes.IF_ICMPLT, inner);
        post.add(innerEdge);
        insns.insert(l.step, post);
        // i (long) + stride (long) on an empty stack, then LIMIT's (up to 2 slots) widened: 4 slots.
        mn.maxStack = Math.max(mn.maxStack, 4);
        return innerEdge;
    }

    /**
     * {@code locals} (ASM's expanded form: long and double take one element for two slots) with slot
     * {@code slot} set to int, padded with TOP.
     */
    static List<Object> withInt(List<Object> locals, int slot) {
        return withLocal(locals, slot, Opcodes.INTEGER, "strip-mining");
    }

    /**
     * {@code locals} (ASM's expanded form) with slot {@code slot} set to {@code type}
     * ({@code Opcodes.INTEGER}, or {@code Opcodes.LONG} over {@code slot} and {@code slot + 1}),
     * padded with TOP; {@code who} names the rewrite in the error if those slots are taken.
     */
    static List<Object> withLocal(List<Object> locals, int slot, Object type, String who) {
        int size = type == Opcodes.LONG || type == Opcodes.DOUBLE ? 2 : 1;
        List<Object> perSlot = new ArrayList<>();
        for (Object o : locals) {
            perSlot.add(o);
            if (o == Opcodes.LONG || o == Opcodes.DOUBLE) {
                perSlot.add(null); // the second half
            }
        }
        while (perSlot.size() < slot + size) {
            perSlot.add(Opcodes.TOP);
        }
        for (int i = slot; i < slot + size; i++) {
            if (perSlot.get(i) != Opcodes.TOP) {
                throw new IllegalStateException(who + ": local " + i + " already holds " + perSlot.get(i));
            }
        }
        perSlot.set(slot, type);
        if (size == 2) {
            perSlot.set(slot + 1, null); // the second half
        }
        List<Object> out = new ArrayList<>();
        for (Object o : perSlot) {
            if (o != null) {
                out.add(o);
            }
        }
        // Trailing TOPs are implicit in a frame.
        while (!out.isEmpty() && out.get(out.size() - 1) == Opcodes.TOP) {
            out.remove(out.size() - 1);
        }
        return out;
    }
}
