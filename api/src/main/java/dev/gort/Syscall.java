package dev.gort;

import dev.gort.runtime.G;
import dev.gort.runtime.Syscalls;

/**
 * Blocking calls made from a goroutine: tell the scheduler, so that the goroutine's P can run other
 * goroutines while the call blocks its carrier thread (Go's {@code entersyscall}/{@code
 * exitsyscall}, 1.25 model).
 *
 * <pre>{@code
 * byte[] data = Syscall.block(() -> Files.readAllBytes(path));   // IOException propagates
 * }</pre>
 *
 * <p>{@link #block} keeps the P reserved for the caller (Go 1.26+: the P stays {@code _Prunning}
 * with the caller's thread; Go 1.25's model, {@code GODEBUG=psyscall=1}: {@code _Psyscall}) and lets sysmon
 * hand it to another thread once the call has lasted at least one sysmon tick (20 µs or more) and
 * there is other work; a short call gets its P back cheaply and keeps its time slice.
 * {@link #blockHandoff} is for calls known to block for long: the P is handed off at once.
 *
 * <p>Semantics worth knowing:
 * <ul>
 *   <li>The call runs on the goroutine's current carrier; the goroutine may continue on another
 *       carrier afterwards (if no P was free when the call returned).
 *   <li>A gort operation inside the call that parks or yields (a blocking receive, a select, a
 *       {@code Mutex} wait, {@code Gosched}) ends the syscall section early: the goroutine parks
 *       like any other (its carrier finishes the syscall after it has left, never while a channel
 *       lock is held) and runs on with a P when it is woken. Non-blocking operations run without
 *       a P (what they wake goes to the global queue).
 *   <li>Outside a goroutine the call simply runs.
 *   <li>Blocking calls nobody wraps are detected by sysmon when the carrier's thread state shows
 *       it blocked (sleep, park, wait, monitor); native I/O stays RUNNABLE, which sysmon notices
 *       only after the goroutine's time slice and only on Linux (it asks the kernel): wrap it.
 * </ul>
 */
public final class Syscall {
    private Syscall() {}

    /** A call that returns a value and may throw {@code E}. */
    @FunctionalInterface
    public interface Call<T, E extends Throwable> {
        T call() throws E;
    }

    /** A call without a value that may throw {@code E}. */
    @FunctionalInterface
    public interface Run<E extends Throwable> {
        void run() throws E;
    }

    /**
     * Runs {@code call} as a syscall and returns its value; its exception propagates unchanged.
     * Go: syscall.Syscall's entersyscall/exitsyscall.
     */
    public static <T, E extends Throwable> T block(Call<T, E> call) throws E {
        G g = Syscalls.entersyscall();
        try {
            return call.call();
        } finally {
            Syscalls.exitsyscall(g);
        }
    }

    /** {@link #block(Call)} for a call without a value. */
    public static <E extends Throwable> void block(Run<E> run) throws E {
        G g = Syscalls.entersyscall();
        try {
            run.run();
        } finally {
            Syscalls.exitsyscall(g);
        }
    }

    /**
     * Runs {@code call} as a syscall known to block: the P is handed off at once instead of when
     * sysmon notices. Go: entersyscallblock (used for calls such as a blocking notesleep).
     */
    public static <T, E extends Throwable> T blockHandoff(Call<T, E> call) throws E {
        G g = Syscalls.entersyscallblock();
        try {
            return call.call();
        } finally {
            Syscalls.exitsyscall(g);
        }
    }

    /** {@link #blockHandoff(Call)} for a call without a value. */
    public static <E extends Throwable> void blockHandoff(Run<E> run) throws E {
        G g = Syscalls.entersyscallblock();
        try {
            run.run();
        } finally {
            Syscalls.exitsyscall(g);
        }
    }
}
