package dev.gort.runtime;

import dev.gort.runtime.trace.Trace;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.ServiceLoader;

/**
 * What the layers above the core hook into a runtime's life: started once the runtime is whole (its
 * start, never its construction), stopped at its exit. The core names none of them: they are found
 * with {@link ServiceLoader} (the runtime's own, {@code dev.gort.runtime.observe}, starts the
 * MXBean for {@code -Dgort.jmx}, the debug server for {@code -Dgort.debug.http} and writes
 * {@code -Dgort.trace}'s file), so the dependencies point one way: observers depend on the core.
 */
public interface RuntimeObserver {
    /**
     * {@code s} starts (Scheduler.start, just before main is created; the runtime is whole). Returns
     * what to stop when it exits, or null. Must not throw: report and carry on.
     */
    Running started(Scheduler s);

    /**
     * Writes {@code t} to {@code file} ({@code -Dgort.trace=<file>}, the format chosen by its name).
     * Returns false if this observer does not write traces.
     */
    default boolean writeTrace(Trace t, Path file) throws IOException {
        return false;
    }

    /** What an observer started for one runtime. */
    interface Running extends AutoCloseable {
        /** The port of a debug server this started, or -1. */
        default int debugPort() {
            return -1;
        }

        @Override
        void close();
    }

    /**
     * Every observer on the class path, in ServiceLoader order. Found once per JVM (the class path
     * does not change); immutable.
     */
    static List<RuntimeObserver> installed() {
        return Installed.ALL;
    }

    /** Holder: loaded at the first runtime's start. */
    final class Installed {
        private Installed() {}

        static final List<RuntimeObserver> ALL = load();

        private static List<RuntimeObserver> load() {
            ClassLoader cl = RuntimeObserver.class.getClassLoader(); // null: the boot class path (agent)
            return ServiceLoader.load(RuntimeObserver.class, cl).stream()
                    .map(ServiceLoader.Provider::get)
                    .toList();
        }
    }
}
