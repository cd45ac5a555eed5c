package dev.gort.net;

/**
 * A read, write, accept or dial whose deadline expired: {@code read tcp
 * 127.0.0.1:8080->127.0.0.1:51234: i/o timeout}; also a host name's lookup past its context's
 * deadline ({@code listen tcp: lookup example.com: i/o timeout}). The type to catch where Go tests
 * {@code errors.Is(err, os.ErrDeadlineExceeded)} or {@code err.(net.Error).Timeout()}.
 *
 * <p>Go: os/error.go ErrDeadlineExceeded, internal/poll DeadlineExceededError
 */
public final class DeadlineExceededException extends OpError {
    private static final long serialVersionUID = 1L;

    DeadlineExceededException(String op, String net, Addr source, Addr addr) {
        super(op, net, source, addr, TIMEOUT, null);
    }

    /** One whose cause is {@code cause}: a dial's context deadline (Go's errTimeout, which is {@code context.DeadlineExceeded}). */
    DeadlineExceededException(String op, String net, Addr source, Addr addr, Throwable cause) {
        super(op, net, source, addr, TIMEOUT, cause);
    }

    /**
     * One whose underlying error's text is {@code err}: a host name's lookup past its context's
     * deadline, {@code lookup example.com: i/o timeout} (Go's DNSError with IsTimeout).
     */
    DeadlineExceededException(String op, String net, Addr source, Addr addr, String err, Throwable cause) {
        super(op, net, source, addr, err, cause);
    }

    @Override
    public boolean timeout() {
        return true;
    }
}
