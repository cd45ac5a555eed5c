package dev.gort.runtime;

import dev.gort.runtime.trace.Ev;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import jdk.internal.vm.Continuation;
import org.HdrHistogram.Histogram;

/**
 * Preemption, in one place: the request sysmon and stop-the-world raise ({@link #preemptone},
 * {@link #preemptall}) and a Java lock's holder waiting for a P raises ({@link #boostLockHolder}),
 * its state on the carrier, the one refusal rule ({@link #refusal}), the yield
 * ({@link #gopreempt}) and the one set of counters. {@link Poll} is the small public target
 * the agent's injected code calls; its slow paths call in here.
 *
 * <h2>Implementation notes</h2>
 * <pre>
 * The request is one word per carrier (M.MThread.preemptState, a volatile long, changed only
 * by CAS here, and by the getAndBitwiseOr that sets EXITED). Bit layout:
 *
 *   63                          32 31          7     6       5       4       3        2       1      0
 *  +------------------------------+-------------+-------+-------+-------+-------+--------+------+-----+
 *  |  tick: the P's schedtick the  |   (unused)  |EXITED |P.NOTE.|(unusd)| P.REQ | NOTICE | OWED | REQ |
 *  |  pending REQ is for           |             |       |       |       |       |        |      |     |
 *  +------------------------------+-------------+-------+-------+-------+-------+--------+------+-----+
 *
 *  REQ    a preemption request for the running slice that no poll has answered yet. The poll's
 *         fast path sees it through Poll's JVM-wide count of carriers with REQ or NOTICE set
 *         (the count moves exactly when (REQ|NOTICE) goes from 0 to non-0 and back).
 *  OWED   Go's g.preempt for the G on this carrier: a request it has not honoured (kept through
 *         a refusal, so that releasing the last monitor/lock or leaving a class initialiser
 *         re-arms it, Go's releasem restoring stackPreempt). Cleared when a G starts on the
 *         carrier (execute); it is the running G's, so it lives with the carrier.
 *  NOTICE not a preemption: Retake.retakeBlocked took the carrier's P while it was blocked in user
 *         code; the next poll makes the G exit that "syscall" (get a P back).
 *  PARKED REQ and NOTICE moved aside (bit << 3) by sysmon while it sees the carrier of a retaken
 *         P blocked (Sysmon.parkRetaken): a blocked carrier cannot poll, and an armed word would
 *         send every poll on every thread of the JVM down the slow path for as long as it blocks
 *         (commons-lang3's FastDateFormatTest.testParseSync: a goroutine in awaitTermination, ten
 *         executor threads in instrumented code). sysmon moves them back when the carrier runs
 *         again; every carrier-side operation reads a parked bit as the bit itself.
 *  EXITED the carrier thread has ended (carrierExit): nothing is raised on it any more. A raiser
 *         reads the M's curg before its CAS, and the carrier can run its G to the end and leave
 *         in between (the shutdown's preemptall racing main's carrier on a loaded machine): the
 *         REQ would be counted requested and never answered, and Poll's count would stay armed,
 *         every poll of the JVM on its slow path, for the rest of the JVM's life.
 *  tick   a request belongs to the slice, not to one G: a runnext chain that inherits the slice
 *         inherits the request. A REQ whose tick is not the P's schedtick is stale.
 *
 * Payload (M.MThread.preemptRequestedAt, preemptSliceWhen): written by the raiser before the CAS
 * that sets REQ, read after the CAS that takes it (both volatile: release/acquire).
 * Go's p.preempt (P.preempt) stays on the P: sysmon marks a P whose G is in a syscall (_Psyscall
 * in the 1.25 model; in Go 1.26+'s, preemptone skips a G in _Gsyscall) and the G's syscall exit
 * on the same P honours the mark.
 *
 * Transitions (who: S = sysmon or the stop-the-world initiator, any thread; C = the carrier itself):
 *
 *   from                    event                                        to                   counted
 *   ----------------------  -------------------------------------------  -------------------  ----------------------
 *   no REQ                  S preemptone (a G runs on the P)             REQ|OWED, tick       requested (+ trace)
 *   REQ, same tick          S preemptone again                           unchanged (OWED)     nothing
 *   REQ, other tick         S preemptone for a newer slice               REQ|OWED, new tick   stale, requested
 *   REQ                     C poll, tick != P's schedtick (or no G)      OWED as before       stale
 *   REQ                     C poll, refusal() says why not               OWED kept            refused (by reason)
 *   REQ, slice 20 ms old    C poll, refused for a lock or monitor        0 (new slice)        honoured (in place)
 *   REQ                     C poll, yields (Poll.slow)                   OWED, G leaves       honoured
 *   REQ                     C poll, the continuation is pinned           OWED kept            refused (pinned)
 *   REQ                     C syscall exit honours it / refuses          -                    honoured / refused
 *   no REQ, OWED or P mark  C syscall exit honours it / refuses          -                    requested + outcome
 *   OWED, no REQ            C last monitor/lock released, clinit exit    REQ|OWED (same tick) requested (+ trace), rearmed
 *   REQ                     C execute starts a new slice                 0                    unhonoured
 *   any                     C the carrier sleeps (stopm, in place)       0                    unhonoured if REQ
 *   any                     C the carrier thread ends                    EXITED               unhonoured if REQ
 *   EXITED                  S preemptone, retakeBlocked, rearm           unchanged            nothing
 *   any                     C execute inherits the slice (runnext)       OWED cleared         nothing
 *   any                     S retakeBlocked took the P                   |= NOTICE            nothing (not a request)
 *   NOTICE                  C poll: the G exits its syscall              NOTICE cleared       nothing
 *   REQ or NOTICE           S sees the retaken carrier blocked           parked (<< 3)        nothing
 *   parked                  S sees that carrier running (or ended)       unparked (>> 3)      nothing
 * </pre>
 * Every REQ is raised in one place ({@link #raise}) and taken in one place ({@link #take}); every
 * take is classified as exactly one outcome, so
 * {@code requested = honoured + refused(every reason) + stale + unhonoured + pending} holds by
 * construction ({@code pending}: carriers with REQ set now, 0 once the runtime is quiet), and the
 * trace's PreemptRequest events are the {@code requested} events.
 *
 * <p>Settings: immutable, from {@link Config}. Counters: plain {@link AtomicLong}s, bumped at most a
 * few thousand times per second (sysmon, the poll's slow path, a G leaving its carrier with a request
 * pending), so Agrona's padded counters would not earn their place.
 *
 * <p>Go: proc.go preemptone, preemptall, gopreempt_m; preempt.go; stack.go newstack (preemption
 * branch); runtime/metrics has no preemption metrics: these follow preemption-strategies.md §8.
 */
public final class Preempt {
    /** Go: proc.go forcePreemptNS, the time slice before sysmon asks a G to stop. */
    static final long forcePreemptNS = 10_000_000L;

    /** Default budget (polls per slice) for {@link PreemptStrategy#BUDGET}; see {@link #budgetQuantum}. */
    static final int DEFAULT_BUDGET = 1 << 22;

    /** Immutable: the family of the strategy named on the command line (the agent decides where polls go). */
    final PreemptStrategy strategy;
    /** Immutable: that strategy's name as registered (a family's id, or an agent strategy's name). */
    final String strategyName;
    /**
     * Immutable: polls (back-edges + entries) a G may pass in one slice under the budget strategy
     * before it yields to waiting work ({@code -Dgort.preempt.budget}, {@code GORT_PREEMPT_BUDGET}).
     * The default, 4 Mi polls, is meant as a few ms of an instrumented tight loop (about 1-3 ns per
     * iteration once compiled); it is not calibrated: on a loaded machine sysmon's 10 ms slice often
     * comes first, which is why sysmon stays the backstop.
     */
    final int budgetQuantum;
    /** Immutable: record the class/method of each preemption ({@code -Dgort.preempt.sites}, default on). */
    final boolean recordSites;

    // ---- the one set of counters: any thread, atomic add (see the transition table) ----
    /** REQ raised: {@link #raise} only (preemptone's new requests, re-arms, requests found at a syscall exit). */
    final AtomicLong requested = new AtomicLong();
    /**
     * Requests past their PreemptRequest event (written if the tracer was on): bumped right after
     * it, as {@link #requested} is bumped before it; see {@link #requestsTraced()}.
     */
    final AtomicLong requestedTraced = new AtomicLong();

    final AtomicLong honoured = new AtomicLong();
    /** Of {@link #honoured}: preemptions in place ({@link #preemptInPlace}). */
    final AtomicLong honouredInPlace = new AtomicLong();

    /** {@code Thread.yield()}s that handed the P to other work in place ({@link #yieldInPlace}); not requests. */
    final AtomicLong threadYieldsInPlace = new AtomicLong();

    final AtomicLong refusedMonitor = new AtomicLong();
    final AtomicLong refusedRuntimeLock = new AtomicLong();
    final AtomicLong refusedLock = new AtomicLong();
    final AtomicLong refusedJdkLock = new AtomicLong();
    final AtomicLong refusedClinit = new AtomicLong();
    final AtomicLong syscallExitsDeferred = new AtomicLong();
    final AtomicLong stale = new AtomicLong();
    final AtomicLong unhonoured = new AtomicLong();
    final AtomicLong budgetYields = new AtomicLong();
    final AtomicLong rearmed = new AtomicLong();
    final AtomicLong spuriousPolls = new AtomicLong();
    /** Refusals because the continuation could not yield, by {@code onPinned} reason; guarded by itself. */
    private final EnumMap<Continuation.Pinned, Long> refusedPinned = new EnumMap<>(Continuation.Pinned.class);

    /** request (sysmon's nanotime) to the yield, ns. Guarded by {@code this}. */
    private final Histogram requestToYield = new Histogram(3);
    /** yield time minus the end of the slice (sysmon's first sighting + 10 ms), ns. Guarded by {@code this}. */
    private final Histogram sliceOverrun = new Histogram(3);

    private static final int MAX_SITES = 4096;
    /** "class.method" of each honoured preemption; any thread. Bounded: beyond MAX_SITES, "(other)". */
    private final ConcurrentHashMap<String, LongAdder> sites = new ConcurrentHashMap<>();

    /**
     * The runtime these requests are for (its Ps, trace and stats). Immutable; set by the
     * Scheduler's constructor, which builds this first and only stores it here.
     */
    private final Scheduler sched;

    /** The runtime's preemption, with its settings from {@code sched}'s {@link Config.Settings}. */
    Preempt(Scheduler sched, Config.Settings st) {
        this(sched, st.preempt(), st.preemptBudget(), st.preemptSites());
    }

    private Preempt(Scheduler sched, String strategyName, int budgetQuantum, boolean recordSites) {
        this(sched, PreemptStrategy.familyOf(strategyName), strategyName, budgetQuantum, recordSites);
    }

    /**
     * How this JVM looks at a goroutine's stack for locks its JDK frames hold (the refusal rule's
     * frames, before a socket wait or a preemption): {@code "screen"} (the frames' classes first,
     * their methods only where a class needs it: {@code java.base/jdk.internal.misc} is exported to
     * gort, as the agent does) or {@code "full"} (every frame's method, every time).
     */
    public static String lockFrameLook() {
        return LockFrames.screened() ? "screen" : "full";
    }

    /**
     * {@code -Dgort.preempt.budget} / {@code GORT_PREEMPT_BUDGET}: polls per slice (budget strategy),
     * >= 1. Read by {@link Config.Settings#fromEnvironment()}; a runtime uses its Config's.
     */
    public static int budgetFromEnvironment() {
        return Config.intSetting("gort.preempt.budget", "GORT_PREEMPT_BUDGET", DEFAULT_BUDGET, 1, Integer.MAX_VALUE);
    }

    Preempt(Scheduler sched, PreemptStrategy strategy, String strategyName, int budgetQuantum, boolean recordSites) {
        this.sched = sched;
        this.strategy = strategy;
        this.strategyName = strategyName;
        this.budgetQuantum = budgetQuantum;
        this.recordSites = recordSites;
    }

    PreemptStrategy strategy() {
        return strategy;
    }

    /** The strategy's name ({@code -Dgort.preempt}): a family's id or a registered strategy's. */
    String strategyName() {
        return strategyName;
    }

    int budgetQuantum() {
        return budgetQuantum;
    }

    // ------------------------------------------------------------------------------------------
    // The request word (layout and transitions: the class comment).

    /** A preemption request for the running slice is pending. */
    static final long REQ = 1L;
    /** Go's g.preempt for the G on the carrier: a request it has not honoured. */
    static final long OWED = 1L << 1;
    /** Retake.retakeBlocked took the P: the next poll exits the G's "syscall". Not a request. */
    static final long NOTICE = 1L << 2;
    /** The bits that make the poll's fast path take its slow path. */
    static final long ARMED = REQ | NOTICE;
    /** How far sysmon moves the ARMED bits of a blocked retaken carrier aside (PARKED). */
    private static final int PARK_SHIFT = 3;
    /** REQ and NOTICE parked by sysmon: pending, but not counted in Poll's armed count. */
    static final long PARKED = ARMED << PARK_SHIFT;
    /** REQ or NOTICE, armed or parked. */
    private static final long ANY = ARMED | PARKED;
    /** The carrier thread has ended: nothing is raised on it any more (the class comment). */
    static final long EXITED = 1L << 6;

    /** The word with parked bits read as the bits themselves (the carrier-side view). */
    private static long unparked(long w) {
        return (w & ~PARKED) | ((w & PARKED) >>> PARK_SHIFT);
    }

    private static final int TICK_SHIFT = 32;

    private static final VarHandle STATE;

    static {
        try {
            STATE = MethodHandles.lookup().findVarHandle(M.MThread.class, "preemptState", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** The schedtick a word's REQ is for. */
    static int tickOf(long w) {
        return (int) (w >>> TICK_SHIFT);
    }

    /** The carrier's request word (volatile: a set REQ makes the raiser's payload visible). */
    static long state(M.MThread mt) {
        return (long) STATE.getVolatile(mt);
    }

    /** Moves Poll's JVM-wide count when the word goes from not armed to armed or back. */
    private static void armedChanged(long before, long after) {
        boolean was = (before & ARMED) != 0;
        boolean is = (after & ARMED) != 0;
        if (was != is) {
            if (is) {
                Poll.arm();
            } else {
                Poll.disarm();
            }
        }
    }

    /**
     * The one place a REQ is raised, on {@code mp}'s carrier for slice {@code tick}, for {@code gp}
     * on {@code pp} (for the trace). Sets OWED in any case. Returns true if a new request was raised
     * (counted in {@code requested}, traced as PreemptRequest); false if one for the same slice was
     * already pending. A pending REQ for another slice is replaced and counted stale. Any thread.
     */
    private boolean raise(M mp, P pp, G gp, int tick, long sliceWhen, boolean rearm) {
        M.MThread mt = mp.thread;
        for (; ; ) {
            long w = (long) STATE.getVolatile(mt);
            if ((w & EXITED) != 0) {
                return false; // the carrier left after the caller read its G: nobody would answer
            }
            if (rearm) {
                if ((w & OWED) == 0 || (unparked(w) & REQ) != 0) {
                    return false; // nothing owed, or already armed
                }
                // A re-arm is for the slice the G runs now: OWED is cleared at every new slice, so
                // it is this slice's debt, but the G may have left a "syscall" (a retaken blocked
                // carrier) onto a P whose schedtick differs from the refused request's. Re-raised
                // for the old tick, the poll would drop it as stale with OWED kept, and every later
                // unlock would re-arm it again: a loop that made every poll in the JVM take the slow
                // path (Netty's pooled allocator at GOMAXPROCS=1: 108,000 re-arms, all stale). Go's
                // gp.preempt is the G's, honoured at the next prologue on whichever P.
                tick = pp != null ? pp.schedtickOpaque() : tickOf(w);
            } else if ((unparked(w) & REQ) != 0 && tickOf(w) == tick) {
                if ((w & OWED) != 0 || STATE.compareAndSet(mt, w, w | OWED)) {
                    return false;
                }
                continue;
            }
            if (!rearm) {
                // Payload before the CAS that publishes it. Two raisers racing (sysmon and a
                // stop-the-world) may mix their stamps: figures only.
                mt.preemptRequestedAt = System.nanoTime();
                mt.preemptSliceWhen = sliceWhen;
            }
            long nw = ((long) tick << TICK_SHIFT) | (unparked(w) & NOTICE) | OWED | REQ;
            if (STATE.compareAndSet(mt, w, nw)) {
                armedChanged(w, nw);
                if ((unparked(w) & REQ) != 0) {
                    stale.incrementAndGet(); // a request for an earlier slice, never answered
                }
                requested.incrementAndGet();
                if (rearm) {
                    rearmed.incrementAndGet();
                }
                Scheduler s = sched;
                if (s.trace.on) s.trace.preemptRequest(pp, gp);
                requestedTraced.incrementAndGet();
                return true;
            }
        }
    }

    /** For tests: raises a request on {@code mp}'s carrier for slice {@code tick}, as sysmon does. */
    boolean raiseForTest(M mp, int tick) {
        return raise(mp, mp.p, mp.curg, tick, 0, false);
    }

    /**
     * Takes the pending REQ and NOTICE off {@code mt} (keeps OWED and the tick) and returns the word
     * as it was: the caller classifies a taken REQ as exactly one outcome. The carrier, or sysmon
     * for a carrier that is gone.
     */
    static long take(M.MThread mt) {
        for (; ; ) {
            long w = (long) STATE.getVolatile(mt);
            if ((w & ANY) == 0) {
                return w;
            }
            long nw = w & ~ANY;
            if (STATE.compareAndSet(mt, w, nw)) {
                armedChanged(w, nw);
                return unparked(w);
            }
        }
    }

    /**
     * sysmon saw the carrier of a P it retook blocked: moves its REQ and NOTICE aside (PARKED),
     * out of Poll's armed count. Returns whether anything is parked now. sysmon only.
     */
    static boolean park(M.MThread mt) {
        for (; ; ) {
            long w = (long) STATE.getVolatile(mt);
            if ((w & ARMED) == 0) {
                return (w & PARKED) != 0;
            }
            long nw = (w & ~ARMED) | ((w & ARMED) << PARK_SHIFT);
            if (STATE.compareAndSet(mt, w, nw)) {
                armedChanged(w, nw);
                return true;
            }
        }
    }

    /** sysmon saw that carrier running again (or gone): moves parked bits back (armed). sysmon only. */
    static void unpark(M.MThread mt) {
        for (; ; ) {
            long w = (long) STATE.getVolatile(mt);
            if ((w & PARKED) == 0) {
                return;
            }
            long nw = unparked(w);
            if (STATE.compareAndSet(mt, w, nw)) {
                armedChanged(w, nw);
                return;
            }
        }
    }

    /** Takes only the NOTICE (the G is exiting its syscall; a REQ stays for the exit to answer). */
    private static void takeNotice(M.MThread mt) {
        for (; ; ) {
            long w = (long) STATE.getVolatile(mt);
            if ((w & (NOTICE | NOTICE << PARK_SHIFT)) == 0) {
                return;
            }
            long nw = w & ~(NOTICE | NOTICE << PARK_SHIFT);
            if (STATE.compareAndSet(mt, w, nw)) {
                armedChanged(w, nw);
                return;
            }
        }
    }

    /** Sets OWED (the poll found this slice's request: a G inheriting the slice inherits it). Own carrier. */
    private static void setOwed(M.MThread mt) {
        for (; ; ) {
            long w = (long) STATE.getVolatile(mt);
            if ((w & OWED) != 0 || STATE.compareAndSet(mt, w, w | OWED)) {
                return;
            }
        }
    }

    /** Whether the G on {@code mp}'s carrier owes a preemption (Go: gp.preempt). Any thread. */
    static boolean owedOpaque(M mp) {
        return (((long) STATE.getOpaque(mp.thread)) & OWED) != 0;
    }

    /** Whether a request (REQ) is pending on {@code mt} (opaque; observers and tests). */
    static boolean requestPendingOpaque(M.MThread mt) {
        return (unparked((long) STATE.getOpaque(mt)) & REQ) != 0;
    }

    /**
     * A G starts on {@code mt} (execute): it owes nothing yet. On a new slice a REQ still pending was
     * for a slice whose Gs all left the carrier without reaching a poll (parked, ended, yielded):
     * never honoured; an inherited slice (runnext) keeps it. The carrier only; one volatile load
     * when there is nothing to do.
     */
    void newSlice(M.MThread mt, boolean inheritTime) {
        for (; ; ) {
            long w = (long) STATE.getVolatile(mt);
            long clear = inheritTime ? OWED : OWED | ANY;
            if ((w & clear) == 0) {
                return;
            }
            long nw = w & ~clear;
            if (SchedCounts.ON) SchedCounts.newSliceCas.increment();
            if (STATE.compareAndSet(mt, w, nw)) {
                armedChanged(w, nw);
                if ((unparked(w & clear) & REQ) != 0) {
                    unhonoured.incrementAndGet();
                }
                return;
            }
        }
    }

    /**
     * The carrier goes to sleep: with no G ({@code stopm}: its G left it, the P went to another M
     * or back to the idle list), or with its G waiting for a P or a wake-up on it ({@code
     * waitForP}, {@code parkInPlace}, {@code stoplockedm}). No poll runs on a sleeping carrier, and
     * whatever it runs next starts a new slice ({@link #newSlice}, which clears the word anyway),
     * so a pending REQ is never honoured (counted unhonoured, as newSlice counts it) and a NOTICE
     * would be cleared there too. Cleared now rather than at that next slice: an armed word keeps
     * {@link Poll}'s JVM-wide count up and sends every poll on every other carrier down the slow
     * path for as long as this carrier sleeps, which for an idle M is until it is woken again
     * (H2 with 200 goroutines at GOMAXPROCS=1: an M that handed its P to a goroutine waiting in
     * place, in startlockedm, kept its REQ through its stopm; the count was non-zero for about
     * half the run and 18-22 million polls per run took the slow path for nothing). Nobody
     * raises on a carrier without a P, so nothing is armed again until it runs (a raiser that read
     * the P's M before it went can still land, as at {@link #carrierExit}). The carrier only.
     */
    void carrierSleeps(M.MThread mt) {
        newSlice(mt, false);
    }

    /**
     * The carrier thread ends: a pending request is never answered, and none is raised from now on
     * (EXITED), which keeps Poll's count exact and every request answered or counted.
     */
    void carrierExit(M.MThread mt) {
        STATE.getAndBitwiseOr(mt, EXITED); // first: a raise after this refuses, so the take is the last
        if ((take(mt) & REQ) != 0) {
            unhonoured.incrementAndGet();
        }
    }

    /**
     * Retake.retakeBlocked took {@code mp}'s P while its carrier was blocked: the next poll makes
     * the G exit that "syscall". Sysmon.
     */
    static void notice(M mp) {
        M.MThread mt = mp.thread;
        for (; ; ) {
            long w = (long) STATE.getVolatile(mt);
            if ((unparked(w) & NOTICE) != 0 || (w & EXITED) != 0) {
                return;
            }
            long nw = w | NOTICE;
            if (STATE.compareAndSet(mt, w, nw)) {
                armedChanged(w, nw);
                return;
            }
        }
    }

    /**
     * The refused G released its last monitor or lock, or left its class initialiser: re-arms a
     * request it owes (a new REQ for the slice it runs now, on the P it has now, which may not be
     * the refused request's; Go: releasem restoring stackPreempt), or a syscall exit deferred
     * inside the initialiser (a NOTICE). The carrier.
     */
    void rearm(M mp, G gp, boolean deferredExit) {
        if (owedOpaque(mp)) {
            raise(mp, mp.p, gp, 0, 0, true);
        } else if (deferredExit && (unparked(state(mp.thread)) & NOTICE) == 0) {
            notice(mp);
            rearmed.incrementAndGet();
        }
    }

    // ------------------------------------------------------------------------------------------
    // Asking.

    /** Asks every running P's G to stop. sched.lock held. Go: proc.go preemptall. */
    boolean preemptall() {
        sched.sched.assertLockHeld(sched, "preemptall");
        boolean res = false;
        for (P pp : sched.allp) {
            if (pp.status() != P._Prunning) {
                continue;
            }
            if (preemptone(pp, 0)) {
                res = true;
            }
        }
        return res;
    }

    /**
     * Asks the G running on pp to stop at its next poll. Best effort.
     *
     * <p>Go: proc.go preemptone
     */
    public boolean preemptone(P pp) {
        return preemptone(pp, 0);
    }

    /** {@link #preemptone(P)} for sysmon's slice preemption, which knows when the slice started. */
    boolean preemptone(P pp, long sliceWhen) {
        M mp = pp.mOpaque();
        if (mp == null || mp == M.current()) {
            return false;
        }
        G gp = mp.curg;
        if (gp == null) {
            return false;
        }
        if ((gp.readgstatusRaw() & ~G._Gscan) == G._Gsyscall) {
            // Don't bother trying to preempt a goroutine in a syscall (Go 1.26+: its P keeps its M).
            return false;
        }
        pp.preempt = true;
        raise(mp, pp, gp, pp.schedtickOpaque(), sliceWhen, false);
        return true;
    }

    /**
     * A goroutine that holds a Java lock (a monitor, a counted {@code Lock}, a JDK frame's lock, a
     * class initialiser: {@link Syscalls#holdsLock}) found no idle P when its block ended, and now
     * waits on its carrier at the global queue's head ({@link Syscalls#waitForP}). Every goroutine
     * that wants that lock waits behind it, so it must not wait for some goroutine's time slice to
     * end (beside CPU-bound goroutines, up to 10 ms per hand-off of a contended lock). So this
     * finds a P for it, the first from {@code mp}'s id that is running and not claimed by another
     * holder already ({@link P#lockHoldersWaiting}):
     * <ul>
     *   <li>one whose goroutine is not in a syscall and holds no lock ({@code monitorDepth}, read
     *       racily: it would refuse): that goroutine is asked to stop at its next poll
     *       ({@link #preemptone}) and the P claimed, so that its next findRunnable takes the global
     *       queue's head before its own queue, and the holder gets the P as a locked goroutine's M
     *       gets one (startlockedm);
     *   <li>else one whose goroutine holds a lock with its carrier blocked in Java: the P is claimed
     *       and sysmon hurried ({@link Sysmon#hurry}), whose blocked-carrier retake then hands the
     *       P off within two short ticks ({@link Retake}; handoffp starts an M for the global
     *       queue's work);
     *   <li>else the first running P with a goroutine, claimed without asking anything: its
     *       goroutine holds a lock and runs (another holder, maybe the one this holder's lock
     *       blocked), or the P is claimed by another holder already (two holders, one P). Its next
     *       findRunnable, when that goroutine parks, yields or ends, then takes this holder before
     *       its own queue; without the claim it looked at its own queue first, and this holder
     *       waited for the time slices of the goroutines queued there.
     * </ul>
     * A seeded runtime takes only the last step: it never preempts on the wall clock (Sysmon,
     * {@link Decisions}), and when a holder's carrier wakes is such a time (the goroutine asked
     * would stop at whatever poll it had reached). None (no running P has a goroutine): nothing
     * is asked, and the holder waits for the next M that looks at the global queue (one in
     * findRunnable looks before it drops its P). Counted in
     * {@code SyscallStats.lockHolderBoosts}. Returns whether a P was claimed. sched.lock held.
     *
     * <p>No Go equivalent (Go's locks belong to no thread, and a waiter leaves its M); the nearest
     * is sync.Mutex's starvation mode, whose unlock hands its P's time to the waiter.
     */
    boolean boostLockHolder(M mp) {
        sched.sched.assertLockHeld(sched, "boostLockHolder");
        P[] allp = sched.allp;
        int n = allp.length;
        P blocked = null;
        P any = null;
        boolean seeded = sched.seeded;
        for (int i = 0; i < n; i++) {
            P pp = allp[(int) ((mp.id + i) % n)];
            if (pp.status() != P._Prunning) {
                continue;
            }
            M pm = pp.mOpaque();
            G gp = pm == null ? null : pm.curg;
            if (gp == null) {
                continue;
            }
            if (any == null) {
                any = pp;
            }
            if (seeded || pp.lockHoldersWaitingOpaque() != 0) {
                continue;
            }
            if (gp.monitorDepth != 0) {
                if (blocked == null && Retake.carrierBlocked(pm)) {
                    blocked = pp;
                }
                continue;
            }
            if (preemptone(pp, 0)) {
                pp.addLockHolderWaiting();
                sched.syscallStats.lockHolderBoosts.incrementAndGet();
                return true;
            }
        }
        if (blocked != null) {
            blocked.addLockHolderWaiting();
            sched.syscallStats.lockHolderBoosts.incrementAndGet();
            sched.sysmon.hurry();
            return true;
        }
        if (any != null) {
            any.addLockHolderWaiting();
            sched.syscallStats.lockHolderBoosts.incrementAndGet();
            return true;
        }
        return false;
    }

    /**
     * sysmon saw the slice of {@code pp}, in {@code _Psyscall} (no M to reach), run out: mark the P
     * so that the G's exit on it yields (Syscalls.exitsyscall). Re-checks the tick after the store:
     * a new slice must not inherit the mark (it can only see it in the few instructions between).
     * Counted when a syscall exit answers it (the table's "P mark" row), not here.
     */
    static void markSyscall(P pp, int tick) {
        pp.preempt = true;
        if (pp.schedtickOpaque() != tick) {
            pp.preempt = false;
        }
    }

    // ------------------------------------------------------------------------------------------
    // Answering.

    static final int R_NONE = 0;
    static final int R_MONITOR = 1;
    static final int R_LOCK = 2;
    static final int R_CLINIT = 3;
    static final int R_RUNTIME_LOCK = 4;
    static final int R_JDK_LOCK = 5;

    /**
     * The one refusal rule: why {@code gp}, running on {@code mp}, may not be preempted here, or
     * {@link #R_NONE}. A Java monitor or a counted {@code Lock} belongs to the carrier (another G
     * on it could enter it, or the carrier would hang: jdk25-continuations.md §3); a class
     * initialiser pins the G and holds its class's init lock; a runtime lock (Go's m.locks)
     * forbids preemption as in Go. With {@code scanFrames}, also a JDK frame on the stack that
     * holds a lock around the polling code, or an uninstrumented initialiser ({@link LockFrames}: one
     * stack walk, only on a slow path). The G's carrier only.
     *
     * <p>Go: preempt.go canPreemptM (m.locks, m.mallocing, m.preemptoff)
     */
    static int refusal(M mp, G gp, boolean scanFrames) {
        if (gp.monitorDepth != 0) {
            // Monitors first; a parker method holds its carrier's identity as a Lock holds it; a
            // counted call of a JDK method that locks around a callback is a JDK lock, found
            // without a walk.
            int jdk = gp.jdkLockDepth();
            if (gp.monitorDepth > gp.lockDepth() + gp.parkerDepth() + jdk) {
                return R_MONITOR;
            }
            return jdk > 0 ? R_JDK_LOCK : R_LOCK;
        }
        if (gp.clinitDepth() != 0) {
            return R_CLINIT;
        }
        if (mp.locks != 0) {
            return R_RUNTIME_LOCK;
        }
        if (scanFrames) {
            int frames = LockFrames.scan();
            if (frames != LockFrames.NONE) {
                return frames == LockFrames.CLINIT ? R_CLINIT : R_JDK_LOCK;
            }
        }
        return R_NONE;
    }

    /** Counts a taken request refused for {@code reason} (one of the R_ codes, not R_NONE). */
    void refused(int reason) {
        (switch (reason) {
                    case R_MONITOR -> refusedMonitor;
                    case R_LOCK -> refusedLock;
                    case R_CLINIT -> refusedClinit;
                    case R_RUNTIME_LOCK -> refusedRuntimeLock;
                    case R_JDK_LOCK -> refusedJdkLock;
                    default -> throw Fatal.fatal(sched, "preempt: refused for no reason " + reason);
                })
                .incrementAndGet();
    }

    /**
     * The poll's slow path, for a poll on {@code mp}'s carrier with something armed (any carrier's):
     * see the transition table.
     *
     * <p>Go: stack.go newstack (the preemption branch)
     */
    void poll(M mp, String site) {
        M.MThread mt = mp.thread;
        long w = (long) STATE.getAcquire(mt);
        if ((w & ANY) == 0) {
            spuriousPolls.incrementAndGet();
            return; // another carrier's request
        }
        G gp = mp.curg;
        if (gp == null) {
            if ((take(mt) & REQ) != 0) {
                stale.incrementAndGet();
            }
            return;
        }
        if (gp.readgstatusNoScan() == G._Gsyscall) {
            if (gp.syscallImplicit == G.SYSCALL_OWN) {
                // The G's own syscall (Syscall.block around code with polls), with a request
                // sysmon raised for the slice it ran before: a G in a syscall is not preempted
                // (Go's syscalls run no preemptible code), and leaving it here would take a P into
                // the blocking call, out of sysmon's sight. OWED stays: exitsyscall answers it.
                if ((take(mt) & REQ) != 0) {
                    stale.incrementAndGet();
                }
                return;
            }
            // An implicit syscall: Retake.retakeBlocked (sysmon took this carrier's P while it was
            // blocked in user code: the NOTICE), or the agent's hook around a blocking JDK call
            // that called back into user code (Poll.blockingEnter).
            leaveRetake(mp, gp);
            return;
        }
        w = take(mt);
        if ((w & REQ) == 0) {
            return; // a NOTICE for a G that has left its "syscall" already
        }
        long requestedAt = mt.preemptRequestedAt;
        long sliceWhen = mt.preemptSliceWhen;
        P pp = mp.p;
        if (pp == null || pp.schedtickOpaque() != tickOf(w)) {
            // Raised for an earlier slice (sysmon read a stale schedtick/curg): not ours.
            stale.incrementAndGet();
            return;
        }
        setOwed(mt); // a G inheriting the slice inherits its request (rearm re-raises it)
        int why = refusal(mp, gp, true);
        if (why != R_NONE) {
            if (why != R_CLINIT // an uninstrumented initialiser, found on the stack
                    && gp.clinitDepth() == 0 // a monitor inside an initialiser refuses as R_MONITOR
                    && mp.locks == 0
                    && !sched.exiting
                    && sliceWhen != 0
                    && System.nanoTime() - sliceWhen >= IN_PLACE_AFTER_NS) {
                // A lock or monitor held for a whole slice past the request: stop here, on
                // this carrier (the lock stays with the thread that owns it).
                preemptInPlace(mp, gp, requestedAt, sliceWhen, site);
                return;
            }
            // OWED stays: releasing the last monitor/lock or leaving the initialiser re-arms
            // (Poll); for a JDK frame's lock nothing tells us when it ends: sysmon asks again.
            refused(why);
            return;
        }
        yieldFor(gp, requestedAt, sliceWhen, siteOf(site));
    }

    /**
     * {@code gp}, on {@code mp}'s carrier, is in an implicit "syscall" ({@link G#syscallImplicit}:
     * the one {@link Retake#retakeBlocked} made of a block of that carrier in user code, or the
     * agent's hook's around a blocking JDK call that called back into user code) and runs again:
     * a poll found it (the NOTICE, or a request), or the hook after a call that blocks in the JVM
     * ({@link Poll#blockingExit}, the monitor and lock hooks). Exits
     * that "syscall" (gets a P back, maybe on another M, or waits for one on this carrier while it
     * holds a Java lock) and carries on; a pending REQ stays for the exit to answer. But not inside
     * a class initialiser: the G cannot leave its carrier there, so with no idle P it would wait for
     * one, while the Ms holding every P may be waiting for this very class (a wait that looks
     * RUNNABLE: sysmon retakes their Ps only after their time slice, and only on Linux: Retake). It
     * runs on without a P, as in a syscall, until a poll after the initialiser (clinitExit re-arms
     * it), its next gort call or its end. The carrier.
     */
    void leaveRetake(M mp, G gp) {
        M.MThread mt = mp.thread;
        if (gp.clinitDepth() != 0 || LockFrames.scan() == LockFrames.CLINIT) {
            gp.rare().syscallExitDeferred = true;
            syscallExitsDeferred.incrementAndGet();
            if ((take(mt) & REQ) != 0) {
                refusedClinit.incrementAndGet();
            }
            return;
        }
        G.Rare rare = gp.rareOrNull();
        if (rare != null) {
            rare.syscallExitDeferred = false;
        }
        takeNotice(mt);
        Syscalls.exitsyscall();
    }

    /**
     * sysmon asked for this G's slice before or during its syscall (OWED, or the P's mark): answer
     * it now, at a point where yielding is safe (Go re-arms stackPreempt so that the next function
     * prologue preempts). This makes a G that loops on syscalls preemptible without instrumented
     * polls. Returns true if it yielded.
     */
    boolean preemptAtExit(M mp, G gp) {
        M.MThread mt = mp.thread;
        long w = take(mt);
        long requestedAt = 0;
        long sliceWhen = 0;
        if ((w & REQ) != 0) {
            requestedAt = mt.preemptRequestedAt;
            sliceWhen = mt.preemptSliceWhen;
        } else {
            // The request is the P's mark (or one owed since a refusal): raised and answered here.
            requested.incrementAndGet();
            if (sched.trace.on) sched.trace.preemptRequest(mp.p, gp);
            requestedTraced.incrementAndGet();
        }
        int why = refusal(mp, gp, true); // a syscall can sit inside a JDK lock frame, as a poll can
        if (why != R_NONE) {
            refused(why); // OWED stays (Go: the same)
            return false;
        }
        return yieldFor(gp, requestedAt, sliceWhen, "exitsyscall");
    }

    /** The site to record for a preemption at the poll {@code site} (null: a stack walk finds it). */
    private String siteOf(String site) {
        return !recordSites ? null : site != null ? site : Poll.site();
    }

    /**
     * How long past its start a slice whose G refuses preemption for a lock or monitor it holds
     * may run before the G is preempted in place ({@link #preemptInPlace}): two slices, i.e. one
     * whole slice of refusals after sysmon's first request.
     */
    static final long IN_PLACE_AFTER_NS = 2 * forcePreemptNS;

    /**
     * Preempts a G that must stay on its carrier (it holds a Java monitor or a carrier-owned
     * {@code Lock}, and has refused sysmon's requests for a whole slice) without a yield: the G
     * becomes runnable with its continuation still mounted, its P is handed off (Go:
     * entersyscallblock's handoffp), and the carrier sleeps until the G is scheduled again: an idle
     * P at once, else the global queue's tail, locked to this carrier for the moment, whose M
     * hands over its P ({@link Syscalls#waitForP}). The lock stays with the thread that owns it.
     * Go preempts a lock holder like any G (its locks do not belong to a thread); gort can yield
     * only where no lock names the carrier, and without this a holder that spins for a G waiting
     * in a run queue behind it spins for ever (Caffeine's bounded buffer under
     * {@code -Dgort.preempt=budget}, GOMAXPROCS=1). Costs a thread hand-off, at most once per
     * {@link #IN_PLACE_AFTER_NS} of a G's refusals. Not inside a class initialiser (the Ms holding
     * every P may be waiting for that class: see {@link #poll}) nor a runtime lock.
     *
     * <p>Go: proc.go gopreempt_m, for a G that cannot leave its thread (exitsyscall0 + stoplockedm)
     */
    private void preemptInPlace(M mp, G gp, long requestedAt, long sliceWhen, String site) {
        long yieldAt = System.nanoTime();
        Scheduler s = sched;
        P pp = mp.p;
        if (s.trace.on) {
            s.trace.preemptYield(mp, pp, gp, requestedAt != 0 ? yieldAt - requestedAt : 0);
            s.trace.goStop(mp, pp, gp, Ev.S_PREEMPT);
        }
        gp.casgstatus(G._Grunning, G._Grunnable);
        s.stats.preemptions.incrementAndGet();
        honouredInPlace.incrementAndGet();
        recordYield(requestedAt, sliceWhen, yieldAt, siteOf(site));
        s.idle.handoffp(mp.releasep());
        Syscalls.waitForP(mp, gp, false, false); // a new slice: OWED cleared; no boost: it was asked to stop
    }

    /** Yields for a taken request and counts the outcome: honoured, or refused because pinned. */
    private boolean yieldFor(G gp, long requestedAt, long sliceWhen, String site) {
        long yieldAt = System.nanoTime();
        if (gopreempt(requestedAt)) {
            recordYield(requestedAt, sliceWhen, yieldAt, site);
            return true;
        }
        // Pinned (native frame, critical section, ...): OWED stays; sysmon asks again.
        recordPinned(gp.pinnedReason());
        return false;
    }

    /**
     * The budget strategy's slow path: the slice's budget is spent. Yields only if somebody waits
     * for this P and nothing refuses; neither is counted as a refusal (no request was made).
     */
    void budgetSpent(M mp, String site) {
        M.MThread mt = mp.thread;
        if (requestPendingOpaque(mt)) {
            poll(mp, site);
            return;
        }
        G gp = mp.curg;
        mt.budget = budgetQuantum; // refill: either we keep running or the next slice starts full
        if (gp == null) {
            return;
        }
        P pp = mp.p;
        if (pp == null || (pp.runq.runqempty() && sched.sched.runq.empty())) {
            return;
        }
        if (refusal(mp, gp, true) != R_NONE) {
            return;
        }
        if (gopreempt(owedOpaque(mp) ? mt.preemptRequestedAt : 0)) {
            budgetYields.incrementAndGet();
        }
    }

    /**
     * {@code Thread.yield()} in instrumented code ({@link Poll#threadYield}), when other work is
     * runnable on its P or the global queue: Gosched where the goroutine may yield here (the
     * checks of a preemption, the stack walk for JDK frames holding a lock included); where it may
     * not because it holds a monitor, a counted {@code Lock}, a parker method's carrier or a JDK
     * frame's lock, a yield in place ({@link #yieldInPlace}: the P goes to the waiting work, the
     * goroutine waits for its turn on its own carrier); else (a class initialiser, a runtime lock,
     * a syscall, or nothing else to run) the carrier's {@code Thread.yield()}, a hint as before. A goroutine
     * whose P sysmon retook has no P here and takes the last way; it leaves that state at its
     * next poll.
     *
     * <p>Go: proc.go Gosched (the Java call it stands for has no Go twin)
     */
    void threadYield(M mp) {
        G gp = mp.curg;
        P pp = mp.p;
        if (gp == null || pp == null || (pp.runq.runqempty() && sched.sched.runq.empty())) {
            Thread.yield();
            return;
        }
        int why = refusal(mp, gp, true);
        if (why == R_NONE) {
            Scheduler.gosched();
        } else if (why != R_CLINIT
                && gp.clinitDepth() == 0
                && mp.locks == 0
                && !sched.exiting
                && gp.readgstatusNoScan() == G._Grunning) {
            // Not in a syscall (its own Syscall.block, or the blocking-call hook's around a JDK
            // call that called back here): its M may still hold the P there (Go 1.26 model), but
            // the G is _Gsyscall, not the _Grunning that yieldInPlace moves to _Grunnable.
            yieldInPlace(mp, gp);
        } else {
            Thread.yield();
        }
    }

    /**
     * {@code Thread.yield()} of a G that must stay on its carrier (it holds a monitor, a counted
     * {@code Lock}, a JDK frame's lock, or a parker method's hold on its carrier), with other work
     * runnable: as {@link #preemptInPlace}, without a request: the G becomes runnable with its
     * continuation mounted, its P is handed off to that work, and the carrier sleeps until the G
     * is scheduled again (the global queue's tail, locked to this carrier for the moment). A
     * thread hand-off each way, where the carrier's own {@code Thread.yield()} let nothing else
     * run on this P: a holder that spins with {@code Thread.yield()} for a goroutine queued
     * behind it spun until sysmon preempted it in place, a slice later (HikariCP's
     * {@code ConcurrentBag.requite}, a parker method, spins on {@code Thread.yield()} until a
     * borrower it counted as waiting polls its hand-off queue; at GOMAXPROCS=2, 200 goroutines:
     * 7,200 refused requests, 20 ms per schedule).
     *
     * <p>Go: proc.go gosched_m, for a G that cannot leave its thread (as {@link #preemptInPlace})
     */
    private void yieldInPlace(M mp, G gp) {
        Scheduler s = sched;
        P pp = mp.p;
        if (s.trace.on) s.trace.goStop(mp, pp, gp, Ev.S_GOSCHED);
        gp.casgstatus(G._Grunning, G._Grunnable);
        threadYieldsInPlace.incrementAndGet();
        s.idle.handoffp(mp.releasep());
        Syscalls.waitForP(mp, gp, false, false); // a new slice; no boost: it asked to wait
    }

    /**
     * Yields the current G to the global queue tail (it gets a new slice when it runs again);
     * callers have checked {@link #refusal}. Returns false if the continuation is pinned.
     * {@code requestedAt}: the request's time, for the trace's latency (0: unknown).
     *
     * <p>Go: proc.go gopreempt_m
     */
    static boolean gopreempt(long requestedAt) {
        G gp = Scheduler.getg();
        if (gp == null) {
            return false;
        }
        if (gp.readgstatusNoScan() == G._Gsyscall) {
            if (gp.syscallImplicit == G.SYSCALL_OWN) {
                return false; // the G's own syscall: not preemptible (see poll)
            }
            // An implicit syscall (Retake.retakeBlocked's or the blocking-call hook's): leave it,
            // getting a P back (this may move the G).
            boolean moved = Syscalls.exitsyscall();
            if (!owedOpaque(gp.m)) {
                return moved;
            }
            if (refusal(gp.m, gp, false) != R_NONE) {
                return false;
            }
        }
        M mp = gp.m;
        Scheduler s = gp.sched;
        if (s.trace.on) s.trace.preemptYield(mp, mp.p, gp, requestedAt != 0 ? System.nanoTime() - requestedAt : 0);
        gp.yieldReason = G.YIELD_PREEMPT;
        if (!Continuation.yield(G.SCOPE)) {
            gp.yieldReason = G.YIELD_NONE;
            return false;
        }
        return true;
    }

    /** Requests raised so far (the MXBean / metrics figure; the snapshot has the rest). */
    public long requests() {
        return requested.get();
    }

    /**
     * Requests whose PreemptRequest event is behind them (written, if the tracer was on): a
     * request is counted in {@link #requests()} before its event and here after it, and the raiser
     * may be descheduled between the two. So a trace recorded between {@code start} and {@code
     * stop} holds at least {@code requestsTraced()} read just before stop minus {@code requests()}
     * read just after start, and at most {@code requests()} read just after stop minus {@code
     * requestsTraced()} read just before start.
     */
    public long requestsTraced() {
        return requestedTraced.get();
    }

    /** Refusals so far, every reason (pinned included). */
    public long refusals() {
        long pinned;
        synchronized (refusedPinned) {
            pinned = refusedPinned.values().stream().mapToLong(Long::longValue).sum();
        }
        return refusedMonitor.get()
                + refusedRuntimeLock.get()
                + refusedLock.get()
                + refusedJdkLock.get()
                + refusedClinit.get()
                + pinned;
    }

    void recordPinned(Continuation.Pinned reason) {
        synchronized (refusedPinned) {
            refusedPinned.merge(reason == null ? Continuation.Pinned.NATIVE : reason, 1L, Long::sum);
        }
    }

    /** Records an honoured preemption that yielded at {@code yieldAt}. */
    void recordYield(long requestedAt, long sliceWhen, long yieldAt, String site) {
        honoured.incrementAndGet();
        synchronized (this) {
            if (requestedAt != 0 && yieldAt >= requestedAt) {
                requestToYield.recordValue(yieldAt - requestedAt);
            }
            if (sliceWhen != 0) {
                long over = yieldAt - (sliceWhen + forcePreemptNS);
                sliceOverrun.recordValue(Math.max(0, over));
            }
        }
        if (site != null) {
            LongAdder a = sites.get(site);
            if (a == null) {
                if (sites.size() >= MAX_SITES) {
                    site = "(other)";
                }
                a = sites.computeIfAbsent(site, k -> new LongAdder());
            }
            a.increment();
        }
    }

    /** A consistent-enough copy of every figure, for the observability layer and tests. */
    public PreemptStats snapshot() {
        Histogram lat;
        Histogram over;
        synchronized (this) {
            lat = requestToYield.copy();
            over = sliceOverrun.copy();
        }
        Map<String, Long> pinned = new LinkedHashMap<>();
        synchronized (refusedPinned) {
            refusedPinned.forEach((k, v) -> pinned.put(k.name(), v));
        }
        Map<String, Long> siteCounts = new LinkedHashMap<>();
        List<Map.Entry<String, LongAdder>> es = new java.util.ArrayList<>(sites.entrySet());
        es.sort((a, b) -> Long.compare(b.getValue().sum(), a.getValue().sum()));
        for (Map.Entry<String, LongAdder> e : es) {
            siteCounts.put(e.getKey(), e.getValue().sum());
        }
        long pinnedTotal = pinned.values().stream().mapToLong(Long::longValue).sum();
        return new PreemptStats(
                strategy,
                requested.get(),
                honoured.get(),
                honouredInPlace.get(),
                refusedMonitor.get(),
                pinnedTotal,
                refusedRuntimeLock.get(),
                refusedLock.get(),
                refusedJdkLock.get(),
                refusedClinit.get(),
                syscallExitsDeferred.get(),
                stale.get(),
                unhonoured.get(),
                budgetYields.get(),
                threadYieldsInPlace.get(),
                rearmed.get(),
                spuriousPolls.get(),
                Map.copyOf(pinned),
                java.util.Collections.unmodifiableMap(siteCounts),
                PreemptStats.Percentiles.of(lat),
                PreemptStats.Percentiles.of(over),
                lat,
                over);
    }
}
