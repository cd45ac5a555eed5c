package dev.gort;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gort.runtime.Config;
import dev.gort.runtime.Decisions;
import dev.gort.runtime.GortFatalError;
import dev.gort.sync.WaitGroup;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Seeded runs ({@code -Dgort.seed}) and decision traces ({@link Decisions}): at GOMAXPROCS=1 in a
 * synctest bubble, one seed gives one schedule (the same steps, the same outcome), another seed
 * another; a recorded trace replayed forces the recorded schedule, and a replay that cannot follow
 * it stops at the first step that differs.
 */
@Timeout(120)
class SeededScheduleTest {
    static Config config(long seed) {
        Config c =
                Config.fromEnvironment().withGomaxprocs(1).withPanicExits(false).withSeed(seed);
        return c.withSettings(c.settings().withFatalThrow(true));
    }

    /**
     * Fan-out: 6 workers each send 5 results; the collector selects over the results channel and a
     * ticker-free "progress" channel that is always ready, so select's random order decides.
     */
    static void fanOut(List<String> out) {
        Chan<String> results = Chan.make(4);
        Chan<Integer> progress = Chan.make(64);
        WaitGroup wg = new WaitGroup();
        for (int w = 0; w < 6; w++) {
            int id = w;
            wg.go(() -> {
                for (int k = 0; k < 5; k++) {
                    results.send("w" + id + "." + k);
                    progress.send(id);
                }
            });
        }
        Go.go(() -> {
            wg.await();
            results.close();
        });
        boolean[] open = {true};
        while (open[0]) {
            Select.select(
                    Select.recv2(results, (v, ok) -> {
                        if (ok) {
                            out.add(v);
                        } else {
                            open[0] = false;
                        }
                    }),
                    Select.recv(progress, (Integer p) -> out.add("p" + p)));
        }
    }

    /**
     * Ping-pong with a race: each round the referee serves both players, waits until both have
     * returned the ball (Wait: they are durably blocked on the next serve), and a select over the
     * two returns takes one: select's random order picks the round's winner.
     */
    static void pingPong(List<String> out) {
        String[] names = {"a", "b"};
        List<Chan<Integer>> serve = List.of(Chan.make(1), Chan.make(1));
        List<Chan<String>> ret = List.of(Chan.make(1), Chan.make(1));
        for (int p = 0; p < 2; p++) {
            int me = p;
            Go.go(() -> {
                for (Integer round : serve.get(me)) {
                    ret.get(me).send(names[me] + round);
                }
            });
        }
        for (int round = 0; round < 20; round++) {
            serve.get(0).send(round);
            serve.get(1).send(round);
            Synctest.waitBubble(); // both balls are back
            int[] loser = {-1};
            Select.select(
                    Select.recv(ret.get(0), (String v) -> {
                        out.add(v);
                        loser[0] = 1;
                    }),
                    Select.recv(ret.get(1), (String v) -> {
                        out.add(v);
                        loser[0] = 0;
                    }));
            ret.get(loser[0]).recv();
        }
        serve.get(0).close();
        serve.get(1).close();
    }

    record Run(List<String> steps, List<String> outcome) {}

    static Run run(long seed, Decisions d, Consumer<List<String>> workload) {
        List<String> out = Collections.synchronizedList(new ArrayList<>());
        Synctest.test(config(seed), d, () -> workload.accept(out));
        return new Run(d.steps(), List.copyOf(out));
    }

    @Test
    void oneSeedGivesOneScheduleAndAnotherSeedAnother() {
        for (Consumer<List<String>> w :
                List.<Consumer<List<String>>>of(SeededScheduleTest::fanOut, SeededScheduleTest::pingPong)) {
            Run first = run(42, Decisions.record(), w);
            Run second = run(42, Decisions.record(), w);
            Run other = run(43, Decisions.record(), w);
            assertTrue(first.steps().size() > 50, "a trace of " + first.steps().size() + " steps");
            assertTrue(first.steps().stream().anyMatch(s -> s.startsWith("select-order M")), "select draws recorded");
            assertTrue(first.steps().stream().anyMatch(s -> s.startsWith("run P0 G")), "runs recorded");
            assertEquals(first.steps(), second.steps(), "seed 42, twice: the same decisions");
            assertEquals(first.outcome(), second.outcome());
            assertNotEquals(first.steps(), other.steps(), "seeds 42 and 43: different decisions");
            assertNotEquals(first.outcome(), other.outcome(), "seeds 42 and 43: different select choices");
        }
    }

    @Test
    void aReplayForcesTheRecordedScheduleEvenUnderAnotherSeed(@TempDir Path dir) throws Exception {
        Run recorded = run(7, Decisions.record(), SeededScheduleTest::pingPong);
        Path file = dir.resolve("pingpong.decisions");
        Decisions.record(); // (nothing: a fresh trace is not shared)
        Files.write(file, recorded.steps());
        Decisions replay = Decisions.replay(file);
        Run replayed = run(99, replay, SeededScheduleTest::pingPong); // another seed: the recording wins
        assertEquals(recorded.outcome(), replayed.outcome());
        assertEquals(recorded.steps().size(), replay.replayed(), "every recorded step was replayed");
    }

    @Test
    void aReplayThatDivergesStopsAtTheFirstDifferentStep() {
        Run recorded = run(7, Decisions.record(), SeededScheduleTest::fanOut);
        List<String> tampered = new ArrayList<>(recorded.steps());
        int at = -1;
        for (int i = 0; i < tampered.size(); i++) {
            if (tampered.get(i).startsWith("run P0 G") && i > 10) {
                at = i;
                break;
            }
        }
        String original = tampered.get(at);
        tampered.set(at, "run P0 G9999");
        GortFatalError e = assertThrows(
                GortFatalError.class, () -> run(7, Decisions.replay(tampered), SeededScheduleTest::fanOut));
        assertTrue(
                e.getMessage()
                        .contains("schedule replay diverged at step " + (at + 1) + ": recorded 'run P0 G9999', got '"
                                + original + "'"),
                e.getMessage());
    }

    /**
     * A replay whose recording has steps the run did not take (a line appended, a recording of a
     * longer run) diverged too: at the main goroutine's return, the first unused step is reported
     * (it replayed as "ok" before, 433 of 434 steps checked).
     */
    @Test
    void aReplayWithStepsLeftOverDivergesAtTheEndOfTheRun() {
        Run recorded = run(7, Decisions.record(), SeededScheduleTest::pingPong);
        List<String> longer = new ArrayList<>(recorded.steps());
        longer.add("run P0 G1");
        GortFatalError e = assertThrows(
                GortFatalError.class, () -> run(7, Decisions.replay(longer), SeededScheduleTest::pingPong));
        assertTrue(
                e.getMessage()
                        .contains("schedule replay diverged at step " + longer.size()
                                + ": recorded 'run P0 G1', got '<end of run>'"),
                e.getMessage());
    }

    /**
     * Timers due at the same instant: 30 rounds of two 1 ns timers raced in a select. Their order
     * comes from the bubble heap's random ranks, drawn from the seeded generator: one seed gives
     * one order every run, the trace records the draws ({@code timer-order M0 -> ...}), and a
     * replay under another seed forces them.
     */
    static void timerRace(List<String> out) {
        for (int i = 0; i < 30; i++) {
            Timer a = Time.newTimer(1);
            Timer b = Time.newTimer(1);
            Select.select(Select.recv(a.c(), () -> out.add("a")), Select.recv(b.c(), () -> out.add("b")));
            Synctest.waitBubble();
        }
    }

    @Test
    void timersDueAtOneInstantFollowTheSeedAndReplay() {
        Run first = run(42, Decisions.record(), SeededScheduleTest::timerRace);
        Run second = run(42, Decisions.record(), SeededScheduleTest::timerRace);
        assertEquals(first.steps(), second.steps());
        assertEquals(first.outcome(), second.outcome());
        assertTrue(first.outcome().contains("a") && first.outcome().contains("b"), "both orders: " + first.outcome());
        assertTrue(first.steps().stream().anyMatch(s -> s.startsWith("timer-order M0 -> ")), "timer ranks recorded");
        Decisions replay = Decisions.replay(first.steps());
        Run replayed = run(99, replay, SeededScheduleTest::timerRace);
        assertEquals(first.outcome(), replayed.outcome());
        assertEquals(first.steps().size(), replay.replayed());
    }

    /**
     * A replay at GOMAXPROCS &gt; 1 is refused before the run starts, saying why: it used to run
     * and stop at a divergence that said nothing of the cause ({@code recorded 'run P0 G2', got
     * 'steal-order M2 -> ...'}), or to pass when the other Ms happened to stay idle.
     */
    @Test
    void aReplayAtMoreThanOnePIsRefusedBeforeItRuns() {
        Run recorded = run(7, Decisions.record(), SeededScheduleTest::pingPong);
        boolean[] ran = {false};
        Config four = config(7).withGomaxprocs(4);
        IllegalArgumentException e = assertThrows(
                IllegalArgumentException.class,
                () -> Synctest.test(four, Decisions.replay(recorded.steps()), () -> ran[0] = true));
        assertEquals(
                "gort: a decision trace replays only at GOMAXPROCS=1, this runtime has 4 (Config.withGomaxprocs(1))",
                e.getMessage());
        assertTrue(!ran[0], "the workload did not run");
    }

    /**
     * Nor can a replay move to more Ps once it runs: Go.gomaxprocs(2) in a replayed workload is an
     * IllegalStateException where it is called (a recording may do it; its trace just does not
     * replay). It changed GOMAXPROCS, and the replay went on to diverge at a step that named no cause.
     */
    @Test
    void aReplayCannotMoveToMorePs() {
        Run recorded = run(7, Decisions.record(), SeededScheduleTest::pingPong);
        Decisions replay = Decisions.replay(recorded.steps());
        List<String> out = Collections.synchronizedList(new ArrayList<>());
        Synctest.test(config(7), replay, () -> {
            try {
                Go.gomaxprocs(2);
                out.add("grew to " + Go.gomaxprocs(0) + " Ps");
            } catch (IllegalStateException e) {
                out.add(e.getMessage());
            }
            pingPong(out); // the refused call changed nothing: the rest replays as recorded
        });
        assertEquals(
                "gort: GOMAXPROCS(2) during a decision trace replay: a replay runs at GOMAXPROCS=1", out.getFirst());
        assertEquals(recorded.outcome(), out.subList(1, out.size()));
        assertEquals(recorded.steps().size(), replay.replayed());
    }

    /**
     * A trace serves one run: given to a second runtime it is refused. A second recording into it
     * was silently dropped (its steps came after the first run's end), and a second replay checked
     * nothing and passed.
     */
    @Test
    void aTraceServesOneRun() {
        Decisions d = Decisions.record();
        run(7, d, SeededScheduleTest::pingPong);
        assertEquals(
                "gort: this decision trace was already given to a runtime: a trace records one run"
                        + " (make a new one with Decisions.record for the next)",
                assertThrows(IllegalStateException.class, () -> run(7, d, SeededScheduleTest::pingPong))
                        .getMessage());
        Decisions r = Decisions.replay(d.steps());
        run(7, r, SeededScheduleTest::pingPong);
        assertEquals(
                "gort: this decision trace was already given to a runtime: a trace replays one run"
                        + " (make a new one with Decisions.replay for the next)",
                assertThrows(IllegalStateException.class, () -> run(7, r, SeededScheduleTest::fanOut))
                        .getMessage());
    }

    /**
     * A line that is not a step (a draw that is no number, a select draw outside 0..n-1, anything
     * else) is refused when the replay is made, naming the line; it surfaced as the program's
     * NumberFormatException or as an ArrayIndexOutOfBoundsException inside select before.
     */
    @Test
    void aMalformedRecordingIsRefusedNamingItsLine() {
        for (String bad : List.of(
                "select-order M0 n=2 -> zz",
                "select-order M0 n=2 -> 7",
                "select-order M0 n=2 -> -1",
                "steal-order M0 -> 99999999999",
                "timer-order M0 -> x",
                "run P0 G",
                "")) {
            List<String> lines = List.of("run P0 G1", bad);
            IllegalArgumentException e =
                    assertThrows(IllegalArgumentException.class, () -> Decisions.replay(lines), bad);
            assertTrue(e.getMessage().contains("line 2 is not a step: '" + bad + "'"), e.getMessage());
        }
    }

    /**
     * The explorer: which player wins the first round of the ping-pong race over 40 seeds; both
     * win under some seeds, and any seed of the report reproduces its outcome.
     */
    @Test
    void theExplorerReportsADistributionAndReproducesAnySeed() {
        Config c = config(1);
        java.util.function.Supplier<String> firstWinner = () -> {
            List<String> out = new ArrayList<>();
            pingPong(out);
            return out.get(0).substring(0, 1) + " wins round 0";
        };
        Explorer.Report r = Explorer.explore(c, 1000, 40, firstWinner);
        assertEquals(
                java.util.Set.of("a wins round 0", "b wins round 0"),
                r.seedsByOutcome().keySet(),
                r.toString());
        assertEquals(
                40, r.counts().values().stream().mapToInt(Integer::intValue).sum());
        r.seedsByOutcome().forEach((outcome, seeds) -> {
            for (long seed : seeds.subList(0, Math.min(3, seeds.size()))) {
                assertEquals(outcome, Explorer.reproduce(c, seed, firstWinner), "seed " + seed);
            }
        });
    }
}
