package dev.gort.runtime.metrics;

import java.util.Map;

/**
 * A gort runtime seen from JConsole / JDK Mission Control ({@code gort:type=Scheduler,name=...}):
 * the schedtrace fields, the runtime/metrics values, and operations that print a goroutine dump or a
 * schedtrace.
 */
public interface SchedulerMXBean {
    int getGomaxprocs();

    int getGoroutines();

    long getGoroutinesCreated();

    /** Goroutines parked on the network poller ({@code /gort/sched/goroutines/waiting-network}). */
    int getGoroutinesWaitingNetwork();

    long getThreads();

    int getIdleProcs();

    int getSpinningThreads();

    int getGlobalRunQueue();

    int[] getLocalRunQueues();

    long getSteals();

    long getPreemptions();

    long getHandoffs();

    /** Median runnable-to-running wait, seconds (sampled). */
    double getSchedLatencyP50Seconds();

    /** 99th percentile runnable-to-running wait, seconds (sampled). */
    double getSchedLatencyP99Seconds();

    /** Every uint64 metric by name (histograms as their sample counts). */
    Map<String, Double> getMetrics();

    /** The goroutine dump (Go's format) and the wait-for graph. */
    String dumpGoroutines();

    /** The goroutine dump as JSON (shaped like jcmd Thread.dump_to_file -format=json). */
    String dumpGoroutinesJson();

    /** One schedtrace (with scheddetail when {@code detailed}). */
    String schedtrace(boolean detailed);
}
