package dev.gort.examples.showcase;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gort.runtime.GoDebug;
import org.junit.jupiter.api.Test;

/**
 * The showcase honours GODEBUG's schedtrace period and scheddetail, as a Go program does; its flags
 * win. Its flags take {@code =true} or {@code =false} (they once ignored the value: --scheddetail=false
 * turned scheddetail on, --no-html=false turned the timelines off).
 */
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

    @Test
    void flagsTakeTrueOrFalseAfterAnEqualsSign() {
        assertTrue(Options.parse(new String[] {"--scheddetail"}).scheddetail);
        assertTrue(Options.parse(new String[] {"--scheddetail=true"}).scheddetail);
        assertFalse(Options.parse(new String[] {"--scheddetail=false"}).scheddetail);
        assertFalse(Options.parse(new String[] {"--no-html"}).html);
        assertFalse(Options.parse(new String[] {"--no-html=on"}).html);
        assertTrue(Options.parse(new String[] {"--no-html=false"}).html);
        assertTrue(Options.parse(new String[] {"--events=1"}).events);
        assertFalse(Options.parse(new String[] {"--events=no"}).events);
        assertFalse(Options.parse(new String[] {"--help=off"}).help);
        for (String bad : new String[] {"--scheddetail=maybe", "--no-html=", "--events=2"}) {
            String opt = bad.substring(0, bad.indexOf('='));
            String v = bad.substring(bad.indexOf('=') + 1);
            assertEquals(
                    opt + " takes no value, or =true or =false, not '" + v + "'",
                    assertThrows(IllegalArgumentException.class, () -> Options.parse(new String[] {bad}))
                            .getMessage());
        }
    }

    @Test
    void scheddetailFalseWinsOverGodebug() {
        Options o = Options.parse(new String[] {"--scheddetail=false"});
        o.applyGoDebug(GoDebug.parse("scheddetail=1"));
        assertFalse(o.scheddetail);
    }
}
