package dev.gort.runtime;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * A decision trace: the scheduling decisions of one run, in order, without any clock: which G ran
 * next on which P ({@code run P0 G7}), and every random draw the scheduler made, with what it
 * decided ({@code steal-order M0 -> 1234}: the start and stride of a steal pass, from which the
 * victims follow; {@code select-order M0 n=3 -> 2}: one step of a select's poll-order shuffle, from
 * which the case it takes follows; {@code timer-order M0 -> 5678}: the rank of a synctest bubble's
 * timer entering the bubble's heap, from which the order of timers due at the same instant
 * follows).
 *
 * <p>Recording ({@link #record()}) logs them as the runtime makes them. Replaying ({@link
 * #replay(List)}) feeds the recorded draws back instead of the generator's, which forces the same
 * choices, and checks every step against the recording: the first step that differs stops the run
 * with {@code fatal error: schedule replay diverged at step N: recorded '...', got '...'}.
 *
 * <p>What it covers: at GOMAXPROCS=1, inside a synctest bubble (no wall clock: the fake clock
 * orders every timer) and with a seed ({@link Config.Settings#seed()}, which also turns off
 * sysmon's wall-clock preemption and the request of a Java lock's holder waiting for a P,
 * Preempt.boostLockHolder), the order of the Gs and every random choice are functions of the
 * program and the seed: two runs log the same trace, and a replay reproduces it (a replay runs as
 * a seeded runtime whatever its seed: the recording decides every draw). Not covered: at
 * GOMAXPROCS &gt; 1 the Ms' threads interleave as the OS schedules them (which M steals first, which
 * of two Ps readies a G first); the trace of such a run is still recorded (entries are appended
 * under a lock, in the order they happened) but neither repeats nor replays, and a replay at
 * GOMAXPROCS &gt; 1 is refused before the run starts. Goroutines readied from outside the runtime
 * (an external thread, the netpoller, a real timer) arrive when they arrive.
 *
 * <p>A trace serves one run: giving it to a second runtime is an IllegalStateException.
 *
 * <p>Go has no such thing (its scheduler is not replayable); this is gort's research tool.
 */
public final class Decisions {
    private final boolean replaying;
    /** The steps, guarded by this object's monitor: appended when recording, read when replaying. */
    private final List<String> steps;
    /** Replay only: the next step to check, under the monitor. */
    private int next;
    /**
     * The main goroutine has returned (under the monitor): the run is over, as a Go process is gone
     * then, so what the carriers do while the runtime shuts down is neither recorded nor checked.
     */
    private boolean ended;
    /** The runtime that reports a divergence; set by {@link #attach} before it starts. */
    volatile Scheduler sched;

    private Decisions(boolean replaying, List<String> steps) {
        this.replaying = replaying;
        this.steps = steps;
    }

    /** An empty trace that records the run it is given to. */
    public static Decisions record() {
        return new Decisions(false, new ArrayList<>());
    }

    /**
     * A trace that forces and checks the run it is given to against {@code recorded}. Every line
     * must be a step as {@link #record()} writes them ({@code run P0 G7}, {@code steal-order M0 ->
     * 1234}, {@code timer-order M0 -> 5678}, {@code select-order M0 n=3 -> 2}, with the draw below
     * n): anything else is an
     * IllegalArgumentException naming the line, before the run starts.
     */
    public static Decisions replay(List<String> recorded) {
        for (int i = 0; i < recorded.size(); i++) {
            String line = recorded.get(i);
            if (line == null || !wellFormed(line)) {
                throw new IllegalArgumentException("gort: decision trace line " + (i + 1) + " is not a step: '" + line
                        + "' (want 'run P<n> G<n>', 'steal-order M<n> -> <int>', 'timer-order M<n> -> <int>'"
                        + " or 'select-order M<n> n=<n> -> <0..n-1>')");
            }
        }
        return new Decisions(true, List.copyOf(recorded));
    }

    private static final java.util.regex.Pattern RUN = java.util.regex.Pattern.compile("run P\\d+ G\\d+");
    private static final java.util.regex.Pattern STEAL =
            java.util.regex.Pattern.compile("(?:steal|timer)-order M\\d+ -> (-?\\d+)");
    private static final java.util.regex.Pattern SELECT =
            java.util.regex.Pattern.compile("select-order M\\d+ n=(\\d+) -> (\\d+)");

    private static boolean wellFormed(String line) {
        if (RUN.matcher(line).matches()) {
            return true;
        }
        java.util.regex.Matcher m = STEAL.matcher(line);
        if (m.matches()) {
            return fitsInt(m.group(1));
        }
        m = SELECT.matcher(line);
        if (m.matches() && fitsInt(m.group(1)) && fitsInt(m.group(2))) {
            return Integer.parseInt(m.group(2)) < Integer.parseInt(m.group(1));
        }
        return false;
    }

    private static boolean fitsInt(String digits) {
        try {
            Integer.parseInt(digits);
            return true;
        } catch (NumberFormatException e) {
            return false;
        }
    }

    /** {@link #replay(List)} of a file written by {@link #save}. */
    public static Decisions replay(Path file) throws IOException {
        return replay(Files.readAllLines(file));
    }

    /** Whether this trace replays a recording (else it records). */
    boolean replaying() {
        return replaying;
    }

    /**
     * Gives this trace to the runtime {@code s}, once: a trace records or replays one run (a second
     * run's steps were silently dropped, and a second replay checked nothing, both after the first
     * run's end).
     */
    synchronized void attach(Scheduler s) {
        if (sched != null) {
            throw new IllegalStateException("gort: this decision trace was already given to a runtime: a trace "
                    + (replaying ? "replays" : "records") + " one run (make a new one with Decisions."
                    + (replaying ? "replay" : "record") + " for the next)");
        }
        sched = s;
    }

    /** The steps recorded (or, when replaying, the recording). */
    public synchronized List<String> steps() {
        return List.copyOf(steps);
    }

    /** When replaying: how many steps have been checked. */
    public synchronized int replayed() {
        return next;
    }

    /** Writes the steps, one a line. */
    public void save(Path file) throws IOException {
        Files.write(file, steps());
    }

    // ------------------------------------------------------------------------------------------
    // The runtime's side.

    /** M.execute: gp runs next on pp. */
    void run(P pp, G gp) {
        step("run P" + pp.id + " G" + gp.goid);
    }

    /**
     * The main goroutine returned: the run is over. A replay must have used its whole recording
     * (a recording with steps left over is not this run's); later steps are ignored either way.
     */
    synchronized void endOfRun() {
        if (ended) {
            return;
        }
        ended = true;
        if (replaying && next < steps.size()) {
            throw diverged(steps.get(next), "<end of run>");
        }
    }

    private synchronized void step(String s) {
        if (ended) {
            return;
        }
        if (!replaying) {
            steps.add(s);
            return;
        }
        String want = next < steps.size() ? steps.get(next) : "<end of recording>";
        if (!want.equals(s)) {
            throw diverged(want, s);
        }
        next++;
    }

    /** A draw: records it, or returns the recorded value after checking that the draw matches. */
    private synchronized int draw(String what, int v) {
        if (ended) {
            return v;
        }
        if (!replaying) {
            steps.add(what + " -> " + v);
            return v;
        }
        String want = next < steps.size() ? steps.get(next) : "<end of recording>";
        int arrow = want.lastIndexOf(" -> ");
        if (arrow < 0 || !want.substring(0, arrow).equals(what)) {
            throw diverged(want, what + " -> ...");
        }
        next++;
        return Integer.parseInt(want.substring(arrow + 4));
    }

    private GortFatalError diverged(String want, String got) {
        return Fatal.fatal(
                sched,
                "schedule replay diverged at step " + (next + 1) + ": recorded '" + want + "', got '" + got + "'");
    }

    /**
     * An M's generator that logs (or replays) its draws: {@link FastRand#next()} is only a steal
     * pass's start ({@link M#stealWork}), {@link FastRand#nextn} only select's poll order,
     * {@link FastRand#timerOrder()} only the rank of a bubble's timer entering its heap.
     */
    static final class Rand extends FastRand {
        private final Decisions d;
        private final String m;

        Rand(long seed, Decisions d, long mid) {
            super(seed);
            this.d = d;
            this.m = "M" + mid;
        }

        @Override
        public int next() {
            return d.draw("steal-order " + m, super.next());
        }

        @Override
        public int nextn(int n) {
            return d.draw("select-order " + m + " n=" + n, scale(super.next(), n));
        }

        @Override
        int timerOrder() {
            return d.draw("timer-order " + m, super.next());
        }
    }
}
