package dev.gort.runtime;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * What the kernel says of a carrier thread, for sysmon's retake of a carrier blocked in a wait the
 * JVM reports as RUNNABLE ({@link Retake}): waiting for another thread's class initialisation, a
 * blocking socket, pipe or file read in native code, a JNI call that waits. Linux only, through
 * {@code /proc}; elsewhere (or without {@code /proc}) every answer is "unknown" and such waits stay
 * undetected, as before.
 *
 * <p>No Go equivalent: Go knows every blocking call it makes.
 */
final class KernelThreads {
    private KernelThreads() {}

    /**
     * The calling thread's kernel thread id, from {@code /proc/thread-self} (a link to
     * {@code <pid>/task/<tid>}), or 0 where that is not available. About 7 µs here: once per
     * carrier, at its start.
     */
    static int currentTid() {
        try {
            Path link = Files.readSymbolicLink(Path.of("/proc/thread-self"));
            return Integer.parseInt(link.getFileName().toString());
        } catch (IOException | UnsupportedOperationException | SecurityException | NumberFormatException e) {
            return 0;
        }
    }

    /**
     * The JVM's thread bean, loaded at sysmon's first look at a carrier's CPU time (not at a
     * carrier's start, which needs only {@link #currentTid}); null where thread CPU time cannot be
     * read (no {@code java.management}, or unsupported).
     */
    private static final class Mx {
        static final java.lang.management.ThreadMXBean MX = threadMXBean();

        private static java.lang.management.ThreadMXBean threadMXBean() {
            try {
                java.lang.management.ThreadMXBean mx = java.lang.management.ManagementFactory.getThreadMXBean();
                return mx.isThreadCpuTimeSupported() && mx.isThreadCpuTimeEnabled() ? mx : null;
            } catch (LinkageError | RuntimeException e) {
                return null;
            }
        }
    }

    /**
     * The CPU time thread {@code t} has used (ns), or -1 where that cannot be read (or the thread
     * has ended). About 2 µs here (a system call): sysmon's cheap look at whether a carrier has run.
     */
    static long cpuTime(Thread t) {
        java.lang.management.ThreadMXBean mx = Mx.MX;
        if (mx == null) {
            return -1;
        }
        try {
            return mx.getThreadCpuTime(t.threadId());
        } catch (RuntimeException e) {
            return -1;
        }
    }

    /**
     * True if the kernel reports thread {@code tid} of this process asleep ({@code S}, interruptible,
     * or {@code D}, uninterruptible: it waits for something, it is not waiting for a CPU). False if it
     * is running or runnable, or cannot be read ({@code tid} 0, no {@code /proc}, the thread gone).
     * Reads {@code /proc/self/task/<tid>/stat} (about 15 µs here): sysmon calls it only for a carrier
     * whose goroutine has outlived its time slice and that has used no CPU since its last look, a
     * few times per ms at most ({@link Retake}).
     */
    static boolean sleeping(int tid) {
        if (tid == 0) {
            return false;
        }
        byte[] stat;
        try {
            stat = Files.readAllBytes(Path.of("/proc/self/task/" + tid + "/stat"));
        } catch (IOException | SecurityException | UnsupportedOperationException e) {
            return false;
        }
        // "tid (comm) S ...": comm may hold spaces and parentheses, so the state follows the last ')'.
        for (int i = stat.length - 1; i >= 0; i--) {
            if (stat[i] == ')') {
                if (i + 2 >= stat.length) {
                    return false;
                }
                byte st = stat[i + 2];
                return st == 'S' || st == 'D';
            }
        }
        return false;
    }
}
