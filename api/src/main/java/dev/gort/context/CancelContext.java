package dev.gort.context;

/** A context with its cancel function (Go's {@code ctx, cancel := context.WithCancel(parent)}). */
public interface CancelContext extends Context {
    /**
     * Cancels this context and its children (closes done, sets err to CANCELED) and detaches it
     * from its parent. Idempotent. Go: the CancelFunc.
     */
    void cancel();

    /** As {@link #cancel()}, recording {@code cause} for {@link Context#cause}. Go: CancelCauseFunc. */
    void cancel(Throwable cause);
}
