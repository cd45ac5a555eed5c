package dev.gort.sync;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gort.Go;
import dev.gort.GortTesting;
import dev.gort.runtime.GortFatalError;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/**
 * sync's fatal errors are Go's {@code fatal} (throwTypeUser), not a runtime {@code throw}: at the
 * default GOTRACEBACK the dump shows the failing goroutine alone, with its user frames and Go's
 * plain header ({@code goroutine 1 [running]:}), not the runtime's frames and {@code gp=}/{@code m=}.
 */
class SyncFatalTest {
    private static String stderrOf(Runnable main) {
        PrintStream err = System.err;
        ByteArrayOutputStream buf = new ByteArrayOutputStream();
        try {
            System.setErr(new PrintStream(buf, true, StandardCharsets.UTF_8));
            assertThrows(GortFatalError.class, () -> Go.run(GortTesting.config(1), main));
        } finally {
            System.setErr(err);
        }
        return buf.toString(StandardCharsets.UTF_8);
    }

    private static void assertUserFatal(String text, String msg) {
        assertTrue(text.startsWith("fatal error: " + msg + "\n"), text);
        assertTrue(text.contains("\ngoroutine 1 [running]:\n"), text);
        assertFalse(text.contains(" gp="), text);
        assertFalse(text.contains("dev.gort.runtime.Fatal"), text);
        assertFalse(text.contains("\ngoroutine 2 ["), "another goroutine was dumped: " + text);
        assertTrue(text.contains("SyncFatalTest"), "the user's frame is missing: " + text);
    }

    @Test
    void unlockOfAnUnlockedMutexIsAUserFatal() {
        String text = stderrOf(() -> {
            Mutex held = new Mutex();
            held.lock();
            Go.go(held::lock); // goroutine 2, parked on held: not in the dump
            Go.gosched();
            new Mutex().unlock();
        });
        assertUserFatal(text, "sync: unlock of unlocked mutex");
    }

    @Test
    void unlockOfAnUnlockedRWMutexIsAUserFatal() {
        assertUserFatal(stderrOf(() -> new RWMutex().unlock()), "sync: Unlock of unlocked RWMutex");
        assertUserFatal(stderrOf(() -> new RWMutex().runlock()), "sync: RUnlock of unlocked RWMutex");
    }
}
