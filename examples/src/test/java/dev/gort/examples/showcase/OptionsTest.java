package dev.gort.examples.showcase;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gort.runtime.GoDebug;
import org.junit.jupiter.api.Test;

/** The showcase honours GODEBUG's schedtrace period and scheddetail, as a Go program does; its flags win. */
class OptionsTest {
    @Test
    void godebugSchedtracePeriodIsHonoured() {
        Options o = new Options();
        o.applyGoDebug(GoDebug.parse("schedtrace=7,scheddetail=1"));
        assertEquals(7, o.schedtrace);
        assertTrue(o.scheddetail);
    }

    @Test
    void flagsWinOverGodebug() {
        Options o = new Options();
        o.schedtrace = 3;
        o.applyGoDebug(GoDebug.parse("schedtrace=7"));
        assertEquals(3, o.schedtrace);
        assertFalse(o.scheddetail);
    }

    @Test
    void withoutGodebugEachScenarioKeepsItsOwnPeriod() {
        Options o = new Options();
        o.applyGoDebug(GoDebug.parse(""));
        assertEquals(-1, o.schedtrace);
    }
}
