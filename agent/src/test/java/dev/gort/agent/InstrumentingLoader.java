package dev.gort.agent;

import dev.gort.runtime.PreemptStrategy;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.concurrent.atomic.AtomicInteger;
import org.objectweb.asm.ClassReader;
import org.objectweb.asm.util.CheckClassAdapter;

/**
 * Loads the classes under a package prefix child-first, rewritten by {@link GortTransformer} with
 * one strategy (no -javaagent needed), and checks each rewritten class with ASM's
 * {@link CheckClassAdapter} before the JVM's own verifier sees it at define time.
 */
final class InstrumentingLoader extends ClassLoader {
    private final java.util.List<String> prefixes;
    private final GortTransformer transformer;
    /** Check each rewritten class with {@link CheckClassAdapter} (slow for whole libraries). */
    private final boolean check;

    final AtomicInteger transformed = new AtomicInteger();

    InstrumentingLoader(String prefix, PreemptStrategy strategy) {
        this(prefix, strategy, PreemptStrategy.DEFAULT_STRIDE);
    }

    /** {@code stride}: the back-edge strip length ({@link StripMiner}; 0 = a poll at every back-edge). */
    InstrumentingLoader(String prefix, PreemptStrategy strategy, int stride) {
        super("gort-" + strategy.id() + "-" + stride, InstrumentingLoader.class.getClassLoader());
        this.prefixes = java.util.List.of(prefix);
        this.transformer = new GortTransformer(strategy, true, java.util.List.of(), java.util.List.of(), stride, true);
        this.check = true;
    }

    /** Any {@link Strategy} (the lab's and a researcher's). */
    InstrumentingLoader(String prefix, Strategy strategy) {
        super("gort-" + strategy.name(), InstrumentingLoader.class.getClassLoader());
        this.prefixes = java.util.List.of(prefix);
        this.transformer = new GortTransformer(strategy, true, java.util.List.of(), java.util.List.of());
        this.check = true;
    }

    /**
     * Whole libraries (several package prefixes), rewritten as the agent would (no extra
     * verification: the JVM verifies what it defines).
     */
    InstrumentingLoader(java.util.List<String> prefixes, PreemptStrategy strategy) {
        super("gort-libs-" + strategy.id(), InstrumentingLoader.class.getClassLoader());
        this.prefixes = prefixes;
        this.transformer = new GortTransformer(strategy);
        this.check = false;
    }

    private boolean mine(String name) {
        for (String p : prefixes) {
            if (name.startsWith(p)) {
                return true;
            }
        }
        return false;
    }

    @Override
    protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
        if (!mine(name)) {
            return super.loadClass(name, resolve);
        }
        synchronized (getClassLoadingLock(name)) {
            Class<?> c = findLoadedClass(name);
            if (c == null) {
                byte[] b = read(name);
                byte[] t = transformer.transform(name.replace('.', '/'), b);
                if (t != null) {
                    if (check) {
                        check(t);
                    }
                    transformed.incrementAndGet();
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

    private void check(byte[] bytes) {
        StringWriter sw = new StringWriter();
        CheckClassAdapter.verify(new ClassReader(bytes), this, false, new PrintWriter(sw));
        if (!sw.toString().isEmpty()) {
            throw new AssertionError("instrumented class fails verification:\n" + sw);
        }
    }

    private static byte[] read(String name) throws ClassNotFoundException {
        String path = name.replace('.', '/') + ".class";
        try (InputStream in = InstrumentingLoader.class.getClassLoader().getResourceAsStream(path)) {
            if (in == null) {
                throw new ClassNotFoundException(name);
            }
            return in.readAllBytes();
        } catch (IOException e) {
            throw new ClassNotFoundException(name, e);
        }
    }
}
