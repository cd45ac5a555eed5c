package dev.gort;

import dev.gort.internal.GoParker;
import dev.gort.internal.ParkCommit;
import dev.gort.internal.Parker;
import dev.gort.internal.SpinLock;
import dev.gort.internal.Sudog;
import dev.gort.runtime.Bubble;
import dev.gort.runtime.Fatal;
import dev.gort.runtime.GortFatalError;
import dev.gort.runtime.Scheduler;
import dev.gort.runtime.WaitReason;
import dev.gort.runtime.WaitTarget;
import java.util.Arrays;
import java.util.function.BiConsumer;
import java.util.function.Consumer;

/**
 * Go's {@code select} statement, in two forms.
 *
 * <p><b>Lambda per case</b> (reads like Go; allocates the case objects):
 * <pre>{@code
 * Select.select(
 *     Select.recv(in, v -> process(v)),             // case v := <-in:
 *     Select.recv2(done, (v, ok) -> quit = true),   // case v, ok := <-done:
 *     Select.send(out, x, () -> sent++),            // case out <- x:
 *     Select.defaultCase(() -> idle()));            // default:
 * Select.block();                                   // select {}
 * }</pre>
 *
 * <p><b>Reusable, allocation-free</b> (for hot loops; one goroutine at a time): register the cases
 * once, then {@link #await()} repeatedly; the chosen case's index is returned, and the sudogs and order arrays
 * are reused.
 * <pre>{@code
 * Select s = new Select();
 * int rIn = s.addRecv(in), wOut = s.addSend(out, null);
 * for (;;) {
 *     s.setValue(wOut, next);
 *     int i = s.await();                  // s.poll() returns -1 instead of blocking (default)
 *     if (i == rIn) { Object v = s.value(); boolean ok = s.ok(); ... }
 * }
 * }</pre>
 *
 * <p>Semantics are Go's {@code selectgo}: nil channels are dropped; the ready cases are polled in a
 * uniformly random order (inside-out Fisher-Yates with the M's {@code cheaprandn}); the channels
 * are locked in a fixed total order (their unique sort keys, duplicates adjacent and locked once);
 * pass 1 takes the first ready case; pass 2 enqueues one sudog per case and parks; whichever waker
 * first wins the goroutine's {@code selectDone} wakes it, and pass 3 dequeues the other sudogs. A
 * send case on a closed channel panics, even with a default case.
 *
 * <p>Go: runtime/select.go selectgo, block; cmd/compile's select lowering
 */
public final class Select implements WaitTarget {
    static final byte RECV = 0;
    static final byte SEND = 1;

    // Cases, by index. Owner goroutine only, plain (dumps read them racily).
    private Chan<?>[] chans;
    private Object[] elems;
    private byte[] kinds;
    private Sudog[] sudogs;
    private int ncases;
    // Scratch for one selectgo: pollorder and lockorder (Go: order0), the count of non-nil cases.
    private int[] pollorder;
    private int[] lockorder;
    private int norder;
    // Result of the last select.
    private Object recvValue;
    private boolean recvOK;

    public Select() {
        this(4);
    }

    public Select(int capacity) {
        int n = Math.max(1, capacity);
        chans = new Chan<?>[n];
        elems = new Object[n];
        kinds = new byte[n];
        sudogs = new Sudog[n];
        pollorder = new int[n];
        lockorder = new int[n];
    }

    // ------------------------------------------------------------------------------------------
    // Reusable form.

    /** Adds {@code case <-c} and returns its index. A null or nil channel is never chosen. */
    public int addRecv(Chan<?> c) {
        return add(c, RECV, null);
    }

    /** Adds {@code case c <- v} and returns its index. */
    public <T> int addSend(Chan<T> c, T v) {
        return add(c, SEND, v);
    }

    /** Replaces case i's channel (null or {@link Chan#nil()} disables the case, as in Go). */
    public void setChan(int i, Chan<?> c) {
        check(i);
        chans[i] = c;
    }

    /** Replaces the value a send case sends. */
    public void setValue(int i, Object v) {
        check(i);
        if (kinds[i] != SEND) {
            throw new IllegalArgumentException("case " + i + " is not a send");
        }
        elems[i] = v;
    }

    /** Removes every case. */
    public void clear() {
        Arrays.fill(chans, 0, ncases, null);
        Arrays.fill(elems, 0, ncases, null);
        ncases = 0;
        recvValue = null;
    }

    public int cases() {
        return ncases;
    }

    /**
     * Runs the select: blocks until one case can proceed, performs it, and returns its index.
     * (Named {@code await} so that {@code Select.select()} stays the static {@code select {}}.)
     */
    public int await() {
        return selectgo(true);
    }

    /** As {@link #await()} with a {@code default} case: returns -1 at once if no case is ready. */
    public int poll() {
        return selectgo(false);
    }

    /** The value received by the last select's chosen receive case (null if closed). */
    @SuppressWarnings("unchecked")
    public <T> T value() {
        return (T) recvValue;
    }

    /** The {@code ok} of the last select's chosen receive case: false if the channel was closed. */
    public boolean ok() {
        return recvOK;
    }

    private int add(Chan<?> c, byte kind, Object v) {
        int i = ncases;
        if (i == chans.length) {
            int n = i * 2;
            chans = Arrays.copyOf(chans, n);
            elems = Arrays.copyOf(elems, n);
            kinds = Arrays.copyOf(kinds, n);
            sudogs = Arrays.copyOf(sudogs, n);
            pollorder = new int[n];
            lockorder = new int[n];
        }
        chans[i] = c;
        kinds[i] = kind;
        elems[i] = v;
        ncases = i + 1;
        return i;
    }

    private void check(int i) {
        if (i < 0 || i >= ncases) {
            throw new IndexOutOfBoundsException("no select case " + i);
        }
    }

    // ------------------------------------------------------------------------------------------
    // Lambda form.

    /** One case of {@link #select(Case...)}. */
    public static final class Case {
        final Chan<?> c;
        final int kind; // 0 recv, 1 send, 2 recv2, 3 default
        final Object value;
        final Object body;

        private Case(Chan<?> c, int kind, Object value, Object body) {
            this.c = c;
            this.kind = kind;
            this.value = value;
            this.body = body;
        }
    }

    /**
     * {@code case v := <-c: body(v)}.
     *
     * <p>A method reference to an overloaded method that also has a no-argument form, such as
     * {@code System.out::println}, matches both this and {@link #recv(Chan, Runnable)}, and javac
     * reports the call as ambiguous: write the lambda, {@code v -> System.out.println(v)}.
     */
    public static <T> Case recv(Chan<T> c, Consumer<? super T> body) {
        return new Case(c, 0, null, body);
    }

    /** {@code case <-c: body()}. */
    public static Case recv(Chan<?> c, Runnable body) {
        return new Case(c, 0, null, body);
    }

    /** {@code case v, ok := <-c: body(v, ok)}. */
    public static <T> Case recv2(Chan<T> c, BiConsumer<? super T, Boolean> body) {
        return new Case(c, 2, null, body);
    }

    /** {@code case c <- v: body()}. */
    public static <T> Case send(Chan<T> c, T v, Runnable body) {
        return new Case(c, 1, v, body);
    }

    /** {@code default: body()}. */
    public static Case defaultCase(Runnable body) {
        return new Case(null, 3, null, body);
    }

    /**
     * Runs a select statement: performs one ready case (chosen uniformly at random among the ready
     * ones) and then its body; with no ready case, runs the default body if there is one, else
     * blocks. No cases at all is {@code select {}}.
     */
    @SuppressWarnings("unchecked")
    public static void select(Case... cases) {
        Select s = new Select(cases.length);
        Runnable dflt = null;
        boolean hasDefault = false;
        int[] map = new int[cases.length];
        for (int i = 0; i < cases.length; i++) {
            Case k = cases[i];
            if (k.kind == 3) {
                if (hasDefault) {
                    throw new IllegalArgumentException("multiple defaults in select");
                }
                hasDefault = true;
                dflt = (Runnable) k.body;
                continue;
            }
            map[s.ncases] = i;
            s.add(k.c, k.kind == 1 ? SEND : RECV, k.value);
        }
        if (s.ncases == 0 && !hasDefault) {
            block();
        }
        int chosen = s.selectgo(!hasDefault);
        if (chosen < 0) {
            if (dflt != null) {
                dflt.run();
            }
            return;
        }
        Case k = cases[map[chosen]];
        switch (k.kind) {
            case 1 -> ((Runnable) k.body).run();
            case 2 -> ((BiConsumer<Object, Boolean>) k.body).accept(s.recvValue, s.recvOK);
            default -> {
                if (k.body instanceof Runnable r) {
                    r.run();
                } else {
                    ((Consumer<Object>) k.body).accept(s.recvValue);
                }
            }
        }
    }

    /**
     * {@code select {}}: blocks the goroutine forever.
     *
     * <p>Go: select.go block
     */
    public static void block() {
        Parker parker = GoParker.INSTANCE;
        Object gp = parker.current();
        if (gp == null) {
            throw new IllegalStateException("gort: select {} needs a goroutine");
        }
        parker.park(gp, null, null, WaitReason.SELECT_NO_CASES, null);
        throw Fatal.fatal(Scheduler.current(), "unreachable");
    }

    // ------------------------------------------------------------------------------------------
    // selectgo.

    /** Locks every distinct channel in lock order. Go: select.go sellock. */
    private void sellock() {
        Chan<?> c = null;
        for (int i = 0; i < norder; i++) {
            Chan<?> c0 = chans[lockorder[i]];
            if (c0 != c) {
                c = c0;
                c.lock();
            }
        }
    }

    /** Unlocks them in reverse lock order, each duplicate once. Go: select.go selunlock. */
    void selunlock() {
        for (int i = norder - 1; i >= 0; i--) {
            Chan<?> c = chans[lockorder[i]];
            if (i > 0 && c == chans[lockorder[i - 1]]) {
                continue; // will unlock it on the next iteration
            }
            c.unlock();
        }
    }

    /**
     * selparkcommit: the parked select's M drops the channel locks, in reverse lock order ({@link
     * #selunlock}): once a channel is unlocked, a waker may dequeue and wake, and the select may
     * resume on another M. Go walks the goroutine's sudogs for their channels (sg.c) because it
     * must not touch the select's frame, which a stack copy may move; here the select's own channel
     * list is read instead (one field less on every sudog, issue 19). It cannot change under us: the
     * woken select takes every one of these locks again (sellock) before it does anything else, and
     * lockorder[0]'s, the last one released, is the first it waits for. (Go releases them in lock
     * order; which goes first does not matter: the woken select cannot go on before all are.)
     */
    static final ParkCommit<Select> SEL_PARK_COMMIT = sel -> {
        sel.selunlock();
        return true;
    };

    /**
     * The select statement: returns the index of the case performed, or -1 when
     * {@code block == false} and no case is ready (the default). For a receive case the value and ok
     * are left in {@link #value()} and {@link #ok()}.
     *
     * <p>Go: select.go selectgo
     */
    int selectgo(boolean block) {
        final int n = ncases;
        final Chan<?>[] chans = this.chans;
        final byte[] kinds = this.kinds;
        final int[] pollorder = this.pollorder;
        final int[] lockorder = this.lockorder;
        recvValue = null;
        recvOK = false;

        // Omit cases without channels from the poll and lock orders; generate a permuted poll order
        // of the rest.
        Parker parker = null;
        int norder = 0;
        boolean allSynctest = true; // every channel is a synctest bubble's (Go: allSynctest)
        for (int i = 0; i < n; i++) {
            Chan<?> c = chans[i];
            if (c == null || c.isNil) {
                continue;
            }
            if (c.bubble != null) {
                if (Bubble.current() != c.bubble) {
                    throw new PanicError("select on synctest channel from outside bubble");
                }
            } else {
                allSynctest = false;
            }
            if (parker == null) {
                parker = c.parker;
            } else if (c.parker != parker) {
                throw new IllegalArgumentException("select over channels of different runtimes/parkers");
            }
            if (c.timer != null) {
                c.timer.maybeRunChan(); // a due timer channel value is sent lazily (Go 1.23)
            }
            int j = parker.cheaprandn(norder + 1);
            pollorder[norder] = pollorder[j];
            pollorder[j] = i;
            norder++;
        }
        this.norder = norder;
        if (parker == null) {
            parker = GoParker.INSTANCE;
        }

        // Sort the cases by channel sort key to get the locking order: a heap sort (n log n,
        // constant space), inserting in poll order so that cases on the same channel are permuted.
        for (int i = 0; i < norder; i++) {
            int j = i;
            int ci = pollorder[i];
            long key = chans[ci].id;
            while (j > 0 && chans[lockorder[(j - 1) / 2]].id < key) {
                int k = (j - 1) / 2;
                lockorder[j] = lockorder[k];
                j = k;
            }
            lockorder[j] = ci;
        }
        for (int i = norder - 1; i >= 0; i--) {
            int o = lockorder[i];
            long key = chans[o].id;
            lockorder[i] = lockorder[0];
            int j = 0;
            for (; ; ) {
                int k = j * 2 + 1;
                if (k >= i) {
                    break;
                }
                if (k + 1 < i && chans[lockorder[k]].id < chans[lockorder[k + 1]].id) {
                    k++;
                }
                if (key < chans[lockorder[k]].id) {
                    lockorder[j] = lockorder[k];
                    j = k;
                    continue;
                }
                break;
            }
            lockorder[j] = o;
        }
        if (DEBUG_CHECKS) {
            for (int i = 0; i + 1 < norder; i++) {
                if (chans[lockorder[i]].id > chans[lockorder[i + 1]].id) {
                    throw Fatal.fatal(Scheduler.current(), "select: broken sort");
                }
            }
        }

        try {
            // lock all the channels involved in the select
            sellock();

            // pass 1 - look for something already waiting
            for (int i = 0; i < norder; i++) {
                int casi = pollorder[i];
                Chan<?> c = chans[casi];
                if (kinds[casi] == SEND) {
                    if (c.isClosed()) {
                        selunlock();
                        throw new PanicError("send on closed channel");
                    }
                    Sudog sg = c.recvq.dequeue(parker);
                    if (sg != null) {
                        // can send to a sleeping receiver (sg)
                        c.send(sg, elems[casi], this);
                        return casi;
                    }
                    if (c.lenLocked() < c.dataqsiz) {
                        // can send to buffer
                        c.bufsend(elems[casi]);
                        selunlock();
                        return casi;
                    }
                } else {
                    Sudog sg = c.sendq.dequeue(parker);
                    if (sg != null) {
                        // can receive from sleeping sender (sg)
                        recvValue = c.recv(sg, this);
                        recvOK = true;
                        return casi;
                    }
                    if (c.lenLocked() > 0) {
                        // can receive from buffer
                        recvValue = c.bufrecv();
                        recvOK = true;
                        selunlock();
                        return casi;
                    }
                    if (c.isClosed()) {
                        // read at end of closed channel
                        selunlock();
                        recvValue = null;
                        recvOK = false;
                        return casi;
                    }
                }
            }

            if (!block) {
                selunlock();
                return -1;
            }

            // pass 2 - enqueue on all chans
            Object gp = parker.current();
            if (gp == null) {
                selunlock();
                throw new IllegalStateException("gort: a blocking select needs a goroutine (use Go.run / Go.go)");
            }
            long t0 = 0;
            if (parker.blockProfileRate(gp) > 0) {
                t0 = parker.nanotime();
            }
            Sudog head = null;
            Sudog tail = null;
            for (int i = 0; i < norder; i++) {
                int casi = lockorder[i];
                Chan<?> c = chans[casi];
                Sudog sg = sudogs[casi];
                if (sg == null) {
                    sg = new Sudog.OfSelect();
                    sudogs[casi] = sg;
                }
                sg.g = gp;
                // a receive's elem starts as the closed marker: Go's success == false until a sender writes it
                sg.elem = kinds[casi] == SEND ? elems[casi] : Chan.CLOSED_EMPTY;
                sg.waitlink = null;
                sg.setReleasetime(t0 != 0 ? -1 : 0);
                // Construct the waiting list in lock order.
                if (head == null) {
                    head = sg;
                } else {
                    tail.waitlink = sg;
                }
                tail = sg;
                if (kinds[casi] == SEND) {
                    c.sendq.enqueue(sg);
                } else {
                    c.recvq.enqueue(sg);
                }
                if (c.timer != null) {
                    c.timer.blockTimerChan();
                }
            }

            // wait for someone to wake us up
            parker.setParam(gp, null);
            // Every channel selected on is in the goroutine's bubble: it counts as durably blocked.
            WaitReason reason =
                    allSynctest && Bubble.current() != null ? WaitReason.SYNCTEST_SELECT : WaitReason.SELECT;
            parker.park(gp, norder == 0 ? null : SEL_PARK_COMMIT, this, reason, this);

            sellock();

            parker.clearSelectDone(gp);
            Object param = parker.param(gp);
            parker.setParam(gp, null);

            // pass 3 - dequeue from unsuccessful chans, otherwise they stack up on quiet channels;
            // record the successful case. The sudogs are linked in lock order: the i-th stands for
            // case lockorder[i].
            int casi = -1;
            boolean caseSuccess = false;
            Object value = null;
            long caseReleaseTime = -1;
            Sudog sg = head;
            for (int i = 0; i < norder; i++) {
                Sudog next = sg.waitlink;
                int k = lockorder[i];
                if (chans[k].timer != null) {
                    chans[k].timer.unblockTimerChan();
                }
                if (sg == param) {
                    // sg has already been dequeued by the goroutine that woke us up.
                    casi = k;
                    caseSuccess = sg.elem != Chan.CLOSED_EMPTY; // closechan's marker: Go's success == false
                    value = sg.elem;
                    if (sg.releasetime() > 0) {
                        caseReleaseTime = sg.releasetime();
                    }
                } else if (kinds[k] == SEND) {
                    chans[k].sendq.dequeueSudoG(sg);
                } else {
                    chans[k].recvq.dequeueSudoG(sg);
                }
                sg.waitlink = null;
                sg.release();
                sg = next;
            }

            if (casi < 0) {
                selunlock();
                throw Fatal.fatal(Scheduler.current(), "selectgo: bad wakeup");
            }
            selunlock();
            if (caseReleaseTime > 0) {
                parker.blockevent(caseReleaseTime - t0, 1); // + this frame: the select the user called
            }

            if (kinds[casi] == SEND) {
                if (!caseSuccess) {
                    throw new PanicError("send on closed channel");
                }
            } else {
                recvValue = caseSuccess ? value : null;
                recvOK = caseSuccess;
            }
            return casi;
        } catch (PanicError | IllegalStateException | GortFatalError e) {
            throw e; // the select's own outcomes, thrown with every lock released
        } catch (Throwable t) {
            // Before any call (see SpinLock): every channel of the select may be locked.
            for (int i = 0; i < norder; i++) {
                chans[lockorder[i]].lockWord =
                        t instanceof StackOverflowError ? SpinLock.BROKEN_STACK : SpinLock.BROKEN;
            }
            throw SpinLock.died(this, t, "selectgo");
        }
    }

    static final boolean DEBUG_CHECKS = Boolean.getBoolean("gort.debug.checks");

    // ------------------------------------------------------------------------------------------
    // Dumps.

    /** {@code select on chan#3 (recv), chan#4 (send)}, read racily. */
    @Override
    public String describe() {
        StringBuilder sb = new StringBuilder("select on ");
        int n = ncases;
        boolean first = true;
        for (int i = 0; i < n; i++) {
            Chan<?> c = chans[i];
            if (c == null || c.isNil) {
                continue;
            }
            if (!first) {
                sb.append(", ");
            }
            first = false;
            sb.append(c.describe()
                    .replaceFirst("^(chan#\\d+) \\(", "$1 (" + (kinds[i] == SEND ? "send" : "recv") + "; "));
        }
        if (first) {
            sb.append("nothing (only nil channels)");
        }
        return sb.toString();
    }
}
