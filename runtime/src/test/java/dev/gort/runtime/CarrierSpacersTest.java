package dev.gort.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Comparator;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;

/**
 * {@link CarrierSpacers}: every carrier thread is started together with the configured number of
 * spacer threads, which stay parked while it lives and end after it; none with
 * {@code carrierSpacers=0}. (What the spacers are for, the handles' cache line, is measured by the
 * bench's {@code CarrierSlots} probe: no test can see HotSpot's handle table.)
 */
class CarrierSpacersTest {
    private static final long JOIN_MS = 30_000; // a bound for a failing run, not an ordering

    /** The live threads named as {@code name}'s spacers, by name. */
    private static List<Thread> spacers(String name) {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.getName().startsWith(name + "-spacer"))
                .sorted(Comparator.comparing(Thread::getName))
                .toList();
    }

    /** Returns once no carrier start is under way (CarrierSpacers.start holds STARTS for one). */
    private static void awaitStarts() {
        synchronized (CarrierSpacers.STARTS) {
            // nothing: taking the monitor orders this after the start that held it
        }
    }

    /** Whether {@code t} gets to {@code state} within the bound (a failure bound, not an ordering). */
    private static boolean reaches(Thread t, Thread.State state) {
        long deadline = System.nanoTime() + JOIN_MS * 1_000_000L;
        while (t.getState() != state && System.nanoTime() < deadline) {
            LockSupport.parkNanos(1_000_000);
        }
        return t.getState() == state;
    }

    @Test
    void theCarrierOfGoroutineOneHasTwoParkedDaemonSpacersThatEndAfterIt() throws Exception {
        String name = "spacers" + System.nanoTime();
        Scheduler s = new Scheduler(TestSupport.config(2).withName(name));
        assertEquals(CarrierSpacers.DEFAULT, s.config.carrierSpacers());
        AtomicReference<M> m0 = new AtomicReference<>();
        AtomicReference<List<Thread>> all = new AtomicReference<>();
        AtomicReference<List<Thread>> mine = new AtomicReference<>();
        TestSupport.runChecked(s, () -> {
            M m = M.current();
            m0.set(m);
            // The thread that started this M (the test's, in s.run) starts the spacers right after
            // the carrier, which may already be running this goroutine: wait for that start to end.
            awaitStarts();
            all.set(spacers(name));
            mine.set(all.get().stream()
                    .filter(t -> t.getName().startsWith(name + "-spacer" + m.id + "."))
                    .toList());
            for (Thread t : mine.get()) { // while its carrier runs this goroutine
                assertTrue(reaches(t, Thread.State.WAITING), t + " never parked: " + t.getState());
            }
        });
        M m = m0.get();
        assertEquals(
                List.of(name + "-spacer" + m.id + ".0", name + "-spacer" + m.id + ".1"),
                mine.get().stream().map(Thread::getName).toList(),
                "goroutine 1's M's spacers, started with its carrier");
        for (Thread t : mine.get()) {
            assertTrue(t.isDaemon(), t + " must not keep the JVM alive");
        }
        m.thread().join(JOIN_MS);
        assertFalse(m.thread().isAlive(), "the carrier ends once the runtime has ended");
        for (Thread t : all.get()) {
            t.join(JOIN_MS);
            assertFalse(t.isAlive(), t + " outlived the runtime's carriers");
        }
    }

    @Test
    void zeroSpacersStartNoThreads() throws Exception {
        String name = "nospacers" + System.nanoTime();
        Scheduler s = new Scheduler(TestSupport.config(2).withName(name).withCarrierSpacers(0));
        AtomicReference<List<Thread>> seen = new AtomicReference<>();
        TestSupport.runChecked(s, () -> {
            awaitStarts(); // M0's start, spacers included, has ended
            seen.set(spacers(name));
        });
        assertEquals(List.of(), seen.get());
    }

    @Test
    void theNumberOfSpacersIsChecked() {
        Config c = TestSupport.config(1);
        assertEquals(8, c.withCarrierSpacers(8).carrierSpacers());
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> c.withCarrierSpacers(9));
        assertEquals("carrierSpacers must be from 0 to 8: 9", e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> c.withCarrierSpacers(-1));
    }
}
