package dev.gort.compat;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.DynamicTest.dynamicTest;

import dev.gort.Go;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.RepeatedTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Test bodies of every kind that {@link InGoroutine} intercepts, for {@link InGoroutineTest} to run
 * through the launcher; not a test class of this module (its name does not end in Test). Each body
 * records the goroutine id it ran on, keyed by its name. Disabled unless InGoroutineTest runs it
 * (a surefire run with {@code -Dtest=...} would otherwise pick it up, and one body fails on purpose).
 */
@EnabledIfSystemProperty(named = "gort.compat.samples", matches = "true")
public class SampleBodies {
    /** Body name to the goroutine id it saw (0: not a goroutine); also the lifecycle method's. */
    static final Map<String, Long> seen = new ConcurrentHashMap<>();

    @BeforeEach
    void setUp() {
        seen.put("beforeEach", Go.goid());
    }

    @Test
    void plain() {
        seen.put("plain", Go.goid());
    }

    @Test
    void failing() {
        seen.put("failing", Go.goid());
        assertEquals(1, 2, "a failure thrown in a goroutine");
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 2})
    void parameterized(int i) {
        seen.put("parameterized" + i, Go.goid());
    }

    @RepeatedTest(2)
    void repeated() {
        seen.merge("repeated", Go.goid() != 0 ? 1L : 0L, Long::sum);
    }

    @TestFactory
    Stream<DynamicTest> factory() {
        seen.put("factory", Go.goid());
        return List.of("a", "b").stream().map(n -> dynamicTest(n, () -> seen.put("dynamic-" + n, Go.goid())));
    }
}
