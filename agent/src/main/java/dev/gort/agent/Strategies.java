package dev.gort.agent;

import dev.gort.runtime.PreemptStrategy;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;
import org.objectweb.asm.tree.AbstractInsnNode;
import org.objectweb.asm.tree.LabelNode;
import org.objectweb.asm.tree.MethodNode;

/**
 * The registry of {@link Strategy}s by name, and the four built-in ones: {@code none},
 * {@code entry}, {@code backedge} (strip-mined counted loops, caller entries), {@code budget}, plus
 * {@code looplen} ({@link LoopLength}). A researcher's strategy is one class: either
 * {@link #register}ed by name, or named by its fully qualified class name on the command line
 * ({@code -Dgort.preempt=com.acme.MyStrategy}: a public class with a public no-argument
 * constructor, loaded by the system class loader), which registers it under that name and its
 * {@link Strategy#name()}.
 *
 * <p>Registering a strategy also registers its name with the runtime
 * ({@link PreemptStrategy#register}), so that the runtime accepts the same {@code gort.preempt}.
 */
public final class Strategies {
    private Strategies() {}

    /** name to factory (a factory reads the strategy's settings at resolution). Any thread. */
    private static final Map<String, Supplier<Strategy>> REGISTRY = new ConcurrentHashMap<>();

    /** Registers {@code name} (its strategies must all be of {@code family}); replaces a previous factory. */
    public static void register(String name, PreemptStrategy family, Supplier<Strategy> factory) {
        PreemptStrategy.register(name, family);
        REGISTRY.put(name, factory);
    }

    /**
     * The strategy registered as {@code name}, or the class {@code name} names (see the class
     * comment).
     *
     * @throws IllegalArgumentException for an unknown name, or a class that is not a Strategy
     */
    public static Strategy named(String name) {
        String key = name.trim();
        Supplier<Strategy> f = REGISTRY.get(key);
        if (f == null) {
            f = REGISTRY.get(key.toLowerCase(java.util.Locale.ROOT));
        }
        if (f != null) {
            return f.get();
        }
        if (key.indexOf('.') > 0) {
            Strategy s = load(key);
            register(key, s.family(), () -> s);
            register(s.name(), s.family(), () -> s);
            return s;
        }
        throw new IllegalArgumentException("unknown preemption strategy '" + name + "' (want one of "
                + String.join(", ", new TreeSet<>(REGISTRY.keySet())) + ", or a Strategy class name)");
    }

    private static Strategy load(String className) {
        try {
            Class<?> c = Class.forName(className, true, ClassLoader.getSystemClassLoader());
            if (!Strategy.class.isAssignableFrom(c)) {
                throw new IllegalArgumentException(className + " is not a " + Strategy.class.getName());
            }
            return (Strategy) c.getDeclaredConstructor().newInstance();
        } catch (ReflectiveOperationException e) {
            throw new IllegalArgumentException("cannot load preemption strategy " + className + ": " + e, e);
        }
    }

    /**
     * The strategy of {@code -Dgort.preempt} / {@code GORT_PREEMPT} (default {@code backedge}). An
     * unknown name is the runtime's "malformed" fatal error, which lists the names; a class name
     * that names no loadable Strategy is a fatal error that says why (the class is not on the class
     * path, is not a Strategy, has no public no-argument constructor).
     */
    public static Strategy fromEnvironment() {
        String v = dev.gort.runtime.Config.setting("gort.preempt", "GORT_PREEMPT");
        try {
            return named(v == null ? "backedge" : v);
        } catch (IllegalArgumentException e) {
            if (v.indexOf('.') > 0) {
                String p = System.getProperty("gort.preempt");
                String spelt = p != null && !p.isBlank() ? "-Dgort.preempt=" + v : "GORT_PREEMPT=" + v;
                throw dev.gort.runtime.Fatal.fatal("malformed " + spelt + ": " + e.getMessage()
                        + " (a strategy of one's own is a public " + Strategy.class.getName()
                        + " with a public no-argument constructor, on the class path)");
            }
            PreemptStrategy.nameFromEnvironment(); // an unknown name: the runtime's "malformed" fatal error
            throw e;
        }
    }

    /** A built-in family with its settings: {@code stride} and {@code callers} matter to backedge only. */
    public static Strategy of(PreemptStrategy family, int stride, boolean callers) {
        return switch (family) {
            case NONE -> NONE;
            case ENTRY -> ENTRY;
            case BACKEDGE -> backedge(stride, callers);
            case BUDGET -> BUDGET;
        };
    }

    /** No yield points and no hooks: the class is never changed (Go before 1.14). */
    public static final Strategy NONE = new Simple("none", PreemptStrategy.NONE, false, false);

    /** A poll at every method entry (Go 1.2 to 1.13's stack-check prologue). */
    public static final Strategy ENTRY = new Simple("entry", PreemptStrategy.ENTRY, true, false);

    /** {@code Poll.budget} at every entry and back-edge (BEAM reductions, Tokio's coop budget). */
    public static final Strategy BUDGET = new Simple("budget", PreemptStrategy.BUDGET, true, true);

    /**
     * A poll before every backward branch, javac's counted loops strip-mined to one poll per
     * {@code stride} iterations (0: none are), and with {@code callers} a poll at the entry of
     * every method that calls another ({@link PollInjector#callsAnother}).
     */
    public static Strategy backedge(int stride, boolean callers) {
        if (stride < 0) {
            throw new IllegalArgumentException("gort: negative preemption stride " + stride);
        }
        return new Backedge(stride, callers);
    }

    private record Simple(String name, PreemptStrategy family, boolean entry, boolean backedges) implements Strategy {
        @Override
        public boolean pollAtEntry(String owner, MethodNode mn) {
            return entry;
        }

        @Override
        public boolean pollAtBackedge(String owner, MethodNode mn, AbstractInsnNode branch, LabelNode target) {
            return backedges;
        }
    }

    /** The {@code backedge} strategy with its two settings. */
    public record Backedge(int stride, boolean callers) implements Strategy {
        @Override
        public String name() {
            return "backedge";
        }

        @Override
        public PreemptStrategy family() {
            return PreemptStrategy.BACKEDGE;
        }

        @Override
        public boolean pollAtEntry(String owner, MethodNode mn) {
            return callers && PollInjector.callsAnother(mn);
        }

        @Override
        public int stride(String owner, MethodNode mn) {
            return stride;
        }

        @Override
        public boolean pollAtBackedge(String owner, MethodNode mn, AbstractInsnNode branch, LabelNode target) {
            return true;
        }
    }

    static {
        REGISTRY.put("none", () -> NONE);
        REGISTRY.put("entry", () -> ENTRY);
        REGISTRY.put(
                "backedge",
                () -> backedge(
                        PreemptStrategy.strideFromEnvironment(), PreemptStrategy.callerEntriesFromEnvironment()));
        REGISTRY.put("budget", () -> BUDGET);
        REGISTRY.put(LoopLength.NAME, LoopLength::fromEnvironment);
        PreemptStrategy.register(LoopLength.NAME, PreemptStrategy.BACKEDGE);
    }
}
