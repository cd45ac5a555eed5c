package dev.gort.runtime;

import java.io.IOException;
import java.io.InputStream;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * A HotSpot compiler directive that keeps the JDK's methods which read the current thread out of
 * compiled code outside the JDK.
 *
 * <p>Why: C2 compiles {@code Thread.currentThread()} as a load from immutable memory (the JDK
 * assumes a continuation never changes the current thread), so a compiled method may read it once
 * and reuse it after a yield moved its goroutine to another carrier. Inlined into a user's loop
 * that polls or parks, {@code ReentrantLock.lock()} then recorded the carrier the goroutine had
 * left as the lock's owner: mutual exclusion broke, an {@code unlock()} threw
 * {@code IllegalMonitorStateException} and the lock stayed held (a counter under a
 * {@code ReentrantLock} in 8 goroutines at GOMAXPROCS=2, 3 of 3 runs; Caffeine, Guava's
 * {@code LocalCache}, Logback's {@code AsyncAppender}). A method kept out of the caller's
 * compiled code is called, and reads the thread afresh each time. The methods are those of the
 * JDK image that call {@code Thread.currentThread()} or {@code Thread.interrupted()}
 * ({@code current-thread-readers.txt}, a test checks it against the running JDK); the JDK's own
 * compiled methods and gort's runtime keep their inlining (neither keeps the thread across a
 * yield: runtime/HACKING.md, "Never call Thread.currentThread() from goroutine code").
 * {@code -XX:DisableIntrinsic=_currentThread} would do it too, for every compiled method, but no
 * agent can set a flag; a directive's {@code DisableIntrinsic} is not honoured for this intrinsic
 * (tried on JDK 25), its {@code inline} list is.
 *
 * <p>Installed once per JVM, by the agent's premain (which opens the JDK package it needs) or, where
 * {@code --add-opens jdk.management/com.sun.management.internal=ALL-UNNAMED} opened it, the first
 * runtime's start, through the {@code Compiler.directives_add} diagnostic command (about 40 ms,
 * once). What was compiled before stays as it was compiled.
 *
 * <p>Cost: a call where those methods were inlined ({@code ReentrantLock.lock}'s first CAS, a
 * {@code ThreadLocal.get}), in compiled code outside the JDK and the runtime only.
 */
public final class JitDirectives {
    private JitDirectives() {}

    /** Under the class monitor: null until the first attempt, then what it reported. */
    private static String outcome;

    /**
     * Adds the directive unless an earlier call did (or failed): returns {@code null} if it is in
     * place, else why not (the diagnostic command is not reachable: {@code jdk.management} absent or
     * not open to gort).
     */
    public static synchronized String install() {
        if (outcome == null) {
            outcome = install0();
        }
        return outcome.isEmpty() ? null : outcome;
    }

    private static String install0() {
        try {
            Class.forName("com.sun.management.internal.PlatformMBeanProviderImpl", true, null); // its native library
            Class<?> c = Class.forName("com.sun.management.internal.DiagnosticCommandImpl", false, null);
            Method get = c.getDeclaredMethod("getDiagnosticCommandMBean");
            get.setAccessible(true);
            Object dcmd = get.invoke(null);
            if (dcmd == null) {
                return "diagnostic commands are not supported by this JVM";
            }
            Method exec = c.getDeclaredMethod("executeDiagnosticCommand", String.class);
            exec.setAccessible(true);
            Path file = Files.createTempFile("gort-jit", ".json");
            try {
                Files.writeString(file, directive(readers()));
                String r = String.valueOf(exec.invoke(dcmd, "Compiler.directives_add " + file));
                return r.contains("2 compiler directives added") ? "" : "Compiler.directives_add said: " + r.strip();
            } finally {
                Files.deleteIfExists(file);
            }
        } catch (ReflectiveOperationException | RuntimeException | IOException | LinkageError e) {
            return e.toString();
        }
    }

    /** The {@code class.method} entries of the resource list. */
    static List<String> readers() throws IOException {
        List<String> out = new ArrayList<>();
        try (InputStream in = JitDirectives.class.getResourceAsStream("current-thread-readers.txt")) {
            if (in == null) {
                throw new IOException("current-thread-readers.txt missing");
            }
            for (String line : new String(in.readAllBytes(), StandardCharsets.UTF_8).split("\n")) {
                String l = line.strip();
                if (!l.isEmpty() && !l.startsWith("#")) {
                    out.add(l);
                }
            }
        }
        return out;
    }

    /**
     * The directives' JSON: first the JDK's and gort's own methods as roots, unchanged (an option
     * set to its default makes a directive apply, and the first that applies wins), then every other
     * root with the readers out of its inlining.
     */
    static String directive(List<String> readers) {
        StringBuilder sb = new StringBuilder(64 * readers.size());
        sb.append("[ { match: [\"java/*.*\", \"javax/*.*\", \"jdk/*.*\", \"sun/*.*\", \"com/sun/*.*\",")
                .append(" \"dev/gort/runtime/*.*\"], BackgroundCompilation: true },\n")
                .append("  { match: \"*.*\", inline: [");
        for (int i = 0; i < readers.size(); i++) {
            sb.append(i == 0 ? "" : ",")
                    .append("\n    \"-")
                    .append(readers.get(i))
                    .append('"');
        }
        return sb.append(" ] } ]\n").toString();
    }
}
