package dev.gort;

import dev.gort.runtime.Config;
import dev.gort.runtime.Scheduler;

/** Builds a runtime with every layer installed (timers, sysmon, tracing) from a config. */
final class Runtimes {
    private Runtimes() {}

    static Scheduler newScheduler(Config config) {
        return new Scheduler(config);
    }

    static void goexit() {
        Scheduler.goexit();
    }
}
