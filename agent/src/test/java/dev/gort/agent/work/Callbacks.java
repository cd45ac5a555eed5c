package dev.gort.agent.work;

import java.util.Collection;
import java.util.Hashtable;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;

/**
 * Calls of JDK collection methods that run a callback, some under a lock the JDK takes
 * ({@code PollInjector.callbackIndex}): for the shape of the agent's hooks around them, and for a
 * goroutine that parks inside such a callback while another wants the same lock.
 */
public final class Callbacks {
    /** A constructor that calls one after its super(): hooked, as in a method. */
    public Callbacks(Map<String, Integer> m) {
        m.computeIfAbsent("c", k -> 3);
    }

    /**
     * A constructor that calls one before its this(...): left alone (the hook's handler range would
     * hold an uninitialised this, which no frame can describe).
     */
    public Callbacks(Map<String, Integer> m, String key) {
        this(m.computeIfAbsent(key, k -> 4));
    }

    private Callbacks(Integer value) {}

    /** Through the interface ({@code INVOKEINTERFACE Map.computeIfAbsent}). */
    public static int viaMap(Map<String, Integer> m, String key, int value) {
        return m.computeIfAbsent(key, k -> value);
    }

    /** Through the class ({@code INVOKEVIRTUAL ConcurrentHashMap.computeIfAbsent}). */
    public static int viaClass(ConcurrentHashMap<String, Integer> m, String key, int value) {
        return m.computeIfAbsent(key, k -> value);
    }

    /** Three arguments, inside a try block of the method's own, whose handler must still run. */
    public static int mergeCaught(Map<String, Integer> m, String key, RuntimeException thrown) {
        try {
            return m.merge(key, 1, (a, b) -> {
                throw thrown;
            });
        } catch (RuntimeException e) {
            return e == thrown ? -1 : -2;
        }
    }

    /** A user subclass, called through its own type (owner {@code Callbacks$Cache}). */
    public static final class Cache extends ConcurrentHashMap<String, Integer> {}

    /** Through a user subclass's own type: the JDK's descriptor, another owner. */
    public static int viaSubclass(Cache m, String key, int value) {
        return m.computeIfAbsent(key, k -> value);
    }

    /**
     * A user subclass of {@code Hashtable} whose override holds no lock itself and calls the JDK's
     * synchronized method through {@code super.} ({@code INVOKESPECIAL Hashtable.computeIfAbsent}).
     */
    public static final class CountingTable extends Hashtable<String, Integer> {
        public int calls;

        @Override
        public Integer computeIfAbsent(String key, Function<? super String, ? extends Integer> f) {
            calls++;
            return super.computeIfAbsent(key, f);
        }
    }

    /** A {@link CountingTable} (of this class's loader). */
    public static Object countingTable() {
        return new CountingTable();
    }

    /** Not a callback method: left alone. */
    public static int size(Collection<?> c) {
        return c.size();
    }

    /**
     * Runs {@code inside} in a callback of {@code holder} ({@code synchronizedList.forEach},
     * {@code synchronizedMap.computeIfAbsent}, {@code Hashtable.computeIfAbsent}, and
     * {@code super.computeIfAbsent}: the same call on a {@link CountingTable}) on {@code target}.
     */
    @SuppressWarnings("unchecked")
    public static void parkInside(String holder, Object target, Runnable inside) {
        switch (holder) {
            case "synchronizedList.forEach", "LinkedBlockingQueue.forEach" ->
                ((Collection<Integer>) target).forEach(x -> inside.run());
            case "synchronizedMap.computeIfAbsent", "Hashtable.computeIfAbsent", "super.computeIfAbsent" ->
                ((Map<String, Integer>) target).computeIfAbsent("k", k -> {
                    inside.run();
                    return 1;
                });
            default -> throw new IllegalArgumentException(holder);
        }
    }

    /**
     * Takes {@code target}'s lock through {@code holder}'s kind of call and returns whether
     * {@code inside} was set while it held it (another goroutine was inside the same lock).
     */
    @SuppressWarnings("unchecked")
    public static boolean enterSeeing(String holder, Object target, AtomicBoolean inside) {
        boolean[] saw = new boolean[1];
        switch (holder) {
            case "synchronizedList.forEach" ->
                ((List<Integer>) target).removeIf(x -> {
                    saw[0] |= inside.get();
                    return false;
                });
            case "synchronizedMap.computeIfAbsent", "Hashtable.computeIfAbsent", "super.computeIfAbsent" ->
                ((Map<String, Integer>) target).computeIfAbsent("other", k -> {
                    saw[0] |= inside.get();
                    return 2;
                });
            default -> throw new IllegalArgumentException(holder);
        }
        return saw[0];
    }
}
