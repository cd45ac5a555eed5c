package dev.gort.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Comparator;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
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

    @Test
    void theCarrierOfGoroutineOneHasTwoParkedDaemonSpacersThatEndAfterIt() throws Exception {
        String name = "spacers" + System.nanoTime();
        Scheduler s = new Scheduler(TestSupport.config(2).withName(name));
        assertEquals(CarrierSpacers.DEFAULT, s.config.carrierSpacers());
        AtomicReference<Thread> carrier = new AtomicReference<>();
        AtomicReference<List<Thread>> mine = new AtomicReference<>();
        AtomicReference<List<Thread>> all = new AtomicReference<>();
        TestSupport.runChecked(s, () -> {
            M m = M.current();
            carrier.set(m.thread());
            // The thread that started M0 (this test's, in s.run) starts the spacers right after the
            // carrier, which may already be running this goroutine: wait for them, within a bound.
            String prefix = name + "-spacer" + m.id + ".";
            long deadline = System.nanoTime() + JOIN_MS * 1_000_000L;
            List<Thread> seen;
            while ((seen = spacers(name))
                                    .stream()
                                            .filter(t -> t.getName().startsWith(prefix))
                                            .count()
                            < CarrierSpacers.DEFAULT
                    && System.nanoTime() < deadline) {
                Thread.onSpinWait();
            }
            all.set(seen);
            mine.set(seen.stream().filter(t -> t.getName().startsWith(prefix)).toList());
        });
        List<Thread> sp = mine.get();
        assertEquals(
                List.of(name + "-spacer0.0", name + "-spacer0.1"),
                sp.stream().map(Thread::getName).toList(),
                "M0's spacers, started with its carrier");
        for (Thread t : sp) {
            assertTrue(t.isDaemon(), t + " must not keep the JVM alive");
        }
        carrier.get().join(JOIN_MS);
        assertFalse(carrier.get().isAlive(), "M0's carrier ends once the runtime has ended");
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
        TestSupport.runChecked(s, () -> seen.set(spacers(name)));
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
