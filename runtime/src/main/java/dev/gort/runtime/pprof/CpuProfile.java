package dev.gort.runtime.pprof;

import dev.gort.runtime.pprof.ProfileProto.Profile;
import dev.gort.runtime.pprof.ProfileProto.Sample;
import java.io.IOException;
import java.io.OutputStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedStackTrace;
import jdk.jfr.consumer.RecordingStream;

/**
 * Go's CPU profile: {@code pprof.StartCPUProfile(w)} ... {@code pprof.StopCPUProfile()} writes a
 * gzip'd profile.proto that {@code go tool pprof} reads, with Go's sample types
 * ({@code samples/count}, {@code cpu/nanoseconds}) and period (10 ms of CPU, Go's 100 Hz).
 *
 * <p>The samples are the JDK's: a JFR stream of {@code jdk.ExecutionSample} every 10 ms, which
 * samples each thread running Java code without a safepoint (no safepoint bias), whatever runs it:
 * goroutines, their carriers between goroutines, and every other Java thread of the process (Go's
 * profile covers the whole process, too). A goroutine's stack ends at its continuation's entry: the
 * carrier's frames below it (the M's loop) are left out, so that its stacks read as Go's do. Unlike
 * Go's (SIGPROF on CPU time, native code included): only Java code is sampled, so that time in
 * native code, in the JVM (a system call such as {@code ThreadMXBean.getCurrentThreadCpuTime},
 * 1.8 us here) and in the JVM's own threads (the JIT, the collector) is missing (a loop that spent
 * almost all of 1.2 s of CPU in that call gave 6 samples, the same loop doing Java work 271); the
 * first tens of milliseconds are missed while JFR's stream starts (25-39 samples in 0.4 s of one
 * spinning thread); stacks deeper than JFR's stack
 * depth (64 frames unless {@code -XX:FlightRecorderOptions:stackdepth=N}) lose their outermost
 * frames. A frame's file is
 * inferred from its class ({@code a/b/Outer.java} for {@code a.b.Outer$Inner}): JFR's frames do not
 * name it ({@link JfrStacks}).
 *
 * <p>One profile at a time in the process, as in Go.
 *
 * <p>Go: runtime/pprof/pprof.go StartCPUProfile, StopCPUProfile; runtime/pprof/proto.go
 * (profileBuilder for CPU samples)
 */
public final class CpuProfile {
    /** Go's default rate: 100 samples per second of CPU. */
    static final long PERIOD_NS = 10_000_000L;

    private static final Object LOCK = new Object();
    /** The profile in progress, or null: under {@link #LOCK}. */
    private static CpuProfile active;

    private final OutputStream w;
    private final RecordingStream stream;
    private final long startNanos = System.nanoTime();
    private final long startWallNanos = System.currentTimeMillis() * 1_000_000L;
    /** Samples per stack (top frame first); written by JFR's stream thread, read after it stopped. */
    private final Map<List<StackTraceElement>, long[]> counts = new HashMap<>();

    private CpuProfile(OutputStream w, RecordingStream stream) {
        this.w = w;
        this.stream = stream;
    }

    /**
     * Starts profiling the process's CPU for {@link #stopCPUProfile}, which writes the profile to
     * {@code w}. Go: pprof.go StartCPUProfile.
     *
     * @throws IllegalStateException {@code cpu profiling already in use} while a profile runs (Go's
     *     error), or where JFR cannot record (a JVM without it)
     */
    public static void startCPUProfile(OutputStream w) {
        Objects.requireNonNull(w, "w");
        synchronized (LOCK) {
            if (active != null) {
                throw new IllegalStateException("cpu profiling already in use");
            }
            RecordingStream rs;
            try {
                rs = new RecordingStream();
            } catch (RuntimeException | Error e) {
                throw new IllegalStateException("cpu profiling not available: " + e, e);
            }
            CpuProfile p = new CpuProfile(w, rs);
            rs.enable("jdk.ExecutionSample").withPeriod(Duration.ofNanos(PERIOD_NS));
            rs.onEvent("jdk.ExecutionSample", p::sample);
            rs.startAsync();
            active = p;
        }
    }

    /**
     * Stops the profile in progress and writes it; does nothing if none runs. The samples taken
     * until now are all in it (the stream is drained before the write). Go: pprof.go StopCPUProfile.
     */
    public static void stopCPUProfile() throws IOException {
        CpuProfile p;
        synchronized (LOCK) {
            p = active;
            if (p == null) {
                return;
            }
            active = null;
        }
        p.stream.stop(); // waits until every recorded event has been consumed
        p.stream.close();
        p.write();
    }

    /** Whether a profile is in progress. */
    public static boolean running() {
        synchronized (LOCK) {
            return active != null;
        }
    }

    private void sample(RecordedEvent e) {
        RecordedStackTrace st = e.getStackTrace();
        if (st == null) {
            return;
        }
        List<StackTraceElement> stack = JfrStacks.stack(st.getFrames());
        synchronized (counts) {
            counts.computeIfAbsent(stack, k -> new long[1])[0]++;
        }
    }

    private void write() throws IOException {
        Pprof.Builder b = new Pprof.Builder();
        Profile.Builder pb = b.profile;
        pb.addSampleType(b.valueType("samples", "count"));
        pb.addSampleType(b.valueType("cpu", "nanoseconds"));
        pb.setPeriodType(b.valueType("cpu", "nanoseconds"));
        pb.setPeriod(PERIOD_NS);
        pb.setTimeNanos(startWallNanos);
        pb.setDurationNanos(System.nanoTime() - startNanos);
        List<Map.Entry<List<StackTraceElement>, long[]>> entries;
        synchronized (counts) {
            entries = new ArrayList<>(counts.entrySet());
        }
        entries.sort((x, y) -> Long.compare(y.getValue()[0], x.getValue()[0]));
        for (Map.Entry<List<StackTraceElement>, long[]> e : entries) {
            long n = e.getValue()[0];
            Sample.Builder sm = Sample.newBuilder().addValue(n).addValue(n * PERIOD_NS);
            for (StackTraceElement f : e.getKey()) {
                sm.addLocationId(b.location(f));
            }
            pb.addSample(sm);
        }
        w.write(b.build());
        w.flush();
    }
}
