package dev.gort.examples;

import dev.gort.runtime.Config;
import dev.gort.runtime.GoDebug;
import dev.gort.runtime.InstrumentationStats;
import dev.gort.runtime.Preempt;
import dev.gort.runtime.PreemptStrategy;
import dev.gort.runtime.Sysmon;
import dev.gort.runtime.trace.GoDebugProps;
import java.io.PrintStream;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * {@code ./gort env} (Go's {@code go env}): every setting of the README's configuration table with
 * the value a runtime started in this JVM would use, read by the same code the runtime reads it with;
 * a malformed setting stops it with the runtime's own fatal error.
 */
final class Env {
    private Env() {}

    /** Reads every setting first (a malformed one stops the JVM before anything is printed), then prints them. */
    static void print(PrintStream out) {
        Map<String, Object> rows = read();
        rows.forEach((k, v) -> out.println(k + "=" + v));
    }

    static Map<String, Object> read() {
        Map<String, Object> rows = new LinkedHashMap<>();
        Config c = Config.fromEnvironment();
        GoDebug d = GoDebug.fromEnvironment();
        String trace = GoDebugProps.traceFile();
        row(rows, "gort.gomaxprocs", c.gomaxprocs());
        row(rows, "gort.runqsize", c.runqSize());
        row(rows, "gort.stealing", c.stealing());
        row(rows, "gort.spinning", c.spinning());
        row(rows, "gort.maxthreads", c.maxThreads());
        row(rows, "gort.carrier.spacers", c.carrierSpacers());
        row(rows, "gort.debug.checks", c.debugChecks());
        row(rows, "gort.preempt", PreemptStrategy.fromEnvironment().id());
        row(rows, "gort.preempt.stride", PreemptStrategy.strideFromEnvironment());
        row(rows, "gort.preempt.callers", PreemptStrategy.callerEntriesFromEnvironment());
        row(rows, "gort.preempt.budget", Preempt.budgetFromEnvironment());
        row(rows, "gort.preempt.sites", c.settings().preemptSites());
        String agentCache = Config.setting("gort.agent.cache", "GORT_AGENT_CACHE"); // read by the agent
        row(rows, "gort.agent.cache", agentCache == null ? "" : agentCache);
        row(rows, "gort.sysmon.maxdelay", Sysmon.maxDelayFromEnvironment());
        row(rows, "gort.trace", trace == null ? "" : trace);
        row(rows, "gort.trace.window", GoDebugProps.traceWindowMs());
        row(rows, "gort.trace.level", GoDebugProps.traceLevel());
        row(rows, "gort.trace.workload", GoDebugProps.traceWorkload());
        row(rows, "gort.trace.clock", dev.gort.runtime.trace.TraceClock.name()); // the effective clock
        row(rows, "gort.creators", Config.creatorsSetting());
        row(rows, "gort.fatal", Config.fatalSetting());
        row(rows, "gort.seed", c.settings().seed());
        row(rows, "gort.threadlocals", c.settings().threadLocals()); // the effective mode
        row(rows, "gort.netpoll", c.settings().netpoll()); // the effective poller
        row(rows, "gort.jitdirective", Config.jitDirectiveSetting());
        row(rows, "gort.jmx", dev.gort.runtime.metrics.SchedulerMXBeanImpl.auto());
        row(rows, "gort.jfr", dev.gort.runtime.trace.JfrEvents.gortJfr());
        row(rows, "gort.traceback", dev.gort.runtime.Traceback.setting());
        String http = System.getProperty("gort.debug.http");
        row(rows, "gort.debug.http", http == null ? "" : http.trim());
        row(rows, "GODEBUG.schedtrace", d.schedtrace());
        row(rows, "GODEBUG.scheddetail", d.scheddetail());
        row(rows, "GODEBUG.sigtrap", d.get("sigtrap", 0));
        // as the runtime reads them: a GODEBUG value that is not a number is its default, as Go's
        row(rows, "GODEBUG.updatemaxprocs", c.maxprocs().update() ? 1 : 0);
        row(rows, "GODEBUG.containermaxprocs", c.maxprocs().container() ? 1 : 0);
        row(rows, "GODEBUG.midlecpu", c.settings().midlecpu() ? 1 : 0); // 0 where sched_getcpu is out of reach
        row(rows, "GODEBUG.psyscall", c.settings().psyscall() ? 1 : 0);
        row(rows, "agent", InstrumentationStats.classesTransformed.get() > 0 ? "active" : "inactive");
        row(rows, "lockframes", Preempt.lockFrameLook()); // the agent exports what the screen needs
        return rows;
    }

    private static void row(Map<String, Object> rows, String name, Object value) {
        rows.put(name, value);
    }
}
