package dev.gort.runtime;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
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
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        String cp = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        List<String> cmd = new ArrayList<>(List.of(
                java,
                "--add-exports",
                "java.base/jdk.internal.vm=ALL-UNNAMED",
                "-XX:+UseSerialGC",
                "-XX:TieredStopAtLevel=1",
                "-Xshare:auto"));
        if (gomaxprocs != null) {
            cmd.add("-Dgort.gomaxprocs=" + gomaxprocs);
        }
        cmd.addAll(List.of("-cp", cp, mainClass, arg));
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
        pb.environment().remove("GOMAXPROCS");
        pb.environment().putAll(env);
        Process p = pb.start();
        p.getOutputStream().close();
        // Read on another thread: a child that never exits keeps its stdout open, and reading it
        // here would hang the test instead of failing it after the deadline.
        java.io.ByteArrayOutputStream buf = new java.io.ByteArrayOutputStream();
        Thread reader = new Thread(
                () -> {
                    try {
                        p.getInputStream().transferTo(buf);
                    } catch (IOException e) {
                        // the stream closes when the child is destroyed
                    }
                },
                "child-jvm-output");
        reader.setDaemon(true);
        reader.start();
        if (!p.waitFor(60, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            reader.join(TimeUnit.SECONDS.toMillis(10));
            throw new AssertionError(mainClass + " " + arg + " did not exit; output:\n"
                    + buf.toString(StandardCharsets.UTF_8)); // BAOS methods are synchronized
        }
        reader.join();
        return new Result(p.exitValue(), buf.toString(StandardCharsets.UTF_8));
    }
}
