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
}
