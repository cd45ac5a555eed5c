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

    /** {@link LockAcrossYieldProg} with {@code n} goroutines in a child JVM that opens jdk.management to gort. */
    private static ChildJvm.Result lockAcrossYield(String n, String... jvmOptions) throws Exception {
        List<String> opts = new ArrayList<>(List.of(jvmOptions));
        opts.addAll(List.of("--add-opens", "jdk.management/com.sun.management.internal=ALL-UNNAMED"));
        return ChildJvm.run(LockAcrossYieldProg.class.getName(), n, null, java.util.Map.of(), opts);
    }

    /**
     * A goroutine body that takes a {@code ReentrantLock}, yields and takes it again, run by 200,000
     * goroutines at GOMAXPROCS=2 in a child JVM with C2: the body is inlined into
     * {@code Continuation.enter}, a JDK method. Without the directive an unlock panicked with
     * {@code IllegalMonitorStateException} (2 of 2 runs here), and also with a directive that left
     * the JDK's compiled methods alone (the review's finding); with it, the count is exact.
     */
    @Test
    void aLockTakenOnBothSidesOfAYieldInAGoroutineBodyKeepsItsOwner() throws Exception {
        ChildJvm.Result r =
                lockAcrossYield("200000", "-XX:TieredStopAtLevel=4", "--add-opens", "java.base/java.lang=ALL-UNNAMED");
        assertEquals(0, r.status(), r.output());
        assertTrue(r.output().contains("ok 400000"), r.output());
        assertTrue(r.output().contains("directive: installed"), r.output());
    }

    /** {@code -Dgort.jitdirective=false} leaves the directive out, with the access to add it. */
    @Test
    void theSwitchLeavesTheDirectiveOut() throws Exception {
        ChildJvm.Result r = lockAcrossYield("1000", "-Dgort.jitdirective=false");
        assertEquals(0, r.status(), r.output());
        assertTrue(r.output().contains("directive: " + JitDirectives.SWITCHED_OFF), r.output());
    }

    /** A malformed switch is a fatal error at start that names it, as every setting's is. */
    @Test
    void aMalformedSwitchIsFatal() throws Exception {
        ChildJvm.Result r = ChildJvm.run(
                LockAcrossYieldProg.class.getName(),
                "1000",
                null,
                java.util.Map.of(),
                List.of("-Dgort.jitdirective=maybe"));
        assertEquals(2, r.status(), r.output());
        assertTrue(r.output().contains("gort.jitdirective"), r.output());
    }
}
