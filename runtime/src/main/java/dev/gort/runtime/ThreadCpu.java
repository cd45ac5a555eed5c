package dev.gort.runtime;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;

/**
 * The CPU the calling thread is running on, from libc's {@code sched_getcpu} through the FFM API
 * (a vDSO call on Linux: tens of nanoseconds; a critical downcall, no thread-state transition). For
 * {@link Idle#mget(int)}'s choice of which sleeping M to wake; -1 where the call is not available
 * (no native access for gort, which only {@code --enable-native-access=ALL-UNNAMED} or a jar
 * manifest's {@code Enable-Native-Access: ALL-UNNAMED} gives, not an agent; a libc without it).
 * The answer may be stale as soon as it is returned (the thread can migrate): it is a hint, never
 * a correctness input.
 */
final class ThreadCpu {
    private ThreadCpu() {}

    /** libc's sched_getcpu, or null. Immutable after the class initialiser. */
    private static final MethodHandle SCHED_GETCPU = lookup();

    private static MethodHandle lookup() {
        try {
            if (!ThreadCpu.class.getModule().isNativeAccessEnabled()) {
                return null; // a restricted call would print the JDK's native-access warning
            }
            Linker l = Linker.nativeLinker();
            return l.defaultLookup()
                    .find("sched_getcpu")
                    .map(f -> l.downcallHandle(
                            f, FunctionDescriptor.of(ValueLayout.JAVA_INT), Linker.Option.critical(false)))
                    .orElse(null);
        } catch (RuntimeException | LinkageError e) { // IllegalCallerException, UnsupportedOperationException, ...
            return null;
        }
    }

    /** Whether {@link #current()} can answer. */
    static boolean available() {
        return SCHED_GETCPU != null;
    }

    /** The calling thread's CPU, or -1 if unknown. */
    static int current() {
        MethodHandle h = SCHED_GETCPU;
        if (h == null) {
            return -1;
        }
        try {
            return (int) h.invokeExact();
        } catch (Throwable t) {
            return -1;
        }
    }
}
