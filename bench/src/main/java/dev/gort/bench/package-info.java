/**
 * gort's JMH suite: one class per workload, each comparing implementations on the same shape.
 *
 * <h2>Conventions every benchmark class follows (the report relies on them)</h2>
 * <ul>
 *   <li>{@code @Param String impl}: {@code gort}, {@code vthread} (JDK virtual threads on the default
 *       scheduler), {@code platform} (platform threads) where it makes sense.
 *   <li>{@code @Param int gomaxprocs}: the number of Ps gort runs with. The report runs the suite once
 *       per value (1, 2 and the machine's cores when different) and pins the virtual-thread scheduler
 *       of that JVM to the same number of carriers
 *       ({@code -Djdk.virtualThreadScheduler.parallelism=N}), so {@code vthread} at
 *       {@code gomaxprocs=N} means "N carriers". Platform threads always use every core.
 *   <li>{@code @Fork} with {@link Bench#JVM_ARGS}: G1 pinned (it sets {@code LoopStripMiningIter=1000},
 *       which decides where C2 keeps safepoint polls), and the export gort needs.
 *   <li>A benchmark reports; it never asserts timings. A workload that goes wrong (a lost goroutine)
 *       throws, which fails the run loudly instead of producing a figure.
 * </ul>
 *
 * <p>{@link Bench} has the glue: a long-lived gort runtime per trial ({@link GortHost}), a goroutine
 * count-down latch built on {@code gopark}/{@code goready} ({@link GLatch}) and calibrated CPU work
 * ({@link Work}). {@code bench/report.sh} ({@code ./gort bench}) runs everything and writes the table.
 */
package dev.gort.bench;
