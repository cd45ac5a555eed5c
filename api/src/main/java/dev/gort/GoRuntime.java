package dev.gort;

import dev.gort.runtime.PreemptStats;
import dev.gort.runtime.Scheduler;
import dev.gort.runtime.SyscallStats;
import dev.gort.runtime.Traceback;
import dev.gort.runtime.trace.Trace;

/**
 * A small handle on one runtime, what {@link Go#current()} gives users: GOMAXPROCS, the goroutine
 * and thread counts, snapshots of its figures, goroutine dumps and the execution tracer. It hands out
 * no scheduler internals (the Scheduler's fields are the runtime's own). Immutable; cheap.
 *
 * <p>Go: the runtime package's GOMAXPROCS, NumGoroutine, Stack, runtime/trace Start/Stop,
 * debug.SetMaxThreads
 */
public final class GoRuntime {
    private final Scheduler s;

    GoRuntime(Scheduler s) {
        this.s = s;
    }

    /** {@code runtime.GOMAXPROCS(0)}. */
    public int gomaxprocs() {
        return s.gomaxprocs();
    }

    /** {@code runtime.GOMAXPROCS(n)}: sets the number of Ps (n &gt; 0) and returns the previous one. */
    public int gomaxprocs(int n) {
        return s.gomaxprocs(n);
    }

    /** Go 1.25's {@code runtime.SetDefaultGOMAXPROCS()}: back to the default, which sysmon follows. */
    public void setDefaultGOMAXPROCS() {
        s.setDefaultGOMAXPROCS();
    }

    /** Go 1.27's goroutine leak profile, each leaked goroutine's dump in Go's format ({@link Go#leakedGoroutines}). */
    public java.util.List<String> leakedGoroutines() {
        return s.goroutineLeakProfile().stream()
                .map(dev.gort.runtime.LeakedGoroutine::dump)
                .toList();
    }

    /** {@code runtime.SetBlockProfileRate(rate)} for this runtime ({@link Go#setBlockProfileRate}). */
    public void setBlockProfileRate(int rate) {
        s.blockprof.setBlockProfileRate(rate);
    }

    /** {@code runtime.SetMutexProfileFraction(rate)} for this runtime ({@link Go#setMutexProfileFraction}). */
    public int setMutexProfileFraction(int rate) {
        return s.blockprof.setMutexProfileFraction(rate);
    }

    /**
     * {@code pprof.Lookup(name).WriteTo(w, debug)}: writes this runtime's {@code goroutine},
     * {@code threadcreate}, {@code block}, {@code mutex} or {@code goroutineleak} profile;
     * {@code debug=0} is the gzip'd profile.proto {@code go tool pprof} reads, 1 Go's text, 2 (goroutine
     * and goroutineleak) the dumps.
     *
     * @throws IllegalArgumentException for any other name (Go's Lookup returns nil)
     */
    public void writeProfile(String name, java.io.OutputStream w, int debug) throws java.io.IOException {
        switch (name) {
            case "goroutine" -> dev.gort.runtime.pprof.Pprof.writeGoroutine(s, w, debug);
            case "threadcreate" -> dev.gort.runtime.pprof.Pprof.writeThreadCreate(s, w, debug);
            case "block" -> dev.gort.runtime.pprof.Pprof.writeBlock(s, w, debug);
            case "mutex" -> dev.gort.runtime.pprof.Pprof.writeMutex(s, w, debug);
            case "goroutineleak" -> dev.gort.runtime.pprof.Pprof.writeGoroutineLeak(s, w, debug);
            default -> throw new IllegalArgumentException("pprof: no profile named " + name);
        }
    }

    /** {@code runtime.NumGoroutine()}. */
    public int numGoroutine() {
        return s.numGoroutine();
    }

    /** Carrier threads (Ms) created so far, sysmon excluded (Go: mcount). */
    public long threads() {
        return s.mcountPublic();
    }

    /** {@code debug.SetMaxThreads(n)}: returns the previous limit. */
    public int setMaxThreads(int n) {
        return s.setMaxThreads(n);
    }

    /** A snapshot of the preemption figures (requests, how they ended, latencies). */
    public PreemptStats preemptStats() {
        return s.preempt.snapshot();
    }

    /** A snapshot of the syscall, locked-thread and blocked-carrier figures. */
    public SyscallStats.Snapshot syscallStats() {
        return s.syscallStats.snapshot(s);
    }

    /** Every goroutine's dump, in Go's format ({@code runtime.Stack(buf, true)}). */
    public String dump() {
        return Traceback.dumpAll(s);
    }

    /** Starts the execution tracer (everything, no window); a running recording is discarded first. */
    public void startTrace() {
        s.trace.start();
    }

    /** Stops the execution tracer and returns what it recorded (null if nothing). */
    public Trace stopTrace() {
        return s.trace.stop();
    }

    /** The runtime's name (its Config's; the carriers' thread names start with it). */
    public String name() {
        return s.config().name();
    }

    @Override
    public String toString() {
        return "GoRuntime[" + name() + ", GOMAXPROCS=" + gomaxprocs() + "]";
    }
}
