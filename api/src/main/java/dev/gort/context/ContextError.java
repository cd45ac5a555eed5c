package dev.gort.context;

/**
 * The errors a {@link Context} reports from {@link Context#err()}: {@link Context#CANCELED}
 * ({@code context canceled}) and {@link Context#DEADLINE_EXCEEDED} ({@code context deadline
 * exceeded}). They are values (Go's {@code error}s), not thrown by the package; throw them if that
 * suits the caller. No stack trace; {@code toString()} is the bare message, as Go prints it.
 *
 * <p>Go: context.Canceled, context.DeadlineExceeded
 */
public final class ContextError extends RuntimeException {
    private static final long serialVersionUID = 1L;
    private final boolean timeout;

    ContextError(String message, boolean timeout) {
        super(message, null, false, false);
        this.timeout = timeout;
    }

    /** True for DEADLINE_EXCEEDED (Go: deadlineExceededError.Timeout()). */
    public boolean timeout() {
        return timeout;
    }

    @Override
    public String toString() {
        return getMessage();
    }
}
