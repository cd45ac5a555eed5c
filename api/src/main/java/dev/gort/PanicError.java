package dev.gort;

/**
 * A Go run-time panic with a plain message, thrown as an exception: {@code send on closed channel},
 * {@code close of closed channel}, {@code close of nil channel}, {@code makechan: size out of range},
 * {@code sync: negative WaitGroup counter}. Catching it is Go's {@code recover()}; left uncaught in a
 * goroutine it ends the program as an unrecovered Go panic does.
 *
 * <p>{@link #toString()} is the bare message, so an unrecovered panic prints as Go's does:
 * {@code panic: send on closed channel}.
 *
 * <p>Go: runtime/error.go plainError; panic(string) in package sync
 */
public class PanicError extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public PanicError(String message) {
        super(message);
    }

    @Override
    public String toString() {
        return getMessage();
    }
}
