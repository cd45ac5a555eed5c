package dev.gort.bench.lab;

import dev.gort.agent.PollInjector;
import dev.gort.agent.Strategy;
import java.io.IOException;
import java.io.InputStream;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Loads the lab's workloads ({@code dev.gort.bench.lab.work.}) and the libraries they use
 * (Jackson) child-first, rewritten by {@link PollInjector} for one {@link Strategy}, or with their
 * original bytes when the strategy is null (the uninstrumented baseline), so that every strategy
 * runs its own copy of the same bytecode in one JVM without -javaagent. Records what it did per
 * class (bytes added, methods changed, polls placed).
 */
final class LabLoader extends ClassLoader {
    static final List<String> PREFIXES = List.of("dev.gort.bench.lab.work.", "com.fasterxml.jackson.");

    /** What the injector did to one class. */
    record ClassStats(int bytesBefore, int bytesAfter, int methodsChanged, int backedgePolls, int entryPolls) {}

    private final PollInjector injector;
    /** Written by class-loading threads (under the class's loading lock), read after loading. */
    final Map<String, ClassStats> stats = new ConcurrentHashMap<>();

    LabLoader(String label, Strategy strategy) {
        super("lab-" + label, LabLoader.class.getClassLoader());
        this.injector = strategy == null ? null : new PollInjector(strategy, false);
    }

    private static boolean mine(String name) {
        for (String p : PREFIXES) {
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
                byte[] b;
                try (InputStream in = getParent().getResourceAsStream(name.replace('.', '/') + ".class")) {
                    if (in == null) {
                        throw new ClassNotFoundException(name);
                    }
                    b = in.readAllBytes();
                } catch (IOException e) {
                    throw new ClassNotFoundException(name, e);
                }
                int before = b.length;
                ClassStats st = new ClassStats(before, before, 0, 0, 0);
                if (injector != null) {
                    try {
                        PollInjector.Result r = injector.instrument(b);
                        if (r.changed()) {
                            b = r.bytes();
                            st = new ClassStats(before, b.length, r.methods(), r.backedgePolls(), r.entryPolls());
                        }
                    } catch (RuntimeException e) {
                        System.err.println("lab: left " + name + " uninstrumented: " + e);
                    }
                }
                stats.put(name, st);
                c = defineClass(name, b, 0, b.length);
            }
            if (resolve) {
                resolveClass(c);
            }
            return c;
        }
    }

    /** Sum of the stats of {@code cls} and its nested classes. */
    ClassStats statsOf(String cls) {
        int bb = 0;
        int ba = 0;
        int m = 0;
        int be = 0;
        int en = 0;
        for (Map.Entry<String, ClassStats> e : stats.entrySet()) {
            if (e.getKey().equals(cls) || e.getKey().startsWith(cls + "$")) {
                ClassStats s = e.getValue();
                bb += s.bytesBefore();
                ba += s.bytesAfter();
                m += s.methodsChanged();
                be += s.backedgePolls();
                en += s.entryPolls();
            }
        }
        return new ClassStats(bb, ba, m, be, en);
    }
}
