package dev.gort.runtime;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * Test helper: holds sysmon's retake (every runtime's in this JVM, through {@link
 * Sysmon#beforeRetakeForTest}) until {@link #open}, so that sysmon's first look at a time slice,
 * and the clock read that starts it, come after a point the test chooses: a workload that reads its
 * start time and then makes calls that poll (newproc) can then assert the 10 ms slice exactly, with
 * no request able to reach it before that point however long a loaded machine stalls it. Use with
 * try-with-resources: {@link #close} clears the hook and lets sysmon go. Each wait is bounded
 * (30 s): until the gate opens or closes, sysmon runs one round per 30 s instead of stopping.
 */
public final class RetakeGate implements AutoCloseable {
    private final CountDownLatch open = new CountDownLatch(1);

    private RetakeGate() {}

    /** Installs the gate: from now on sysmon waits before each retake until {@link #open}. */
    public static RetakeGate hold() {
        RetakeGate g = new RetakeGate();
        Sysmon.beforeRetakeForTest = g::await;
        return g;
    }

    /** Lets sysmon's retakes run (the caller's chosen point is behind it). */
    public void open() {
        open.countDown();
    }

    /** Opens the gate and removes it. */
    @Override
    public void close() {
        Sysmon.beforeRetakeForTest = null;
        open.countDown();
    }

    private void await() {
        try {
            open.await(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            // nobody interrupts sysmon; keeping the flag would make its sleeps return at once
        }
    }
}
