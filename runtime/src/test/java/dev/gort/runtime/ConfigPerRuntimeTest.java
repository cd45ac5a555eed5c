package dev.gort.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * Every setting a runtime reads comes from its own {@link Config} (issue 13): two runtimes built
 * with different settings in one JVM each behave by their own, whatever the system properties
 * say. (Before, the creators setting was a JVM-wide static and the rest was re-read from the
 * system properties by each component.)
 */
class ConfigPerRuntimeTest {
    private static Config with(Config.Settings st) {
        return TestSupport.config(1).withSettings(st);
    }

    /** What a runtime did: the slice budget its G got, and whether its G's creator frame was kept. */
    private record Seen(int budget, StackTraceElement createdAt) {}

    private static Seen runOn(Scheduler s) {
        AtomicInteger budget = new AtomicInteger();
        AtomicReference<StackTraceElement> created = new AtomicReference<>();
        AtomicInteger done = new AtomicInteger();
        s.run(() -> {
            Scheduler.gosched(); // back from the global queue: a new slice, its budget refilled
            budget.set(((M.MThread) Thread.currentThread()).budget); // the runtime's quantum
            G child = s.newproc(done::incrementAndGet);
            created.set(child.createdAt());
            while (done.get() == 0) {
                Scheduler.gosched();
            }
        });
        return new Seen(budget.get(), created.get());
    }

    @Test
    void twoRuntimesWithDifferentConfigsEachFollowTheirOwn() {
        Config.Settings base = Config.Settings.fromEnvironment();
        Scheduler a = new Scheduler(with(base.withPreempt("budget")
                .withPreemptBudget(5)
                .withPreemptSites(false)
                .withSysmonMaxDelayUs(20)
                .withRecordCreators(true)));
        Scheduler b = new Scheduler(with(base.withPreempt("none")
                .withPreemptBudget(7)
                .withPreemptSites(true)
                .withSysmonMaxDelayUs(5_000)
                .withRecordCreators(false)));

        assertEquals(PreemptStrategy.BUDGET, a.preempt.strategy());
        assertEquals(PreemptStrategy.NONE, b.preempt.strategy());
        assertEquals(20, a.sysmon.maxDelayUs);
        assertEquals(5_000, b.sysmon.maxDelayUs);

        Seen sa = runOn(a);
        Seen sb = runOn(b);
        assertEquals(5, sa.budget(), "runtime a's slices get a's budget");
        assertEquals(7, sb.budget(), "runtime b's slices get b's budget");
        assertNotNull(sa.createdAt(), "runtime a records the frame that called go()");
        assertNull(sb.createdAt(), "runtime b does not");
    }
}
