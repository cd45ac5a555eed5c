package dev.gort.agent;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gort.runtime.InstrumentationStats;
import dev.gort.runtime.PreemptStrategy;
import java.io.InputStream;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.objectweb.asm.ClassReader;
import org.objectweb.asm.Opcodes;
import org.objectweb.asm.tree.AbstractInsnNode;
import org.objectweb.asm.tree.ClassNode;
import org.objectweb.asm.tree.JumpInsnNode;
import org.objectweb.asm.tree.LdcInsnNode;
import org.objectweb.asm.tree.MethodInsnNode;
import org.objectweb.asm.tree.MethodNode;
import org.objectweb.asm.tree.TryCatchBlockNode;

class GortTransformerTest {
    private static byte[] bytes(String cls) throws Exception {
        try (InputStream in =
                GortTransformerTest.class.getClassLoader().getResourceAsStream(cls.replace('.', '/') + ".class")) {
            return in.readAllBytes();
        }
    }

    /** {@code cls} loaded (and initialised) through the real transformer, under {@code backedge}. */
    private static Class<?> instrumented(String cls) throws ClassNotFoundException {
        return Class.forName(cls, true, new InstrumentingLoader(cls, PreemptStrategy.BACKEDGE));
    }

    private static MethodNode method(byte[] b, String name) {
        ClassNode cn = new ClassNode();
        new ClassReader(b).accept(cn, 0);
        return cn.methods.stream().filter(m -> m.name.equals(name)).findFirst().orElseThrow();
    }

    private static MethodNode method(byte[] b, String name, String desc) {
        ClassNode cn = new ClassNode();
        new ClassReader(b).accept(cn, 0);
        return cn.methods.stream()
                .filter(m -> m.name.equals(name) && m.desc.equals(desc))
                .findFirst()
                .orElseThrow();
    }

    private static List<String> calls(MethodNode mn) {
        List<String> out = new ArrayList<>();
        for (AbstractInsnNode in = mn.instructions.getFirst(); in != null; in = in.getNext()) {
            if (in instanceof MethodInsnNode m && m.owner.equals(PollInjector.POLL)) {
                out.add(m.name);
            }
        }
        return out;
    }

    /** The enter/exit hooks among {@link #calls} (no yield points), but a blocking call site's. */
    private static List<String> hooks(MethodNode mn) {
        return calls(mn).stream()
                .filter(n -> (n.endsWith("Enter") || n.endsWith("Exit")) && !n.startsWith("blocking"))
                .toList();
    }

    @Test
    void neverInstrumentsJdkGortOrAgentDependencies() {
        GortTransformer t = new GortTransformer(PreemptStrategy.BACKEDGE, false, List.of("com/acme/gen/"), List.of());
        assertEquals("jdk", t.skipReason("java/util/ArrayList"));
        assertEquals("jdk", t.skipReason("jdk/internal/vm/Continuation"));
        assertEquals("jdk", t.skipReason("sun/misc/Unsafe"));
        assertEquals("jdk", t.skipReason("com/sun/net/httpserver/HttpServer"));
        assertEquals("jdk", t.skipReason("javax/net/SocketFactory"));
        assertEquals("gort", t.skipReason("dev/gort/runtime/Scheduler"));
        assertEquals("gort", t.skipReason("dev/gort/Chan"));
        assertEquals("gort", t.skipReason("dev/gort/agent/shaded/asm/ClassReader"));
        assertEquals("agent-dependency", t.skipReason("org/objectweb/asm/ClassReader"));
        assertEquals("agent-dependency", t.skipReason("org/agrona/BitUtil"));
        assertEquals("agent-dependency", t.skipReason("org/HdrHistogram/Histogram"));
        assertEquals("excluded", t.skipReason("com/acme/gen/Foo"));
        assertNull(t.skipReason("dev/gort/examples/PrimeSieve"));
        assertNull(t.skipReason("com/acme/App"));
        assertNull(t.transform(null, "java/lang/Foo", null, null, new byte[0]));
    }

    /**
     * ThreadLocal.get/set/remove call sites become Poll.threadLocalGet/Set/Remove (through a handle
     * the JIT cannot inline: compiled code must not keep a carrier read before a yield), with the
     * same results.
     */
    @Test
    void threadLocalCallSitesGoThroughPoll() throws Exception {
        byte[] orig = bytes("dev.gort.agent.work.Locals");
        PollInjector.Result r = new PollInjector(PreemptStrategy.BACKEDGE, true, 0).instrument(orig);
        assertTrue(r.changed());
        MethodNode mn = method(r.bytes(), "roundTrips");
        List<String> calls = calls(mn);
        assertTrue(
                calls.contains("threadLocalGet")
                        && calls.contains("threadLocalSet")
                        && calls.contains("threadLocalRemove"),
                calls.toString());
        for (AbstractInsnNode in = mn.instructions.getFirst(); in != null; in = in.getNext()) {
            if (in instanceof MethodInsnNode m && m.getOpcode() == Opcodes.INVOKEVIRTUAL) {
                assertTrue(
                        !m.owner.endsWith("ThreadLocal") || m.name.equals("withInitial"),
                        "a ThreadLocal call left in place: " + m.owner + "." + m.name);
            }
        }
        Class<?> c = instrumented("dev.gort.agent.work.Locals");
        Object got = c.getMethod("roundTrips", int.class).invoke(null, 5);
        assertEquals(dev.gort.agent.work.Locals.roundTrips(5), got);
    }

    /**
     * Thread.currentThread() call sites become Poll.currentThread(): the same thread, read in a callee
     * the JIT cannot inline (library code names a lock's owner or a waiter's thread with it).
     */
    @Test
    void currentThreadCallSitesGoThroughPoll() throws Exception {
        byte[] orig = bytes("dev.gort.agent.work.Locals");
        PollInjector.Result r = new PollInjector(PreemptStrategy.BACKEDGE, true, 0).instrument(orig);
        MethodNode mn = method(r.bytes(), "current");
        assertTrue(calls(mn).contains("currentThread"), calls(mn).toString());
        for (AbstractInsnNode in = mn.instructions.getFirst(); in != null; in = in.getNext()) {
            if (in instanceof MethodInsnNode m) {
                assertEquals(PollInjector.POLL, m.owner, "a Thread.currentThread() left in place");
            }
        }
        Class<?> c = instrumented("dev.gort.agent.work.Locals");
        assertSame(Thread.currentThread(), c.getMethod("current").invoke(null));
    }

    @Test
    void backedgePutsAPollBeforeEveryBackwardBranchOnly() throws Exception {
        byte[] orig = bytes("dev.gort.agent.work.LoopShapes");
        PollInjector.Result r = new PollInjector(PreemptStrategy.BACKEDGE, true, 0).instrument(orig);
        assertTrue(r.changed());
        MethodNode nested = method(r.bytes(), "nested");
        // three nested loops: three back-edges, nothing at entry, no monitor hooks
        assertEquals(List.of("poll", "poll", "poll"), calls(nested));
        for (AbstractInsnNode in = nested.instructions.getFirst(); in != null; in = in.getNext()) {
            if (in instanceof MethodInsnNode m && m.owner.equals(PollInjector.POLL)) {
                AbstractInsnNode next = m.getNext();
                assertTrue(next instanceof JumpInsnNode, "a poll must sit right before its branch");
            }
        }
        assertEquals(
                List.of("clinitEnter", "clinitExit", "clinitExit"),
                calls(method(r.bytes(), "<clinit>")),
                "<clinit> gets its entry/exit hooks (one return, one catch-all) and never a poll");
        assertEquals(1, calls(method(r.bytes(), "<init>")).size(), "the constructor's loop");
    }

    /**
     * With a stride, javac's counted loops poll once per strip, right after the loop's own test,
     * and neither of their back-edges polls; loops of another shape keep a poll at the back-edge.
     */
    @Test
    void backedgeStripMinesCountedLoops() throws Exception {
        byte[] orig = bytes("dev.gort.agent.work.LoopShapes");
        PollInjector.Result r = new PollInjector(PreemptStrategy.BACKEDGE, true, 64).instrument(orig);
        MethodNode nested = method(r.bytes(), "nested");
        assertEquals(List.of("poll", "poll", "poll"), calls(nested));
        assertEquals(3, stripHeads(nested), "each of the three counted loops polls after its test");
        assertEquals(3, count(nested, Opcodes.IF_ICMPLT), "each gains an inner back-edge");
        assertEquals(0, pollsBeforeBranches(nested));
        // {method, mined loops, per-back-edge polls}
        assertLoopPolls(r, "firstAbove", 1, 0); // one counted loop with a return inside
        // every loop in the shape (calls to this class allowed); the while loop with two back-edges
        // to one head has its continue path mined and its last k++ polling at the back-edge
        assertLoopPolls(r, "stripShapes", 10, 1);
        assertLoopPolls(r, "enhancedFor", 1, 2); // the array fill; not the List.add loop nor the Iterator one
        assertLoopPolls(r, "longCounted", 0, 1); // a long index keeps its back-edge poll
        // and the counters say one poll per mined loop plus one per other back-edge
        PollInjector.Result every = new PollInjector(PreemptStrategy.BACKEDGE, true, 0).instrument(orig);
        assertTrue(r.backedgePolls() > 0 && r.backedgePolls() <= every.backedgePolls());
    }

    /**
     * Counted loops whose limit is a field read at every test ({@code i < this.arr.length}, the
     * lab's ArraySum) are strip-mined like those over a local, when the field keeps its value
     * through the body; a volatile limit, a body that assigns the field and a non-final field with
     * a call of the class in the body keep their back-edge poll.
     */
    @Test
    void backedgeStripMinesCountedLoopsOverFields() throws Exception {
        byte[] orig = bytes("dev.gort.agent.work.FieldLoops");
        PollInjector.Result r = new PollInjector(PreemptStrategy.BACKEDGE, true, 1024).instrument(orig);
        // {method, mined loops, per-back-edge polls}
        assertLoopPolls(r, "sumField", 1, 0); // this.arr.length
        assertLoopPolls(r, "sumStatic", 1, 0); // shared.length (static)
        assertLoopPolls(r, "countToField", 1, 0); // this.n
        assertLoopPolls(r, "otherObject", 1, 0); // o.arr.length
        assertLoopPolls(r, "finalWithCall", 1, 0); // a final field: a call of this class cannot assign it
        assertLoopPolls(r, "nonFinalWithCall", 0, 1);
        assertLoopPolls(r, "volatileLimit", 0, 1);
        assertLoopPolls(r, "bodyAssignsTheField", 0, 1);
        // Per method, the poll count: one per strip in the mined ones, the caller entry where it calls.
        assertEquals(List.of("poll"), calls(method(r.bytes(), "sumField")));
        assertEquals(List.of("poll", "poll"), calls(method(r.bytes(), "finalWithCall")));
        assertEquals(List.of("poll", "poll"), calls(method(r.bytes(), "nonFinalWithCall")));
    }

    private static void assertLoopPolls(PollInjector.Result r, String name, int mined, int perBackEdge) {
        MethodNode mn = method(r.bytes(), name);
        assertEquals(mined, stripHeads(mn), name + ": strip-mined loops");
        assertEquals(perBackEdge, pollsBeforeBranches(mn), name + ": polls at back-edges");
    }

    /** Polls right after a loop's own test: the once-per-strip polls of mined loops. */
    private static int stripHeads(MethodNode mn) {
        return countIf(mn, in -> {
            if (!isPoll(in)) {
                return false;
            }
            AbstractInsnNode p = previousReal(in);
            return p != null && p.getOpcode() == Opcodes.IF_ICMPGE; // null: an entry poll
        });
    }

    /** Polls right before a branch: per-back-edge polls. */
    private static int pollsBeforeBranches(MethodNode mn) {
        return countIf(mn, in -> isPoll(in) && in.getNext() instanceof JumpInsnNode);
    }

    private static int countIf(MethodNode mn, java.util.function.Predicate<AbstractInsnNode> p) {
        int n = 0;
        for (AbstractInsnNode in = mn.instructions.getFirst(); in != null; in = in.getNext()) {
            if (p.test(in)) {
                n++;
            }
        }
        return n;
    }

    private static boolean isPoll(AbstractInsnNode in) {
        return in instanceof MethodInsnNode m && m.owner.equals(PollInjector.POLL) && m.name.equals("poll");
    }

    /** The instruction before a poll's site {@code ldc}, skipping labels, lines and frames. */
    private static AbstractInsnNode previousReal(AbstractInsnNode in) {
        AbstractInsnNode p = in.getPrevious();
        assertTrue(p instanceof LdcInsnNode, "a poll's site is pushed right before it");
        p = p.getPrevious();
        while (p != null && p.getOpcode() < 0) {
            p = p.getPrevious();
        }
        return p;
    }

    private static int count(MethodNode mn, int opcode) {
        return countIf(mn, in -> in.getOpcode() == opcode);
    }

    /**
     * backedge polls at the entry of methods that call others (recursion), not of leaves, and not
     * of constructors whose only call is their super(...); {@code callerEntries=false} turns it off.
     */
    @Test
    void backedgePollsAtTheEntryOfCallersOnly() throws Exception {
        byte[] spinners = bytes("dev.gort.agent.work.Spinners");
        PollInjector.Result r = new PollInjector(PreemptStrategy.BACKEDGE, true).instrument(spinners);
        MethodNode fib = method(r.bytes(), "fib");
        assertEquals(List.of("poll"), calls(fib));
        assertTrue(fib.instructions.getFirst() instanceof LdcInsnNode l
                && l.cst.equals("dev.gort.agent.work.Spinners.fib"));
        // a leaf with a loop: back-edge polls only, nothing at its entry
        MethodNode preempt = method(r.bytes(), "preempt");
        assertTrue(!(preempt.instructions.getFirst() instanceof LdcInsnNode), "a leaf gets no entry poll");
        assertEquals(1, pollsBeforeBranches(preempt) + stripHeads(preempt));
        // LoopShapes(int): its only call is super(): no entry poll, one for its loop
        PollInjector.Result shapes =
                new PollInjector(PreemptStrategy.BACKEDGE, true, 0).instrument(bytes("dev.gort.agent.work.LoopShapes"));
        assertEquals(1, calls(method(shapes.bytes(), "<init>")).size());
        // off: the recursion has no yield point at all
        PollInjector.Result off = new PollInjector(PreemptStrategy.BACKEDGE, true, 1024, false).instrument(spinners);
        assertTrue(calls(method(off.bytes(), "fib")).isEmpty());
    }

    @Test
    void entryPutsOnePollFirstInEveryMethod() throws Exception {
        PollInjector.Result r =
                new PollInjector(PreemptStrategy.ENTRY, true).instrument(bytes("dev.gort.agent.work.LoopShapes"));
        MethodNode nested = method(r.bytes(), "nested");
        assertEquals(List.of("poll"), calls(nested));
        AbstractInsnNode first = nested.instructions.getFirst();
        // ldc "class.method" then the poll: the site travels with the yield point
        assertTrue(first instanceof LdcInsnNode l && l.cst.equals("dev.gort.agent.work.LoopShapes.nested"), "" + first);
        assertTrue(first.getNext() instanceof MethodInsnNode m
                && m.name.equals("poll")
                && m.desc.equals("(Ljava/lang/String;)V"));
    }

    @Test
    void budgetChargesEntriesAndBackEdges() throws Exception {
        PollInjector.Result r =
                new PollInjector(PreemptStrategy.BUDGET, true).instrument(bytes("dev.gort.agent.work.LoopShapes"));
        assertEquals(List.of("budget", "budget", "budget", "budget"), calls(method(r.bytes(), "nested")));
    }

    @Test
    void monitorHooksPairEveryEnterWithEveryExitPath() throws Exception {
        PollInjector.Result r =
                new PollInjector(PreemptStrategy.BACKEDGE, true).instrument(bytes("dev.gort.agent.work.LoopShapes"));
        List<String> block = calls(method(r.bytes(), "syncBlock"));
        assertEquals(1, block.stream().filter("monitorEnter"::equals).count());
        // javac: a normal exit and the exception handler's exit
        assertEquals(2, block.stream().filter("monitorExit"::equals).count());
        MethodNode sm = method(r.bytes(), "syncMethod");
        List<String> m = calls(sm);
        assertEquals("monitorEnter", m.get(0));
        assertEquals(2, m.stream().filter("monitorExit"::equals).count(), "the return and the added handler");
        assertEquals(1, sm.tryCatchBlocks.size());
        assertNull(sm.tryCatchBlocks.get(0).type, "a catch-all");
        assertTrue((sm.access & Opcodes.ACC_SYNCHRONIZED) != 0);
    }

    /**
     * A call site of a JDK method that blocks its thread ({@code PollInjector.isBlockingCall}) gets
     * blockingEnter before it, blockingExit after it and a handler of the call alone, first in the
     * exception table, that runs blockingExit and rethrows, in a constructor too after its super()
     * call; one before it (in this(...)'s arguments) gets no handler, a class initialiser's
     * nothing, a call that does not block nothing. A stream wrapper's read is wrapped the same way,
     * with blockingEnterStream, which looks at the receiver. {@code Thread.sleep} and
     * {@code TimeUnit.sleep} become {@code Poll.threadSleep} and {@code Poll.timeUnitSleep}. The JVM
     * verifies and runs them (outside a goroutine the hooks do nothing).
     */
    /**
     * Every {@code close()V} call (an interface's here: {@code Closeable.close}) has
     * {@code dup; Poll.closeTarget(receiver); swap} right before it and {@code Poll.closed(target)}
     * right after it, which wakes a goroutine waiting in the netpoller to read the JDK socket the
     * call closed.
     */
    @Test
    void everyCloseCallHasTheCloseHooksAroundIt() throws Exception {
        PollInjector.Result r =
                new PollInjector(PreemptStrategy.BACKEDGE, true).instrument(bytes("dev.gort.agent.work.Blockers"));
        MethodInsnNode close = null;
        for (AbstractInsnNode in = method(r.bytes(), "close").instructions.getFirst(); in != null; in = in.getNext()) {
            if (in instanceof MethodInsnNode m && m.name.equals("close")) {
                close = m;
            }
        }
        assertTrue(close != null, "no close() call");
        AbstractInsnNode swap = close.getPrevious();
        AbstractInsnNode target = swap.getPrevious();
        assertEquals(Opcodes.SWAP, swap.getOpcode());
        assertTrue(
                target instanceof MethodInsnNode hook
                        && hook.owner.equals(PollInjector.POLL)
                        && hook.name.equals("closeTarget")
                        && hook.getPrevious().getOpcode() == Opcodes.DUP,
                "no dup; Poll.closeTarget(receiver) before the close() call");
        assertTrue(
                close.getNext() instanceof MethodInsnNode hook
                        && hook.owner.equals(PollInjector.POLL)
                        && hook.name.equals("closed"),
                "no Poll.closed(target) right after the close() call");
    }

    /**
     * The frame token's local (a long stored at the entry of a method with a stream read) keeps
     * every shape of method valid: the instrumented class loads (the JVM verifies its frames) and
     * each method runs as written; each method with a read takes the token first, the class
     * initialiser none.
     */
    @Test
    void theFrameTokenKeepsEveryShapeOfMethodValid() throws Exception {
        String cls = "dev.gort.agent.work.TokenShapes";
        PollInjector.Result r = new PollInjector(PreemptStrategy.BACKEDGE, true).instrument(bytes(cls));
        for (String name : List.of("<init>", "drain", "readThenSum", "readOrRetry")) {
            ClassNode cn = new ClassNode();
            new ClassReader(r.bytes()).accept(cn, 0);
            for (MethodNode mn : cn.methods) {
                if (mn.name.equals(name)
                        && (!name.equals("<init>") || mn.desc.startsWith("(Ljava/io/BufferedReader;"))) {
                    assertTrue(calls(mn).contains("waitFrame"), () -> name + ": no frame token in " + calls(mn));
                }
            }
        }
        assertFalse(calls(method(r.bytes(), "<clinit>")).contains("waitFrame"), "a class initialiser's token");
        assertEquals(1, stripHeads(method(r.bytes(), "readThenSum")), "the counted loop was not strip-mined");
        Class<?> c = instrumented(cls);
        assertEquals("clinit", c.getField("FIRST").get(null));
        Object o = c.getConstructor(java.io.BufferedReader.class)
                .newInstance(new java.io.BufferedReader(new java.io.StringReader("ctor\n")));
        assertEquals("ctor", c.getField("line").get(o));
        String[] last = new String[1];
        c.getMethod("drain", java.io.BufferedReader.class, String[].class)
                .invoke(null, new java.io.BufferedReader(new java.io.StringReader("a\nb\n")), last);
        assertEquals("b", last[0]);
        int[] a = new int[3000];
        java.util.Arrays.fill(a, 1);
        assertEquals(
                3003,
                c.getMethod("readThenSum", java.io.InputStream.class, int[].class)
                        .invoke(null, new java.io.ByteArrayInputStream(new byte[] {1, 2, 3}), a));
        assertEquals(
                "x",
                c.getMethod("readOrRetry", java.io.BufferedReader.class)
                        .invoke(null, new java.io.BufferedReader(new java.io.StringReader("x\n"))));
    }

    @Test
    void blockingJdkCallsAreWrappedInBlockingHooks() throws Exception {
        PollInjector.Result r =
                new PollInjector(PreemptStrategy.BACKEDGE, true).instrument(bytes("dev.gort.agent.work.Blockers"));
        for (String name : List.of("take", "takeSynchronous", "putSynchronous", "statusAfterTimeout")) {
            MethodNode mn = method(r.bytes(), name);
            assertEquals(
                    List.of("blockingEnter", "blockingExit", "blockingExit"),
                    calls(mn).stream().filter(n -> n.startsWith("blocking")).toList(),
                    name + ": the return and the handler");
            TryCatchBlockNode first = mn.tryCatchBlocks.get(0);
            assertNull(first.type, name + ": a catch-all first");
            AbstractInsnNode covered = first.start.getNext();
            assertTrue(
                    covered instanceof MethodInsnNode m
                            && !m.owner.equals(PollInjector.POLL)
                            && first.end == covered.getNext(),
                    name + ": the handler covers the call alone");
        }
        MethodNode ctor = method(r.bytes(), "<init>", "(Ljava/util/concurrent/BlockingQueue;)V");
        assertEquals(
                List.of("blockingEnter", "blockingExit", "blockingExit"),
                calls(ctor).stream().filter(n -> n.startsWith("blocking")).toList(),
                "a constructor after its super(): the return and the handler");
        assertNull(ctor.tryCatchBlocks.get(0).type, "a catch-all first");
        MethodNode beforeThis = method(r.bytes(), "<init>", "(Ljava/util/concurrent/SynchronousQueue;I)V");
        assertEquals(
                List.of("blockingEnter", "blockingExit"),
                calls(beforeThis).stream().filter(n -> n.startsWith("blocking")).toList(),
                "a constructor before its this(...): no handler");
        assertTrue(beforeThis.tryCatchBlocks.isEmpty());
        PollInjector.Result w = new PollInjector(PreemptStrategy.BACKEDGE, true)
                .instrument(bytes("dev.gort.agent.work.StreamWrappers"));
        for (String name : List.of("readLine", "readInt", "flush")) {
            // A read may wait in the netpoller first (a JDK socket's), a flush only enters a syscall.
            String enter = name.startsWith("read") ? "blockingEnterStreamRead" : "blockingEnterStream";
            assertEquals(
                    List.of(enter, "blockingExit", "blockingExit"),
                    calls(method(w.bytes(), name)).stream()
                            .filter(n -> n.startsWith("blocking"))
                            .toList(),
                    name + ": a stream wrapper's call");
            // A method with a read takes its invocation's frame token first (the look at its
            // stack for JDK frames' locks runs once per invocation); one without, none.
            List<String> all = calls(method(w.bytes(), name));
            int token = all.indexOf("waitFrame");
            if (name.startsWith("read")) {
                assertTrue(
                        token >= 0 && token < all.indexOf("blockingEnterStreamRead"),
                        () -> name + ": no frame token before the read's hook, in " + all);
            } else {
                assertEquals(-1, token, () -> name + ": a frame token without a read, in " + all);
            }
        }
        assertEquals(
                List.of(),
                calls(method(r.bytes(), "<clinit>")).stream()
                        .filter(n -> n.startsWith("blocking"))
                        .toList());
        assertEquals(
                List.of(),
                calls(method(r.bytes(), "nonBlocking")).stream()
                        .filter(n -> n.startsWith("blocking"))
                        .toList());
        List<String> sleeps = new ArrayList<>();
        ClassNode cn = new ClassNode();
        new ClassReader(r.bytes()).accept(cn, 0);
        for (MethodNode mn : cn.methods) {
            if (mn.name.equals("sleep")) {
                sleeps.addAll(
                        calls(mn).stream().filter(n -> n.endsWith("Sleep")).toList());
            }
        }
        assertEquals(
                List.of("threadSleep", "threadSleep", "threadSleep", "timeUnitSleep"),
                sleeps.stream().sorted().toList());
        assertEquals(
                List.of("streamRead"),
                calls(method(r.bytes(), "read")).stream()
                        .filter(n -> n.startsWith("stream"))
                        .toList(),
                "a stream's array read");
        Class<?> c = instrumented("dev.gort.agent.work.Blockers");
        assertEquals("clinit", c.getField("TAKEN_IN_CLINIT").get(null));
        var q = new java.util.concurrent.LinkedBlockingQueue<Object>(List.of("a", "b"));
        c.getConstructor(java.util.concurrent.BlockingQueue.class).newInstance(q);
        assertEquals(
                "b",
                c.getMethod("take", java.util.concurrent.BlockingQueue.class).invoke(null, q));
        assertEquals(null, c.getMethod("nonBlocking", java.util.Queue.class).invoke(null, q));
        c.getMethod("sleep", long.class).invoke(null, 1L);
    }

    /**
     * A method that calls a {@code LockSupport.park*} (or a library wrapper named
     * {@code ...LockSupport}) is wrapped in parkerEnter/parkerExit, first and on every exit (a
     * synchronized one inside its monitor hooks); a constructor and a method that does not park are
     * not; and the JVM verifies and runs every one of them.
     */
    @Test
    void methodsThatParkTheirCarrierAreWrappedInParkerHooks() throws Exception {
        PollInjector.Result r =
                new PollInjector(PreemptStrategy.BACKEDGE, true).instrument(bytes("dev.gort.agent.work.Parkers"));
        for (String name : List.of("plain", "viaWrapper")) {
            MethodNode mn = method(r.bytes(), name);
            assertEquals(
                    List.of("parkerEnter", "parkerExit", "parkerExit"),
                    hooks(mn),
                    name + ": the return and the handler");
            assertNull(mn.tryCatchBlocks.get(mn.tryCatchBlocks.size() - 1).type, name + ": a catch-all");
        }
        assertEquals(
                List.of("monitorEnter", "parkerEnter", "parkerExit", "monitorExit", "parkerExit", "monitorExit"),
                hooks(method(r.bytes(), "syncParker")),
                "the monitor's hooks outside the parker's, on the return and in the handler");
        assertEquals(List.of(), hooks(method(r.bytes(), "<init>")), "a constructor is left alone");
        assertEquals(List.of(), hooks(method(r.bytes(), "noPark")));
        Class<?> c = instrumented("dev.gort.agent.work.Parkers");
        c.getConstructor(long.class).newInstance(1L);
        for (String name : List.of("plain", "syncParker", "viaWrapper")) {
            c.getMethod(name, long.class).invoke(null, 1L);
        }
        assertEquals(62, c.getMethod("noPark", int.class).invoke(null, 2));
    }

    /**
     * Call sites of JDK callback methods are wrapped: {@code jdkCallbackEnter} before the call
     * (receiver and the method's index), {@code jdkCallbackExit} after it and in a handler of the
     * call alone, first in the exception table, so that the method's own handler around the call
     * still runs after it; constructors and other calls are left alone; the agent's list is the
     * runtime's; and the JVM verifies and runs them (an exception from the callback reaches the
     * method's own handler).
     */
    @Test
    void callsOfJdkCallbackMethodsAreWrappedInJdkCallbackHooks() throws Exception {
        Field f = Class.forName("dev.gort.runtime.LockFrames").getDeclaredField("CALLBACKS");
        f.setAccessible(true);
        assertEquals(f.get(null), PollInjector.CALLBACKS, "the agent's indices are the runtime's");
        Method bit =
                Class.forName("dev.gort.runtime.LockFrames").getDeclaredMethod("callbackBit", int.class, int.class);
        bit.setAccessible(true);
        for (int i = 0; i < PollInjector.CALLBACKS.size(); i++) {
            for (int n = 1; n <= 3; n++) {
                assertEquals(
                        bit.invoke(null, i, n),
                        PollInjector.callbackBit(i, n),
                        "the agent's mask bits are the runtime's");
            }
        }
        PollInjector.Result r =
                new PollInjector(PreemptStrategy.BACKEDGE, true).instrument(bytes("dev.gort.agent.work.Callbacks"));
        for (String name : List.of("viaMap", "viaClass", "viaSubclass", "mergeCaught")) {
            MethodNode mn = method(r.bytes(), name);
            assertEquals(
                    List.of("jdkCallbackEnter", "jdkCallbackExit", "jdkCallbackExit"),
                    hooks(mn),
                    name + ": after the call and in its handler");
            TryCatchBlockNode first = mn.tryCatchBlocks.get(0);
            assertNull(first.type, name + ": a catch-all");
            AbstractInsnNode last = mn.instructions.getLast();
            while (last.getOpcode() < 0) {
                last = last.getPrevious();
            }
            assertEquals(Opcodes.ATHROW, last.getOpcode(), name + ": the handler, last, rethrows");
        }
        List<TryCatchBlockNode> table = method(r.bytes(), "mergeCaught").tryCatchBlocks;
        assertEquals(3, table.size(), "the call's handler, the method's own, and its copy over the rethrow");
        assertEquals(table.get(1).handler, table.get(2).handler, "the rethrow reaches the method's own handler");
        assertEquals(table.get(0).handler, table.get(2).start, "from the call's handler");
        assertEquals(
                List.of("jdkCallbackEnter", "jdkCallbackExit", "jdkCallbackExit"),
                hooks(method(r.bytes(), "<init>", "(Ljava/util/Map;)V")),
                "a constructor after its super(): as a method");
        assertEquals(
                List.of(),
                hooks(method(r.bytes(), "<init>", "(Ljava/util/Map;Ljava/lang/String;)V")),
                "a constructor before its this(...) is left alone");
        assertEquals(List.of(), hooks(method(r.bytes(), "size")));
        Class<?> c = instrumented("dev.gort.agent.work.Callbacks");
        Map<String, Integer> m = new java.util.HashMap<>();
        c.getConstructor(Map.class).newInstance(m);
        c.getConstructor(Map.class, String.class).newInstance(m, "d");
        assertEquals(4, m.get("d"));
        assertEquals(
                7, c.getMethod("viaMap", Map.class, String.class, int.class).invoke(null, m, "a", 7));
        var chm = new java.util.concurrent.ConcurrentHashMap<String, Integer>();
        assertEquals(
                8,
                c.getMethod("viaClass", java.util.concurrent.ConcurrentHashMap.class, String.class, int.class)
                        .invoke(null, chm, "a", 8));
        Method merge = c.getMethod("mergeCaught", Map.class, String.class, RuntimeException.class);
        RuntimeException boom = new RuntimeException("boom");
        assertEquals(-1, merge.invoke(null, chm, "a", boom), "the callback's exception reaches the method's handler");
        assertEquals(3, m.get("c"));
    }

    /**
     * A {@code super.} call of a callback method ({@code INVOKESPECIAL Hashtable.computeIfAbsent}
     * in a user override) is wrapped too, counted by the class it names: the receiver's own
     * method, the override, holds no lock, so the receiver's class cannot tell.
     */
    @Test
    void superCallsOfJdkCallbackMethodsAreCountedByTheClassTheyName() throws Exception {
        String cls = "dev.gort.agent.work.Callbacks$CountingTable";
        byte[] b = new PollInjector(PreemptStrategy.BACKEDGE, true)
                .instrument(bytes(cls))
                .bytes();
        ClassNode cn = new ClassNode();
        new ClassReader(b).accept(cn, 0);
        MethodNode override = cn.methods.stream()
                .filter(m -> m.name.equals("computeIfAbsent") && m.desc.startsWith("(Ljava/lang/String;"))
                .findFirst()
                .orElseThrow();
        assertEquals(List.of("jdkCallbackSuperEnter", "jdkCallbackExit", "jdkCallbackExit"), hooks(override));
        AbstractInsnNode enter = override.instructions.getFirst();
        while (!(enter instanceof MethodInsnNode mi && mi.name.equals("jdkCallbackSuperEnter"))) {
            enter = enter.getNext();
        }
        AbstractInsnNode named = enter.getPrevious().getPrevious(); // LDC owner, BIPUSH bit, the call
        assertEquals("java.util.Hashtable", ((org.objectweb.asm.tree.LdcInsnNode) named).cst);
        MethodNode bridge = cn.methods.stream()
                .filter(m -> m.name.equals("computeIfAbsent") && m.desc.startsWith("(Ljava/lang/Object;"))
                .findFirst()
                .orElseThrow();
        assertEquals(List.of(), hooks(bridge), "the bridge calls the override, not a JDK descriptor");
        @SuppressWarnings("unchecked")
        Map<String, Integer> table =
                (Map<String, Integer>) instrumented(cls).getConstructor().newInstance();
        assertEquals(5, table.computeIfAbsent("a", k -> 5), "outside a goroutine the call runs as written");
        assertEquals(1, table.getClass().getField("calls").getInt(table));
    }

    @Test
    void noneChangesNothingAndNeitherDoesAClassWithoutLoops() throws Exception {
        assertNull(new PollInjector(PreemptStrategy.NONE, true)
                .instrument(bytes("dev.gort.agent.work.LoopShapes"))
                .bytes());
        assertNull(new PollInjector(PreemptStrategy.BACKEDGE, true)
                .instrument(bytes("dev.gort.agent.work.NoLoops"))
                .bytes());
    }

    @Test
    void aClassThatCannotBeParsedIsLeftAloneAndReportedOnce() {
        GortTransformer t = new GortTransformer(PreemptStrategy.BACKEDGE, false, List.of(), List.of());
        long before = InstrumentationStats.classesSkipped().getOrDefault("failed", 0L);
        byte[] junk = {(byte) 0xCA, (byte) 0xFE, (byte) 0xBA, (byte) 0xBE, 0, 0, 0, 61, 0, 99};
        assertNull(t.transform("com/acme/Broken", junk));
        assertNull(t.transform("com/acme/Broken", junk));
        Map<String, Long> skipped = InstrumentationStats.classesSkipped();
        assertEquals(before + 2, skipped.get("failed"));
    }

    @Test
    void countsWhatItDid() throws Exception {
        long classes = InstrumentationStats.classesTransformed.get();
        long be = InstrumentationStats.backedgePolls.get();
        GortTransformer t = new GortTransformer(PreemptStrategy.BACKEDGE, false, List.of(), List.of());
        assertNotNull(t.transform("dev/gort/agent/work/LoopShapes", bytes("dev.gort.agent.work.LoopShapes")));
        assertEquals(classes + 1, InstrumentationStats.classesTransformed.get());
        assertTrue(InstrumentationStats.backedgePolls.get() - be >= 15);
        assertTrue(InstrumentationStats.summary().contains("backedgePolls="));
    }
}
