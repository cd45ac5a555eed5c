package dev.gort;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gort.runtime.ChildJvm;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The bench's unbuffered-channel ping-pong, counted in a child JVM (issue 19; the runtime's
 * SwitchCountTest does the same on the core's park/ready): at GOMAXPROCS=2 the pair stays on one
 * P, so the idle P's M is rarely woken and rarely steals the runnext.
 */
@Timeout(180)
class ChanSwitchCountTest {
    static final int ROUNDS = 20_000;

    static Map<String, Long> counts(int procs) throws Exception {
        ChildJvm.Result r = ChildJvm.run(
                "dev.gort.testprog.ChanPingPongCounts",
                Integer.toString(ROUNDS),
                Integer.toString(procs),
                Map.of(),
                List.of("-Dgort.debug.counts=true"));
        assertEquals(0, r.status(), r.output());
        int at = r.output().indexOf("COUNTS\n");
        assertTrue(at >= 0, r.output());
        Map<String, Long> m = new HashMap<>();
        for (String line : r.output().substring(at + 7).split("\n")) {
            int eq = line.indexOf('=');
            if (eq > 0) {
                m.put(
                        line.substring(0, eq),
                        Long.parseLong(line.substring(eq + 1).trim()));
            }
        }
        System.out.println("chan ping-pong P=" + procs + ": " + m);
        return m;
    }

    /**
     * Before runqgrab's back-off slept (a 3 us busy-wait), the idle P's spinning M stole the
     * runnext on nearly every wake-up, splitting the pair: 3,488 carrier unparks and 3,479 runnext
     * steals for 20,000 round trips (child JVM, C1 only, load ~12 on 2 cores); after, 736 and 161.
     * The unpark count grows as the round trip slows (each wake-up is one back-off sleep of ~50-100
     * us, however many round trips fit in it), so its bound is loose; the steal count is the rule.
     *
     * <p>Go: proc.go runqgrab
     */
    @Test
    void chanPingPongAtGomaxprocs2StaysOnOneP() throws Exception {
        Map<String, Long> c = counts(2);
        long unparks = ROUNDS / 10;
        long steals = ROUNDS / 40;
        assertTrue(c.get("noteUnparks") <= unparks, "carrier unparks (at most " + unparks + "): " + c);
        assertTrue(c.get("runnextSteals") <= steals, "runnext steals (at most " + steals + "): " + c);
    }
}
