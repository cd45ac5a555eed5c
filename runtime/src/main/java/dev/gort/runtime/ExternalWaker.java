package dev.gort.runtime;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * A registration that says "a thread outside this runtime may still wake a goroutine" (a
 * non-blocking channel operation, {@code close}, a mutex unlock or {@code WaitGroup.done} from a JDK
 * executor, a listener, a callback). While any registration is open, {@link Idle#checkdead}
 * counts it as a running M and does not report {@code all goroutines are asleep - deadlock!}: the
 * outside thread may be on its way. Closing the last one re-runs checkdead, so a program whose
 * goroutines are all asleep once no outside waker remains is still reported.
 *
 * <p>The rule, correct by construction: gort cannot see which outside threads hold a channel, so
 * it trusts only registrations. A goroutine waiting for an outside thread that holds no open
 * registration is reported as deadlocked as soon as every goroutine is asleep and no timer is
 * pending, even if that thread is about to call in (it may be in the middle of the call: it is
 * not counted either). Goroutines waking each other, timers ({@code Time.afterFunc}) and
 * goroutines blocked in a syscall need no registration.
 *
 * <pre>{@code
 * ExternalWaker w = Go.external();            // in a goroutine, before it can block
 * executor.schedule(() -> {
 *     try (w) { c.trySend(42); }              // close after the last wake-up
 * }, 200, TimeUnit.MILLISECONDS);
 * int v = c.recv();                           // not a deadlock while w is open
 * }</pre>
 *
 * <p>Go has no such thing: nothing outside a Go program can wake a goroutine except through a
 * syscall or the netpoller, which keep an M running, or a cgo callback, which runs on an extra M
 * that checkdead counts as running (proc.go checkdead's {@code run0}); a registration plays the part
 * of that extra M. Any thread may open or close one; {@link #close} is idempotent.
 *
 * <p>Go: proc.go checkdead (the extra-M allowance)
 */
public final class ExternalWaker implements AutoCloseable {
    private static final VarHandle CLOSED;

    static {
        try {
            CLOSED = MethodHandles.lookup().findVarHandle(ExternalWaker.class, "closed", boolean.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** Immutable: the runtime whose checkdead counts this registration. */
    private final Scheduler sched;
    /** Set once by the first close (any thread, CAS). */
    @SuppressWarnings("unused")
    private volatile boolean closed;

    ExternalWaker(Scheduler sched) {
        this.sched = sched;
    }

    /** The runtime this registration keeps from reporting a deadlock. */
    Scheduler scheduler() {
        return sched;
    }

    /** Whether {@link #close} has been called. */
    boolean isClosed() {
        return closed;
    }

    /**
     * Ends the registration (the first call only). When it was the last one, checkdead runs at
     * once: if every goroutine is asleep now, that is the deadlock it reports (a fatal error, as
     * from any other checkdead call).
     */
    @Override
    public void close() {
        if (CLOSED.compareAndSet(this, false, true)) {
            sched.idle.externalWakerDone();
        }
    }

    @Override
    public String toString() {
        return "ExternalWaker[" + (closed ? "closed" : "open") + "]";
    }
}
