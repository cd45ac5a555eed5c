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
 * <p><b>The counter.</b> On x86-64 Linux, {@code rdtsc} is reached through a critical FFM downcall
 * to eleven bytes of machine code that this class writes into a page of its own (mapped
 * read-write, then made read-execute: never both), as Go reaches it through {@code cputicks}'
 * assembly. Two entry points:
 * <ul>
 *   <li>{@link #now()}: a plain {@code rdtsc}, which the CPU may execute before earlier
 *       instructions have finished, never after later ones have retired: a stamp that is no later
 *       than anything the event publishes afterwards, which is all a <i>producer</i> needs (a park,
 *       a creation: stamped before the G becomes visible to anyone else);
 *   <li>{@link #nowOrdered()}: {@code lfence; rdtsc}, which reads the counter only once every
 *       earlier load has completed (~21 ns here): what a <i>consumer</i> needs (a steal, a
 *       global-queue take, the unblock of a G parked on another M: stamped after the CAS or lock
 *       that took what another M produced, and so after its producer's stamp).
 * </ul>
 * Stamps from different CPUs are compared, so the counter must be synchronised across them: it is
 * used by default only where the kernel itself keeps time with it ({@code
 * /sys/devices/system/clocksource/clocksource0/current_clocksource} is {@code tsc}: Linux checks
 * that the counter is invariant and synchronised before it selects it, and leaves it at the first
 * sign of skew).
 *
 * <p><b>Units.</b> Records hold clock units (ticks, or ns under {@code nanotime}); the decoder
 * converts them to ns with {@link #nanosPerUnit()}, the ratio of the two clocks over the longest
 * interval this JVM has seen (from this class's initialisation to the decode), so a trace's
 * timestamps are ns since its start whichever clock took them. The conversion is linear and
 * monotonic: the merge order, the end cut and the window cut are the same in either unit.
 *
 * <p><b>Setting.</b> {@code -Dgort.trace.clock=tsc|nanotime} / {@code GORT_TRACE_CLOCK}
 * (JVM-wide: one clock for every runtime's tracer; read once, when this class is initialised,
 * by the first trace session or JFR-gated hook; see {@link dev.gort.runtime.Config#traceClockSetting}).
 * Absent: {@code tsc} where it is available ({@link #TSC_AVAILABLE}: x86-64 Linux, native access
 * for gort, and the kernel's clocksource is the TSC), else {@code nanotime}. An explicit {@code tsc}
 * where the counter cannot be read is a fatal error that says why; an explicit {@code tsc} on a
 * kernel that keeps time with another clocksource is honoured (the user vouches for the counter).
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

    /** An {@code lfence; rdtsc} downcall, or null. Immutable after initialisation. */
    private static final MethodHandle RDTSC_ORDERED;

    /** Whether the counter can be read here at all (the stubs were built). */
    static final boolean TSC_READABLE;

    /** Whether {@code auto} picks the counter: readable, and the kernel's clocksource is the TSC. */
    public static final boolean TSC_AVAILABLE;

    /** The clock every trace stamp of this JVM comes from: true for the counter, false for nanoTime. */
    static final boolean TSC;

    /** The pair of readings this class started with: the base of {@link #nanosPerUnit()}. */
    private static final long BASE_UNITS;

    private static final long BASE_NANOS;

    static {
        MethodHandle plain = null;
        MethodHandle ordered = null;
        String why = null;
        String arch = System.getProperty("os.arch", "");
        if (!System.getProperty("os.name", "").startsWith("Linux")) {
            why = "not Linux";
        } else if (!arch.equals("amd64") && !arch.equals("x86_64")) {
            why = "not x86-64 (" + arch + ")";
        } else if (!TraceClock.class.getModule().isNativeAccessEnabled()) {
            why = "no native access for gort (--enable-native-access=ALL-UNNAMED, or a jar manifest's "
                    + "Enable-Native-Access: ALL-UNNAMED)";
        } else {
            try {
                MethodHandle[] h = stubs();
                plain = h[0];
                ordered = h[1];
                long a = (long) plain.invokeExact();
                long b = (long) ordered.invokeExact();
                if (b - a < 0) {
                    why = "the counter went backwards on one thread";
                    plain = ordered = null;
                }
            } catch (Throwable t) {
                why = "cannot build the rdtsc stub: " + t;
                plain = ordered = null;
            }
        }
        UNAVAILABLE = why;
        RDTSC = plain;
        RDTSC_ORDERED = ordered;
        TSC_READABLE = plain != null;
        TSC_AVAILABLE = TSC_READABLE && kernelUsesTsc();
        TSC = dev.gort.runtime.Config.traceClockSetting(TSC_READABLE, TSC_AVAILABLE, why)
                .equals("tsc");
        BASE_NANOS = System.nanoTime();
        BASE_UNITS = nowOrdered();
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
     * Writes the two stubs into a fresh page (mmap read-write, copy, mprotect read-execute) and
     * links them as critical downcalls returning a long: {@code rdtsc; shl rdx, 32; or rax, rdx;
     * ret}, the second with an {@code lfence} first. The page lives as long as the JVM.
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
        final long size = 4096;
        final int protRead = 1, protWrite = 2, protExec = 4, mapPrivate = 0x02, mapAnonymous = 0x20;
        MemorySegment page = (MemorySegment)
                mmap.invokeExact(MemorySegment.NULL, size, protRead | protWrite, mapPrivate | mapAnonymous, -1, 0L);
        if (page.address() == -1L || page.address() == 0L) {
            throw new IllegalStateException("mmap failed");
        }
        page = page.reinterpret(size, Arena.global(), null);
        // rdtsc (edx:eax = the counter); shl rdx, 32; or rax, rdx; ret
        byte[] rdtsc = hex("0F31" + "48C1E220" + "4809D0" + "C3");
        byte[] lfence = hex("0FAEE8");
        final long orderedAt = 32;
        MemorySegment.copy(rdtsc, 0, page, ValueLayout.JAVA_BYTE, 0, rdtsc.length);
        MemorySegment.copy(lfence, 0, page, ValueLayout.JAVA_BYTE, orderedAt, lfence.length);
        MemorySegment.copy(rdtsc, 0, page, ValueLayout.JAVA_BYTE, orderedAt + lfence.length, rdtsc.length);
        int rc = (int) mprotect.invokeExact(page, size, protRead | protExec);
        if (rc != 0) {
            throw new IllegalStateException("mprotect failed");
        }
        FunctionDescriptor ret = FunctionDescriptor.of(ValueLayout.JAVA_LONG);
        return new MethodHandle[] {
            l.downcallHandle(page, ret, Linker.Option.critical(false)),
            l.downcallHandle(page.asSlice(orderedAt), ret, Linker.Option.critical(false))
        };
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
                return (long) RDTSC_ORDERED.invokeExact();
            } catch (Throwable t) {
                throw new AssertionError(t);
            }
        }
        return System.nanoTime();
    }

    /**
     * Nanoseconds per clock unit, measured now against {@code System.nanoTime()} over everything
     * since this class was initialised (1 under {@code nanotime}); NaN-free: an interval too short
     * to measure (under 1 ms) waits for 1 ms to pass (only a decode right after the first session
     * started in this JVM gets there).
     */
    static double nanosPerUnit() {
        if (!TSC) {
            return 1.0;
        }
        long n1;
        long u1;
        for (; ; ) {
            n1 = System.nanoTime();
            u1 = nowOrdered();
            if (n1 - BASE_NANOS >= 1_000_000L && u1 - BASE_UNITS > 0) {
                break;
            }
            Thread.onSpinWait();
        }
        return (double) (n1 - BASE_NANOS) / (double) (u1 - BASE_UNITS);
    }

    /** The clock's name, as {@code -Dgort.trace.clock} spells it. */
    public static String name() {
        return TSC ? "tsc" : "nanotime";
    }
}
