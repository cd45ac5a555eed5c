package dev.gort.runtime.trace;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The execution tracer's clock: the CPU's time-stamp counter where it can serve, else {@code
 * System.nanoTime()}. Go's tracer reads a clock for every event, as gort's does for nearly every
 * one (see {@link Tracer}, "Timestamps"); on the 2-vCPU bench machine {@code System.nanoTime()}
 * costs ~27 ns (a vDSO {@code clock_gettime}), which at two reads per ping-pong round trip was by
 * itself over a tenth of a ~400 ns round trip, more than issue 17's whole budget for tracing.
 * The counter read on its own costs ~10 ns here.
 *
 * <p><b>The counter.</b> On x86-64 Linux, the counter is read through critical FFM downcalls to
 * three short stubs of machine code that this class writes into a page of its own (mapped
 * read-write, then made read-execute: never both), as Go reaches it through {@code cputicks}'
 * assembly; each is the read, {@code shl rdx, 32; or rax, rdx; ret}:
 * <ul>
 *   <li>{@link #now()}: a plain {@code rdtsc}, which the CPU may execute before earlier
 *       instructions have finished, never after later ones have retired: a stamp that is no later
 *       than anything the event publishes afterwards, which is all a <i>producer</i> needs (a park,
 *       a creation: stamped before the G becomes visible to anyone else);
 *   <li>{@link #nowOrdered()}: {@code rdtscp}, which reads the counter only once every earlier
 *       instruction has executed and every earlier load is globally visible (~20 ns here), on
 *       Intel and AMD alike: what a <i>consumer</i> needs (a steal, a global-queue take, the
 *       unblock of a G parked on another M: stamped after the CAS or lock that took what another M
 *       produced, and so after its producer's stamp);
 *   <li>{@link #nowFenced()}: {@code rdtscp; lfence}, whose later instructions also wait for the
 *       read: the decoder's end cut, which must be taken before it reads any buffer.
 * </ul>
 * Stamps from different CPUs are compared, so the counter must be synchronised across them: it is
 * used by default only where the kernel itself keeps time with it ({@code
 * /sys/devices/system/clocksource/clocksource0/current_clocksource} is {@code tsc}: Linux checks
 * that the counter is invariant and synchronised before it selects it, and leaves it at the first
 * sign of skew).
 *
 * <p><b>Units.</b> Records hold clock units (ticks, or ns under {@code nanotime}); the decoder
 * converts them to ns with {@link #nanosPerUnit()}, the ratio of the two clocks from this class's
 * initialisation to the decode (each end a pair of readings taken together: a nanoTime between
 * two counter reads, the closest of a few tries, at their midpoint), so a trace's timestamps are
 * ns since its start whichever clock took them. The conversion is linear and monotonic: the
 * merge order, the end cut and the window cut are the same in either unit.
 *
 * <p><b>Setting.</b> {@code -Dgort.trace.clock=tsc|nanotime} / {@code GORT_TRACE_CLOCK}
 * (JVM-wide: one clock for every runtime's tracer; its spelling is checked with every other
 * setting, {@link dev.gort.runtime.Config#fromEnvironment()}; the clock is chosen once, when this
 * class is initialised: by {@link #init()} before a trace session or JFR's gate turns the hooks
 * on, by {@code Config.fromEnvironment()} when {@code tsc} is asked for explicitly (so that one
 * that cannot be read fails at start-up, as a malformed setting does), or by {@code ./gort env};
 * see {@link dev.gort.runtime.Config#traceClockSetting}). Initialising costs 0.1 s here (FFM's
 * linker set-up), once per JVM. Absent:
 * {@code tsc} where it is available ({@link #TSC_AVAILABLE}: x86-64 Linux, native access for gort,
 * and the kernel's clocksource is the TSC), else {@code nanotime}. An explicit {@code nanotime}
 * never builds nor calls the stubs; an explicit {@code tsc} where the counter cannot be read is a
 * fatal error that says why; an explicit {@code tsc} on a kernel that keeps time with another
 * clocksource is honoured (the user vouches for the counter).
 *
 * <p>Go: runtime/tracetime.go traceClockNow (nanotime on Linux since Go 1.23; cputicks where the OS
 * clock is coarse), runtime/asm_amd64.s cputicks
 */
public final class TraceClock {
    private TraceClock() {}

    /** Why the counter cannot be read here (null when it can). Immutable after initialisation. */
    static final String UNAVAILABLE;

    /** A plain {@code rdtsc} downcall, or null. Immutable after initialisation. */
    private static final MethodHandle RDTSC;

    /** An {@code rdtscp} downcall, or null. Immutable after initialisation. */
    private static final MethodHandle RDTSCP;

    /** An {@code rdtscp; lfence} downcall, or null. Immutable after initialisation. */
    private static final MethodHandle RDTSCP_FENCED;

    /** Whether the counter can be read here at all (the stubs were built). */
    static final boolean TSC_READABLE;

    /** Whether {@code auto} picks the counter: readable, and the kernel's clocksource is the TSC. */
    public static final boolean TSC_AVAILABLE;

    /** The clock every trace stamp of this JVM comes from: true for the counter, false for nanoTime. */
    static final boolean TSC;

    /** The pair of readings this class started with ({units, nanos}): the base of {@link #nanosPerUnit()}. */
    private static final long BASE_UNITS;

    private static final long BASE_NANOS;

    static {
        String asked = dev.gort.runtime.Config.traceClockChoice();
        MethodHandle[] h = null;
        String why = null;
        String arch = System.getProperty("os.arch", "");
        if ("nanotime".equals(asked)) {
            why = "-Dgort.trace.clock=nanotime";
        } else if (!System.getProperty("os.name", "").startsWith("Linux")) {
            why = "not Linux";
        } else if (!arch.equals("amd64") && !arch.equals("x86_64")) {
            why = "not x86-64 (" + arch + ")";
        } else if (!TraceClock.class.getModule().isNativeAccessEnabled()) {
            why = "no native access for gort (--enable-native-access=ALL-UNNAMED, or a jar manifest's "
                    + "Enable-Native-Access: ALL-UNNAMED)";
        } else {
            try {
                h = stubs();
                long a = (long) h[0].invokeExact();
                long b = (long) h[1].invokeExact();
                long c = (long) h[2].invokeExact();
                if (b - a < 0 || c - b < 0) {
                    why = "the counter went backwards on one thread";
                    h = null;
                }
            } catch (Throwable t) {
                why = "cannot build the rdtsc stubs: " + t;
                h = null;
            }
        }
        UNAVAILABLE = why;
        RDTSC = h == null ? null : h[0];
        RDTSCP = h == null ? null : h[1];
        RDTSCP_FENCED = h == null ? null : h[2];
        TSC_READABLE = h != null;
        TSC_AVAILABLE = TSC_READABLE && kernelUsesTsc();
        TSC = dev.gort.runtime.Config.traceClockSetting(asked, TSC_READABLE, TSC_AVAILABLE, why)
                .equals("tsc");
        long[] base = pair();
        BASE_UNITS = base[0];
        BASE_NANOS = base[1];
    }

    /**
     * Initialises the clock (a no-op after the first call): called before anything turns the
     * tracer's hooks on, so that the stubs are built there and not inside a hook on a carrier
     * (which may hold a channel's lock), and a fatal error for the setting surfaces there.
     */
    public static void init() {
        // the class initialiser did the work
    }

    /** Whether Linux keeps time with the TSC (so it found it invariant and synchronised across CPUs). */
    private static boolean kernelUsesTsc() {
        try {
            return Files.readString(Path.of("/sys/devices/system/clocksource/clocksource0/current_clocksource"))
                    .trim()
                    .equals("tsc");
        } catch (java.io.IOException | RuntimeException e) {
            return false;
        }
    }

    /**
     * Writes the three stubs into a fresh page (mmap read-write, copy, mprotect read-execute; the
     * page is unmapped if that fails) and links them as critical downcalls returning a long:
     * {@code rdtsc}, {@code rdtscp} and {@code rdtscp; lfence}, each followed by {@code shl rdx,
     * 32; or rax, rdx; ret} ({@code rdtscp} also writes ecx, a register the C calling convention
     * lets a callee clobber). The page lives as long as the JVM.
     */
    private static MethodHandle[] stubs() throws Throwable {
        Linker l = Linker.nativeLinker();
        SymbolLookup libc = l.defaultLookup();
        MethodHandle mmap = l.downcallHandle(
                libc.find("mmap").orElseThrow(),
                FunctionDescriptor.of(
                        ValueLayout.ADDRESS,
                        ValueLayout.ADDRESS,
                        ValueLayout.JAVA_LONG,
                        ValueLayout.JAVA_INT,
                        ValueLayout.JAVA_INT,
                        ValueLayout.JAVA_INT,
                        ValueLayout.JAVA_LONG));
        MethodHandle mprotect = l.downcallHandle(
                libc.find("mprotect").orElseThrow(),
                FunctionDescriptor.of(
                        ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT));
        MethodHandle munmap = l.downcallHandle(
                libc.find("munmap").orElseThrow(),
                FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_LONG));
        final long size = 4096;
        final int protRead = 1, protWrite = 2, protExec = 4, mapPrivate = 0x02, mapAnonymous = 0x20;
        MemorySegment page = (MemorySegment)
                mmap.invokeExact(MemorySegment.NULL, size, protRead | protWrite, mapPrivate | mapAnonymous, -1, 0L);
        if (page.address() == -1L || page.address() == 0L) {
            throw new IllegalStateException("mmap failed");
        }
        page = page.reinterpret(size, Arena.global(), null);
        byte[] tail = hex("48C1E220" + "4809D0" + "C3"); // shl rdx, 32; or rax, rdx; ret
        byte[][] reads = {
            hex("0F31"), // rdtsc
            hex("0F01F9"), // rdtscp
            hex("0F01F9" + "0FAEE8") // rdtscp; lfence
        };
        long[] at = {0, 32, 64};
        for (int i = 0; i < reads.length; i++) {
            MemorySegment.copy(reads[i], 0, page, ValueLayout.JAVA_BYTE, at[i], reads[i].length);
            MemorySegment.copy(tail, 0, page, ValueLayout.JAVA_BYTE, at[i] + reads[i].length, tail.length);
        }
        int rc = (int) mprotect.invokeExact(page, size, protRead | protExec);
        if (rc != 0) {
            int ignored = (int) munmap.invokeExact(page, size);
            throw new IllegalStateException("mprotect failed");
        }
        FunctionDescriptor ret = FunctionDescriptor.of(ValueLayout.JAVA_LONG);
        MethodHandle[] h = new MethodHandle[reads.length];
        for (int i = 0; i < reads.length; i++) {
            h[i] = l.downcallHandle(page.asSlice(at[i]), ret, Linker.Option.critical(false));
        }
        return h;
    }

    private static byte[] hex(String h) {
        byte[] b = new byte[h.length() / 2];
        for (int i = 0; i < b.length; i++) {
            b[i] = (byte) Integer.parseInt(h.substring(2 * i, 2 * i + 2), 16);
        }
        return b;
    }

    /**
     * A stamp for a producer's event: no later than anything the caller does afterwards (see the
     * class Javadoc). The counter, or {@code System.nanoTime()}.
     */
    static long now() {
        if (TSC) {
            try {
                return (long) RDTSC.invokeExact();
            } catch (Throwable t) {
                throw new AssertionError(t); // the stub cannot throw
            }
        }
        return System.nanoTime();
    }

    /** A stamp for a consumer's event: no earlier than anything the caller did before. */
    static long nowOrdered() {
        if (TSC) {
            try {
                return (long) RDTSCP.invokeExact();
            } catch (Throwable t) {
                throw new AssertionError(t);
            }
        }
        return System.nanoTime();
    }

    /**
     * A stamp no earlier than anything the caller did before and no later than anything it does
     * after (the decoder's end cut, taken before it reads the buffers).
     */
    static long nowFenced() {
        if (TSC) {
            try {
                return (long) RDTSCP_FENCED.invokeExact();
            } catch (Throwable t) {
                throw new AssertionError(t);
            }
        }
        return System.nanoTime();
    }

    /**
     * A reading of both clocks at one moment, {units, nanos}: of a few tries, the nanoTime whose
     * two surrounding counter reads are closest, with their midpoint (a delay between two reads,
     * a preemption or a slow first call, would skew the ratio {@link #nanosPerUnit()} measures).
     */
    private static long[] pair() {
        if (!TSC) {
            long n = System.nanoTime();
            return new long[] {n, n};
        }
        long bestGap = Long.MAX_VALUE;
        long units = 0;
        long nanos = 0;
        for (int i = 0; i < 8; i++) {
            long u0 = nowFenced();
            long n = System.nanoTime();
            long u1 = nowFenced();
            long gap = u1 - u0;
            if (gap >= 0 && gap < bestGap) {
                bestGap = gap;
                units = u0 + gap / 2;
                nanos = n;
            }
        }
        return new long[] {units, nanos};
    }

    /**
     * Nanoseconds per clock unit, measured now against {@code System.nanoTime()} over everything
     * since this class was initialised (1 under {@code nanotime}); an interval too short to
     * measure (under 1 ms) waits for 1 ms to pass (only a decode right after the first session
     * started in this JVM gets there).
     */
    static double nanosPerUnit() {
        if (!TSC) {
            return 1.0;
        }
        while (System.nanoTime() - BASE_NANOS < 1_000_000L) {
            Thread.onSpinWait();
        }
        long[] now = pair();
        return (double) (now[1] - BASE_NANOS) / (double) (now[0] - BASE_UNITS);
    }

    /** The clock's name, as {@code -Dgort.trace.clock} spells it. */
    public static String name() {
        return TSC ? "tsc" : "nanotime";
    }
}
