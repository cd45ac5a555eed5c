package dev.gort.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A runtime started in a JVM that exports {@code jdk.internal.vm} to no one (neither gort's agent
 * nor {@code --add-exports java.base/jdk.internal.vm=ALL-UNNAMED}, the first thing a user of gort
 * as a library meets): a fatal error that names the agent and the flag (status 2, no stack trace),
 * where it was an {@code IllegalAccessError} from the class loader ("superclass access check
 * failed: class dev.gort.runtime.G ... cannot access class jdk.internal.vm.Continuation").
 */
@Timeout(120)
class ContinuationsExportStartupTest {
    @Test
    void withoutTheExportARuntimeDoesNotStartAndSaysWhichFlagToAdd() throws Exception {
        ChildJvm.Result r = ChildJvm.runWithoutExports(TestProg.class.getName(), "ThreadLocalMode", List.of());
        assertEquals(2, r.status(), r.output());
        assertTrue(
                r.output()
                        .contains("fatal error: goroutines are jdk.internal.vm.Continuations, which java.base"
                                + " does not export to gort: run with gort's agent"),
                r.output());
        assertTrue(r.output().contains("--add-exports java.base/jdk.internal.vm=ALL-UNNAMED"), r.output());
        assertFalse(r.output().contains("IllegalAccessError"), r.output());
        assertFalse(r.output().contains("\tat "), "a stack trace:\n" + r.output());
        assertFalse(r.output().contains("ThreadLocal mode:"), "the program ran:\n" + r.output());
    }
}
