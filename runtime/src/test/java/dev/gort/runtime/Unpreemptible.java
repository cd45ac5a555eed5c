package dev.gort.runtime;

/**
 * Test helper: runs a body that never parks with the calling goroutine unpreemptible ({@code
 * m.locks}, as Go's runtime code holds its locks), so that a preemption requested meanwhile is
 * honoured only after it. For tests that spawn goroutines and then look at the queues on
 * GOMAXPROCS=1: newproc polls, and on a loaded machine main's 10 ms slice can end between the
 * spawns and the look, which would let the spawned goroutines run first. The api module's tests
 * use it too (the runtime test jar).
 */
public final class Unpreemptible {
    private Unpreemptible() {}

    /** Runs {@code body} on the calling goroutine's M with preemption refused. */
    public static void run(Runnable body) {
        M mp = M.current();
        if (mp == null) {
            throw new IllegalStateException("Unpreemptible.run: not on a goroutine");
        }
        mp.locks++;
        try {
            body.run();
        } finally {
            mp.locks--;
        }
    }
}
