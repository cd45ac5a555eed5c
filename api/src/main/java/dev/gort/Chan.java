package dev.gort;

import dev.gort.internal.GoParker;
import dev.gort.internal.ParkCommit;
import dev.gort.internal.Parker;
import dev.gort.internal.SpinLock;
import dev.gort.internal.Sudog;
import dev.gort.internal.WaitQ;
import dev.gort.runtime.Bubble;
import dev.gort.runtime.Fatal;
import dev.gort.runtime.G;
import dev.gort.runtime.GortFatalError;
import dev.gort.runtime.Scheduler;
import dev.gort.runtime.WaitReason;
import dev.gort.runtime.WaitTarget;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Iterator;
import java.util.NoSuchElementException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

/**
 * A Go channel: {@code make(chan T)} / {@code make(chan T, n)}, with Go's exact semantics.
 *
 * <pre>{@code
 * Chan<String> c = Chan.make();          // unbuffered: c := make(chan string)
 * Go.go(() -> c.send("hello"));          // c <- "hello"
 * String s = c.recv();                   // s := <-c
 * Chan.Received<String> r = c.recv2();   // s, ok := <-c
 * for (String v : c) { ... }             // for v := range c
 * }</pre>
 *
 * <h2>Algorithm (Go's chan.go)</h2>
 * <ul>
 *   <li>A sender that finds a waiting receiver hands the value straight to it; a receiver that finds
 *       a waiting sender on a full buffer takes the head and moves the sender's value into the same
 *       slot (FIFO kept). Blocked senders and receivers are served FIFO ({@link WaitQ}).
 *   <li>The woken goroutine goes to the current P's runnext ({@code goready}) and inherits the time
 *       slice, so a communicating pair runs as a unit.
 *   <li>The channel lock is never held while a goroutine is readied, and never held by a running
 *       goroutine across a yield: a blocking goroutine enqueues its sudog under the lock, yields,
 *       and its M releases the lock only then ({@code chanparkcommit}).
 *   <li>Receives on a closed channel drain the buffer, then return the zero value ({@code null})
 *       with ok = false, forever. Sending on, or closing, a closed channel panics
 *       ({@link PanicError}); so does closing a nil channel.
 *   <li>The nil channel ({@link #nil()}, Go's zero value) blocks forever and is never chosen by a
 *       select.
 * </ul>
 *
 * <h2>Differences from Go</h2>
 * <ul>
 *   <li>The zero value of an element is {@code null} (Java's default for references).
 *   <li>The lock is a small CAS spin lock (spin, then {@code Thread.yield}), not a futex: critical
 *       sections are a few dozen instructions and a parking goroutine holds it only until its M
 *       has unmounted the continuation.
 *   <li>The lock-order key is a unique creation number ({@code chan#N}), not an address.
 *   <li>A blocking operation outside a goroutine throws {@link IllegalStateException}; non-blocking
 *       ones and {@link #close()} work from any thread. A thread outside the runtime that may wake a
 *       goroutine this way later holds a {@link Go#external()} registration until its last
 *       wake-up; without one, goroutines that are all asleep waiting for it are reported as a
 *       deadlock ({@link dev.gort.runtime.ExternalWaker} states the rule).
 * </ul>
 *
 * <p>Go: runtime/chan.go
 *
 * @param <T> the element type
 */
public final class Chan<T> implements Iterable<T>, WaitTarget {
    private static final VarHandle LOCK;
    private static final VarHandle QCOUNT;
    private static final VarHandle CLOSED;

    static {
        try {
            MethodHandles.Lookup l = MethodHandles.lookup();
            LOCK = l.findVarHandle(Chan.class, "lockWord", int.class);
            QCOUNT = l.findVarHandle(Chan.class, "qcount", int.class);
            CLOSED = l.findVarHandle(Chan.class, "closed", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** Source of lock-order keys: unique, immutable, never reused (identityHashCode is not unique). */
    private static final AtomicLong SORTKEYS = new AtomicLong();

    /** Largest buffer a channel may have (Java's array limit). */
    static final long MAX_CAP = Integer.MAX_VALUE - 8;

    /** chanrecv's "would block" result (non-blocking receive only). */
    static final Object NOT_READY = new Object();
    /** chanrecv's "closed and drained" result: the zero value with ok = false. */
    static final Object CLOSED_EMPTY = new Object();

    private static final Chan<?> NIL = new Chan<>();

    /** Immutable: the lock-order key and the id printed in dumps ({@code chan#7}). Go: c.sortkey(). */
    final long id;
    /** Immutable. Go: c.dataqsiz. */
    final int dataqsiz;
    /** Immutable: the circular buffer; slots under the lock, plain. Go: c.buf. */
    private final Object[] buf;
    /** Immutable: how waiters block (GoParker in production). */
    final Parker parker;
    /** Immutable: this is the nil channel. */
    final boolean isNil;
    /**
     * Immutable: the synctest bubble of the goroutine that made the channel, else null (Go:
     * c.bubble). Only that bubble's goroutines may use it; blocking on it is durable.
     */
    final Bubble bubble;

    /**
     * {@link SpinLock}: FREE, HELD or BROKEN. CAS (acquire) to take, setRelease to drop, getOpaque
     * to spin; volatile only for the call-free BROKEN store of a section that died (this class's
     * and Select's). Go: c.lock.
     */
    volatile int lockWord;
    /** Elements in buf: written under the lock with setRelease, read racily with getAcquire. Go: c.qcount. */
    private int qcount;
    /** Under the lock, plain. Go: c.sendx, c.recvx. */
    private int sendx;

    private int recvx;
    /** 0 or 1: written once under the lock (setRelease), read racily with getAcquire. Go: c.closed. */
    private int closed;
    /**
     * The timer of a timer channel ({@link Time#newTimer}, {@link Time#newTicker}), else null. Written
     * once right after make, before the channel is handed out; then immutable. Go: c.timer.
     */
    dev.gort.runtime.Timer timer;
    /** Blocked receivers and senders (at most one of them is non-empty, except with self-selects). */
    final WaitQ recvq = new WaitQ();

    final WaitQ sendq = new WaitQ();

    Chan(int size, Parker parker) {
        this.id = SORTKEYS.incrementAndGet();
        this.dataqsiz = size;
        this.buf = size > 0 ? new Object[size] : null;
        this.parker = parker;
        this.isNil = false;
        this.bubble = parker == GoParker.INSTANCE ? Bubble.current() : null;
    }

    private Chan() {
        this.id = 0;
        this.dataqsiz = 0;
        this.buf = null;
        this.parker = GoParker.INSTANCE;
        this.isNil = true;
        this.bubble = null;
    }

    // ------------------------------------------------------------------------------------------
    // Construction.

    /** {@code make(chan T)}: an unbuffered (rendezvous) channel. */
    public static <T> Chan<T> make() {
        return new Chan<>(0, GoParker.INSTANCE);
    }

    /** {@code make(chan T, size)}; a negative or huge size panics {@code makechan: size out of range}. */
    public static <T> Chan<T> make(int size) {
        return make((long) size);
    }

    /**
     * {@code make(chan T, size)} with a 64-bit size (Go's {@code make(T, int64(n))}); sizes that
     * cannot be allocated panic {@code makechan: size out of range}. Go: chan.go makechan.
     */
    public static <T> Chan<T> make(long size) {
        if (size < 0 || size > MAX_CAP || size * 4 > Runtime.getRuntime().maxMemory()) {
            throw new PanicError("makechan: size out of range");
        }
        return new Chan<>((int) size, GoParker.INSTANCE);
    }

    /** For tests: a channel whose waiters block through {@code parker} (e.g. real threads). */
    static <T> Chan<T> make(int size, Parker parker) {
        if (size < 0) {
            throw new PanicError("makechan: size out of range");
        }
        return new Chan<>(size, parker);
    }

    /**
     * The nil channel ({@code var c chan T}): send and receive block forever, close panics,
     * {@code len} and {@code cap} are 0, and a select never chooses it. A Java {@code null}
     * channel reference in a select case means the same.
     */
    @SuppressWarnings("unchecked")
    public static <T> Chan<T> nil() {
        return (Chan<T>) NIL;
    }

    public boolean isNil() {
        return isNil;
    }

    // ------------------------------------------------------------------------------------------
    // The lock.

    /** A sudog for a plain (non-select) blocking send or receive on this channel. */
    private Sudog waiter(Object gp, Object elem) {
        Sudog mysg = parker.acquireSudog(gp);
        mysg.elem = elem;
        mysg.g = gp;
        mysg.setReleasetime(0);
        return mysg;
    }

    void lock() {
        SpinLock.lock(LOCK, this);
    }

    void unlock() {
        SpinLock.unlock(LOCK, this);
    }

    boolean lockHeld() {
        return (int) LOCK.getOpaque(this) != 0;
    }

    /** chanparkcommit: the parking goroutine's M drops the channel lock once the G has yielded. */
    static final ParkCommit<Chan<?>> CHAN_PARK_COMMIT = c -> {
        c.unlock();
        return true;
    };

    private void setQcountRelease(int n) {
        QCOUNT.setRelease(this, n);
    }

    private int qcountAcquire() {
        return (int) QCOUNT.getAcquire(this);
    }

    private int closedAcquire() {
        return (int) CLOSED.getAcquire(this);
    }

    /** Lock held. */
    int lenLocked() {
        return qcount;
    }

    /** Lock held or racy. */
    boolean isClosed() {
        return closedAcquire() != 0;
    }

    /** Whether a send would block, read without the lock. Go: chan.go full. */
    private boolean full() {
        if (dataqsiz == 0) {
            return recvq.isEmptyRacy();
        }
        return qcountAcquire() == dataqsiz;
    }

    /** Whether a receive would block, read without the lock. Go: chan.go empty. */
    private boolean empty() {
        if (dataqsiz == 0) {
            return sendq.isEmptyRacy();
        }
        // A timer channel's value may be due but not yet sent (Go 1.23: sent lazily on receive).
        if (timer != null) {
            timer.maybeRunChan();
        }
        return qcountAcquire() == 0;
    }

    // ------------------------------------------------------------------------------------------
    // Public operations.

    /** {@code c <- v}: blocks until a receiver takes v or the buffer has room; panics if closed. */
    public void send(T v) {
        chansend(v, true);
    }

    /** {@code v := <-c}: blocks until a value arrives; on a closed, drained channel returns null. */
    @SuppressWarnings("unchecked")
    public T recv() {
        Object v = chanrecv(true);
        return v == CLOSED_EMPTY ? null : (T) v;
    }

    /** {@code v, ok := <-c}: ok is false when the channel is closed and drained (then v is null). */
    @SuppressWarnings("unchecked")
    public Received<T> recv2() {
        Object v = chanrecv(true);
        return v == CLOSED_EMPTY ? Received.closed() : new Received<>((T) v, true);
    }

    /**
     * {@code select { case c <- v: return true; default: return false }}: sends only if that can be
     * done without blocking. Panics on a closed channel, as Go's select does even with a default.
     *
     * <p>Go: chan.go selectnbsend
     */
    public boolean trySend(T v) {
        return chansend(v, false);
    }

    /**
     * {@code select { case v, ok := <-c: ...; default: ... }}: null if a receive would block;
     * otherwise the value (ok) or, on a closed drained channel, {@code (null, ok = false)}.
     *
     * <p>Go: chan.go selectnbrecv
     */
    @SuppressWarnings("unchecked")
    public Received<T> tryRecv() {
        Object v = chanrecv(false);
        if (v == NOT_READY) {
            return null;
        }
        return v == CLOSED_EMPTY ? Received.closed() : new Received<>((T) v, true);
    }

    /** {@code close(c)}: wakes every blocked receiver (zero, not ok) and sender (they panic). Go: closechan. */
    public void close() {
        closechan();
    }

    /**
     * {@code len(c)}: elements queued in the buffer (racy, as in Go); 0 for a timer channel, which
     * is synchronous as of Go 1.23. Go: chan.go chanlen.
     */
    public int len() {
        if (isNil || timer != null) {
            return 0;
        }
        return qcountAcquire();
    }

    /** {@code cap(c)}; 0 for a timer channel (Go 1.23). Go: chan.go chancap. */
    public int cap() {
        return timer != null ? 0 : dataqsiz;
    }

    /**
     * Empties a timer channel's buffer (Stop/Reset must leave no stale value); true if it held one.
     * Called with the timer's sendLock held, so it must not use {@link #empty()} (which may run the
     * timer). Go: chan.go timerchandrain.
     */
    boolean timerchandrain() {
        if (qcountAcquire() == 0) {
            return false;
        }
        lock();
        try {
            boolean any = false;
            while (qcount > 0) {
                any = true;
                bufrecv();
            }
            unlock();
            return any;
        } catch (Throwable t) {
            lockWord = t instanceof StackOverflowError ? SpinLock.BROKEN_STACK : SpinLock.BROKEN; // no call: SpinLock
            throw SpinLock.died(this, t, "timerchandrain");
        }
    }

    /**
     * {@code for v := range c}: receives until the channel is closed and drained. Each
     * {@code hasNext()} may block.
     */
    @Override
    public Iterator<T> iterator() {
        return new Iterator<T>() {
            private Object next;
            private boolean fetched;

            @Override
            public boolean hasNext() {
                if (!fetched) {
                    next = chanrecv(true);
                    fetched = true;
                }
                return next != CLOSED_EMPTY;
            }

            @Override
            @SuppressWarnings("unchecked")
            public T next() {
                if (!hasNext()) {
                    throw new NoSuchElementException("channel closed");
                }
                fetched = false;
                T v = (T) next;
                next = null;
                return v;
            }
        };
    }

    /** {@code for v := range c { action(v) }}. */
    @Override
    @SuppressWarnings("unchecked")
    public void forEach(Consumer<? super T> action) {
        for (; ; ) {
            Object v = chanrecv(true);
            if (v == CLOSED_EMPTY) {
                return;
            }
            action.accept((T) v);
        }
    }

    /** The result of {@code v, ok := <-c}. */
    public record Received<T>(T value, boolean ok) {
        private static final Received<?> CLOSED = new Received<>(null, false);

        @SuppressWarnings("unchecked")
        static <T> Received<T> closed() {
            return (Received<T>) CLOSED;
        }
    }

    // ------------------------------------------------------------------------------------------
    // Go's algorithm.

    /**
     * Sends ep; with {@code block == false} returns false instead of blocking.
     *
     * <p>Go: chan.go chansend
     */
    boolean chansend(Object ep, boolean block) {
        if (isNil) {
            if (!block) {
                return false;
            }
            parkForever(WaitReason.CHAN_SEND_NIL_CHAN);
        }
        if (bubble != null && Bubble.current() != bubble) {
            throw new PanicError("send on synctest channel from outside bubble");
        }

        // Fast path: a failed non-blocking send without the lock. Observing "not closed" and then
        // "not ready" means that at some moment in between the channel was both, because a closed
        // channel cannot become not-ready-for-sending; we report the send as not possible then.
        if (!block && closedAcquire() == 0 && full()) {
            return false;
        }

        lock();
        try {
            if (closed != 0) {
                unlock();
                throw new PanicError("send on closed channel");
            }

            Sudog sg = recvq.dequeue(parker);
            if (sg != null) {
                // A receiver is waiting: hand the value straight to it, bypassing the buffer.
                send(sg, ep, null);
                return true;
            }

            if (qcount < dataqsiz) {
                // Room in the buffer.
                bufsend(ep);
                unlock();
                return true;
            }

            if (!block) {
                unlock();
                return false;
            }

            // Block on the channel; a receiver (or close) will complete the operation for us.
            Object gp = parker.current();
            if (gp == null) {
                unlock();
                throw notInGoroutine("send on");
            }
            Sudog mysg = waiter(gp, ep);
            if (parker.blockProfileRate(gp) > 0) {
                mysg.startBlockProfile(parker.nanotime());
            }
            sendq.enqueue(mysg);
            parker.park(
                    gp,
                    CHAN_PARK_COMMIT,
                    this,
                    bubble != null ? WaitReason.SYNCTEST_CHAN_SEND : WaitReason.CHAN_SEND,
                    this);

            // Someone woke us up: a receiver, which took elem and left null (Go: success), or
            // closechan, which left its marker. Anything but null is Go's !success, so that a
            // wakeup by nobody (elem still the value, unless that is null) is caught below as Go
            // catches it.
            boolean wasClosed = mysg.elem != null;
            if (mysg.releasetime() > 0) {
                parker.blockevent(
                        mysg.releasetime() - mysg.blockstart(), 1); // + this frame: send/recv, as Go's chansend1
            }
            mysg.release();
            if (wasClosed) {
                if (closedAcquire() == 0) {
                    throw Fatal.fatal(Scheduler.current(), "chansend: spurious wakeup");
                }
                throw new PanicError("send on closed channel");
            }
            return true;
        } catch (PanicError | IllegalStateException | GortFatalError e) {
            throw e; // the operation's own outcomes, thrown with the lock released
        } catch (Throwable t) {
            lockWord = t instanceof StackOverflowError ? SpinLock.BROKEN_STACK : SpinLock.BROKEN; // no call: SpinLock
            throw SpinLock.died(this, t, "chansend");
        }
    }

    /**
     * Hands ep to the dequeued receiver sg, releases the lock (this channel's, or all of a select's
     * when {@code sel != null}), then readies the receiver. Lock held on entry.
     *
     * <p>Go: chan.go send
     */
    void send(Sudog sg, Object ep, Select sel) {
        sg.elem = ep; // Go: sendDirect, a write into the receiver's frame
        Object gp = sg.g;
        if (sg.releasetime() != 0) {
            sg.setReleasetime(parker.nanotime());
        }
        if (sel == null) {
            unlock();
        } else {
            sel.selunlock();
        }
        parker.setParam(gp, sg);
        parker.ready(gp);
    }

    /** Appends ep to the buffer; lock held and room checked. */
    void bufsend(Object ep) {
        buf[sendx] = ep;
        if (++sendx == dataqsiz) {
            sendx = 0;
        }
        setQcountRelease(qcount + 1);
    }

    /** Takes the buffer's head; lock held and qcount &gt; 0 checked. */
    Object bufrecv() {
        int i = recvx;
        Object v = buf[i];
        buf[i] = null;
        if (++recvx == dataqsiz) {
            recvx = 0;
        }
        setQcountRelease(qcount - 1);
        return v;
    }

    /**
     * Receives a value: returns it, or {@link #CLOSED_EMPTY} if the channel is closed and drained,
     * or (only with {@code block == false}) {@link #NOT_READY} if a receive would block.
     *
     * <p>Go: chan.go chanrecv
     */
    Object chanrecv(boolean block) {
        if (isNil) {
            if (!block) {
                return NOT_READY;
            }
            parkForever(WaitReason.CHAN_RECEIVE_NIL_CHAN);
        }
        if (bubble != null && Bubble.current() != bubble) {
            throw new PanicError("receive on synctest channel from outside bubble");
        }

        if (timer != null) {
            timer.maybeRunChan();
        }

        // Fast path: a failed non-blocking receive without the lock.
        if (!block && empty()) {
            // Not ready, then not closed: at the moment of the first observation the channel was
            // neither ready nor closed (a closed channel cannot reopen). The order matters.
            if (closedAcquire() == 0) {
                return NOT_READY;
            }
            // Irreversibly closed: re-check for data that arrived between the two checks above.
            if (empty()) {
                return CLOSED_EMPTY;
            }
        }

        lock();
        try {
            if (closed != 0) {
                if (qcount == 0) {
                    unlock();
                    return CLOSED_EMPTY;
                }
                // Closed, but the buffer still has data: drain it first.
            } else {
                Sudog sg = sendq.dequeue(parker);
                if (sg != null) {
                    // A sender is waiting. Unbuffered: take its value directly. Buffered (so full):
                    // take the head and put the sender's value at the tail, the same slot.
                    return recv(sg, null);
                }
            }

            if (qcount > 0) {
                Object v = bufrecv();
                unlock();
                return v;
            }

            if (!block) {
                unlock();
                return NOT_READY;
            }

            // No sender available: block on this channel.
            Object gp = parker.current();
            if (gp == null) {
                unlock();
                throw notInGoroutine("receive from");
            }
            Sudog mysg = waiter(gp, CLOSED_EMPTY); // Go's success == false until a sender writes elem
            if (parker.blockProfileRate(gp) > 0) {
                mysg.startBlockProfile(parker.nanotime());
            }
            recvq.enqueue(mysg);
            if (timer != null) {
                timer.blockTimerChan(); // a timer channel is in a heap only while someone waits on it
            }
            parker.park(
                    gp,
                    CHAN_PARK_COMMIT,
                    this,
                    bubble != null ? WaitReason.SYNCTEST_CHAN_RECEIVE : WaitReason.CHAN_RECEIVE,
                    this);
            if (timer != null) {
                timer.unblockTimerChan();
            }

            // Someone woke us up. (Only this and mysg are live across the park: each live value is
            // a slot in the frame that a parked receiver's stack chunk keeps.)
            if (mysg.releasetime() > 0) {
                parker.blockevent(
                        mysg.releasetime() - mysg.blockstart(), 1); // + this frame: send/recv, as Go's chansend1
            }
            Object v = mysg.elem; // the value, or the marker: closechan's, or ours if nobody sent
            mysg.release();
            return v;
        } catch (PanicError | IllegalStateException | GortFatalError e) {
            throw e; // the operation's own outcomes, thrown with the lock released
        } catch (Throwable t) {
            lockWord = t instanceof StackOverflowError ? SpinLock.BROKEN_STACK : SpinLock.BROKEN; // no call: SpinLock
            throw SpinLock.died(this, t, "chanrecv");
        }
    }

    /**
     * Completes a receive with the dequeued sender sg, releases the lock(s), readies the sender and
     * returns the received value. Lock held on entry.
     *
     * <p>Go: chan.go recv
     */
    Object recv(Sudog sg, Select sel) {
        Object v;
        if (dataqsiz == 0) {
            v = sg.elem;
        } else {
            // Queue is full: take the head; the sender's value goes to the tail, which is the same slot.
            int i = recvx;
            v = buf[i];
            buf[i] = sg.elem;
            if (++recvx == dataqsiz) {
                recvx = 0;
            }
            sendx = recvx; // c.sendx = (c.sendx+1) % c.dataqsiz
        }
        sg.elem = null;
        Object gp = sg.g;
        if (sg.releasetime() != 0) {
            sg.setReleasetime(parker.nanotime());
        }
        if (sel == null) {
            unlock();
        } else {
            sel.selunlock();
        }
        parker.setParam(gp, sg);
        parker.ready(gp);
        return v;
    }

    /**
     * Closes the channel: every blocked receiver gets (zero, not ok), every blocked sender will
     * panic. They are readied after the lock is dropped, receivers' list first, in LIFO order, so
     * the first receiver that waited ends up in runnext.
     *
     * <p>Go: chan.go closechan
     */
    void closechan() {
        if (isNil) {
            throw new PanicError("close of nil channel");
        }
        if (bubble != null && Bubble.current() != bubble) {
            throw new PanicError("close of synctest channel from outside bubble");
        }
        lock();
        try {
            closechanLocked();
        } catch (PanicError | IllegalStateException | GortFatalError e) {
            throw e;
        } catch (Throwable t) {
            lockWord = t instanceof StackOverflowError ? SpinLock.BROKEN_STACK : SpinLock.BROKEN; // no call: SpinLock
            throw SpinLock.died(this, t, "closechan");
        }
    }

    /** closechan from the lock on (held on entry), readying included; see {@link #chansend}. */
    private void closechanLocked() {
        if (closed != 0) {
            unlock();
            throw new PanicError("close of closed channel");
        }
        CLOSED.setRelease(this, 1);

        Sudog glist = null;
        // release all readers
        for (; ; ) {
            Sudog sg = recvq.dequeue(parker);
            if (sg == null) {
                break;
            }
            sg.elem = CLOSED_EMPTY; // Go: sg.elem = nil; sg.success = false
            if (sg.releasetime() != 0) {
                sg.setReleasetime(parker.nanotime());
            }
            parker.setParam(sg.g, sg);
            sg.next = glist; // free once dequeued: closechan's list
            glist = sg;
        }
        // release all writers (they will panic)
        for (; ; ) {
            Sudog sg = sendq.dequeue(parker);
            if (sg == null) {
                break;
            }
            sg.elem = CLOSED_EMPTY; // Go: sg.elem = nil; sg.success = false
            if (sg.releasetime() != 0) {
                sg.setReleasetime(parker.nanotime());
            }
            parker.setParam(sg.g, sg);
            sg.next = glist; // free once dequeued: closechan's list
            glist = sg;
        }
        unlock();

        // Ready all waiters now that we've dropped the channel lock. Read each sudog before its
        // goroutine is readied: once it runs, it reuses the sudog (with next null, as dequeued).
        while (glist != null) {
            Sudog sg = glist;
            glist = sg.next;
            sg.next = null;
            parker.ready(sg.g);
        }
    }

    private void parkForever(WaitReason reason) {
        Object gp = parker.current();
        if (gp == null) {
            throw notInGoroutine(reason == WaitReason.CHAN_SEND_NIL_CHAN ? "send on" : "receive from");
        }
        parker.park(gp, null, null, reason, this);
        throw Fatal.fatal(Scheduler.current(), "unreachable");
    }

    private IllegalStateException notInGoroutine(String op) {
        return new IllegalStateException(
                "gort: a blocking " + op + " " + this + " needs a goroutine (use Go.run / Go.go)");
    }

    // ------------------------------------------------------------------------------------------
    // Dumps.

    @Override
    public String toString() {
        return isNil ? "chan(nil)" : "chan#" + id;
    }

    /** The sort key: {@code chan#N} in dumps and traces. */
    @Override
    public long objectId() {
        return id;
    }

    /** {@code chan#7 (len 0/cap 0; receivers waiting: G1; senders waiting: none)}, read racily. */
    @Override
    public String describe() {
        if (isNil) {
            return "chan(nil) (nobody can ever send or receive on it)";
        }
        StringBuilder sb = new StringBuilder(toString())
                .append(" (len ")
                .append(len())
                .append("/cap ")
                .append(dataqsiz);
        if (isClosed()) {
            sb.append(", closed");
        }
        sb.append("; receivers waiting: ");
        recvq.appendWaiters(sb, Chan::waiterName);
        sb.append("; senders waiting: ");
        sendq.appendWaiters(sb, Chan::waiterName);
        return sb.append(')').toString();
    }

    static String waiterName(Object w) {
        return w instanceof G g ? "G" + g.goid : String.valueOf(w);
    }
}
