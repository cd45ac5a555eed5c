package dev.gort;

import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import dev.gort.runtime.Config;
import java.time.Duration;

/** Runs Go-style test bodies as a gort main under a timeout (a hang fails the test). */
public final class GortTesting {
    private GortTesting() {}

    public static Config config(int procs) {
        return Config.fromEnvironment().withGomaxprocs(procs).withPanicExits(false);
    }

    /** {@link #config(int)} in the given syscall model ({@code psyscall}: Go 1.25's, else Go 1.26+'s). */
    public static Config config(int procs, boolean psyscall) {
        Config c = config(procs);
        Config.Settings st = c.settings();
        return c.withSettings(st.withGodebug(st.godebug().with("psyscall=" + (psyscall ? 1 : 0))));
    }

    /** {@link #run(int, Runnable)} in the given syscall model. */
    public static void run(int procs, boolean psyscall, Runnable main) {
        run(procs, psyscall, Duration.ofSeconds(60), main);
    }

    /** {@link #run(int, Duration, Runnable)} in the given syscall model. */
    public static void run(int procs, boolean psyscall, Duration timeout, Runnable main) {
        assertTimeoutPreemptively(
                timeout,
                () -> Go.run(config(procs, psyscall), main),
                () -> "gort main did not return within " + timeout + " (GOMAXPROCS=" + procs + ", psyscall=" + psyscall
                        + ")");
    }

    /** Runs main as goroutine 1 on a fresh runtime with GOMAXPROCS = procs; fails after 60 s. */
    public static void run(int procs, Runnable main) {
        run(procs, Duration.ofSeconds(60), main);
    }

    public static void run(int procs, Duration timeout, Runnable main) {
        assertTimeoutPreemptively(
                timeout,
                () -> Go.run(config(procs), main),
                () -> "gort main did not return within " + timeout + " (GOMAXPROCS=" + procs + ")");
    }

    /** Go's t.Fatalf inside a goroutine: an AssertionError ends the program and fails the test. */
    public static void check(boolean cond, String fmt, Object... args) {
        if (!cond) {
            throw new AssertionError(String.format(fmt, args));
        }
    }
}
