package dev.gort.agent.work;

/** ThreadLocal call sites as javac writes them (fields of type ThreadLocal and InheritableThreadLocal). */
public final class Locals {
    private Locals() {}

    private static final ThreadLocal<StringBuilder> LOG = ThreadLocal.withInitial(StringBuilder::new);
    private static final InheritableThreadLocal<String> NAME = new InheritableThreadLocal<>();

    /** Sets, reads and removes both, {@code n} times; returns what was read. */
    public static String roundTrips(int n) {
        for (int i = 0; i < n; i++) {
            NAME.set("n" + i);
            LOG.get().append(NAME.get()).append(',');
            if (i % 2 == 1) {
                NAME.remove();
            }
        }
        String s = LOG.get().toString() + (NAME.get() == null ? "removed" : NAME.get());
        LOG.remove();
        return s;
    }

    /** How many times {@link #SLOW}'s initial value was made. */
    public static final java.util.concurrent.atomic.AtomicInteger INITIALS =
            new java.util.concurrent.atomic.AtomicInteger();

    /** A ThreadLocal whose initial value takes ~{@code 2 ms} of polling CPU work: preemptions land inside it. */
    private static final ThreadLocal<int[]> SLOW = ThreadLocal.withInitial(() -> {
        long end = System.nanoTime() + 2_000_000L;
        long x = 0;
        while (System.nanoTime() < end) {
            x += x * 31 + 7;
        }
        return new int[] {INITIALS.incrementAndGet(), (int) x};
    });

    /** Three gets of {@link #SLOW}: 1 if all three saw the same value, else 0. */
    public static int sameInitialValue() {
        int[] a = SLOW.get();
        int[] b = SLOW.get();
        int[] c = SLOW.get();
        return a == b && b == c ? 1 : 0;
    }

    /** The thread this code runs on, as instrumented code reads it. */
    public static Thread current() {
        return Thread.currentThread();
    }
}
