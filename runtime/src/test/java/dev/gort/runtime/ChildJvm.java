package dev.gort.runtime;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Go's crash_test.go runTestProg for the JVM: runs a test program's {@code main} in a child JVM
 * the way a user runs gort (no {@code -Dgort.fatal=throw}, so fatal errors halt with status 2),
 * with this JVM's class path, and returns its exit status and its stdout and stderr merged (Go's
 * CombinedOutput). Shared with api's tests through runtime's test jar.
 */
public final class ChildJvm {
    private ChildJvm() {}

    public record Result(int status, String output) {}

    /**
     * @param mainClass  the program
     * @param arg        its one argument (the test program's case name)
     * @param gomaxprocs {@code -Dgort.gomaxprocs}, or null for none
     * @param env        environment variables to set (GOMAXPROCS is removed first)
     */
    public static Result run(String mainClass, String arg, String gomaxprocs, Map<String, String> env)
            throws IOException, InterruptedException {
        return run(mainClass, arg, gomaxprocs, env, List.of());
    }

    /** As {@link #run(String, String, String, Map)}, with JVM options before the class (e.g. {@code -Dgort.trace=f}). */
    public static Result run(
            String mainClass, String arg, String gomaxprocs, Map<String, String> env, List<String> jvmOptions)
            throws IOException, InterruptedException {
        return run(true, mainClass, arg, gomaxprocs, env, jvmOptions);
    }

    /**
     * As {@link #run(String, String, String, Map, List)}, without {@code --add-exports
     * java.base/jdk.internal.vm=ALL-UNNAMED}: a user's JVM started with neither the agent nor the flag.
     */
    public static Result runWithoutExports(String mainClass, String arg, List<String> jvmOptions)
            throws IOException, InterruptedException {
        return run(false, mainClass, arg, null, Map.of(), jvmOptions);
    }

    private static Result run(
            boolean exportContinuations,
            String mainClass,
            String arg,
            String gomaxprocs,
            Map<String, String> env,
            List<String> jvmOptions)
            throws IOException, InterruptedException {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        String cp = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        List<String> cmd = new ArrayList<>(List.of(java));
        if (exportContinuations) {
            cmd.addAll(List.of("--add-exports", "java.base/jdk.internal.vm=ALL-UNNAMED"));
        }
        cmd.addAll(List.of("-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xshare:auto"));
        if (gomaxprocs != null) {
            cmd.add("-Dgort.gomaxprocs=" + gomaxprocs);
        }
        cmd.addAll(jvmOptions);
        cmd.addAll(List.of("-cp", cp, mainClass, arg));
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
        pb.environment().remove("GOMAXPROCS");
        pb.environment().putAll(env);
        // output to a file, so that a child that hangs is seen by waitFor's timeout (a read of its
        // stdout would block as long as the child lives)
        Path log = Files.createTempFile("gort-child", ".log");
        try {
            pb.redirectOutput(log.toFile());
            Process p = pb.start();
            p.getOutputStream().close();
            if (!p.waitFor(60, TimeUnit.SECONDS)) {
                p.destroyForcibly().waitFor();
                throw new AssertionError(mainClass + " " + arg + " did not exit in 60 s; output:\n"
                        + Files.readString(log, StandardCharsets.UTF_8));
            }
            return new Result(p.exitValue(), Files.readString(log, StandardCharsets.UTF_8));
        } finally {
            Files.deleteIfExists(log);
        }
    }
}
