package dev.gort.runtime.pprof;

import dev.gort.runtime.G;
import dev.gort.runtime.Scheduler;
import dev.gort.runtime.Traceback;
import dev.gort.runtime.pprof.ProfileProto.Function;
import dev.gort.runtime.pprof.ProfileProto.Line;
import dev.gort.runtime.pprof.ProfileProto.Location;
import dev.gort.runtime.pprof.ProfileProto.Mapping;
import dev.gort.runtime.pprof.ProfileProto.Profile;
import dev.gort.runtime.pprof.ProfileProto.Sample;
import dev.gort.runtime.pprof.ProfileProto.ValueType;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.zip.GZIPOutputStream;

/**
 * Go's count profiles ({@code goroutine}, {@code threadcreate}) in the two forms
 * {@code runtime/pprof} writes: {@code debug=0}, a gzip-compressed {@code profile.proto} (built with
 * protobuf-java's generated classes from the checked-in {@code src/main/protobuf/profile.proto},
 * compiled at build time by protoc from Maven Central), which {@code go tool pprof} reads; and
 * {@code debug=1}, the legacy text ({@code goroutine profile: total N}, then {@code count @ addr...}
 * and a {@code #\taddr\tfunc+0x0\tfile:line} line per frame, aligned as Go's tabwriter aligns them).
 * {@code debug=2} of the goroutine profile is the goroutine dump ({@link Traceback#dumpAll}).
 *
 * <p>The JVM has no program counters: each distinct frame (class, method, file, line) gets a
 * location id, which is also its address, and offsets print as {@code +0x0}. One mapping stands for
 * the JVM, with every function already named (pprof does not try to symbolize).
 *
 * <p>Go: runtime/pprof/pprof.go writeGoroutine, writeThreadCreate, printCountProfile,
 * printStackRecord; runtime/pprof/proto.go profileBuilder
 */
public final class Pprof {
    private Pprof() {}

    /**
     * The goroutine profile of {@code s}: every live goroutine's stack (runtime frames included, as
     * Go's), identical stacks counted together. Go: pprof.go writeGoroutine.
     */
    public static void writeGoroutine(Scheduler s, OutputStream w, int debug) throws IOException {
        if (debug >= 2) {
            w.write(Traceback.dumpAll(s).getBytes(StandardCharsets.UTF_8));
            return;
        }
        List<StackTraceElement[]> stacks = new ArrayList<>();
        for (G gp : s.allgs()) {
            stacks.add(Traceback.stack(gp));
        }
        writeCountProfile(w, debug, "goroutine", stacks);
    }

    /**
     * The goroutineleak profile of {@code s}: runs leak detection ({@link
     * Scheduler#goroutineLeakProfile}, a few full collections) and writes every goroutine found
     * leaked so far: {@code debug=2} their dumps ({@code goroutine 18 [chan send (leaked)]:}, frames,
     * {@code created by}), separated by blank lines as Go's goroutine dump; otherwise the count
     * profile of their stacks. Go: pprof.go writeGoroutineLeak.
     */
    public static void writeGoroutineLeak(Scheduler s, OutputStream w, int debug) throws IOException {
        List<dev.gort.runtime.LeakedGoroutine> found = s.goroutineLeakProfile();
        if (debug >= 2) {
            StringBuilder sb = new StringBuilder();
            for (dev.gort.runtime.LeakedGoroutine lg : found) {
                if (!sb.isEmpty()) {
                    sb.append('\n');
                }
                sb.append(lg.dump());
            }
            w.write(sb.toString().getBytes(StandardCharsets.UTF_8));
            return;
        }
        List<StackTraceElement[]> stacks = new ArrayList<>();
        for (dev.gort.runtime.LeakedGoroutine lg : found) {
            stacks.add(lg.stack());
        }
        writeCountProfile(w, debug, "goroutineleak", stacks);
    }

    /**
     * The threadcreate profile: one record per M of {@code allm} and one for sysmon's M (Go's allm
     * holds sysmon's). gort does not record the stacks that created its Ms, so every record's stack
     * is empty, which Go prints as {@code #\t0x0}. Go: pprof.go writeThreadCreate.
     */
    public static void writeThreadCreate(Scheduler s, OutputStream w, int debug) throws IOException {
        List<StackTraceElement[]> stacks = new ArrayList<>();
        for (int i = 0, n = s.allmWithSysmon(); i < n; i++) {
            stacks.add(new StackTraceElement[0]);
        }
        writeCountProfile(w, debug, "threadcreate", stacks);
    }

    /**
     * The block profile ({@code /debug/pprof/block}): where goroutines blocked on channels, selects
     * and sync primitives, and for how long ({@link dev.gort.runtime.BlockProfiles}); empty until
     * a rate is set. Go: pprof.go writeBlock.
     */
    public static void writeBlock(Scheduler s, OutputStream w, int debug) throws IOException {
        writeProfileInternal(w, debug, "contention", s.blockprof.blockProfile(), 0);
    }

    /**
     * The mutex profile ({@code /debug/pprof/mutex}): the unlocks of contended Mutexes and
     * RWMutexes, and the delay they ended; empty until a fraction is set. Go: pprof.go writeMutex.
     */
    public static void writeMutex(Scheduler s, OutputStream w, int debug) throws IOException {
        writeProfileInternal(w, debug, "mutex", s.blockprof.mutexProfile(), s.blockprof.mutexProfileRate());
    }

    /**
     * A block or mutex profile, most delay first: {@code debug=0} the gzip'd profile.proto with
     * sample types {@code contentions/count} and {@code delay/nanoseconds}; otherwise Go's text
     * ({@code --- contention:}, {@code cycles/second=}, the mutex profile's {@code sampling
     * period=}, then {@code cycles count @ addr...} and every frame). Delays are nanoseconds, so
     * cycles/second is 1e9. Go: pprof.go writeProfileInternal, printCountCycleProfile.
     */
    static void writeProfileInternal(
            OutputStream w, int debug, String name, List<dev.gort.runtime.BlockProfiles.Record> p, long period)
            throws IOException {
        Builder b = new Builder();
        List<long[]> locs = new ArrayList<>();
        for (dev.gort.runtime.BlockProfiles.Record r : p) {
            long[] l = new long[r.stack().length];
            for (int i = 0; i < l.length; i++) {
                l[i] = b.location(r.stack()[i]);
            }
            locs.add(l);
        }
        if (debug <= 0) {
            Profile.Builder pb = b.profile;
            pb.setPeriodType(b.valueType("contentions", "count"));
            pb.setPeriod(1);
            pb.addSampleType(b.valueType("contentions", "count"));
            pb.addSampleType(b.valueType("delay", "nanoseconds"));
            pb.setTimeNanos(System.currentTimeMillis() * 1_000_000L);
            for (int i = 0; i < p.size(); i++) {
                Sample.Builder sm = Sample.newBuilder()
                        .addValue(p.get(i).count())
                        .addValue(p.get(i).cycles());
                for (long l : locs.get(i)) {
                    sm.addLocationId(l);
                }
                pb.addSample(sm);
            }
            w.write(b.build());
            return;
        }
        StringBuilder sb = new StringBuilder();
        sb.append("--- ").append(name).append(":\n");
        sb.append("cycles/second=").append(1_000_000_000L).append('\n');
        if (name.equals("mutex")) {
            sb.append("sampling period=").append(period).append('\n');
        }
        for (int i = 0; i < p.size(); i++) {
            sb.append(p.get(i).cycles()).append(' ').append(p.get(i).count()).append(" @");
            for (long l : locs.get(i)) {
                sb.append(" 0x").append(Long.toHexString(l));
            }
            sb.append('\n');
            printStackRecord(sb, b, locs.get(i), true);
        }
        w.write(sb.toString().getBytes(StandardCharsets.UTF_8));
    }

    /**
     * Whether net/http/pprof serves the change of profile {@code name} over {@code ?seconds=N}: the
     * cumulative ones ({@code block}, {@code mutex}, {@code heap}, {@code allocs}) and the count
     * profiles ({@code goroutine}, {@code threadcreate}). Go: net/http/pprof profileSupportsDelta.
     */
    public static boolean supportsDelta(String name) {
        return switch (name) {
            case "allocs", "block", "goroutine", "heap", "mutex", "threadcreate" -> true;
            default -> false;
        };
    }

    /**
     * What net/http/pprof serves for {@code /debug/pprof/<name>?seconds=N}: the profile's change
     * while {@code window} runs (the server's {@code N}-second wait). Two snapshots, before and
     * after; the profile.proto (gzip'd) holds, per stack, the second's values less the first's
     * (a goroutine profile's counts may drop below zero, as Go's), stacks whose values all cancel
     * left out, with the second snapshot's time and the interval between the two as its duration.
     *
     * <p>Go: net/http/pprof serveDeltaProfile (p0.Scale(-1), profile.Merge(p0, p1),
     * DurationNanos)
     *
     * @throws IllegalArgumentException when {@code name} has no delta ({@link #supportsDelta})
     */
    public static void writeDelta(Scheduler s, String name, OutputStream w, Runnable window) throws IOException {
        if (!supportsDelta(name)) {
            throw new IllegalArgumentException("pprof: no delta profile for " + name);
        }
        // both snapshots from one call site, so that a goroutine that asks has the same stack in each
        List<Map<List<StackTraceElement>, long[]>> snaps = new ArrayList<>(2);
        long t0 = 0;
        for (int k = 0; k < 2; k++) {
            snaps.add(snapshot(s, name));
            if (k == 0) {
                t0 = System.nanoTime();
                window.run();
            }
        }
        long dur = System.nanoTime() - t0;
        Map<List<StackTraceElement>, long[]> p0 = snaps.get(0);
        Map<List<StackTraceElement>, long[]> p1 = snaps.get(1);
        long timeNanos = System.currentTimeMillis() * 1_000_000L;
        Map<List<StackTraceElement>, long[]> delta = new LinkedHashMap<>();
        for (Map.Entry<List<StackTraceElement>, long[]> e : p1.entrySet()) {
            delta.put(e.getKey(), e.getValue().clone());
        }
        for (Map.Entry<List<StackTraceElement>, long[]> e : p0.entrySet()) {
            long[] v = delta.computeIfAbsent(e.getKey(), k -> new long[e.getValue().length]);
            for (int i = 0; i < v.length; i++) {
                v[i] -= e.getValue()[i];
            }
        }
        delta.values().removeIf(v -> java.util.Arrays.stream(v).allMatch(x -> x == 0));
        Builder b = new Builder();
        Profile.Builder pb = b.profile;
        boolean contention = name.equals("block") || name.equals("mutex");
        if (name.equals("heap") || name.equals("allocs")) {
            pb.setPeriodType(b.valueType("space", "bytes"));
            MemProfile.addSampleTypes(b, name.equals("allocs") ? "alloc_space" : "");
        } else {
            String countName = contention ? "contentions" : name;
            pb.setPeriodType(b.valueType(countName, "count"));
            pb.setPeriod(1);
            pb.addSampleType(b.valueType(countName, "count"));
            if (contention) {
                pb.addSampleType(b.valueType("delay", "nanoseconds"));
            }
        }
        pb.setTimeNanos(timeNanos);
        pb.setDurationNanos(dur);
        for (Map.Entry<List<StackTraceElement>, long[]> e : delta.entrySet()) {
            Sample.Builder sm = Sample.newBuilder();
            for (long v : e.getValue()) {
                sm.addValue(v);
            }
            for (StackTraceElement f : e.getKey()) {
                sm.addLocationId(b.location(f));
            }
            pb.addSample(sm);
        }
        w.write(b.build());
    }

    /**
     * The values of profile {@code name} per stack now: a count, a count and a delay, or a heap
     * profile's four figures.
     */
    private static Map<List<StackTraceElement>, long[]> snapshot(Scheduler s, String name) throws IOException {
        Map<List<StackTraceElement>, long[]> m = new LinkedHashMap<>();
        switch (name) {
            case "heap", "allocs" -> m = MemProfile.snapshot();
            case "goroutine" -> {
                for (G gp : s.allgs()) {
                    m.computeIfAbsent(List.of(Traceback.stack(gp)), k -> new long[1])[0]++;
                }
            }
            case "threadcreate" -> m.put(List.of(), new long[] {s.allmWithSysmon()});
            default -> {
                List<dev.gort.runtime.BlockProfiles.Record> rs =
                        name.equals("block") ? s.blockprof.blockProfile() : s.blockprof.mutexProfile();
                for (dev.gort.runtime.BlockProfiles.Record r : rs) {
                    m.put(List.of(r.stack()), new long[] {r.count(), r.cycles()});
                }
            }
        }
        return m;
    }

    /** Go: pprof.go printCountProfile (text for debug &gt; 0, else the gzip'd proto). */
    static void writeCountProfile(OutputStream w, int debug, String name, List<StackTraceElement[]> stacks)
            throws IOException {
        Builder b = new Builder();
        // group identical stacks by their location ids: Go's keys "@ 0x.. 0x.."
        Map<String, long[]> locsByKey = new LinkedHashMap<>();
        Map<String, Integer> count = new HashMap<>();
        for (StackTraceElement[] st : stacks) {
            long[] locs = new long[st.length];
            StringBuilder key = new StringBuilder("@");
            for (int i = 0; i < st.length; i++) {
                locs[i] = b.location(st[i]);
                key.append(" 0x").append(Long.toHexString(locs[i]));
            }
            String k = key.toString();
            locsByKey.putIfAbsent(k, locs);
            count.merge(k, 1, Integer::sum);
        }
        List<String> keys = new ArrayList<>(locsByKey.keySet());
        keys.sort((x, y) -> {
            int cx = count.get(x), cy = count.get(y);
            return cx != cy ? Integer.compare(cy, cx) : x.compareTo(y);
        });
        if (debug > 0) {
            StringBuilder sb = new StringBuilder();
            sb.append(name).append(" profile: total ").append(stacks.size()).append('\n');
            for (String k : keys) {
                sb.append(count.get(k)).append(' ').append(k).append('\n');
                printStackRecord(sb, b, locsByKey.get(k), false);
            }
            w.write(sb.toString().getBytes(StandardCharsets.UTF_8));
            return;
        }
        Profile.Builder p = b.profile;
        p.setPeriodType(b.valueType(name, "count"));
        p.setPeriod(1);
        p.addSampleType(b.valueType(name, "count"));
        p.setTimeNanos(System.currentTimeMillis() * 1_000_000L);
        for (String k : keys) {
            Sample.Builder sm = Sample.newBuilder().addValue(count.get(k));
            for (long l : locsByKey.get(k)) {
                sm.addLocationId(l);
            }
            p.addSample(sm);
        }
        w.write(b.build());
    }

    /**
     * One record's frames, Go's {@code #\t0x..\tfunc+0x0\tfile:line}: leading runtime frames are
     * hidden (the whole stack is printed if nothing else is left), an empty stack prints
     * {@code #\t0x0}, then a blank line. Go: pprof.go printStackRecord.
     */
    /**
     * A frame's source file as pprof wants it: the path under a source root, from the class's
     * package and the file name the class file records ({@code dev/gort/examples/PrimeSieve.java}),
     * so that {@code go tool pprof -list F -source_path=src/main/java} finds it, as Go's profiles
     * record each file's path (a Java frame knows no more than the file's name); {@code ?} where the
     * class file records none. A hidden class's suffix ({@code a.b.Outer$$Lambda.0x...} as JFR
     * names it, {@code .../0x...} as a stack trace does) is no package.
     */
    static String sourcePath(StackTraceElement e) {
        String file = e.getFileName();
        if (file == null) {
            return "?";
        }
        String cls = JfrStacks.withoutHiddenSuffix(e.getClassName());
        int dot = cls.lastIndexOf('.');
        return dot < 0 ? file : cls.substring(0, dot).replace('.', '/') + "/" + file;
    }

    static void printStackRecord(StringBuilder sb, Builder b, long[] locs, boolean allFrames) {
        List<String[]> rows = new ArrayList<>();
        boolean show = allFrames;
        if (locs.length == 0) {
            rows.add(new String[] {"#", "0x0"});
        }
        for (long l : locs) {
            StackTraceElement e = b.frames.get((int) l - 1);
            if (show || !Traceback.isRuntimeClass(e.getClassName())) {
                show = true;
                rows.add(new String[] {
                    "#",
                    "0x" + Long.toHexString(l),
                    e.getClassName() + "." + e.getMethodName() + "+0x0",
                    sourcePath(e) + ":" + Math.max(0, e.getLineNumber())
                });
            }
        }
        if (locs.length > 0 && !show) {
            printStackRecord(sb, b, locs, true);
            return;
        }
        tabwrite(sb, rows);
        sb.append('\n');
    }

    /**
     * Go's text/tabwriter (minwidth 1, tabwidth 8, padding 1, padchar '\t') on one block of lines
     * whose cells but the last are tab-terminated: column j is as wide as its widest cell plus one,
     * rounded up to a multiple of 8, and each cell is followed by the tabs that fill that width.
     */
    private static void tabwrite(StringBuilder sb, List<String[]> rows) {
        int cols = 0;
        for (String[] r : rows) {
            cols = Math.max(cols, r.length - 1);
        }
        int[] width = new int[cols];
        for (int j = 0; j < cols; j++) {
            int w = 1;
            for (String[] r : rows) {
                if (j < r.length - 1) {
                    w = Math.max(w, r[j].length() + 1);
                }
            }
            width[j] = (w + 7) / 8 * 8;
        }
        for (String[] r : rows) {
            for (int j = 0; j < r.length; j++) {
                sb.append(r[j]);
                if (j < r.length - 1) {
                    int n = width[j] - r[j].length();
                    sb.append("\t".repeat((n + 7) / 8));
                }
            }
            sb.append('\n');
        }
    }

    /** Go: proto.go profileBuilder: the string table, functions, locations and the one mapping. */
    static final class Builder {
        final Profile.Builder profile = Profile.newBuilder();
        private final Map<String, Integer> strings = new HashMap<>();
        private final Map<String, Long> functions = new HashMap<>();
        private final Map<StackTraceElement, Long> locations = new HashMap<>();
        /** The frame of location id i+1. */
        final List<StackTraceElement> frames = new ArrayList<>();

        Builder() {
            string(""); // string_table[0] must be ""
        }

        int string(String s) {
            Integer i = strings.get(s);
            if (i == null) {
                i = strings.size();
                strings.put(s, i);
                profile.addStringTable(s);
            }
            return i;
        }

        ValueType valueType(String type, String unit) {
            return ValueType.newBuilder()
                    .setType(string(type))
                    .setUnit(string(unit))
                    .build();
        }

        long location(StackTraceElement e) {
            Long id = locations.get(e);
            if (id != null) {
                return id;
            }
            long lid = locations.size() + 1;
            locations.put(e, lid);
            frames.add(e);
            String fname = e.getClassName() + "." + e.getMethodName();
            String file = sourcePath(e);
            String fkey = fname + "\0" + file;
            Long fid = functions.get(fkey);
            if (fid == null) {
                fid = (long) functions.size() + 1;
                functions.put(fkey, fid);
                profile.addFunction(Function.newBuilder()
                        .setId(fid)
                        .setName(string(fname))
                        .setSystemName(string(fname))
                        .setFilename(string(file)));
            }
            profile.addLocation(Location.newBuilder()
                    .setId(lid)
                    .setMappingId(1)
                    .setAddress(lid)
                    .addLine(Line.newBuilder().setFunctionId(fid).setLine(Math.max(0, e.getLineNumber()))));
            return lid;
        }

        /** The profile, gzip-compressed (Go's profileBuilder.build writes through gzip). */
        byte[] build() {
            profile.addMapping(Mapping.newBuilder()
                    .setId(1)
                    .setMemoryStart(0)
                    .setMemoryLimit(locations.size() + 1L)
                    .setFilename(string(jvmName()))
                    .setHasFunctions(true)
                    .setHasFilenames(true)
                    .setHasLineNumbers(true));
            ByteArrayOutputStream bo = new ByteArrayOutputStream();
            try (GZIPOutputStream gz = new GZIPOutputStream(bo)) {
                profile.build().writeTo(gz);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            return bo.toByteArray();
        }

        private static String jvmName() {
            return ProcessHandle.current().info().command().orElse("java");
        }
    }
}
