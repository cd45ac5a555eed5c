package dev.gort.runtime.trace;

import dev.gort.runtime.Describable;
import dev.gort.runtime.G;
import dev.gort.runtime.M;
import dev.gort.runtime.P;
import dev.gort.runtime.Scheduler;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * gort's execution tracer: one per runtime, off by default.
 *
 * <p><b>Free when off.</b> Every hook in the scheduler is one line, {@code if (trace.on) trace.x(...)}:
 * {@link #on} is a volatile boolean of a final field, one plain load on x86 and a branch the CPU
 * predicts. Nothing else runs when tracing is off.
 *
 * <p><b>Lock-free when on.</b> Each M writes packed records (16 bytes for nearly every event: a
 * head long with the code, small ids and a stamp delta, one long of arguments; see {@link TraceBuf})
 * into its own {@link TraceBuf} (found
 * through {@code M.traceBuf}, a field only that M writes); threads that are not Ms of this runtime
 * (sysmon, a foreign thread calling {@code go}) get a buffer of their own, keyed by their thread, or
 * keyed by their M when they are another runtime's carriers (a goroutine's ThreadLocals may be its
 * own: {@code -Dgort.threadlocals}). A record is
 * published with a release store; readers ({@link #snapshot}, {@link #stop}) read the published
 * prefix of every buffer, unpack it and merge by timestamp. The chunks are humongous {@code long[]}s, which G1
 * allocates outside the young generation (never copied); Agrona is used for the per-buffer set of objects already described
 * ({@code LongHashSet}; its UnsafeBuffer would need an extra --add-exports on every traced JVM).
 *
 * <p><b>Timestamps.</b> The decoder merges the buffers by timestamp, equal stamps (and so every
 * event of one buffer) in buffer order. A stamp therefore needs only be (1) non-decreasing in its
 * buffer and (2) later than every cause of its event recorded in another buffer. A fresh
 * reading of {@link TraceClock} (the CPU's time-stamp counter where the kernel keeps time with it,
 * ~10 ns here, else {@code System.nanoTime()}, ~27 ns; either way the most expensive part of a
 * record) gives both, through {@code clockProducer} (a plain read, for events stamped before what
 * they publish) or {@code clock} (an ordered read, for events stamped after what they consumed),
 * clamped to the buffer's previous stamp; an event
 * may instead reuse its M's previous stamp ({@code TraceBuf.lastTs}) when every cause it has is
 * earlier in the same buffer, where buffer order already keeps it first:
 * <ul>
 *   <li>a G started from this P's own runnext or ring, or resumed in place: only the P's owner puts
 *       Gs there, and a P that changed hands did so in an event this M stamped after taking it;
 *   <li>an unblock of a G whose latest event this very buffer recorded ({@link G#traceBuf()}, set by
 *       every event that names a G; in the ping-pong at GOMAXPROCS=1, its park on this M).
 * </ul>
 * Every other event reads the clock: events that consume what another M produced (steals,
 * global-queue takes, P acquisitions, the unblock of a G parked on another M) after the consuming
 * CAS or lock, events that produce (create, spill, park) before publishing, so cause precedes
 * effect in the merge, and the flight recorder's end and window cuts keep every kept effect's
 * cause (a reused stamp is still no later than its event). Stops always read the clock, so a run
 * slice's length is exact; a reused unblock is drawn at its M's previous event, never before the
 * start of its waker's slice. The ping-pong at GOMAXPROCS=1 costs six records (48 bytes: its
 * starts, parks and unblocks are TraceBuf's one-long forms) and two clock reads per round trip ({@code TraceBuf.clockReads} counts them; {@code TraceClockTest}). A
 * stamp is stored as a delta from its buffer's previous one, so reusing it costs nothing in the
 * record either; {@link G#traceBuf()} is stored only when it changes (a reference store's GC write
 * barrier costs more than the load).
 *
 * <p>Why stops are not sampled (issue 17 weighed a clock sample every K-th event per M, the
 * records between samples interpolated by the decoder): a reused stamp is a sound lower bound for
 * ordering (an effect on another M reads the clock after its cause happened), but it leaves the
 * slice's length unknown, and a slice that did W ns of work must span W ns ({@link
 * TraceValidator}'s "CPU time vs work", which the traced workloads check). Only a time source
 * that bounds how long a slice ran could license skipping its stop's read, and none is cheaper
 * than a read of the clock itself (sysmon's {@code coarseNanotime} is up to 10 ms stale while it
 * backs off; JFR's tick counter costs what {@code System.nanoTime()} costs here without
 * experimental flags), so one read per switch stays, made cheaper instead: {@link TraceClock}'s
 * counter.
 *
 * <p>Enable with {@code -Dgort.trace=<file>} ({@code .json}, {@code .json.gz}, {@code .html}, {@code .pftrace} or Go's {@code .trace}: written
 * when the runtime exits, or on the way out of a panic or fatal error), {@code -Dgort.trace.window=<ms>}
 * for a flight-recorder window, or the API ({@link #start}, {@link #stop}). JFR events
 * ({@link JfrEvents}) ride on the same hooks: recording {@code gort.*} events in a JFR recording turns
 * the hooks on without buffering anything.
 *
 * <p>Go: runtime/trace.go, traceevent.go, traceruntime.go (traceAcquire's inlinable fast check)
 */
public final class Tracer {
    /** The hooks' one check. Written by start/stop and by the JFR gate; read by every hook. */
    public volatile boolean on;

    private final Scheduler sched;
    /** The buffering session, or null when only JFR is on. Volatile: hooks read it after {@link #on}. */
    private volatile Session session;
    /** JFR events wanted (set by {@link JfrEvents}' recorder listener). */
    volatile boolean jfr;
    /**
     * File to write at exit (the runtime's {@code Config.Settings.traceFile}, -Dgort.trace), or null.
     * Written by {@link #onStart} (the thread starting the runtime, before any M exists); read at exit.
     */
    private volatile String exitFile;
    /**
     * What the layers above started for this runtime ({@link dev.gort.runtime.RuntimeObserver}: the
     * MXBean, the debug server), stopped at exit. Written by {@link #onStart} (the thread starting
     * the runtime) and by the exit, under {@link #exitLock} for the latter; read by
     * {@link #debugPort} (volatile, an immutable list).
     */
    private volatile java.util.List<dev.gort.runtime.RuntimeObserver.Running> running = java.util.List.of();
    /** A JFR-only pseudo session: per-M state without recording. */
    private final Session jfrOnly;
    /** Serialises {@link #onExit}/{@link #onHalt}: the trace file is written once, by whoever comes first. */
    private final java.util.concurrent.locks.ReentrantLock exitLock = new java.util.concurrent.locks.ReentrantLock();
    /** Set by the first exit; guarded by {@link #exitLock}. */
    private boolean exited;

    /** A disabled tracer for queues built outside a runtime (unit tests). Immutable: never turned on. */
    public static final Tracer NOOP = new Tracer(null);

    /**
     * A tracer for {@code sched}. Only stores its arguments: a runtime builds its tracer while it is
     * itself being built, so nothing here may look at {@code sched} or publish it (JFR, the dump
     * signal, JMX and the debug server are started by {@link #onStart}, once the runtime is whole).
     */
    public Tracer(Scheduler sched) {
        this.sched = sched;
        this.jfrOnly = sched == null ? null : new Session(this, 0, false, "jfr");
    }

    /** The port of the debug server started by {@code -Dgort.debug.http}, or -1 if none runs. */
    public int debugPort() {
        for (dev.gort.runtime.RuntimeObserver.Running r : running) {
            int port = r.debugPort();
            if (port >= 0) {
                return port;
            }
        }
        return -1;
    }

    /** Options for {@link #start(Options)}. */
    public static final class Options {
        long windowMs;
        String workload = "";
        int level = 2;

        /**
         * 2 (default): everything. 1: without the M-level events (spinning start/stop, M park/unpark),
         * which an idle spinning M emits in bursts; the G and queue events the validator needs stay.
         */
        public Options level(int level) {
            this.level = level;
            return this;
        }

        /**
         * Flight-recorder mode: the trace holds the last {@code ms} milliseconds up to its last event (0:
         * everything), or less where an M wrote more than its {@code ms/10} chunks of 1.5 MB hold.
         */
        public Options window(long ms) {
            this.windowMs = ms;
            return this;
        }

        /** A name shown in the trace header (e.g. "fan-out"). */
        public Options workload(String name) {
            this.workload = name == null ? "" : name;
            return this;
        }
    }

    /** Starts recording (everything, no window). */
    public void start() {
        start(new Options());
    }

    /**
     * Starts recording; a running session is stopped and discarded first. With the world stopped,
     * as Go's StartTrace: a snapshot of the Ps and goroutines taken while Ms run could miss a
     * transition between it and the hooks' start (an M acquiring an idle P: no ProcStart; a
     * goroutine created in between: no GoCreate), which Go's trace readers refuse. What the
     * stopped world does not stop, threads that hold no P, the snapshot excludes by waiting out
     * their trace sections ({@link #sectionBegin}). The tracer's lock is taken inside, with the
     * world stopped: stopping the world may Gosched, which must not carry a monitor to another
     * carrier.
     */
    public void start(Options o) {
        Scheduler s = sched;
        if (s == null) {
            startLocked(o);
        } else {
            s.withWorldStopped(() -> startLocked(o));
        }
    }

    private synchronized void startLocked(Options o) {
        TraceClock.init(); // here, not in the first hook: see init
        // No section runs from here to the end of the snapshot (see sectionBegin): wait out those
        // under way; new ones wait for snapshotting to clear.
        snapshotting = true;
        try {
            if (sections.get() != 0) {
                startsThatWaited++;
                for (int spins = 0; sections.get() != 0; spins++) {
                    backOff(spins);
                }
            }
            startSession(o);
        } finally {
            snapshotting = false;
        }
    }

    private void startSession(Options o) {
        // 8-16 bytes per event (TraceBuf's compact forms), 98000-196000 events per 1.5 MB chunk (10-20 ms of a busy
        // M's ping-pong, whose records are all one long): a window of W ms keeps W/10 chunks per M, a memory bound
        // (Go's FlightRecorderConfig.MaxBytes) that holds at least W ms of all but the busiest Ms; the decoder
        // then keeps exactly the last W ms of what the chunks hold (Go's MinAge is a lower bound: it may keep more).
        int maxChunks = o.windowMs <= 0 ? 0 : (int) Math.max(2, o.windowMs / 10);
        Session s = new Session(this, maxChunks, true, o.workload, true);
        s.level = o.level;
        s.windowNanos =
                o.windowMs <= 0 ? 0 : o.windowMs > Long.MAX_VALUE / 1_000_000 ? Long.MAX_VALUE : o.windowMs * 1_000_000;
        // Published after the snapshot: with on already true (a session running, or JFR), a hook
        // in a thread outside the runtime (a goroutine created with no P, outside any section)
        // would record into this session what the snapshot then records again ("created twice").
        s.recordInitialState(sched);
        session = s;
        on = true;
    }

    // ------------------------------------------------------------------------------------------
    // Sections: what a trace start's snapshot waits out.

    /**
     * Threads inside a {@linkplain #sectionBegin section}, outermost sections only. Incremented and
     * decremented by those threads (atomic read-modify-write); read by {@link #startLocked}.
     */
    private final AtomicInteger sections = new AtomicInteger();
    /**
     * True while {@link #startLocked} waits out the sections under way and takes its snapshot; new
     * sections wait for it to clear. Written by startLocked only (volatile); read by
     * {@link #sectionBegin}.
     */
    private volatile boolean snapshotting;
    /** Starts that found a section open ({@link #startsThatWaited}). Written by startLocked (its monitor held), volatile. */
    private volatile int startsThatWaited;
    /**
     * The section depth of a thread that is not one of this runtime's Ms (an M keeps its own:
     * {@link M#traceSectionDepth}); one per tracer, as the count is. Each thread's int is written
     * and read by that thread only, plain; the reference is immutable.
     */
    private final ThreadLocal<int[]> foreignDepth = ThreadLocal.withInitial(() -> new int[1]);

    /**
     * Opens a section: a goroutine's change of status made by a thread that holds no P (an M
     * leaving a syscall without one, sysmon, a thread outside the runtime), together with the
     * hooks that trace it, is atomic with respect to a trace start's snapshot. A start stops the
     * world, which stops every thread that holds a P, but not these: without sections, such a
     * thread could change a goroutine's status before the snapshot read it and read {@link #on}
     * after the start turned it on (an event for a change the snapshot already shows: "G leaves a
     * syscall while runnable"), or the other way round (a change the trace never shows). Inside a
     * section {@code on} does not change from off to on, so its hooks see what the snapshot saw.
     * A readying CAS may come before the section where the goroutine enters no run queue until
     * the section has ended (Scheduler.readyGlobal): the snapshot records no status for a
     * runnable goroutine in no queue, and its first event places it.
     * Nests ({@code mp}: the calling M of this runtime, or null on any other thread). Never blocks but while a
     * start takes its snapshot; what runs inside must not wait for the world to start again (a
     * P, an M's park) nor for the tracer's monitor.
     *
     * <p>The handshake is Dekker's: a section counts itself in {@link #sections}, then reads
     * {@link #snapshotting}; a start sets {@code snapshotting}, then waits for the count to drop
     * to zero. One of the two sees the other's write, so no section overlaps a snapshot, and a
     * start waits only for sections that began before it.
     *
     * <p>Go: traceruntime.go traceAcquire / traceRelease (an M's seqlock, which traceAdvance waits
     * out for the Ms that hold no P); gort's snapshot is Go 1.19's StartTrace, so one count
     * serves every thread.
     */
    public void sectionBegin(M mp) {
        if (mp != null ? mp.traceSectionDepth++ != 0 : foreignDepth.get()[0]++ != 0) {
            return; // nested: counted already
        }
        while (true) {
            sections.getAndIncrement();
            if (!snapshotting) {
                return;
            }
            sections.getAndDecrement();
            for (int spins = 0; snapshotting; spins++) {
                backOff(spins);
            }
        }
    }

    /**
     * Closes the section {@link #sectionBegin} opened on this thread ({@code mp}: as there). An end
     * with no section open is a fatal error: the count would no longer say who is inside.
     */
    public void sectionEnd(M mp) {
        int depth = mp != null ? --mp.traceSectionDepth : --foreignDepth.get()[0];
        if (depth == 0) {
            sections.getAndDecrement();
        } else if (depth < 0) {
            if (mp != null) {
                mp.traceSectionDepth = 0;
            } else {
                foreignDepth.get()[0] = 0;
            }
            throw dev.gort.runtime.Fatal.fatal(sched, "traceRelease: a trace section ended that had not begun");
        }
    }

    /** Whether a start is waiting out the sections or taking its snapshot (tests). */
    boolean snapshotting() {
        return snapshotting;
    }

    /** How many starts found a section under way and waited for it. */
    public int startsThatWaited() {
        return startsThatWaited;
    }

    /** A short spin, then the CPU to others: the waits above last a snapshot or a section. */
    private static void backOff(int spins) {
        if (spins < 64) {
            Thread.onSpinWait();
        } else {
            Thread.yield();
        }
    }

    /** Whether a buffering session is running. */
    public boolean recording() {
        Session s = session;
        return s != null && s.record;
    }

    /**
     * Stops recording and returns everything recorded (null if nothing was). After the runtime has
     * exited, first waits (up to a second) for its carriers to leave, so that the last goroutines'
     * exits are in the trace.
     */
    public synchronized Trace stop() {
        Session s = session;
        if (s == null) {
            return null;
        }
        if (sched != null && sched.exiting()) {
            long deadline = System.nanoTime() + 1_000_000_000L;
            for (M mp : sched.allm()) {
                Thread th = mp.thread();
                long left = deadline - System.nanoTime();
                if (th != Thread.currentThread() && th.isAlive() && left > 0) {
                    try {
                        th.join(Math.max(1, left / 1_000_000));
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        break;
                    }
                }
            }
        }
        session = null;
        on = jfr;
        return s.decode(sched);
    }

    /** The buffering session, or null (tests). */
    Session session() {
        return session;
    }

    /** Decodes what has been recorded so far without stopping. */
    public Trace snapshot() {
        Session s = session;
        return s == null ? null : s.decode(sched);
    }

    /**
     * Called by the runtime when it starts (Scheduler.start, just before main is created), when it
     * is fully constructed: hooks up JFR, the dump signal ({@code GODEBUG=sigtrap|sigdump}) and the
     * observers above the core ({@link dev.gort.runtime.RuntimeObserver}: the MXBean for
     * {@code -Dgort.jmx=true}, the debug server for {@code -Dgort.debug.http}), then starts
     * {@code -Dgort.trace}'s recording.
     */
    public void onStart() {
        if (sched == null) {
            return;
        }
        JfrEvents.register(this);
        dev.gort.runtime.DumpSignal.register(sched);
        dev.gort.runtime.Config.Settings st = sched.config().settings();
        exitFile = st.traceFile();
        java.util.List<dev.gort.runtime.RuntimeObserver.Running> started = new java.util.ArrayList<>();
        for (dev.gort.runtime.RuntimeObserver o : dev.gort.runtime.RuntimeObserver.installed()) {
            dev.gort.runtime.RuntimeObserver.Running r = o.started(sched);
            if (r != null) {
                started.add(r);
            }
        }
        running = java.util.List.copyOf(started);
        if (exitFile != null && session == null) {
            start(new Options()
                    .window(st.traceWindowMs())
                    .workload(st.traceWorkload())
                    .level(st.traceLevel()));
        }
    }

    /**
     * Called once when the runtime ends normally (main returned, or the program ends by throwing):
     * unregisters the MXBean, closes the debug server and writes {@code -Dgort.trace}'s file, after
     * waiting briefly for the carriers to leave (see {@link #stop}).
     */
    public void onExit() {
        exit(false);
    }

    /**
     * Called on the way out of a panic or a fatal error, just before the JVM halts (status 2):
     * writes {@code -Dgort.trace}'s file with everything recorded up to now, as a flight recorder
     * is flushed on a crash. Carriers may still be running: the trace is cut at this moment (see
     * {@link Trace}'s decoder), so it is consistent. Waits at most {@link #HALT_WAIT_SECONDS} for
     * an exit already writing the file on another thread; never hangs the halt.
     */
    public void onHalt() {
        exit(true);
    }

    /** How long a halting thread waits for another thread's exit that is writing the trace. */
    static final long HALT_WAIT_SECONDS = 30;

    private void exit(boolean halting) {
        if (sched == null) {
            return;
        }
        // The shutdown interrupts carriers that still run a goroutine, and a halting thread may be
        // one: an interrupt must neither end its wait for another thread's write in progress (it
        // would halt the JVM under that write: no file, no message) nor fail its own write (NIO's
        // interruptible channels). Set aside until the end.
        boolean interrupted = Thread.interrupted();
        try {
            if (halting) {
                long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(HALT_WAIT_SECONDS);
                boolean locked = false;
                while (!locked) {
                    long left = deadline - System.nanoTime();
                    if (left <= 0) {
                        return;
                    }
                    try {
                        locked = exitLock.tryLock(left, java.util.concurrent.TimeUnit.NANOSECONDS);
                    } catch (InterruptedException e) {
                        interrupted = true;
                    }
                }
            } else {
                exitLock.lock();
            }
            exitLocked(halting);
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** {@link #exit} under {@link #exitLock}, which it releases. */
    private void exitLocked(boolean halting) {
        try {
            if (exited) {
                return;
            }
            exited = true;
            if (!halting) {
                for (dev.gort.runtime.RuntimeObserver.Running r : running) {
                    try {
                        r.close();
                    } catch (RuntimeException e) {
                        System.err.println("gort: error while stopping an observer: " + e);
                    }
                }
                running = java.util.List.of();
            }
            if (exitFile == null) {
                return;
            }
            Trace t;
            if (halting) {
                Session s = session; // the JVM is going down: no need to stop, just take what is there
                t = s == null ? null : s.decode(sched);
            } else {
                t = stop();
            }
            if (t == null) {
                return;
            }
            try {
                boolean written = false;
                for (dev.gort.runtime.RuntimeObserver o : dev.gort.runtime.RuntimeObserver.installed()) {
                    if (o.writeTrace(t, Path.of(exitFile))) {
                        written = true;
                        break;
                    }
                }
                if (!written) {
                    throw new IOException("no trace writer on the class path");
                }
                System.err.println("gort: trace written to " + exitFile + " (" + t.size() + " events)");
            } catch (IOException | RuntimeException e) {
                System.err.println("gort: cannot write trace " + exitFile + ": " + e);
            }
            System.err.flush();
        } finally {
            exitLock.unlock();
        }
    }

    void setJfr(boolean wanted) {
        if (wanted) {
            TraceClock.init(); // before the hooks turn on: see init
        }
        synchronized (this) {
            jfr = wanted;
            on = wanted || session != null;
        }
    }

    Scheduler scheduler() {
        return sched;
    }

    // ------------------------------------------------------------------------------------------
    // Sessions and buffers.

    /** One recording: its buffers, tables and start time. */
    static final class Session {
        final Tracer tracer;
        /**
         * Whether this session's stamps are {@link TraceClock}'s units (a recording's), or
         * {@code System.nanoTime()} ns (a hand-built session's, in tests; and the JFR-only
         * session's, which records and decodes nothing). Immutable.
         */
        final boolean clockUnits;
        /** The session's start, in its stamps' unit; the decoder's origin. Immutable. */
        final long t0;

        final long wallStartMillis = System.currentTimeMillis();
        final int maxChunksPerBuf;
        final boolean record;
        final String workload;
        final ConcurrentLinkedQueue<TraceBuf> bufs = new ConcurrentLinkedQueue<>();
        /**
         * The buffers of threads that are not carriers (sysmon, an outside thread calling {@code
         * go}), keyed by the thread ({@link #foreignBuf}). Each entry is put and read by its own thread
         * only, and removed by any thread once its thread has ended ({@link #pruneForeign}; a recording keeps the
         * buffer in {@link #bufs}). Not a ThreadLocal: its value (the buffer, whose session holds the
         * ThreadLocal) would keep its own weak key alive, and with it the session, the tracer and the
         * whole runtime, for as long as the thread lives: a scratch loop's thread that traced 30
         * runtimes one after another kept all 30 (and their chunks, 1.5 MB each) until the heap ran
         * out (TracerLifetimeTest).
         */
        final Map<Thread, TraceBuf> foreign = new ConcurrentHashMap<>();
        /**
         * The size of {@link #foreign} at which the next put prunes it: twice what the last prune
         * left, at least 16 (the JFR-only session lives as long as its runtime, and every outside
         * thread that ever readied a goroutine, a pool's or a virtual thread's, would otherwise stay).
         * Any putting thread, CAS; {@code Integer.MAX_VALUE} while a prune runs.
         */
        private final AtomicInteger foreignPruneAt = new AtomicInteger(16);

        /**
         * The buffer of {@code t}, a thread that is not a carrier, made at its first event; called
         * by {@code t} itself.
         */
        TraceBuf foreignBuf(Thread t) {
            TraceBuf b = foreign.get(t);
            if (b == null) {
                b = newBuf(-1, t.getName());
                foreign.put(t, b);
                pruneForeign();
            }
            return b;
        }

        /** Drops the entries of ended threads from {@link #foreign} when it has doubled since the last time. */
        private void pruneForeign() {
            int at = foreignPruneAt.get();
            if (foreign.size() >= at && foreignPruneAt.compareAndSet(at, Integer.MAX_VALUE)) {
                foreign.keySet().removeIf(t -> !t.isAlive());
                foreignPruneAt.set(Math.max(16, 2 * foreign.size()));
            }
        }
        /**
         * The buffers of carriers that write without their M (a goroutine with no P creating one, a
         * carrier of another runtime), keyed by that carrier's M: never through a ThreadLocal, which
         * under goroutine-scoped ThreadLocals would be the running goroutine's (a buffer per
         * goroutine, written from whichever carrier it runs on). Each entry is put and read by its
         * M's own thread only.
         */
        final Map<M, TraceBuf> carriers = new ConcurrentHashMap<>();

        final Map<Long, Trace.GInfo> gs = new ConcurrentHashMap<>();
        final Map<Long, String> objects = new ConcurrentHashMap<>();
        final AtomicLong droppedChunks = new AtomicLong();
        int initialProcs;
        /** Go's mcount (threads=, sysmon included) when the session started; written before it is published. */
        long initialThreads;
        /** Options.level; written before the session is published. */
        int level = 2;
        /**
         * Options.window in ns (0: no window): the decoder keeps the events of the last this-many ns
         * before its end cut. Written before the session is published.
         */
        long windowNanos;

        /**
         * A session whose stamps are {@code System.nanoTime()} ns: hand-built buffers in tests, and
         * the JFR-only session (nothing recorded, nothing decoded).
         */
        Session(Tracer tracer, int maxChunks, boolean record, String workload) {
            this(tracer, maxChunks, record, workload, false);
        }

        /** {@code clockUnits}: stamped by {@link TraceClock} (the hooks'), else in nanoTime ns. */
        Session(Tracer tracer, int maxChunks, boolean record, String workload, boolean clockUnits) {
            this.tracer = tracer;
            this.clockUnits = clockUnits;
            this.t0 = clockUnits ? TraceClock.nowOrdered() : System.nanoTime();
            this.maxChunksPerBuf = maxChunks;
            this.record = record;
            this.workload = workload;
        }

        TraceBuf newBuf(long mid, String owner) {
            TraceBuf b = new TraceBuf(this, mid, owner);
            if (record) {
                bufs.add(b);
            }
            return b;
        }

        /** GoStatus/ProcStatus events for whatever exists when tracing starts (Go: the generation's status events). */
        void recordInitialState(Scheduler s) {
            if (s == null) {
                return;
            }
            P[] ps = s.allp();
            initialProcs = ps.length;
            initialThreads = s.mcountPublic();
            TraceBuf b = newBuf(-1, "start");
            long ts = t0;
            b.emit(ts, hdr(Ev.GOMAXPROCS, 0, null, null), 0, ps.length, 0);
            for (P pp : ps) {
                M pm = pp.mOpaque();
                b.emit(ts, hdr(Ev.PROC_STATUS, pp.status(), pp, pm), 0, 0, 0);
            }
            java.util.Set<Long> placed = new java.util.HashSet<>();
            for (P pp : ps) {
                G rn = pp.runq.runnext();
                if (rn != null && placed.add(rn.goid)) {
                    b.emit(ts, hdr(Ev.GO_STATUS, Ev.L_RUNNEXT, pp, null), rn.goid, 0, 0);
                }
                for (G gp : pp.runq.snapshot()) {
                    if (gp != null && placed.add(gp.goid)) {
                        b.emit(ts, hdr(Ev.GO_STATUS, Ev.L_LOCAL, pp, null), gp.goid, 0, 0);
                    }
                }
            }
            for (G gp : s.globalRunqSnapshot()) {
                if (placed.add(gp.goid)) {
                    b.emit(ts, hdr(Ev.GO_STATUS, Ev.L_GLOBAL, null, null), gp.goid, 0, 0);
                }
            }
            for (G gp : s.allgs()) {
                gs.put(gp.goid, Trace.GInfo.of(gp, 0));
                if (placed.contains(gp.goid)) {
                    continue;
                }
                int st = gp.readgstatus();
                M gm = gp.m();
                switch (st) {
                    case G._Grunning -> {
                        P gpp = gm == null ? null : gm.p();
                        if (gpp != null) {
                            b.emit(ts, hdr(Ev.GO_STATUS, Ev.L_RUNNING, gpp, gm), gp.goid, 0, 0);
                        }
                        // else a G between states on an M that holds no P: out of a syscall,
                        // between its CAS to running and finding no P (Syscalls.exitsyscall126),
                        // or into one, its P handed off before its CAS to _Gsyscall
                        // (entersyscallblock, entersyscallHandleGCWait): its first event places it
                    }
                    case G._Gsyscall -> b.emit(ts, hdr(Ev.GO_STATUS, Ev.L_SYSCALL, null, gm), gp.goid, 0, 0);
                    case G._Gwaiting, G._Gpreempted ->
                        b.emit(
                                ts,
                                hdr(Ev.GO_STATUS, Ev.L_WAITING, null, null),
                                gp.goid,
                                gp.waitReason().ordinal(),
                                objectId(gp.waitingOn()));
                    default -> {
                        // runnable but in no queue we saw (racy snapshot): let the first event place it
                    }
                }
            }
        }

        Trace decode(Scheduler s) {
            return Trace.decode(this, s);
        }

        /**
         * Now, in this session's stamps' unit, no earlier than anything the caller did before and
         * no later than anything it does after (the decoder's end cut).
         */
        long now() {
            return clockUnits ? TraceClock.nowFenced() : System.nanoTime();
        }

        /** Nanoseconds per unit of this session's stamps, measured now (1 for nanoTime ns). */
        double nanosPerUnit() {
            return clockUnits ? TraceClock.nanosPerUnit() : 1.0;
        }
    }

    /**
     * The calling thread's buffer in the current session ({@code mp}: the calling M, or null): the
     * M's own in one load and a check, everything else out of line ({@link #bufSlow}).
     */
    private TraceBuf buf(M mp) {
        Session s = session;
        if (s == null) {
            s = jfrOnly;
        }
        if (mp != null && mp.traceBuf instanceof TraceBuf b && b.session == s) {
            return b;
        }
        return bufSlow(mp, s);
    }

    /** {@link #buf}'s first event of an M in a session, and its threads that are not this runtime's Ms. */
    private static TraceBuf bufSlow(M mp, Session s) {
        if (mp != null) {
            TraceBuf b = s.newBuf(mp.id, "M" + mp.id);
            mp.traceBuf = b; // only mp's own thread gets here (hooks pass the calling M)
            return b;
        }
        M carrier = M.current(); // out of line: the carrier running now, even after a yield
        if (carrier != null) {
            TraceBuf b = s.carriers.get(carrier);
            if (b == null) {
                b = s.newBuf(-1, carrier.thread().getName());
                s.carriers.put(carrier, b);
            }
            return b;
        }
        return s.foreignBuf(Thread.currentThread()); // not a carrier here: no goroutine runs on this thread
    }

    /** The calling thread's M if it belongs to this runtime. */
    private M self() {
        M mp = M.current();
        return mp != null && mp.scheduler() == sched ? mp : null;
    }

    static long hdr(int code, int small, P pp, M mp) {
        long p1 = pp == null ? 0 : pp.id + 1;
        long m1 = mp == null ? 0 : mp.id + 1;
        return (code & 0xFFL) | ((small & 0xFFFFL) << 8) | ((p1 & 0xFFFFL) << 24) | (m1 << 40);
    }

    static long hdrP(int code, int small, int pid, M mp) {
        long m1 = mp == null ? 0 : mp.id + 1;
        return (code & 0xFFL) | ((small & 0xFFFFL) << 8) | (((pid + 1) & 0xFFFFL) << 24) | (m1 << 40);
    }

    /** {@link #hdr}'s layout for P {@code pid} (-1: none) and M {@code mid} (-1: not an M). */
    private static int pid(P pp) {
        return pp == null ? -1 : pp.id;
    }

    static long hdrM(int code, int small, int pid, long mid) {
        return (code & 0xFFL) | ((small & 0xFFFFL) << 8) | (((pid + 1) & 0xFFFFL) << 24) | ((mid + 1) << 40);
    }

    static long objectId(Object o) {
        if (o instanceof Describable d) {
            return d.objectId();
        }
        return o == null ? 0 : identityId(o);
    }

    private static long identityId(Object o) {
        return System.identityHashCode(o) & 0xFFFFFFFFL;
    }

    /**
     * Notes that {@code b} recorded gp's latest event ({@link G#traceBuf()}); stores only when it
     * changes: the reference store's GC write barrier costs more than the load, and in a P=1
     * ping-pong the buffer never changes.
     */
    private static void recordedBy(G gp, TraceBuf b) {
        if (gp.traceBuf() != b) {
            gp.setTraceBuf(b);
        }
    }

    private static long goid(G gp) {
        return gp == null ? 0 : gp.goid;
    }

    // ------------------------------------------------------------------------------------------
    // Hooks. Each is called only when {@link #on} was seen true. mp is the calling M (null: not an M).

    /**
     * A fresh timestamp for a consumer's event written to {@code b} (see the class Javadoc,
     * "Timestamps"): {@link TraceClock#nowOrdered()}, through {@link #stamp}.
     */
    private static long clock(TraceBuf b) {
        return stamp(b, TraceClock.nowOrdered());
    }

    /**
     * A fresh timestamp for a producer's event written to {@code b}, one stamped before what it
     * publishes becomes visible to another M (a park, a creation, a kick or spill to a queue
     * others read): {@link TraceClock#now()}, the counter without waiting for earlier
     * instructions, which can only make the stamp earlier, never later than the publication;
     * through {@link #stamp}.
     */
    private static long clockProducer(TraceBuf b) {
        return stamp(b, TraceClock.now());
    }

    /**
     * The clock reading {@code t} as {@code b}'s next stamp: never before the buffer's previous
     * stamp, nor, for its first, before the session's start ({@link TraceBuf#floor}: a read that
     * runs early could precede it); counted in {@link TraceBuf#clockReads}. Compared by
     * difference: nanoTime's readings may be negative.
     */
    private static long stamp(TraceBuf b, long t) {
        b.clockReads++;
        long last = b.lastTs != 0 ? b.lastTs : b.floor;
        return t - last >= 0 ? t : last;
    }

    /** A G was created and is about to be put in {@code where} (Go: GoCreate). */
    public void goCreate(M mp, P pp, G newg, G parent, int where) {
        TraceBuf b = buf(mp);
        long ts = clockProducer(b);
        recordedBy(newg, b);
        if (b.record) {
            b.session.gs.put(newg.goid, Trace.GInfo.of(newg, ts));
            b.put(ts, Ev.GO_CREATE, where, pid(pp), newg.goid, goid(parent), 0);
        }
        if (jfr) {
            JfrEvents.goroutineStart(newg, parent, pp);
        }
    }

    /** gp starts running on (pp, mp) (Go: GoStart). */
    public void goStart(M mp, P pp, G gp, int from, int victim, boolean inherit) {
        TraceBuf b = buf(mp);
        long ts = (from == Ev.F_RUNNEXT || from == Ev.F_LOCAL || from == Ev.F_RESUME) && b.lastTs != 0
                ? b.lastTs
                : clock(b);
        recordedBy(gp, b);
        if (b.record) {
            b.putStart(ts, from, pid(pp), gp.goid, victim, inherit ? 1 : 0);
        }
        if (jfr) {
            JfrEvents.runBegin(b, gp, pp, from);
        }
    }

    /** gp stopped running on (pp, mp) for {@code why} (Go: GoStop / GoBlock / GoDestroy). */
    public void goStop(M mp, P pp, G gp, int why) {
        TraceBuf b = buf(mp);
        long ts = clockProducer(b);
        recordedBy(gp, b);
        long reason = 0;
        long obj = 0;
        if (why == Ev.S_PARK) {
            reason = gp.waitReasonOrdinal();
            Object on = gp.waitingOn();
            obj = objectId(on);
            if (obj != 0 && obj != b.seen1 && obj != b.seen2) {
                described(b, on, obj);
            }
        }
        if (b.record) {
            b.putStop(ts, why, pid(pp), gp.goid, reason, obj);
        }
        if (jfr) {
            jfrStop(b, gp, why, obj);
        }
    }

    /**
     * goStop's first sight of object {@code obj} since the buffer's last two: notes it and
     * describes it to the session once (out of line: the ping-pong's two channels never get here
     * after their first parks, and a smaller goStop inlines into the M's loop).
     */
    private static void described(TraceBuf b, Object on, long obj) {
        b.seen2 = b.seen1;
        b.seen1 = obj;
        if (b.record && b.seenObjects.add(obj)) {
            b.session.objects.putIfAbsent(obj, describe(on));
        }
    }

    private static void jfrStop(TraceBuf b, G gp, int why, long obj) {
        JfrEvents.runEnd(b, gp, why);
        if (why == Ev.S_PARK) {
            JfrEvents.park(gp, obj);
        } else if (why == Ev.S_EXIT) {
            JfrEvents.goroutineEnd(gp);
        }
    }

    static String describe(Object o) {
        try {
            if (o instanceof Describable d) {
                return d.describe();
            }
            String cn = o.getClass().getSimpleName();
            return (cn.isEmpty() ? o.getClass().getName() : cn) + "@" + Integer.toHexString(System.identityHashCode(o));
        } catch (RuntimeException e) {
            return o.getClass().getName();
        }
    }

    /**
     * gp was made runnable by the calling goroutine and is about to be put in {@code where} (Go:
     * GoUnblock). When this buffer recorded gp's latest event (its park, on this M), the unblock
     * reuses the M's previous timestamp: its only cause is then earlier in this very buffer, so the
     * merge keeps it after its cause whatever the stamp, and every effect on another M reads the
     * clock after it took gp, so it sorts later (see the class Javadoc, "Timestamps").
     */
    public void goUnblock(M mp, P pp, G gp, int where) {
        TraceBuf b = buf(mp);
        long ts = gp.traceBuf() == b && b.lastTs != 0 ? b.lastTs : clock(b);
        recordedBy(gp, b);
        G waker = mp == null ? null : mp.curg();
        if (b.record) {
            b.putUnblock(ts, where, pid(pp), gp.goid, goid(waker));
        }
        if (jfr) {
            JfrEvents.unblock(gp, waker);
        }
    }

    /** runqput kicked {@code old} out of pp's runnext to the ring tail. Called by pp's owner. */
    public void runqKick(P pp, G old) {
        M mp = pp.mOpaque();
        TraceBuf b = buf(mp);
        recordedBy(old, b);
        if (b.record) {
            b.put(clockProducer(b), Ev.RUNQ_KICK, 0, pid(pp), old.goid, 0, 0);
        }
    }

    /** runqputslow: the oldest half of pp's ring plus {@code gp}, linked from {@code head}, go to the global queue. */
    public void runqSpill(P pp, G head) {
        M mp = pp.mOpaque();
        TraceBuf b = buf(mp);
        if (!b.record) {
            return;
        }
        long ts = clockProducer(b);
        int pid = pid(pp);
        for (G g = head; g != null; g = g.schedlink()) {
            recordedBy(g, b);
            b.put(ts, Ev.RUNQ_TO_GLOBAL, Ev.R_SPILL, pid, g.goid, 0, 0);
        }
    }

    /** pp is destroyed (procresize): its runnext and ring go to the global head. */
    public void runqDestroy(P pp, G gp) {
        M mp = self();
        TraceBuf b = buf(mp);
        recordedBy(gp, b);
        if (b.record) {
            b.put(clock(b), Ev.RUNQ_TO_GLOBAL, Ev.R_DESTROY, pid(pp), gp.goid, 0, 0);
        }
    }

    /**
     * globrunqgetbatch took {@code n} Gs for pp: {@code first} will run, the {@code n-1} linked from
     * {@code rest} go to pp's ring. sched.lock is held, so this M's timestamp follows the puts.
     */
    public void globalBatch(P pp, G first, G rest, int n) {
        M mp = pp.mOpaque();
        TraceBuf b = buf(mp);
        if (!b.record) {
            return;
        }
        long ts = clock(b);
        if (first != null) {
            recordedBy(first, b);
        }
        b.put(ts, Ev.GLOBAL_BATCH, 0, pid(pp), goid(first), n, 0);
        int pid = pid(pp);
        G g = rest;
        for (int i = 1; i < n && g != null; i++, g = g.schedlink()) {
            recordedBy(g, b);
            b.put(ts, Ev.GLOBAL_TO_LOCAL, 0, pid, g.goid, 0, 0);
        }
    }

    /**
     * runqsteal moved {@code n} Gs from victim into thief's ring slots {@code [t, t+n)}; the last one
     * will run (it gets a GoStart), the others stay in the ring. Called by the thief's owner after the CAS.
     */
    public void steal(P thief, P victim, G[] ring, int t, int n, int mask) {
        M mp = thief.mOpaque();
        TraceBuf b = buf(mp);
        if (b.record) {
            long ts = clock(b);
            int pid = pid(thief);
            for (int i = 0; i < n - 1; i++) {
                G g = ring[(t + i) & mask];
                recordedBy(g, b);
                b.put(ts, Ev.STEAL, 0, pid, g.goid, victim == null ? -1 : victim.id, n);
            }
        }
        if (jfr) {
            JfrEvents.steal(thief, victim, n);
        }
    }

    public void procStart(M mp, P pp) {
        TraceBuf b = buf(mp);
        if (b.record) {
            b.put(clock(b), Ev.PROC_START, 0, pid(pp), 0, 0, 0);
        }
    }

    public void procStop(M mp, P pp) {
        TraceBuf b = buf(mp);
        if (b.record) {
            b.put(clock(b), Ev.PROC_STOP, 0, pid(pp), 0, 0, 0);
        }
    }

    public void mPark(M mp) {
        simple(mp, Ev.M_PARK, null);
    }

    public void mUnpark(M mp) {
        simple(mp, Ev.M_UNPARK, null);
    }

    public void spinStart(M mp) {
        simple(mp, Ev.SPIN_START, mp.p());
    }

    public void spinStop(M mp) {
        simple(mp, Ev.SPIN_STOP, mp.p());
    }

    private void simple(M mp, int code, P pp) {
        TraceBuf b = buf(mp);
        if (b.record && b.session.level >= 2) {
            b.put(clock(b), code, 0, pid(pp), 0, 0, 0);
        }
    }

    /** A new M (id {@code newId}) is created by the calling thread. */
    public void mCreate(long newId) {
        mCreate(newId, false);
    }

    /**
     * A new thread (id {@code newId}) is reserved by the calling thread: an M, or with {@code system}
     * a system thread (sysmon) that Go's mcount, and so SCHED's {@code threads=}, also counts.
     */
    public void mCreate(long newId, boolean system) {
        M mp = self();
        TraceBuf b = buf(mp);
        if (b.record) {
            b.put(clock(b), Ev.M_CREATE, 0, pid(mp == null ? null : mp.p()), 0, newId, system ? 1 : 0);
        }
    }

    /** Preemption of gp on pp requested (sysmon's retake, preemptall). */
    public void preemptRequest(P pp, G gp) {
        M mp = self();
        TraceBuf b = buf(mp);
        if (b.record) {
            b.put(clock(b), Ev.PREEMPT_REQ, 0, pid(pp), goid(gp), 0, 0);
        }
    }

    /** gp yields at a preemption poll, {@code latencyNanos} after the request (0 if unknown). */
    public void preemptYield(M mp, P pp, G gp, long latencyNanos) {
        TraceBuf b = buf(mp);
        if (b.record) {
            b.put(clock(b), Ev.PREEMPT_YIELD, 0, pid(pp), gp.goid, latencyNanos, 0);
        }
        if (jfr) {
            JfrEvents.preemption(gp, pp, latencyNanos);
        }
    }

    /** gp enters a syscall on (pp, mp) (Go: GoSyscallBegin). */
    public void syscallEnter(M mp, P pp, G gp) {
        noteSyscallM(pp, mp);
        TraceBuf b = buf(mp);
        recordedBy(gp, b);
        if (b.record) {
            b.put(clock(b), Ev.SYSCALL_ENTER, 0, pid(pp), gp.goid, 0, 0);
        }
    }

    /**
     * gp's syscall returned: {@code outcome} X_SAME_P / X_OTHER_P (it runs on pp now) or X_NO_P (it
     * goes to the global queue and mp parks). Go: GoSyscallEnd / GoSyscallEndBlocked.
     */
    public void syscallExit(M mp, P pp, G gp, int outcome) {
        TraceBuf b = buf(mp);
        recordedBy(gp, b);
        if (b.record) {
            b.put(clock(b), Ev.SYSCALL_EXIT, outcome, pid(pp), gp.goid, 0, 0);
        }
    }

    /**
     * sysmon found {@code blocked}'s carrier blocked in user code running gp, and entered a syscall
     * on its behalf before taking pp (Retake.retakeBlocked). Written to the caller's (sysmon's)
     * buffer, attributed to {@code blocked}: the same record as {@link #syscallEnter}, small = 1.
     */
    public void syscallEnterBlocked(M blocked, P pp, G gp) {
        noteSyscallM(pp, blocked);
        TraceBuf b = buf(self());
        recordedBy(gp, b);
        if (b.record) {
            b.emit(clock(b), hdr(Ev.SYSCALL_ENTER, 1, pp, blocked), gp.goid, 0, 0);
        }
    }

    /**
     * The M that last entered a syscall holding P i, so that a hand-off whose caller does not know
     * it (sysmon's retake, a stop-the-world, a P taken back from another syscall) names it. Elements
     * are written plainly by that M before its P's {@code _Psyscall} store (Go 1.26+: before its
     * G's CAS to {@code _Gsyscall}) and read by whoever took the P after its CAS from
     * {@code _Psyscall} (the G's scan-bit CAS), which orders them; the array reference is volatile,
     * replaced (grown) under {@link #syscallMLock}. A racing grow can lose one entry: that hand-off
     * then names no M (-1).
     */
    private volatile M[] syscallM = new M[8];
    /**
     * Serialises grows of {@link #syscallM}: a lock of its own, not this tracer's monitor, which a
     * start holds while it waits out the sections whose hooks may grow it ({@link #sectionBegin}).
     * Immutable reference.
     */
    private final Object syscallMLock = new Object();

    private void noteSyscallM(P pp, M mp) {
        if (pp == null) {
            return;
        }
        M[] a = syscallM;
        if (pp.id >= a.length) {
            a = growSyscallM(pp.id);
        }
        a[pp.id] = mp;
    }

    private M[] growSyscallM(int id) {
        synchronized (syscallMLock) {
            return growSyscallMLocked(id);
        }
    }

    private M[] growSyscallMLocked(int id) {
        M[] a = syscallM;
        if (id >= a.length) {
            a = java.util.Arrays.copyOf(a, Math.max(id + 1, a.length * 2));
            syscallM = a;
        }
        return a;
    }

    /**
     * pp was taken from {@code fromM} (in a syscall) and handed off; called by whoever took it. A
     * null {@code fromM} means the caller does not know it: the M that entered the syscall with pp.
     */
    public void handoff(P pp, M fromM) {
        M mp = self();
        if (fromM == null && pp != null) {
            M[] a = syscallM;
            fromM = pp.id < a.length ? a[pp.id] : null;
        }
        TraceBuf b = buf(mp);
        if (b.record) {
            b.put(clock(b), Ev.HANDOFF, 0, pid(pp), 0, fromM == null ? -1 : fromM.id, 0);
        }
        if (jfr) {
            JfrEvents.handoff(pp, fromM);
        }
    }

    /** A timer fires on (pp, mp); {@code readied} is the G it will make runnable (a sleep), if known. */
    public void timerFire(M mp, P pp, G readied) {
        boolean own = mp != null && mp.scheduler() == sched;
        TraceBuf b = buf(own ? mp : null);
        if (b.record) {
            if (own || mp == null) {
                b.put(clock(b), Ev.TIMER_FIRE, 0, pid(pp), goid(readied), 0, 0);
            } else { // another runtime's carrier: its M is not the buffer's
                b.emit(clock(b), hdr(Ev.TIMER_FIRE, 0, pp, mp), goid(readied), 0, 0);
            }
        }
    }

    /** GOMAXPROCS became n (procresize). */
    public void gomaxprocs(int n) {
        M mp = self();
        TraceBuf b = buf(mp);
        if (b.record) {
            b.put(clock(b), Ev.GOMAXPROCS, 0, -1, 0, n, 0);
        }
    }

    /** All buffers of the current session (for tests and the decoder). */
    List<TraceBuf> buffers() {
        Session s = session;
        return s == null ? List.of() : new ArrayList<>(s.bufs);
    }
}
