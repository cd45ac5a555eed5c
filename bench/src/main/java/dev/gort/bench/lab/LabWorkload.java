package dev.gort.bench.lab;

/**
 * One workload of the preemption lab, as the lab sees it. The implementations (in
 * {@code dev.gort.bench.lab.work}) are loaded once per strategy by {@link LabLoader}, rewritten
 * for that strategy; this interface is not, so every copy is called the same way.
 */
public interface LabWorkload {
    /** One unit of work of size {@code n}; the result depends on {@code n} only (checked by the lab). */
    long run(int n);

    /** The {@code n} that makes one unit take roughly a millisecond on a laptop core. */
    int unit();
}
