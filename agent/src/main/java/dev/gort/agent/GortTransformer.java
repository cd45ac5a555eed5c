package dev.gort.agent;

import dev.gort.runtime.InstrumentationStats;
import dev.gort.runtime.PreemptStrategy;
import java.lang.instrument.ClassFileTransformer;
import java.security.ProtectionDomain;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The load-time half of the agent: decides which classes to rewrite and leaves every class it
 * cannot rewrite safely exactly as it was (reported once on stderr, counted in
 * {@link InstrumentationStats#classesSkipped()} under "failed").
 *
 * <p>Never instrumented: classes of the bootstrap and platform loaders, {@code java/},
 * {@code javax/}, {@code jdk/}, {@code sun/}, {@code com/sun/}; gort itself ({@code dev/gort/}: the
 * runtime, the api and the agent, since a poll inside the scheduler would recurse into it; user
 * code under {@code dev/gort/examples/} is instrumented); the agent's and runtime's dependencies
 * (ASM, also relocated under {@code dev/gort/agent/shaded/}; Agrona; HdrHistogram). More prefixes:
 * {@code -Dgort.agent.exclude=a/b/,c/}; prefixes to force in: {@code -Dgort.agent.include=}.
 * {@code -Dgort.agent.cache=DIR} keeps what it did on disk for the next start ({@link TransformCache}).
 */
public final class GortTransformer implements ClassFileTransformer {
    private static final List<String> JDK = List.of("java/", "javax/", "jdk/", "sun/", "com/sun/");
    private static final List<String> GORT_DEPS = List.of("org/objectweb/asm/", "org/agrona/", "org/HdrHistogram/");

    private final PollInjector injector;
    private final List<String> exclude;
    private final List<String> include;
    private final Set<String> reported = ConcurrentHashMap.newKeySet();
    /**
     * Instrumented classes of earlier runs ({@link TransformCache}), or null. Final: read by
     * class-loading threads.
     */
    private final TransformCache cache;

    public GortTransformer(PreemptStrategy strategy) {
        this(Strategies.of(
                strategy, PreemptStrategy.strideFromEnvironment(), PreemptStrategy.callerEntriesFromEnvironment()));
    }

    /**
     * {@code strategy} (any {@link Strategy}), with the agent's verify/exclude/include/cache
     * settings.
     */
    public GortTransformer(Strategy strategy) {
        this(
                new PollInjector(strategy, Boolean.getBoolean("gort.agent.verify")),
                prefixes("gort.agent.exclude"),
                prefixes("gort.agent.include"),
                cacheFromEnvironment(strategy, Boolean.getBoolean("gort.agent.verify")));
    }

    public GortTransformer(Strategy strategy, boolean verify, List<String> exclude, List<String> include) {
        this(new PollInjector(strategy, verify), exclude, include, null);
    }

    /** As {@link #GortTransformer(Strategy, boolean, List, List)}, with a cache in {@code cacheDir}. */
    GortTransformer(Strategy strategy, boolean verify, String cacheDir) {
        this(new PollInjector(strategy, verify), List.of(), List.of(), TransformCache.open(cacheDir, strategy, verify));
    }

    public GortTransformer(PreemptStrategy strategy, boolean verify, List<String> exclude, List<String> include) {
        this(strategy, verify, exclude, include, PreemptStrategy.DEFAULT_STRIDE, true);
    }

    public GortTransformer(
            PreemptStrategy strategy,
            boolean verify,
            List<String> exclude,
            List<String> include,
            int stride,
            boolean callerEntries) {
        this(new PollInjector(strategy, verify, stride, callerEntries), exclude, include, null);
    }

    private GortTransformer(PollInjector injector, List<String> exclude, List<String> include, TransformCache cache) {
        this.injector = injector;
        this.exclude = exclude;
        this.include = include;
        this.cache = cache;
    }

    /** {@code -Dgort.agent.cache=DIR} / {@code GORT_AGENT_CACHE}: null where it is not set or unusable. */
    private static TransformCache cacheFromEnvironment(Strategy strategy, boolean verify) {
        String dir = dev.gort.runtime.Config.setting("gort.agent.cache", "GORT_AGENT_CACHE");
        return dir == null ? null : TransformCache.open(dir, strategy, verify);
    }

    private static List<String> prefixes(String prop) {
        List<String> out = new ArrayList<>();
        String v = System.getProperty(prop);
        if (v != null) {
            for (String p : v.split(",")) {
                if (!p.isBlank()) {
                    out.add(p.trim().replace('.', '/'));
                }
            }
        }
        return out;
    }

    /** Why {@code className} is not instrumented, or null if it should be. */
    String skipReason(String className) {
        for (String p : include) {
            if (className.startsWith(p)) {
                return null;
            }
        }
        for (String p : JDK) {
            if (className.startsWith(p)) {
                return "jdk";
            }
        }
        if (className.startsWith("dev/gort/") && !className.startsWith("dev/gort/examples/")) {
            return "gort";
        }
        for (String p : GORT_DEPS) {
            if (className.startsWith(p)) {
                return "agent-dependency";
            }
        }
        for (String p : exclude) {
            if (className.startsWith(p)) {
                return "excluded";
            }
        }
        return null;
    }

    @Override
    public byte[] transform(
            ClassLoader loader,
            String className,
            Class<?> classBeingRedefined,
            ProtectionDomain protectionDomain,
            byte[] classfileBuffer) {
        if (className == null) {
            return null; // hidden classes never reach transformers; be safe with odd ones
        }
        if (loader == null || loader == ClassLoader.getPlatformClassLoader()) {
            InstrumentationStats.classSkipped("jdk");
            return null;
        }
        if (classBeingRedefined != null) {
            InstrumentationStats.classSkipped("redefined");
            return null;
        }
        String why = skipReason(className);
        if (why != null) {
            InstrumentationStats.classSkipped(why);
            return null;
        }
        return transform(className, classfileBuffer);
    }

    /** Instruments {@code bytes} (no package filter); null = unchanged. Never throws. */
    public byte[] transform(String className, byte[] bytes) {
        long t0 = System.nanoTime();
        try {
            PollInjector.Result r = cache == null ? null : cache.get(bytes);
            if (r != null) {
                InstrumentationStats.cacheHits.incrementAndGet();
            } else {
                r = injector.instrument(bytes);
                if (cache != null) {
                    cache.put(bytes, r);
                }
            }
            InstrumentationStats.methodsSkipped.addAndGet(r.methodsSkipped());
            if (!r.changed()) {
                InstrumentationStats.classSkipped("nothing-to-do");
                return null;
            }
            InstrumentationStats.classesTransformed.incrementAndGet();
            InstrumentationStats.methodsTransformed.addAndGet(r.methods());
            InstrumentationStats.backedgePolls.addAndGet(r.backedgePolls());
            InstrumentationStats.entryPolls.addAndGet(r.entryPolls());
            InstrumentationStats.monitorHooks.addAndGet(r.monitorHooks());
            return r.bytes();
        } catch (Throwable t) {
            InstrumentationStats.classSkipped("failed");
            if (reported.add(className)) {
                System.err.println("gort-agent: left " + className + " uninstrumented: " + t);
            }
            return null;
        } finally {
            InstrumentationStats.transformNanos.addAndGet(System.nanoTime() - t0);
        }
    }
}
