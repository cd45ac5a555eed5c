package dev.gort.compat;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;
import org.junit.platform.launcher.listeners.SummaryGeneratingListener;
import org.junit.platform.launcher.listeners.TestExecutionSummary;

/**
 * The harness's rule: with {@link InGoroutine} auto-detected (as the stress tier runs a library's
 * suite), every kind of test body runs in a goroutine, lifecycle methods stay on the JUnit thread,
 * and a failure thrown in the goroutine is reported as that test's failure. No agent here (the
 * stress tier adds it); fast.
 */
class InGoroutineTest {
    @Test
    void everyTestBodyRunsInAGoroutineAndItsFailureIsReported() throws InterruptedException {
        // no hogs: without the agent nothing would preempt them
        System.setProperty("gort.compat.hogs", "0");
        System.setProperty("gort.compat.samples", "true"); // SampleBodies runs only when asked
        SummaryGeneratingListener listener = new SummaryGeneratingListener();
        LauncherFactory.create()
                .execute(
                        LauncherDiscoveryRequestBuilder.request()
                                .selectors(selectClass(SampleBodies.class))
                                .configurationParameter("junit.jupiter.extensions.autodetection.enabled", "true")
                                .build(),
                        listener);
        TestExecutionSummary s = listener.getSummary();
        // plain, failing, 2 parameterized, 2 repeated, 2 dynamic
        assertEquals(8, s.getTestsStartedCount(), "tests started");
        assertEquals(1, s.getTestsFailedCount(), "the failing body, and only it");
        assertTrue(s.getFailures().get(0).getException().getMessage().contains("a failure thrown in a goroutine"));
        for (String body :
                List.of("plain", "failing", "parameterized1", "parameterized2", "factory", "dynamic-a", "dynamic-b")) {
            Long goid = SampleBodies.seen.get(body);
            assertNotEquals(null, goid, body + " ran");
            assertNotEquals(0L, goid, body + " ran in a goroutine");
        }
        assertEquals(2L, SampleBodies.seen.get("repeated"), "both repetitions in a goroutine");
        assertEquals(0L, SampleBodies.seen.get("beforeEach"), "@BeforeEach on the JUnit thread");
        assertTrue(InGoroutine.bodies.get() >= 9 && InGoroutine.onGoroutine.get() == InGoroutine.bodies.get());
        System.clearProperty("gort.compat.samples");
        GoroutineHost.started().stop();
    }
}
