package dev.gort.agent;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gort.runtime.PreemptStrategy;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import org.junit.jupiter.api.Test;
import org.objectweb.asm.ClassReader;
import org.objectweb.asm.tree.AbstractInsnNode;
import org.objectweb.asm.tree.ClassNode;
import org.objectweb.asm.tree.MethodNode;
import org.objectweb.asm.tree.TryCatchBlockNode;

/**
 * Every class of the real libraries the agent tests run (Guava, Jackson's core, databind and
 * annotations, commons-lang3) instrumented under {@code backedge} and then loaded and initialised,
 * so that HotSpot's verifier checks every changed method, the frames the injector writes included:
 * no class may fail the transformation, nor fail to load with a {@code VerifyError}. Among them,
 * call sites of JDK callback methods inside a try range (Guava's {@code Synchronized} wrappers
 * call their delegate's {@code forEach} inside a {@code synchronized} block), whose handler frames
 * {@code PollInjector.hookCallbackCall} builds from the enclosing handlers'.
 */
class RealLibrariesVerifyTest {
    private static Path jarOf(Class<?> c) throws Exception {
        return Path.of(c.getProtectionDomain().getCodeSource().getLocation().toURI());
    }

    @Test
    void everyInstrumentedClassOfTheRealLibrariesVerifiesAndLoads() throws Exception {
        List<Path> jars = List.of(
                jarOf(com.google.common.collect.ImmutableList.class),
                jarOf(com.google.common.util.concurrent.internal.InternalFutureFailureAccess.class),
                jarOf(com.fasterxml.jackson.databind.ObjectMapper.class),
                jarOf(com.fasterxml.jackson.core.JsonParser.class),
                jarOf(com.fasterxml.jackson.annotation.JsonProperty.class),
                jarOf(org.apache.commons.lang3.StringUtils.class));
        Map<String, byte[]> instrumented = new HashMap<>();
        // Every class of the jars is defined by the test's own loader, instrumented or not: the
        // same classes also sit on the class path, and a mix of the two loaders would not link.
        Map<String, byte[]> all = new HashMap<>();
        List<String> failed = new ArrayList<>();
        int callbackSitesInTry = 0;
        PollInjector injector = new PollInjector(PreemptStrategy.BACKEDGE, false);
        for (int j = 0; j < jars.size(); j++) {
            try (JarFile jf = new JarFile(jars.get(j).toFile())) {
                for (JarEntry e : Collections.list(jf.entries())) {
                    String n = e.getName();
                    if (!n.endsWith(".class") || n.contains("module-info") || n.startsWith("META-INF")) {
                        continue;
                    }
                    byte[] b = jf.getInputStream(e).readAllBytes();
                    String cls = n.substring(0, n.length() - ".class".length()).replace('/', '.');
                    callbackSitesInTry += callbackSitesInTry(b);
                    all.put(cls, b);
                    try {
                        PollInjector.Result r = injector.instrument(b);
                        if (r.changed()) {
                            instrumented.put(cls, r.bytes());
                            all.put(cls, r.bytes());
                        }
                    } catch (RuntimeException ex) {
                        failed.add(cls + ": " + ex.getMessage());
                    }
                }
            }
        }
        assertEquals(List.of(), failed, "classes the injector failed to transform");
        assertTrue(callbackSitesInTry > 0, "no callback call site inside a try range to check");
        List<String> unverified = new ArrayList<>();
        try (URLClassLoader loader = new URLClassLoader(new URL[0], getClass().getClassLoader()) {
            @Override
            protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
                synchronized (getClassLoadingLock(name)) {
                    Class<?> c = findLoadedClass(name);
                    if (c != null) {
                        return c;
                    }
                    byte[] b = all.get(name);
                    return b != null ? defineClass(name, b, 0, b.length) : super.loadClass(name, resolve);
                }
            }
        }) {
            for (String name : new TreeSet<>(instrumented.keySet())) {
                try {
                    Class.forName(name, true, loader); // linked, so verified, and initialised
                } catch (Throwable t) {
                    Throwable c = t;
                    while (c.getCause() != null) {
                        c = c.getCause();
                    }
                    unverified.add(name + ": " + c);
                }
            }
        }
        System.out.println("instrumented " + instrumented.size() + " classes, " + callbackSitesInTry
                + " callback call sites inside try ranges; failures: " + unverified.size());
        assertEquals(List.of(), unverified, "instrumented classes that did not load");
    }

    /** Callback call sites the injector wraps that lie in one of their method's try ranges. */
    private static int callbackSitesInTry(byte[] b) {
        ClassNode cn = new ClassNode();
        new ClassReader(b).accept(cn, 0);
        int n = 0;
        for (MethodNode mn : cn.methods) {
            if (mn.name.startsWith("<") || mn.instructions == null) {
                continue;
            }
            for (AbstractInsnNode in = mn.instructions.getFirst(); in != null; in = in.getNext()) {
                if (PollInjector.callbackIndex(in) >= 0 && inTry(mn, in)) {
                    n++;
                }
            }
        }
        return n;
    }

    private static boolean inTry(MethodNode mn, AbstractInsnNode in) {
        for (TryCatchBlockNode t : mn.tryCatchBlocks) {
            for (AbstractInsnNode x = t.start; x != null && x != t.end; x = x.getNext()) {
                if (x == in) {
                    return true;
                }
            }
        }
        return false;
    }
}
