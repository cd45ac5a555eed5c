package dev.gort.runtime.pprof;

import dev.gort.runtime.Traceback;
import dev.gort.runtime.pprof.ProfileProto.Profile;
import dev.gort.runtime.pprof.ProfileProto.Sample;
import java.io.IOException;
import java.io.OutputStream;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryUsage;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import jdk.jfr.Recording;
import jdk.jfr.consumer.EventStream;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedStackTrace;

/**
 * Go's heap and allocs profiles ({@code pprof.Lookup("heap")}, {@code "allocs"},
 * {@code pprof.WriteHeapProfile}), as far as the JVM can tell them: the profile.proto that {@code
 * go tool pprof} reads ({@code debug=0}) or Go's legacy text ({@code heap profile: ...}, the
 * records, the {@code # runtime.MemStats} block), from two JFR sources that run while sampling is
 * on ({@link #start}; the debug server turns it on while it runs):
 *
 * <ul>
 *   <li>{@code alloc_space/bytes} per stack: the sum of the weights of JFR's
 *       {@code jdk.ObjectAllocationSample} events on that stack. JFR samples an allocation when a
 *       thread takes a new TLAB or allocates outside one, about {@value #THROTTLE} across the
 *       JVM, and weighs each sample with the bytes its thread allocated since its previous sample
 *       (a thread's first sample while sampling is on, at most what the thread allocated since it
 *       was turned on: {@code Session.allocSample}):
 *       the weights sum to what the threads allocated, and a stack's share is JFR's statistical
 *       estimate of what it allocated (Go's {@code alloc_space} is the same kind of estimate, from
 *       sampling every 512 KiB);
 *   <li>{@code alloc_samples/count}, where Go has {@code alloc_objects}: how many of those samples
 *       the stack had. A JFR allocation sample carries no object size, so the number of objects
 *       cannot be estimated; the count says how much evidence stands behind the stack's
 *       {@code alloc_space};
 *   <li>{@code inuse_objects/count} and {@code inuse_space/bytes}: the live objects that JFR's
 *       old-object sampler ({@code jdk.OldObjectSample}) holds, each counted once at its own size,
 *       obtained on demand: each heap profile dumps the recording (the last 10 s
 *       of its chunks, to a temporary file it then reads: tens to hundreds of ms),
 *       which makes the JVM emit them. The sampler keeps at most 256 objects ({@code
 *       -XX:FlightRecorderOptions:old-object-queue-size=N}), taken at TLAB refills and kept for as
 *       long as they live, preferring long-lived ones (it was built to find leaks); the JVM reports
 *       those allocated before the last collection that found a sampled object dead (Go's are as
 *       of the last completed collection; {@code ?gc=1} collects first in both). Its events carry
 *       no weight, so nothing can scale them to the whole heap: they show where sampled survivors
 *       were allocated and how big they are, not how many bytes each stack holds, which Go's
 *       {@code inuse_*} estimate. The live heap's size is {@code HeapAlloc} in the {@code debug=1}
 *       text and in the profile.proto's comments.
 * </ul>
 *
 * <p>Go's profile covers the program from its start; this one covers the time sampling was on
 * (allocations are cumulative over every time it was on, as Go's buckets are; the in-use objects
 * are the sampler's while it runs, none while it is off). The profile.proto says so in its
 * comments ({@code go tool pprof -comments}). Stacks are JFR's (64 frames unless {@code
 * -XX:FlightRecorderOptions:stackdepth=N}), a goroutine's cut at its continuation's entry and each
 * frame's file inferred from its class, as the CPU profile's ({@link JfrStacks}); the profile.proto
 * hides the leading runtime frames (gort's {@code runtime.*}) as Go's does. Sampling costs what the
 * JDK's {@code profile} settings cost for these two events (a stack walk at each sampled TLAB
 * refill; the JDK describes its {@code profile} settings as about 2% overhead).
 *
 * <p>Go: runtime/pprof/pprof.go WriteHeapProfile, writeHeap, writeAlloc, writeHeapInternal;
 * runtime/pprof/protomem.go writeHeapProto; runtime/mprof.go MemProfile
 */
public final class MemProfile {
    /** JFR's limit on allocation samples (the JDK's {@code profile} settings' figure). */
    static final String THROTTLE = "300/s";
    /** How long the recording keeps its chunks, all of which a heap profile's dump copies and reads. */
    private static final Duration MAX_AGE = Duration.ofSeconds(10);
    /** How long a writer waits for a sampling start in progress (JFR's first start takes ~1 s). */
    private static final long START_WAIT_S = 30;

    private static final Object LOCK = new Object();
    /** Callers of {@link #start} not yet matched by {@link #stop}: under {@link #LOCK}. */
    private static int users;
    /** The sampling running (or starting), null while off: under {@link #LOCK}. */
    private static Session session;
    /** When sampling was first turned on, ns since the epoch; 0 before: under {@link #LOCK}. */
    private static long firstStartWallNanos;

    /** The ids of {@link HeapProfileMark}s. */
    private static final java.util.concurrent.atomic.AtomicLong MARKS = new java.util.concurrent.atomic.AtomicLong();

    /**
     * Committed just before a heap profile dumps the recording: the old-object samples that dump
     * makes the JVM emit come after it on JFR's clock. Off unless a recording enables it (the heap
     * profile's does); not one of the scheduler's {@code gort.*} events, so it turns no hook on.
     */
    @jdk.jfr.Name(HeapProfileMark.NAME)
    @jdk.jfr.Label("Heap Profile Mark")
    @jdk.jfr.Category({"gort", "Profiles"})
    @jdk.jfr.Description("A heap profile dumped the recording here: the old-object samples after it are that profile's")
    @jdk.jfr.Enabled(false)
    @jdk.jfr.StackTrace(false)
    static final class HeapProfileMark extends jdk.jfr.Event {
        static final String NAME = "gort.HeapProfileMark";

        @jdk.jfr.Label("Mark")
        long id;
    }

    /** Per stack (top first, runtime frames kept): {alloc samples, alloc bytes}, from every session. */
    private static final Map<List<StackTraceElement>, long[]> ALLOCS = new HashMap<>();

    private MemProfile() {}

    /** One time sampling was on: a JFR recording and the stream that reads its allocation samples. */
    private static final class Session {
        final CountDownLatch started = new CountDownLatch(1);
        /** Set before {@link #started} opens; null if starting failed. */
        volatile Recording recording;

        volatile EventStream stream;
        /** Why sampling could not start, or null. */
        volatile Throwable failure;
        /** Stopped: under this session's monitor. */
        boolean closed;

        /**
         * The platform threads alive when this session started, each with the bytes it had
         * allocated then ({@code ThreadMXBean}); a thread's entry goes at its first allocation sample
         * ({@link #allocSample}). Filled by {@link #run} before the recording starts, then read and
         * emptied only by the stream's callbacks, which run on the same thread ({@code es.start()}):
         * confined to the session's thread. Empty where the JVM cannot count a thread's allocation.
         */
        private final Map<Long, Long> allocatedAtStart = new HashMap<>();

        /** The recording once started (waits for a start in progress), or null. */
        Recording awaitRecording() {
            try {
                if (!started.await(START_WAIT_S, TimeUnit.SECONDS)) {
                    return null;
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return null;
            }
            return recording;
        }

        void run() {
            Recording r = null;
            EventStream es = null;
            try {
                r = new Recording();
                r.setName("gort heap profile");
                r.enable("jdk.ObjectAllocationSample").withStackTrace().with("throttle", THROTTLE);
                r.enable("jdk.OldObjectSample").withStackTrace().with("cutoff", "0 ns");
                r.enable(HeapProfileMark.class);
                r.setToDisk(true);
                r.setMaxAge(MAX_AGE);
                Instant from = Instant.now();
                snapshotAllocated();
                r.start();
                es = EventStream.openRepository();
                es.setStartTime(from);
                es.onEvent("jdk.ObjectAllocationSample", this::allocSample);
            } catch (RuntimeException | Error | IOException e) {
                failure = e;
                closeQuietly(es, r);
                started.countDown();
                return;
            }
            synchronized (this) {
                if (closed) { // stopped while starting
                    closeQuietly(es, r);
                    started.countDown();
                    return;
                }
                recording = r;
                stream = es;
            }
            started.countDown();
            try {
                es.start(); // until stop closes it
            } catch (RuntimeException e) {
                failure = e; // a stream that failed: its samples so far stay
            } finally {
                closeQuietly(es, r);
            }
        }

        synchronized void close() {
            closed = true;
            closeQuietly(stream, recording);
        }

        private void snapshotAllocated() {
            com.sun.management.ThreadMXBean t = allocationCounter();
            if (t == null) {
                return;
            }
            long[] ids = t.getAllThreadIds();
            long[] bytes = t.getThreadAllocatedBytes(ids);
            for (int i = 0; i < ids.length; i++) {
                if (bytes[i] >= 0) {
                    allocatedAtStart.put(ids[i], bytes[i]);
                }
            }
        }

        /**
         * Adds one allocation sample to {@link #ALLOCS}. JFR weighs a sample with the bytes its
         * thread allocated since the thread's previous committed sample, whenever that was: for a
         * thread that was alive before this session, its first sample here also carries what the
         * thread allocated before sampling was on (since its last sample of an earlier session, or
         * since the thread began), all of it on this one stack. That first weight is capped at what
         * the thread has allocated since the session started (read now, a little after the sample:
         * an upper bound of the sample's share of the session). A thread gone by then cannot be
         * measured, and its first weight is dropped (the sample still counts). Threads started
         * during the session keep their first weight, all of it theirs. (A test thread that had
         * allocated gigabytes in earlier tests put them on the first stack it sampled once the
         * profile was on, and the stack under test fell below {@code go tool pprof -top}'s cut.)
         */
        private void allocSample(RecordedEvent e) {
            long weight = e.getLong("weight");
            if (!allocatedAtStart.isEmpty() && e.getThread() != null) {
                long id = e.getThread().getJavaThreadId();
                Long before = allocatedAtStart.remove(id);
                if (before != null) {
                    com.sun.management.ThreadMXBean t = allocationCounter();
                    long now = t == null ? -1 : t.getThreadAllocatedBytes(id);
                    weight = now < 0 ? 0 : Math.min(weight, Math.max(0, now - before));
                }
            }
            RecordedStackTrace st = e.getStackTrace();
            List<StackTraceElement> stack = st == null ? List.of() : JfrStacks.stack(st.getFrames());
            synchronized (ALLOCS) {
                long[] v = ALLOCS.computeIfAbsent(stack, k -> new long[2]);
                v[0]++;
                v[1] += weight;
            }
        }

        private static void closeQuietly(EventStream es, Recording r) {
            if (es != null) {
                es.close();
            }
            if (r != null) {
                r.close();
            }
        }
    }

    /**
     * Turns allocation sampling on (a JFR recording and a daemon thread that reads it) and waits
     * until it runs; a later call only counts, and sampling stays on until each call is matched by
     * {@link #stop}. Allocations before it are not in the profiles: Go samples from the program's
     * start.
     *
     * @throws IllegalStateException {@code heap profiling not available: ...} where JFR cannot
     *     record (a JVM without it)
     */
    public static void start() {
        Session s = begin();
        Recording r = s.awaitRecording();
        if (r == null) {
            stop();
            Throwable f = s.failure;
            throw new IllegalStateException(
                    "heap profiling not available: " + (f != null ? f : "JFR did not start in " + START_WAIT_S + " s"),
                    f);
        }
    }

    /**
     * {@link #start} without the wait: sampling starts on its thread (JFR's first start takes about
     * a second), and a profile written meanwhile waits for it. What the debug server calls, so that
     * it answers at once.
     */
    public static void startAsync() {
        begin();
    }

    private static Session begin() {
        synchronized (LOCK) {
            users++;
            if (session == null) {
                Session s = new Session();
                session = s;
                if (firstStartWallNanos == 0) {
                    firstStartWallNanos = System.currentTimeMillis() * 1_000_000L;
                }
                Thread t = new Thread(s::run, "gort-memprofile");
                t.setDaemon(true); // JFR's own stream thread would keep the JVM from exiting
                t.start();
            }
            return session;
        }
    }

    /**
     * Matches one {@link #start} (or {@link #startAsync}); the last one turns sampling off. The
     * allocations sampled stay in later profiles (Go's records are never dropped either); the
     * in-use objects are the sampler's, and none are reported while it is off. Does nothing when
     * sampling is off.
     */
    public static void stop() {
        Session s;
        synchronized (LOCK) {
            if (users == 0) {
                return;
            }
            if (--users > 0) {
                return;
            }
            s = session;
            session = null;
        }
        s.close();
    }

    /** Whether allocation sampling is on (or starting). */
    public static boolean running() {
        synchronized (LOCK) {
            return session != null;
        }
    }

    /** The JVM's per-thread allocation counter, or null where it has none or it is off. */
    static com.sun.management.ThreadMXBean allocationCounter() {
        return ManagementFactory.getThreadMXBean() instanceof com.sun.management.ThreadMXBean t
                        && t.isThreadAllocatedMemorySupported()
                        && t.isThreadAllocatedMemoryEnabled()
                ? t
                : null;
    }

    /** The bytes of every allocation sample so far, on every stack: alloc_space's total. */
    static long allocSpaceTotal() {
        long n = 0;
        synchronized (ALLOCS) {
            for (long[] v : ALLOCS.values()) {
                n += v[1];
            }
        }
        return n;
    }

    /**
     * The bytes sampled so far on the stacks whose top frame, leading runtime frames hidden, is
     * {@code cls.method}: what a test allocating there waits for.
     */
    static long allocSpaceAt(String cls, String method) {
        long n = 0;
        synchronized (ALLOCS) {
            for (Map.Entry<List<StackTraceElement>, long[]> e : ALLOCS.entrySet()) {
                List<StackTraceElement> st = hideRuntime(e.getKey());
                if (!st.isEmpty()
                        && st.get(0).getClassName().equals(cls)
                        && st.get(0).getMethodName().equals(method)) {
                    n += e.getValue()[1];
                }
            }
        }
        return n;
    }

    /**
     * {@code pprof.WriteHeapProfile(w)}: the heap profile's profile.proto (gzip'd). Go: pprof.go
     * WriteHeapProfile.
     */
    public static void writeHeapProfile(OutputStream w) throws IOException {
        writeHeap(w, 0);
    }

    /**
     * The heap profile ({@code /debug/pprof/heap}): {@code debug=0} the profile.proto, whose
     * default sample type is {@code inuse_space} (the last, as Go's); otherwise Go's text. Go:
     * pprof.go writeHeap.
     */
    public static void writeHeap(OutputStream w, int debug) throws IOException {
        writeHeapInternal(w, debug, "");
    }

    /**
     * The allocs profile ({@code /debug/pprof/allocs}): the heap profile with {@code alloc_space}
     * as its default sample type. Go: pprof.go writeAlloc.
     */
    public static void writeAlloc(OutputStream w, int debug) throws IOException {
        writeHeapInternal(w, debug, "alloc_space");
    }

    /** One stack's figures: {alloc samples, alloc bytes, in-use objects, in-use bytes}. */
    record Record(List<StackTraceElement> stack, long[] v) {}

    /** What the profiles write: the records, and what they cover (the profile.proto's comments). */
    record Snapshot(List<Record> records, List<String> comments) {}

    /**
     * Every stack's figures now: the allocation samples so far, and the sampler's live objects
     * (a dump of the recording), which wait for a start in progress. Go: mprof.go MemProfile.
     */
    static Snapshot memProfile() throws IOException {
        Session s;
        long since;
        synchronized (LOCK) {
            s = session;
            since = firstStartWallNanos;
        }
        List<String> comments = new ArrayList<>();
        Map<List<StackTraceElement>, long[]> inuse = Map.of();
        Recording r = s == null ? null : s.awaitRecording();
        if (r != null) {
            inuse = liveSamples(r);
        }
        Map<List<StackTraceElement>, long[]> all = new LinkedHashMap<>();
        synchronized (ALLOCS) {
            for (Map.Entry<List<StackTraceElement>, long[]> e : ALLOCS.entrySet()) {
                all.put(e.getKey(), new long[] {e.getValue()[0], e.getValue()[1], 0, 0});
            }
        }
        long liveObjects = 0;
        for (Map.Entry<List<StackTraceElement>, long[]> e : inuse.entrySet()) {
            long[] v = all.computeIfAbsent(e.getKey(), k -> new long[4]);
            v[2] += e.getValue()[0];
            v[3] += e.getValue()[1];
            liveObjects += e.getValue()[0];
        }
        List<Record> out = new ArrayList<>(all.size());
        for (Map.Entry<List<StackTraceElement>, long[]> e : all.entrySet()) {
            out.add(new Record(e.getKey(), e.getValue()));
        }
        comments.add(
                since == 0
                        ? "gort: allocation sampling was never on (MemProfile.start, the debug server): no allocations"
                        : "gort: alloc_samples, alloc_space: JFR's jdk.ObjectAllocationSample (about " + THROTTLE
                                + ") while sampling was on, first from " + Instant.ofEpochSecond(0, since)
                                + " (not the program's start); alloc_space sums the samples' weights");
        comments.add(
                s == null
                        ? "gort: inuse_objects, inuse_space: none (sampling is off)"
                        : r == null
                                ? "gort: inuse_objects, inuse_space: none (sampling could not start: " + s.failure + ")"
                                : "gort: inuse_objects, inuse_space: the " + liveObjects
                                        + " live objects JFR's old-object sampler holds, each once at its size (not scaled to the"
                                        + " heap); heap in use: " + heapUsed() + " bytes");
        return new Snapshot(out, comments);
    }

    /**
     * The live objects the old-object sampler holds now, per allocation stack: {objects, bytes}.
     * A dump of the recording makes the JVM emit them (JFR emits them only when a recording stops
     * or is dumped); the dump also holds the chunks of the last {@link #MAX_AGE}, with the
     * emissions of earlier dumps, so only the newest emission since this one began is read.
     */
    private static Map<List<StackTraceElement>, long[]> liveSamples(Recording r) throws IOException {
        Path tmp = Files.createTempFile("gort-heap", ".jfr");
        try {
            // a mark on JFR's own clock: the emission this dump makes comes after it, earlier
            // dumps' before it (an emission with no live object has no event to tell it by)
            HeapProfileMark mark = new HeapProfileMark();
            mark.id = MARKS.incrementAndGet();
            mark.commit();
            try {
                r.dump(tmp);
            } catch (IOException | IllegalStateException e) {
                return Map.of(); // sampling was turned off meanwhile: no live objects to report
            }
            List<RecordedEvent> events = new ArrayList<>();
            Instant[] from = new Instant[1];
            try (EventStream es = EventStream.openFile(tmp)) {
                es.onEvent("jdk.OldObjectSample", events::add);
                es.onEvent(HeapProfileMark.NAME, e -> {
                    if (e.getLong("id") == mark.id) {
                        from[0] = e.getStartTime();
                    }
                });
                es.start();
            }
            if (from[0] == null) {
                throw new IllegalStateException("gort: the heap profile's mark is not in the recording's dump");
            }
            Instant newest = null; // the newest emission since the mark (a concurrent dump's may be one)
            for (RecordedEvent e : events) {
                Instant t = e.getStartTime();
                if (!t.isBefore(from[0]) && (newest == null || t.isAfter(newest))) {
                    newest = t;
                }
            }
            Map<List<StackTraceElement>, long[]> m = new HashMap<>();
            for (RecordedEvent e : events) {
                if (!e.getStartTime().equals(newest)) {
                    continue;
                }
                RecordedStackTrace st = e.getStackTrace();
                List<StackTraceElement> stack = st == null ? List.of() : JfrStacks.stack(st.getFrames());
                long[] v = m.computeIfAbsent(stack, k -> new long[2]);
                v[0]++;
                v[1] += e.getLong("objectSize");
            }
            return m;
        } finally {
            Files.deleteIfExists(tmp);
        }
    }

    /**
     * The stack without its leading runtime frames (gort's {@code runtime.*}), or the whole stack
     * if nothing else is in it. Go: protomem.go writeHeapProto (hideRuntime).
     */
    static List<StackTraceElement> hideRuntime(List<StackTraceElement> stack) {
        for (int i = 0; i < stack.size(); i++) {
            if (!Traceback.isRuntimeClass(stack.get(i).getClassName())) {
                return stack.subList(i, stack.size());
            }
        }
        return stack;
    }

    /** Go: pprof.go writeHeapInternal. */
    static void writeHeapInternal(OutputStream w, int debug, String defaultSampleType) throws IOException {
        Objects.requireNonNull(w, "w");
        String memStats = debug != 0 ? memStats() : null; // first, as Go reads them first
        Snapshot snap = memProfile();
        if (debug == 0) {
            writeHeapProto(w, snap, defaultSampleType);
            return;
        }
        List<Record> p = new ArrayList<>(snap.records());
        // most in use first, as Go 1.19's sort.Slice (newer Go's slices.SortFunc puts the least first)
        p.sort((x, y) -> Long.compare(y.v()[3], x.v()[3]));
        long[] total = new long[4];
        for (Record r : p) {
            for (int i = 0; i < 4; i++) {
                total[i] += r.v()[i];
            }
        }
        // Go: pprof reads alloc == inuse as a two-column profile; keep them apart
        long allocBytes = total[1] == total[3] ? total[1] + 1 : total[1];
        Pprof.Builder b = new Pprof.Builder();
        StringBuilder sb = new StringBuilder();
        // heap/0: gort has no byte sampling rate (JFR's is per second)
        sb.append("heap profile: ").append(total[2]).append(": ").append(total[3]);
        sb.append(" [").append(total[0]).append(": ").append(allocBytes).append("] @ heap/0\n");
        for (Record r : p) {
            long[] v = r.v();
            sb.append(v[2])
                    .append(": ")
                    .append(v[3])
                    .append(" [")
                    .append(v[0])
                    .append(": ")
                    .append(v[1]);
            sb.append("] @");
            long[] locs = new long[r.stack().size()];
            for (int i = 0; i < locs.length; i++) {
                locs[i] = b.location(r.stack().get(i));
                sb.append(" 0x").append(Long.toHexString(locs[i]));
            }
            sb.append('\n');
            Pprof.printStackRecord(sb, b, locs, false);
        }
        sb.append(memStats);
        w.write(sb.toString().getBytes(StandardCharsets.UTF_8));
    }

    /**
     * The heap profile.proto: period type {@code space/bytes}, sample types {@code
     * alloc_samples/count}, {@code alloc_space/bytes}, {@code inuse_objects/count}, {@code
     * inuse_space/bytes} (Go's, with {@code alloc_samples} where Go has {@code alloc_objects}), the
     * default sample type if not empty, leading runtime frames hidden. No period: JFR's sampling
     * has no byte rate. Go: protomem.go writeHeapProto.
     */
    static void writeHeapProto(OutputStream w, Snapshot snap, String defaultSampleType) throws IOException {
        Pprof.Builder b = new Pprof.Builder();
        Profile.Builder pb = b.profile;
        pb.setPeriodType(b.valueType("space", "bytes"));
        addSampleTypes(b, defaultSampleType);
        pb.setTimeNanos(System.currentTimeMillis() * 1_000_000L);
        for (String c : snap.comments()) {
            pb.addComment(b.string(c));
        }
        List<Record> p = new ArrayList<>(snap.records());
        p.sort((x, y) -> x.v()[1] != y.v()[1] ? Long.compare(y.v()[1], x.v()[1]) : Long.compare(y.v()[3], x.v()[3]));
        for (Record r : p) {
            Sample.Builder sm = Sample.newBuilder();
            for (long v : r.v()) {
                sm.addValue(v);
            }
            for (StackTraceElement f : hideRuntime(r.stack())) {
                sm.addLocationId(b.location(f));
            }
            pb.addSample(sm);
        }
        w.write(b.build());
    }

    /** The four sample types (and the default one) of a heap or allocs profile. */
    static void addSampleTypes(Pprof.Builder b, String defaultSampleType) {
        Profile.Builder pb = b.profile;
        pb.addSampleType(b.valueType("alloc_samples", "count"));
        pb.addSampleType(b.valueType("alloc_space", "bytes"));
        pb.addSampleType(b.valueType("inuse_objects", "count"));
        pb.addSampleType(b.valueType("inuse_space", "bytes"));
        if (!defaultSampleType.isEmpty()) {
            pb.setDefaultSampleType(b.string(defaultSampleType));
        }
    }

    /**
     * Per stack (leading runtime frames hidden, so that stacks the profile.proto shows as one are
     * one), the four figures now: a snapshot for {@link Pprof#writeDelta}.
     */
    static Map<List<StackTraceElement>, long[]> snapshot() throws IOException {
        Map<List<StackTraceElement>, long[]> m = new LinkedHashMap<>();
        for (Record r : memProfile().records()) {
            long[] v = m.computeIfAbsent(List.copyOf(hideRuntime(r.stack())), k -> new long[4]);
            for (int i = 0; i < 4; i++) {
                v[i] += r.v()[i];
            }
        }
        return m;
    }

    private static long heapUsed() {
        return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
    }

    /**
     * The {@code # runtime.MemStats} block of the text form, with the fields the JVM has a figure
     * for: {@code Alloc} and {@code HeapAlloc} (the heap's used bytes, garbage not yet collected
     * included, as Go's), {@code TotalAlloc} (the bytes every thread allocated, {@code
     * ThreadMXBean.getTotalThreadAllocatedBytes}), {@code HeapSys} (the heap's committed bytes),
     * {@code LastGC} (when the last collection ended), {@code NumGC} (every collector's count) and
     * {@code MaxRSS} (Linux's peak resident set, as Go's on Linux). Go's others (object counts,
     * spans, stacks, the next GC's goal) have no JVM counterpart and are left out. Go: pprof.go
     * writeHeapInternal (the MemStats block), addMaxRSS.
     */
    static String memStats() {
        MemoryUsage heap = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage();
        long totalAlloc = -1;
        if (ManagementFactory.getThreadMXBean() instanceof com.sun.management.ThreadMXBean t) {
            totalAlloc = t.getTotalThreadAllocatedBytes();
        }
        long numGC = 0;
        long lastGCEndMs = -1;
        for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
            numGC += Math.max(0, gc.getCollectionCount());
            if (gc instanceof com.sun.management.GarbageCollectorMXBean sun && sun.getLastGcInfo() != null) {
                lastGCEndMs = Math.max(lastGCEndMs, sun.getLastGcInfo().getEndTime());
            }
        }
        long lastGC =
                lastGCEndMs < 0 ? 0 : (ManagementFactory.getRuntimeMXBean().getStartTime() + lastGCEndMs) * 1_000_000L;
        StringBuilder sb = new StringBuilder("\n# runtime.MemStats\n");
        sb.append("# Alloc = ").append(heap.getUsed()).append('\n');
        if (totalAlloc >= 0) {
            sb.append("# TotalAlloc = ").append(totalAlloc).append('\n');
        }
        sb.append("# HeapAlloc = ").append(heap.getUsed()).append('\n');
        sb.append("# HeapSys = ").append(heap.getCommitted()).append('\n');
        sb.append("# LastGC = ").append(lastGC).append('\n');
        sb.append("# NumGC = ").append(numGC).append('\n');
        long maxRss = maxRss();
        if (maxRss > 0) {
            sb.append("# MaxRSS = ").append(maxRss).append('\n');
        }
        sb.append("# gort: the JVM's figures only (see MemProfile); [n: ...] counts JFR allocation samples,")
                .append(" not objects; inuse counts the live objects JFR's old-object sampler holds\n");
        return sb.toString();
    }

    /** Linux's peak resident set size ({@code VmHWM}), in bytes; 0 where it cannot be read. */
    private static long maxRss() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
                if (line.startsWith("VmHWM:")) {
                    String kb = line.substring(6).trim().split("\\s+")[0];
                    return Long.parseLong(kb) * 1024;
                }
            }
        } catch (IOException | RuntimeException e) {
            // not Linux
        }
        return 0;
    }
}
