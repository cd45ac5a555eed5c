package dev.gort.runtime;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A replayed decision trace decides every draw, so the replaying runtime runs as a seeded one
 * whatever its own seed: sysmon never preempts it on the wall clock, a preemption the recording
 * (made under a seed) cannot hold. An unseeded replay diverged at its first slow goroutine.
 */
class DecisionsReplayTest {
    @Test
    void aReplayRunsAsASeededRuntimeWhateverItsSeed() {
        Config unseeded = TestSupport.config(1).withSeed(0);
        Scheduler recording = new Scheduler(unseeded);
        recording.recordDecisions(Decisions.record());
        assertFalse(recording.seeded, "recording without a seed: the wall clock may preempt");
        Scheduler replaying = new Scheduler(unseeded);
        replaying.recordDecisions(Decisions.replay(List.of("run P0 G1")));
        assertTrue(replaying.seeded, "a replay without a seed: no wall-clock preemption");
    }
}
