package dev.gort.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * {@link JitDirectives}: the directive's inline list carries the JVM's own CompileCommand inline
 * and dontinline rules first (a directive's list replaces them: JMH's {@code @CompilerControl}
 * methods were inlined again), then keeps every current-thread reader out; HotSpot accepts it.
 */
class JitDirectivesTest {

    private static List<String> carried(String... commands) {
        List<String> out = new ArrayList<>();
        for (String c : commands) {
            JitDirectives.carry(c, out);
        }
        return out;
    }

    @Test
    void compileCommandsInEveryFormHotSpotTakesAreCarriedAsPatterns() {
        assertEquals(
                List.of(
                        "-org/openjdk/jmh/infra/Blackhole.consume",
                        "+java/lang/String.indexOf",
                        "-java/lang/String.indexOf",
                        "-a/b/C.*",
                        "+a/B.m"),
                carried(
                        "dontinline,org/openjdk/jmh/infra/Blackhole.consume",
                        "inline java.lang.String::indexOf",
                        "dontinline java/lang/String indexOf (I)I",
                        "dontinline,a.b.C.*",
                        "inline,a/B.m(I)V",
                        "quiet",
                        "exclude,a/B.c",
                        "compileonly,a/B.c",
                        "# a comment",
                        ""));
    }

    @Test
    void theDirectiveMatchesEveryMethodWithTheCarriedRulesFirst() {
        String d = JitDirectives.directive(List.of("-a/B.c"), List.of("x/Y.z", "x/Y$W.<init>"));
        assertTrue(d.startsWith("[ { match: \"*.*\", inline: ["), d);
        assertTrue(d.indexOf("\"-a/B.c\"") < d.indexOf("\"-x/Y.z\""), d);
        assertTrue(d.contains("\"-x/Y$W.<init>\""), d);
    }

    /** The test JVMs open jdk.management to gort (pom.xml's gort.exports): HotSpot takes the directive. */
    @Test
    void hotSpotAcceptsTheDirective() throws Exception {
        assertTrue(JitDirectives.readers().size() > 100);
        assertNull(JitDirectives.install());
    }
}
