package dev.gort.bench;

import dev.gort.agent.GortTransformer;
import dev.gort.runtime.PreemptStrategy;
import java.io.IOException;
import java.io.InputStream;
import java.util.List;

/**
 * Loads {@code dev.gort.bench.kernels.*} child-first, rewritten by gort's agent transformer with
 * one strategy ({@code none}: the original bytes, through the same kind of loader), so that every
 * strategy and the uninstrumented baseline run in one JMH run without -javaagent.
 */
public final class StrategyLoader extends ClassLoader {
    private static final String PREFIX = "dev.gort.bench.kernels.";
    private final GortTransformer transformer;

    public StrategyLoader(PreemptStrategy strategy, int stride) {
        super("kernels-" + strategy.id() + "-" + stride, StrategyLoader.class.getClassLoader());
        this.transformer = new GortTransformer(strategy, false, List.of(), List.of(), stride, true);
    }

    /**
     * A fresh instance of the kernels, instrumented for {@code strategy}: a strategy name, or
     * {@code backedge:N} for the back-edge strategy with strip length N (0: a poll at every
     * back-edge; plain {@code backedge} uses the default stride).
     */
    public static KernelApi kernels(String strategy) {
        int colon = strategy.indexOf(':');
        PreemptStrategy st = PreemptStrategy.parse(colon < 0 ? strategy : strategy.substring(0, colon));
        int stride = colon < 0 ? PreemptStrategy.DEFAULT_STRIDE : Integer.parseInt(strategy.substring(colon + 1));
        try {
            Class<?> c = Class.forName(PREFIX + "Kernels", true, new StrategyLoader(st, stride));
            return (KernelApi) c.getDeclaredConstructor().newInstance();
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException(e);
        }
    }

    @Override
    protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
        if (!name.startsWith(PREFIX)) {
            return super.loadClass(name, resolve);
        }
        synchronized (getClassLoadingLock(name)) {
            Class<?> c = findLoadedClass(name);
            if (c == null) {
                byte[] b;
                try (InputStream in = getParent().getResourceAsStream(name.replace('.', '/') + ".class")) {
                    if (in == null) {
                        throw new ClassNotFoundException(name);
                    }
                    b = in.readAllBytes();
                } catch (IOException e) {
                    throw new ClassNotFoundException(name, e);
                }
                byte[] t = transformer.transform(name.replace('.', '/'), b);
                if (t != null) {
                    b = t;
                }
                c = defineClass(name, b, 0, b.length);
            }
            if (resolve) {
                resolveClass(c);
            }
            return c;
        }
    }
}
