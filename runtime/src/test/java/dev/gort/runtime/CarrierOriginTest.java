package dev.gort.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URL;
import java.net.URLClassLoader;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A thread that goroutine code creates copies its daemon status, thread group, priority and
 * context class loader from Thread.currentThread(), i.e. from the carrier: so every carrier of a
 * runtime has those of the thread that called run (M.Origin), including a carrier created by an
 * outside thread (newproc from outside starts an M on that thread) that has other attributes.
 * (CarrierExitTest proves in a child JVM that a non-daemon child thread finishes before exit.)
 */
class CarrierOriginTest {
    record Attrs(String who, ThreadGroup group, boolean daemon, int priority, ClassLoader ccl) {
        static Attrs of(String who, Thread t) {
            return new Attrs(who, t.getThreadGroup(), t.isDaemon(), t.getPriority(), t.getContextClassLoader());
        }
    }

    @ParameterizedTest(name = "caller daemon={0}")
    @ValueSource(booleans = {false, true})
    void carriersAndThreadsCreatedByGoroutinesHaveTheAttributesOfTheCallerOfRun(boolean daemon) throws Exception {
        ThreadGroup callerGroup = new ThreadGroup("gort-caller");
        ThreadGroup otherGroup = new ThreadGroup("outsider");
        ClassLoader callerCcl = new URLClassLoader(new URL[0], getClass().getClassLoader());
        ClassLoader otherCcl = new URLClassLoader(new URL[0], getClass().getClassLoader());
        int callerPriority = Thread.NORM_PRIORITY - 2;
        List<Attrs> seen = new CopyOnWriteArrayList<>();
        AtomicReference<List<Attrs>> carriers = new AtomicReference<>();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        Scheduler s = new Scheduler(TestSupport.config(2));
        Thread caller = new Thread(
                callerGroup,
                () -> {
                    try {
                        s.run(() -> {
                            seen.add(Attrs.of("child of G1", new Thread(() -> {})));
                            AtomicBoolean ran = new AtomicBoolean();
                            // An outside thread with other attributes starts a goroutine while P1 is
                            // idle and M0 busy (G1 spins below): wakep creates the new M on it.
                            Thread outsider = new Thread(
                                    otherGroup,
                                    () -> s.newproc(() -> {
                                        seen.add(Attrs.of("carrier of G2", Thread.currentThread()));
                                        seen.add(Attrs.of("child of G2", new Thread(() -> {})));
                                        ran.set(true);
                                    }),
                                    "outsider");
                            outsider.setDaemon(!daemon);
                            outsider.setPriority(Thread.MAX_PRIORITY);
                            outsider.setContextClassLoader(otherCcl);
                            outsider.start();
                            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
                            while (!ran.get() && System.nanoTime() < deadline) {
                                Scheduler.gosched();
                            }
                            carriers.set(s.allm().stream()
                                    .map(m -> Attrs.of("carrier " + m.thread().getName(), m.thread()))
                                    .toList());
                        });
                    } catch (Throwable t) {
                        failure.set(t);
                    }
                },
                "caller");
        caller.setDaemon(daemon);
        caller.setPriority(callerPriority);
        caller.setContextClassLoader(callerCcl);
        caller.start();
        caller.join(TimeUnit.SECONDS.toMillis(60));
        assertFalse(caller.isAlive(), "run did not return");
        assertNull(failure.get());
        assertEquals(3, seen.size(), seen::toString);
        List<Attrs> all = new java.util.ArrayList<>(seen);
        all.addAll(carriers.get());
        assertTrue(all.size() >= 5, "M0 and the outsider's M: " + all);
        for (Attrs a : all) {
            assertSame(callerGroup, a.group(), a::toString);
            assertEquals(daemon, a.daemon(), a::toString);
            assertEquals(callerPriority, a.priority(), a::toString);
            assertSame(callerCcl, a.ccl(), a::toString);
        }
    }
}
