package dev.gort.runtime;

/**
 * A broken scheduler invariant: Go's {@code throw("...")}. In production gort prints
 * {@code fatal error: <msg>} and halts the JVM with exit status 2, as Go does; with
 * {@code -Dgort.fatal=throw} (the test suite) it throws this error instead, so a test fails.
 */
public final class GortFatalError extends Error {
    GortFatalError(String msg) {
        super(msg);
    }
}
