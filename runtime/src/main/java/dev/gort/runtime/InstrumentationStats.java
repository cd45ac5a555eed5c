package dev.gort.runtime;

import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * What the yield-point injector (the java agent) did to this JVM's classes. Instrumentation is
 * JVM-wide (one agent, one transformer), so unlike everything else in gort these counters are
 * static: every runtime in the JVM runs the same instrumented code. Written by the agent module
 * (any class-loading thread, atomic adds), read by anyone.
 */
public final class InstrumentationStats {
    private InstrumentationStats() {}

    /** Classes rewritten. */
    public static final AtomicLong classesTransformed = new AtomicLong();
    /** Methods that received at least one poll or monitor hook. */
    public static final AtomicLong methodsTransformed = new AtomicLong();
    /** Polls inserted before backward branches. */
    public static final AtomicLong backedgePolls = new AtomicLong();
    /** Polls inserted at method entries. */
    public static final AtomicLong entryPolls = new AtomicLong();
    /** Monitor-depth hooks inserted (MONITORENTER/EXIT and synchronized-method entry/exit). */
    public static final AtomicLong monitorHooks = new AtomicLong();
    /** Methods left alone: {@code <clinit>} (runs pinned), native/abstract, JSR/RET. */
    public static final AtomicLong methodsSkipped = new AtomicLong();
    /**
     * Classes whose instrumented form came from the agent's on-disk cache ({@code -Dgort.agent.cache})
     * instead of being rewritten; they are counted in the other counters as well.
     */
    public static final AtomicLong cacheHits = new AtomicLong();
    /** Nanoseconds spent transforming (reading the cache included). */
    public static final AtomicLong transformNanos = new AtomicLong();

    private static final ConcurrentHashMap<String, LongAdder> skipped = new ConcurrentHashMap<>();

    /** Counts a class not instrumented, by reason ("jdk", "gort", "agent-dep", "failed", ...). */
    public static void classSkipped(String reason) {
        skipped.computeIfAbsent(reason, k -> new LongAdder()).increment();
    }

    /** Classes skipped by reason. */
    public static Map<String, Long> classesSkipped() {
        Map<String, Long> m = new TreeMap<>();
        skipped.forEach((k, v) -> m.put(k, v.sum()));
        return m;
    }

    /** One line for logs and reports. */
    public static String summary() {
        return "instrumentation: classes=" + classesTransformed.get() + " methods=" + methodsTransformed.get()
                + " backedgePolls=" + backedgePolls.get() + " entryPolls=" + entryPolls.get() + " monitorHooks="
                + monitorHooks.get() + " methodsSkipped=" + methodsSkipped.get() + " classesSkipped="
                + classesSkipped() + " cacheHits=" + cacheHits.get() + " transformMs="
                + transformNanos.get() / 1_000_000;
    }
}
