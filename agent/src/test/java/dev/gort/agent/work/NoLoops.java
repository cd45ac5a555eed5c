package dev.gort.agent.work;

/** Straight-line code: nothing for the backedge strategy to do. */
public final class NoLoops {
    private NoLoops() {}

    public static int add(int a, int b) {
        return a > b ? a - b : a + b;
    }
}
