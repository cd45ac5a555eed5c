package dev.gort.agent;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gort.runtime.PreemptStrategy;
import dev.gort.runtime.Scheduler;
import java.lang.reflect.Method;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class BlockingReviewTest {
    private static Method method(String name, Class<?>... params) throws Exception {
        return AgentPreemptionTest.method(PreemptStrategy.BACKEDGE, "BlockingReview", name, params);
    }

    private static Object call(Method m, Object... args) {
        return AgentPreemptionTest.call(m, null, args);
    }

    /**
     * Thread.yield() holding a lock inside a syscall, with a goroutine queued on the P the M still
     * holds (Go 1.26 model: the P stays with its M in a syscall): the goroutine's own syscall
     * ({@code yieldLockedInOwnSyscall}: a monitor inside Syscall.block), and the blocking-call
     * hook's ({@code putSpinning}: PriorityBlockingQueue.put, hooked, calls back compareTo, which
     * yields inside the queue's lock, a JDK frame's lock: R_JDK_LOCK). Preempt.threadYield took
     * yieldInPlace, whose casgstatus(_Grunning, _Grunnable) met a _Gsyscall G: fatal "casgstatus:
     * bad incoming values". Before cc4f823 this was the carrier's Thread.yield(), as it is again.
     */
    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"yieldLockedInOwnSyscall", "putSpinning"})
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void threadYieldHoldingALockInsideASyscallIsNotFatal(String how) throws Exception {
        Method m = method(how, Object.class, AtomicBoolean.class);
        for (int i = 0; i < 5; i++) {
            AtomicBoolean go = new AtomicBoolean();
            AtomicInteger yields = new AtomicInteger(-1);
            AtomicReference<Throwable> failure = new AtomicReference<>();
            BlockingCallsTest.runAll(failure, () -> go.set(true), () -> yields.set((int) call(m, new Object(), go)));
            assertNull(failure.get(), () -> "failed: " + failure.get());
            assertTrue(yields.get() >= 0, () -> "yields " + yields.get());
        }
    }

    /**
     * A class initialiser that runs inside a hooked call's callback (PriorityBlockingQueue.put ->
     * compareTo -> Init.<clinit>) and sleeps (R_CLINIT: the carrier's sleep, then blockingExit).
     * Sysmon retakes the P from the HOOK syscall for the goroutine queued behind, which waits for
     * Init on its carrier, holding that P. blockingExit's HOOK branch calls exitsyscall directly,
     * not leaveRetake: no P, a pinned yield, so it waits for a P inside the initialiser
     * (slowInPlace, a lock-holder boost), which the P's holder, waiting for this very class, gives
     * up only when sysmon finds its carrier blocked (a wait the JVM reports RUNNABLE: after a time
     * slice, only on Linux). leaveRetake defers the exit inside an initialiser instead
     * (syscallExitsDeferred).
     */
    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void blockingExitInsideAClassInitialiserDoesNotWaitForAP() throws Exception {
        Class<?> c = Class.forName(
                "dev.gort.agent.work.BlockingClinit",
                true,
                new InstrumentingLoader("dev.gort.agent.work.", PreemptStrategy.BACKEDGE));
        Method init = c.getMethod("putInitialising");
        Method read = c.getMethod("readInit");
        AtomicInteger a = new AtomicInteger();
        AtomicInteger b = new AtomicInteger();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        Scheduler s = BlockingCallsTest.runAll(failure, () -> b.set((int) call(read)), () -> a.set((int) call(init)));
        assertNull(failure.get(), () -> "failed: " + failure.get());
        assertEquals(42, a.get());
        assertEquals(42, b.get());
        var st = s.syscallStats.snapshot(s);
        var ps = s.preempt.snapshot();
        assertEquals(0, st.slowInPlace(), () -> "waited for a P inside a class initialiser: " + st + " " + ps);
    }

    /**
     * User code reached through a call site that names a blocking JDK method (a direct
     * ExecutorService's invokeAll; a library's subclass of a JDK queue whose take runs its own
     * code, called as BlockingQueue.take) spins for 300 ms at GOMAXPROCS=1 while another goroutine
     * spins: it must not run in a syscall. Sysmon never asks a G in a syscall to yield, retakes
     * its P for the other goroutine, and raises no NOTICE for the carrier: in cc4f823 the spinner
     * ran on in its hook's syscall without a P, beyond GOMAXPROCS, until the call returned (282 ms
     * of 300). Now invokeAll is off the list (a CallerRunsPolicy runs a task in the caller) and a
     * receiver that is not the JDK's own class gets no syscall ({@code Poll.blockingEnter(Object)}).
     */
    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"spinInsideInvokeAll", "spinInsideTake"})
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void userCodeReachedThroughABlockingCallsNameRunsOutsideASyscall(String how) throws Exception {
        Class<?> c = Class.forName(
                "dev.gort.agent.work.HookedUserCode",
                true,
                new InstrumentingLoader("dev.gort.agent.work.", PreemptStrategy.BACKEDGE));
        Method spin = c.getMethod(how, java.util.concurrent.atomic.AtomicLong.class, long.class);
        Method other = c.getMethod("other", java.util.concurrent.atomic.AtomicLong.class, long.class);
        var otherAt = new java.util.concurrent.atomic.AtomicLong();
        java.util.concurrent.atomic.AtomicLong beyond = new java.util.concurrent.atomic.AtomicLong(-1);
        AtomicReference<Throwable> failure = new AtomicReference<>();
        BlockingCallsTest.runAll(
                failure,
                () -> call(other, otherAt, 300_000_000L),
                () -> beyond.set((long) call(spin, otherAt, 300_000_000L)));
        assertNull(failure.get(), () -> "failed: " + failure.get());
        assertEquals(
                0L,
                beyond.get(),
                () -> "ran user code in a syscall for " + beyond.get() / 1_000_000
                        + " ms after the P's next goroutine started (GOMAXPROCS=1)");
    }

    private static byte[] bytes(String cls) throws Exception {
        try (java.io.InputStream in =
                BlockingReviewTest.class.getClassLoader().getResourceAsStream(cls.replace('.', '/') + ".class")) {
            return in.readAllBytes();
        }
    }

    /** Every shape passes ASM's BasicVerifier (verify=true) and the JVM's verifier, and runs. */
    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void blockingCallShapesVerifyAndRun() throws Exception {
        for (String cls : java.util.List.of("dev.gort.agent.work.BlockingShapes")) {
            PollInjector.Result r = new PollInjector(PreemptStrategy.BACKEDGE, true).instrument(bytes(cls));
            java.util.Set<String> hooked = new java.util.TreeSet<>();
            org.objectweb.asm.tree.ClassNode cn = new org.objectweb.asm.tree.ClassNode();
            new org.objectweb.asm.ClassReader(r.bytes()).accept(cn, 0);
            for (org.objectweb.asm.tree.MethodNode mn : cn.methods) {
                int enter = 0, exit = 0;
                for (var in = mn.instructions.getFirst(); in != null; in = in.getNext()) {
                    if (in instanceof org.objectweb.asm.tree.MethodInsnNode mi && mi.owner.equals(PollInjector.POLL)) {
                        if (mi.name.equals("blockingEnter")) enter++;
                        if (mi.name.equals("blockingExit")) exit++;
                    }
                }
                // Each blocking call gets its exit after it and in its handler: no shape fell back to
                // a call without a handler (the handlers' frames disagreed).
                int e = enter;
                assertEquals(2 * enter, exit, () -> mn.name + mn.desc + ": " + e + " hooked calls");
                if (enter > 0) {
                    hooked.add(mn.name);
                }
            }
            assertEquals(
                    "[condition, conflicting, disagree, lambda$lambda$0, nested, parker, resources, stackBelow,"
                            + " syncBlockWait, syncMethod, throwing]",
                    hooked.toString(),
                    "the shapes whose blocking calls were hooked");
        }
        for (int stride : new int[] {0, PreemptStrategy.DEFAULT_STRIDE}) {
            Class<?> c = Class.forName(
                    "dev.gort.agent.work.BlockingShapes",
                    true,
                    new InstrumentingLoader("dev.gort.agent.work.", PreemptStrategy.BACKEDGE, stride));
            java.util.List<String> outside = runShapes(c);
            AtomicReference<Throwable> failure = new AtomicReference<>();
            AtomicReference<java.util.List<String>> inside = new AtomicReference<>();
            BlockingCallsTest.runAll(failure, () -> {
                try {
                    inside.set(runShapes(c));
                } catch (Exception e) {
                    throw new RuntimeException(e);
                }
            });
            assertNull(failure.get(), () -> "failed: " + failure.get());
            // status() is -1 outside a goroutine, 2 (_Grunning) inside; 3 (_Gsyscall) would be a syscall left behind.
            assertEquals(
                    "[nested=-993, conflicting=timeout-a-1, conflicting2=timeout-4-1, disagree=inner-s-1, syncMethod=-984,"
                            + " syncBlockWait=-997, stackBelow=y121122.0, lambda=null-5-1, resources=t-1nullnullclosed-1,"
                            + " condition=20, parker=6.0, throwing=-1,-1,-1,]",
                    outside.toString());
            assertEquals(
                    "[nested=2007, conflicting=timeout-a2, conflicting2=timeout-42, disagree=inner-s2, syncMethod=2016,"
                            + " syncBlockWait=2003, stackBelow=y121122.0, lambda=null-52, resources=t2nullnullclosed2,"
                            + " condition=21, parker=9.0, throwing=2,2,2,]",
                    inside.get().toString());
        }
    }

    private static java.util.List<String> runShapes(Class<?> c) throws Exception {
        java.util.List<String> out = new java.util.ArrayList<>();
        var q = new java.util.concurrent.LinkedBlockingQueue<Object>();
        out.add("nested="
                + c.getMethod("nested", java.util.concurrent.BlockingQueue.class, int.class)
                        .invoke(null, q, 2));
        var f = new java.util.concurrent.CompletableFuture<String>();
        out.add("conflicting="
                + c.getMethod("conflicting", java.util.concurrent.Future.class, boolean.class)
                        .invoke(null, f, true));
        out.add("conflicting2="
                + c.getMethod("conflicting", java.util.concurrent.Future.class, boolean.class)
                        .invoke(null, f, false));
        out.add("disagree="
                + c.getMethod("disagree", java.util.concurrent.Future.class, int.class)
                        .invoke(null, f, 1));
        out.add("syncMethod="
                + c.getMethod("syncMethod", java.util.concurrent.BlockingQueue.class, double.class, long.class)
                        .invoke(null, q, 1.5, 10L));
        Object inst = c.getDeclaredConstructors()[0].newInstance();
        out.add("syncBlockWait=" + c.getMethod("syncBlockWait", int.class).invoke(inst, 3));
        out.add("stackBelow="
                + c.getMethod("stackBelow", java.util.concurrent.BlockingQueue.class, long.class)
                        .invoke(null, q, 1L));
        var call = (java.util.concurrent.Callable<?>)
                c.getMethod("lambda", java.util.concurrent.BlockingQueue.class).invoke(null, q);
        out.add("lambda=" + call.call());
        out.add("resources="
                + c.getMethod(
                                "resources",
                                java.util.concurrent.CompletableFuture.class,
                                java.util.concurrent.BlockingQueue.class)
                        .invoke(null, f, q));
        var l = new java.util.concurrent.locks.ReentrantLock();
        out.add("condition="
                + c.getMethod(
                                "condition",
                                java.util.concurrent.locks.ReentrantLock.class,
                                java.util.concurrent.locks.Condition.class,
                                int.class)
                        .invoke(null, l, l.newCondition(), 2));
        out.add("parker=" + c.getMethod("parker", int.class).invoke(null, 3));
        var failed = new java.util.concurrent.CompletableFuture<String>();
        failed.completeExceptionally(new RuntimeException("x"));
        out.add("throwing="
                + c.getMethod("throwing", java.util.concurrent.CompletableFuture.class, int.class)
                        .invoke(inst, failed, 3));
        return out;
    }
}
