package dev.gort.sync;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.gort.Go;
import dev.gort.GortTesting;
import dev.gort.runtime.GoPanic;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/** {@link WaitGroup#go}: Go 1.26's rules for a function that panics or calls Goexit. */
class WaitGroupGoTest {
    static final class Boom extends RuntimeException {
        Boom(String m) {
            super(m);
        }
    }

    /**
     * f panics: the group is not told, so Wait never returns and the panic ends the program (Go:
     * "Calling Done will unblock Wait in the main goroutine, allowing it to race with the fatal
     * panic"). With Done in a finally, Wait returned and main went on.
     */
    @Test
    void aPanickingFunctionNeverReleasesWait() {
        AtomicBoolean waitReturned = new AtomicBoolean();
        GoPanic p = assertThrows(
                GoPanic.class,
                () -> Go.run(GortTesting.config(2), () -> {
                    WaitGroup wg = new WaitGroup();
                    wg.go(() -> {
                        throw new Boom("boom in wg.Go");
                    });
                    wg.await();
                    waitReturned.set(true);
                }));
        assertEquals("boom in wg.Go", p.getCause().getMessage());
        assertFalse(waitReturned.get(), "Wait returned although f panicked");
    }

    /** f ends by Goexit: that is a normal end, counted done. */
    @Test
    void aGoexitCountsAsDone() {
        Go.run(GortTesting.config(1), () -> {
            WaitGroup wg = new WaitGroup();
            wg.go(Go::goexit);
            wg.await();
            assertEquals(0, wg.counter());
        });
    }

    /** Outside a goroutine go throws as Go.go does, and the counter is as it was. */
    @Test
    void outsideAGoroutineTheCounterIsLeftAsItWas() {
        WaitGroup wg = new WaitGroup();
        assertThrows(IllegalStateException.class, () -> wg.go(() -> {}));
        assertEquals(0, wg.counter());
        Go.run(GortTesting.config(1), () -> {
            wg.go(() -> {});
            wg.await(); // with the counter left at 1 this was a deadlock
        });
    }
}
