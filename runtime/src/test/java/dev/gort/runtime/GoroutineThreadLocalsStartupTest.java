package dev.gort.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@code -Dgort.threadlocals} in a child JVM started as a user starts gort without the agent
 * ({@link ChildJvm}: {@code --add-exports} only): without {@code --add-opens java.base/java.lang}
 * the runtime cannot swap ThreadLocal maps, so the default is {@code carrier} and an explicit
 * {@code goroutine} is a fatal error that names the flag to add (status 2, no stack trace); with
 * the flag the default is {@code goroutine}.
 */
@Timeout(120)
class GoroutineThreadLocalsStartupTest {
    private static ChildJvm.Result prog(Map<String, String> env, String... jvm) throws Exception {
        return ChildJvm.run(TestProg.class.getName(), "ThreadLocalMode", "1", env, List.of(jvm));
    }

    @Test
    void withoutTheOpenTheDefaultIsCarrier() throws Exception {
        ChildJvm.Result r = prog(Map.of());
        assertEquals(0, r.status(), r.output());
        assertTrue(r.output().contains("ThreadLocal mode: carrier"), r.output());
    }

    @Test
    void withTheOpenTheDefaultIsGoroutine() throws Exception {
        ChildJvm.Result r = prog(Map.of(), "--add-opens", "java.base/java.lang=ALL-UNNAMED");
        assertEquals(0, r.status(), r.output());
        assertTrue(r.output().contains("ThreadLocal mode: goroutine"), r.output());
    }

    @Test
    void anExplicitGoroutineWithoutTheOpenIsAFatalErrorNamingTheFlag() throws Exception {
        for (var how : List.of(
                new Object[] {Map.of(), "-Dgort.threadlocals=goroutine", "-Dgort.threadlocals=goroutine"},
                new Object[] {Map.of("GORT_THREADLOCALS", "goroutine"), null, "GORT_THREADLOCALS=goroutine"})) {
            @SuppressWarnings("unchecked")
            Map<String, String> env = (Map<String, String>) how[0];
            ChildJvm.Result r = how[1] == null ? prog(env) : prog(env, (String) how[1]);
            assertEquals(2, r.status(), r.output());
            assertTrue(
                    r.output()
                            .contains("fatal error: " + how[2] + " needs java.lang opened to gort: add "
                                    + "--add-opens java.base/java.lang=ALL-UNNAMED"),
                    r.output());
            assertFalse(r.output().contains("\tat "), "a stack trace:\n" + r.output());
            assertFalse(r.output().contains("ThreadLocal mode:"), "the program ran:\n" + r.output());
        }
    }
}
