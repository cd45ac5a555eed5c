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
 * compiled code.
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
 * ({@code current-thread-readers.txt}, a test checks it against the running JDK), out of every
 * compiled method: the JDK's inline user code too ({@code Continuation.enter} a goroutine's body).
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
 * {@code ThreadLocal.get}), in every compiled method. {@code -Dgort.jitdirective=false}
 * ({@link Config#jitDirectiveSetting()}) leaves it out.
 */
public final class JitDirectives {
    private JitDirectives() {}

    /** What {@link #install()} reports when {@code -Dgort.jitdirective=false} left the directive out. */
    public static final String SWITCHED_OFF = "-Dgort.jitdirective=false";

    /** Under the class monitor: null until the first attempt, then what it reported. */
    private static String outcome;

    /**
     * Adds the directive unless an earlier call did (or failed): returns {@code null} if it is in
     * place, else why not: {@link #SWITCHED_OFF}, or the diagnostic command is not reachable
     * ({@code jdk.management} absent or not open to gort).
     */
    public static synchronized String install() {
        if (outcome == null) {
            outcome = Config.jitDirectiveSetting() ? install0() : SWITCHED_OFF;
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
                Files.writeString(file, directive(carriedCompileCommands(), readers()));
                String r = String.valueOf(exec.invoke(dcmd, "Compiler.directives_add \"" + file + "\""));
                return r.contains("1 compiler directives added") ? "" : "Compiler.directives_add said: " + r.strip();
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
     * The directive's JSON: every compiled method (the JDK's too: a JDK method such as
     * {@code Continuation.enter} or {@code ArrayList.forEach} inlines user code, a goroutine's body
     * among them) keeps the readers out of its inlining. A directive's {@code inline} list replaces
     * the {@code -XX:CompileCommand} inline and dontinline rules for the methods it matches (JMH's
     * {@code @CompilerControl} among them), so those come first, carried over: the first pattern that
     * matches decides.
     */
    static String directive(List<String> carried, List<String> readers) {
        StringBuilder sb = new StringBuilder(64 * (carried.size() + readers.size()));
        sb.append("[ { match: \"*.*\", inline: [");
        String sep = "";
        for (String c : carried) {
            sb.append(sep).append("\n    \"").append(c).append('"');
            sep = ",";
        }
        for (String r : readers) {
            sb.append(sep).append("\n    \"-").append(r).append('"');
            sep = ",";
        }
        return sb.append(" ] } ]\n").toString();
    }

    /**
     * The inline and dontinline rules of this JVM's {@code -XX:CompileCommand} and
     * {@code -XX:CompileCommandFile} options (its command line, {@code JAVA_TOOL_OPTIONS},
     * {@code JDK_JAVA_OPTIONS}, {@code _JAVA_OPTIONS}) as directive patterns: {@code +class.method}
     * or {@code -class.method}.
     */
    static List<String> carriedCompileCommands() {
        List<String> args = new ArrayList<>();
        ProcessHandle.current().info().arguments().ifPresent(a -> args.addAll(List.of(a)));
        for (String env : new String[] {"JAVA_TOOL_OPTIONS", "JDK_JAVA_OPTIONS", "_JAVA_OPTIONS"}) {
            String v = System.getenv(env);
            if (v != null && !v.isBlank()) {
                args.addAll(List.of(v.trim().split("\\s+")));
            }
        }
        List<String> out = new ArrayList<>();
        for (String a : args) {
            if (a.startsWith("-XX:CompileCommand=")) {
                carry(a.substring("-XX:CompileCommand=".length()), out);
            } else if (a.startsWith("-XX:CompileCommandFile=")) {
                try {
                    for (String line : Files.readAllLines(Path.of(a.substring("-XX:CompileCommandFile=".length())))) {
                        carry(line, out);
                    }
                } catch (IOException | RuntimeException e) {
                    // unreadable: HotSpot has said so at startup
                }
            }
        }
        return out;
    }

    /** One CompileCommand ({@code dontinline,pkg/Cls.m}, {@code inline pkg.Cls::m}, ...) into {@code out}. */
    static void carry(String command, List<String> out) {
        String c = command.strip();
        int cut = 0;
        while (cut < c.length() && c.charAt(cut) != ',' && !Character.isWhitespace(c.charAt(cut))) {
            cut++;
        }
        String cmd = c.substring(0, cut);
        if (!cmd.equals("inline") && !cmd.equals("dontinline") || cut >= c.length()) {
            return;
        }
        String rest = c.substring(cut + 1).strip();
        int comma = rest.indexOf(',');
        if (comma >= 0) {
            rest = rest.substring(0, comma).strip();
        }
        String cls;
        String method;
        int colons = rest.indexOf("::");
        String[] words = rest.split("\\s+");
        if (colons >= 0) {
            cls = rest.substring(0, colons);
            method = rest.substring(colons + 2).split("[\\s(]")[0];
        } else if (words.length >= 2 && !words[1].startsWith("(")) {
            cls = words[0];
            method = words[1].split("\\(")[0];
        } else {
            String w = words[0].split("\\(")[0];
            int dot = w.lastIndexOf('.');
            if (dot < 0) {
                return;
            }
            cls = w.substring(0, dot);
            method = w.substring(dot + 1);
        }
        if (cls.isEmpty() || method.isEmpty()) {
            return;
        }
        out.add((cmd.equals("inline") ? "+" : "-") + cls.replace('.', '/') + "." + method);
    }
}
