package dev.gort.runtime;

import java.io.PrintStream;

/**
 * Go's {@code throw} and {@code fatal}: an invariant of the scheduler does not hold.
 *
 * <p>The message starts with the Go function that found the problem ({@code runqsteal: runq overflow}).
 * Details are printed by the caller before calling {@link #fatal}. By default the JVM halts with exit
 * status 2 after printing {@code fatal error: <msg>} and a goroutine dump (and writing {@code -Dgort.trace}'s
 * file with what was recorded, {@link dev.gort.runtime.trace.Tracer#onHalt}); with {@code -Dgort.fatal=throw}
 * a {@link GortFatalError} is thrown instead (the test suite runs that way).
 *
 * <p>Go: panic.go throw, fatal
 */
public final class Fatal {
    /**
     * Read once: {@code -Dgort.fatal=throw} makes fatal errors exceptions (tests); {@code halt}
     * (the default) halts the JVM; anything else is itself a fatal error (which halts). JVM-wide:
     * only for a fatal error raised outside any runtime; inside one, its
     * {@link Config.Settings#fatalThrow()} decides.
     */
    static final boolean THROW = "throw".equals(Config.fatalSetting());

    private Fatal() {}

    /** Go: panic.go throw. Never returns normally. */
    public static GortFatalError fatal(String msg) {
        return fatal(null, msg);
    }

    /** As {@link #fatal(String)}, printing {@code sched}'s goroutine dump when it is known. */
    public static GortFatalError fatal(Scheduler sched, String msg) {
        return die(sched, msg, false);
    }

    /**
     * Go's {@code fatal}: a fatal error the user's program caused (a deadlock, an unlock of an
     * unlocked {@code sync} mutex), not a broken invariant of the runtime: the goroutine dump is at
     * {@code GOTRACEBACK}'s level, without runtime frames, and only the failing goroutine's unless
     * {@code GOTRACEBACK=all} or more (Go: throwTypeUser). Never returns normally.
     *
     * <p>Go: panic.go fatal
     */
    public static GortFatalError userFatal(Scheduler sched, String msg) {
        return die(sched, msg, true);
    }

    /**
     * A runtime thread of {@code sched} (an M, sysmon) ended with {@code t}, a bug in gort: its Java
     * stack first (the fatal error halts), then {@code fatal error: runtime: <who> crashed: t}.
     * Returns, under {@code -Dgort.fatal=throw}, with the error reported and recorded on the runtime.
     */
    static void crashed(Scheduler sched, String who, Throwable t) {
        t.printStackTrace();
        try {
            fatal(sched, "runtime: " + who + " crashed: " + t);
        } catch (GortFatalError reported) {
            // -Dgort.fatal=throw: reported and recorded on the runtime
        }
    }

    private static GortFatalError die(Scheduler sched, String msg, boolean user) {
        PrintStream err = System.err;
        err.print("fatal error: "); // no "+": see SpinLock.died (fatal errors may come from a deep stack)
        err.println(msg);
        if (sched != null) {
            try {
                sched.onFatal(msg, user);
            } catch (Throwable t) {
                // The dump failed (a fatal error raised from a nearly exhausted stack): the program
                // must end all the same, so finish first (if even that overflows, the error
                // propagates and the caller's next attempt, higher up, ends it), then say so.
                sched.onFatalDumpFailed(msg);
                err.print("runtime: error while dumping goroutines: ");
                err.println(t);
            }
        }
        err.flush();
        Scheduler traced = sched != null ? sched : Scheduler.current();
        if (traced != null ? traced.config.settings().fatalThrow() : THROW) {
            throw new GortFatalError(msg);
        }
        // -Dgort.trace: write what was recorded before the JVM goes (a flight recorder's crash dump)
        if (traced != null) {
            try {
                traced.trace.onHalt();
            } catch (Throwable t) {
                err.println("runtime: error while writing the trace: " + t);
            }
            err.flush();
        }
        Runtime.getRuntime().halt(2);
        throw new GortFatalError(msg); // unreachable
    }
}
