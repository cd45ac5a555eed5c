package dev.gort;

import dev.gort.runtime.Config;
import dev.gort.runtime.Decisions;
import dev.gort.runtime.ExternalWaker;
import dev.gort.runtime.G;
import dev.gort.runtime.Scheduler;
import dev.gort.runtime.ThreadLock;

/**
 * What a Go program calls: {@code go}, {@code runtime.Gosched}, {@code runtime.GOMAXPROCS},
 * {@code runtime.NumGoroutine}, and the entry point that runs {@code main} as goroutine 1.
 *
 * <pre>{@code
 * Go.run(() -> {
 *     Chan<String> c = Chan.make();
 *     Go.go(() -> c.send("hello"));
 *     System.out.println(c.recv());
 * });
 * }</pre>
 */
public final class Go {
    private Go() {}

    /**
     * Runs {@code main} as goroutine 1 on a new runtime configured from the environment
     * ({@code GOMAXPROCS}, {@code GODEBUG}, system properties) and returns when it returns.
     */
    public static void run(Runnable main) {
        run(Config.fromEnvironment(), main);
    }

    /**
     * Runs {@code main} on a new runtime with {@code config}.
     *
     * @throws IllegalStateException when called from a goroutine: a program has one main goroutine
     *     (a second runtime inside a goroutine would block its carrier and report a false deadlock)
     */
    public static void run(Config config, Runnable main) {
        Runtimes.newScheduler(config).run(main);
    }

    /**
     * Runs {@code main} on a new runtime with {@code config} that records its scheduling decisions
     * into {@code decisions}, or replays them from it ({@link Decisions}: deterministic at
     * GOMAXPROCS=1, with a seed, inside a synctest bubble).
     */
    public static void run(Config config, Decisions decisions, Runnable main) {
        Scheduler s = Runtimes.newScheduler(config);
        s.recordDecisions(decisions);
        s.run(main);
    }

    /**
     * Registers a thread outside the runtime that may still wake a goroutine of the calling
     * goroutine's runtime (a non-blocking channel operation, {@code close}, an unlock or
     * {@code WaitGroup.done} from an executor or a callback). Until the handle is closed, goroutines
     * all asleep are not reported as a deadlock; close it after the thread's last wake-up. An
     * outside thread without an open handle is not counted: a goroutine waiting only for it is
     * reported as deadlocked, as Go reports one waiting for nobody. See {@link ExternalWaker}.
     *
     * <pre>{@code
     * ExternalWaker w = Go.external();
     * executor.schedule(() -> { try (w) { c.trySend(42); } }, 200, TimeUnit.MILLISECONDS);
     * int v = c.recv();
     * }</pre>
     */
    public static ExternalWaker external() {
        return sched().externalWaker();
    }

    /** {@code go fn()}: starts a goroutine in the calling goroutine's runtime. */
    public static void go(Runnable fn) {
        sched().newproc(fn);
    }

    /** {@code runtime.Gosched()}: yields; the goroutine goes to the global run queue. */
    public static void gosched() {
        Scheduler.gosched();
    }

    /** {@code runtime.NumGoroutine()}. */
    public static int numGoroutine() {
        return sched().numGoroutine();
    }

    /**
     * {@code runtime.Stack(buf, all)}: the calling goroutine's dump, or with {@code all} every
     * goroutine's (the caller's first, then the others in goid order, a blank line between two), in
     * Go's format ({@code goroutine 7 [chan receive, 3 minutes]:}, frames, {@code created by ...},
     * and the object waited on).
     */
    public static String stack(boolean all) {
        dev.gort.runtime.Scheduler s = sched();
        return all
                ? dev.gort.runtime.Traceback.dumpAll(s)
                : dev.gort.runtime.Traceback.dump(dev.gort.runtime.Scheduler.currentG(), System.nanoTime());
    }

    /**
     * Go 1.27's goroutine leak profile ({@code pprof.Lookup("goroutineleak")}): runs leak
     * detection in the calling goroutine's runtime and returns, in Go's dump format
     * ({@code goroutine 18 [chan send (leaked)]:}, frames, {@code created by}), every goroutine
     * found blocked on a channel, select or sync primitive that no other goroutine can reach. It
     * collects garbage a few times (the program may pause as for a full GC); a leaked goroutine
     * is reclaimed by the JVM, and later profiles list it again (see the runtime's GoroutineLeaks).
     */
    public static java.util.List<String> leakedGoroutines() {
        return sched().goroutineLeakProfile().stream()
                .map(dev.gort.runtime.LeakedGoroutine::dump)
                .toList();
    }

    /**
     * {@code runtime.SetBlockProfileRate(rate)} for the calling goroutine's runtime: on average one
     * blocking event per {@code rate} ns spent blocked is recorded in the block profile
     * ({@code /debug/pprof/block}); 1 records every event, {@code rate <= 0} turns it off. Blocked
     * channel operations, selects, {@code Cond.await}, {@code WaitGroup.await} and contended
     * {@code Mutex}/{@code RWMutex} locks count; sleeps, timers, the network and syscalls do not.
     */
    public static void setBlockProfileRate(int rate) {
        sched().blockprof.setBlockProfileRate(rate);
    }

    /**
     * {@code pprof.StartCPUProfile(w)}: profiles the process's CPU (100 samples per second of a
     * thread running Java code, goroutines and other threads alike) until {@link #stopCPUProfile},
     * which writes the gzip'd profile.proto {@code go tool pprof} reads to {@code w}. Works outside
     * a goroutine too. See {@link dev.gort.runtime.pprof.CpuProfile} for how it differs from Go's.
     *
     * @throws IllegalStateException {@code cpu profiling already in use} while one runs
     */
    public static void startCPUProfile(java.io.OutputStream w) {
        dev.gort.runtime.pprof.CpuProfile.startCPUProfile(w);
    }

    /** {@code pprof.StopCPUProfile()}: stops the CPU profile and writes it; nothing if none runs. */
    public static void stopCPUProfile() throws java.io.IOException {
        dev.gort.runtime.pprof.CpuProfile.stopCPUProfile();
    }

    /**
     * Turns the heap profile's sampling on, as Go's {@code runtime.MemProfileRate} is from the
     * program's start: a JFR recording of allocation samples and of live sampled objects, until a
     * matching {@link #stopMemProfile} (calls are counted; the debug server makes one while it
     * runs). Call it early: allocations before it are not in the profile. See {@link
     * dev.gort.runtime.pprof.MemProfile} for what each figure is and how it differs from Go's.
     *
     * @throws IllegalStateException {@code heap profiling not available: ...} where JFR cannot record
     */
    public static void startMemProfile() {
        dev.gort.runtime.pprof.MemProfile.start();
    }

    /**
     * Matches one {@link #startMemProfile}; the last one turns sampling off (Go's {@code
     * runtime.MemProfileRate = 0}). The allocations sampled stay in later profiles.
     */
    public static void stopMemProfile() {
        dev.gort.runtime.pprof.MemProfile.stop();
    }

    /**
     * {@code pprof.WriteHeapProfile(w)}: the heap profile, the gzip'd profile.proto that {@code go
     * tool pprof} reads ({@code inuse_space} by default, {@code -sample_index=alloc_space} for the
     * allocations), of what was sampled while {@link #startMemProfile} had sampling on (nothing
     * otherwise, as Go's with {@code MemProfileRate = 0}). Works outside a goroutine too; call
     * {@code System.gc()} first for the live objects as of now, as Go's users call {@code
     * runtime.GC()}.
     */
    public static void writeHeapProfile(java.io.OutputStream w) throws java.io.IOException {
        dev.gort.runtime.pprof.MemProfile.writeHeapProfile(w);
    }

    /**
     * {@code runtime.SetMutexProfileFraction(rate)} for the calling goroutine's runtime: on average
     * 1 in {@code rate} contended unlocks of a {@code Mutex} or {@code RWMutex} is recorded in the
     * mutex profile ({@code /debug/pprof/mutex}) with the releaser's stack and the delay it ended;
     * 0 turns it off, a negative rate only reads. Returns the previous rate.
     */
    public static int setMutexProfileFraction(int rate) {
        return sched().blockprof.setMutexProfileFraction(rate);
    }

    /** Prints every goroutine of the calling goroutine's runtime to stderr (what SIGQUIT prints in Go). */
    public static void dumpGoroutines() {
        sched().dumpGoroutines(System.err);
    }

    /** {@code runtime.GOMAXPROCS(n)}: sets the number of Ps (n &gt; 0) and returns the previous one. */
    public static int gomaxprocs(int n) {
        return sched().gomaxprocs(n);
    }

    /**
     * Go 1.25's {@code runtime.SetDefaultGOMAXPROCS()}: back to the default (the CPU count lowered
     * to the container's CPU limit), which sysmon then follows again.
     */
    public static void setDefaultGOMAXPROCS() {
        sched().setDefaultGOMAXPROCS();
    }

    /** {@code runtime.GOMAXPROCS(0)}. */
    public static int gomaxprocs() {
        return sched().gomaxprocs();
    }

    /**
     * {@code runtime.Goexit()}: ends the calling goroutine (deferred finally blocks run). It unwinds
     * the goroutine with an {@link Error}, which {@code catch (Exception)} lets pass as Go's
     * {@code recover} does; a {@code catch (Throwable)} or {@code catch (Error)} must rethrow it.
     */
    public static void goexit() {
        Runtimes.goexit();
    }

    /**
     * {@code runtime.LockOSThread()}: wires the calling goroutine to its carrier thread; it runs
     * only there, and nothing else runs there, until as many {@link #unlockOSThread} calls have
     * been made. A goroutine that ends while locked ends its thread too.
     */
    public static void lockOSThread() {
        ThreadLock.LockOSThread();
    }

    /** {@code runtime.UnlockOSThread()}: undoes one {@link #lockOSThread}; a no-op without one. */
    public static void unlockOSThread() {
        ThreadLock.UnlockOSThread();
    }

    /**
     * {@code debug.SetMaxThreads(n)}: the most carrier threads (Ms, sysmon included) the runtime
     * may create; going over is fatal ({@code fatal error: thread exhaustion}). Returns the
     * previous limit.
     */
    public static int setMaxThreads(int n) {
        return sched().setMaxThreads(n);
    }

    /** The goroutine id of the caller ({@code 0} outside gort). */
    public static long goid() {
        G g = Scheduler.currentG();
        return g == null ? 0 : g.goid;
    }

    /**
     * A small handle on the calling goroutine's runtime ({@link GoRuntime}: GOMAXPROCS,
     * NumGoroutine, figures, dumps, the tracer); the scheduler itself stays the runtime's.
     */
    public static GoRuntime current() {
        return new GoRuntime(sched());
    }

    /** The calling goroutine's runtime, for the api's own use. */
    static Scheduler sched() {
        Scheduler s = Scheduler.current();
        if (s == null) {
            throw new IllegalStateException("gort: not called from a goroutine (use Go.run)");
        }
        return s;
    }
}
