package dev.gort.compat;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.jar.Attributes;
import java.util.jar.JarOutputStream;
import java.util.jar.Manifest;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Issue 12's last standing test: commons-lang3 3.17.0's own test suite (its tests jar from Maven
 * Central, run by the JUnit Platform Launcher: {@link SuiteMain}) with every test body in a gort
 * goroutine ({@link InGoroutine}), under the java agent ({@code backedge}, the default) instrumenting
 * commons-lang3 and its tests, with one CPU hog goroutine per P forcing preemptions, at GOMAXPROCS 1
 * and 2, each in a JVM of its own; compared with the same suite run plainly (no agent, no goroutines,
 * the same launcher and JVM flags), whose failures on this machine and JDK are the baseline.
 *
 * <p>The rule: gort adds no failure. Every run finds the same tests as the baseline, every test
 * body of a gort run ran on a goroutine, none hung, and the tests that fail under gort are a subset
 * of those that fail plainly. Results and logs in {@code compat/target/compat/}
 * ({@code NAME.summary}, {@code NAME.failures}, {@code NAME.log}, {@code report.md}).
 *
 * <p>Long (minutes per run on 2 cores): the stress tier, {@code ./gort compat}. Which runs:
 * {@code -Dgort.compat.runs=plain,gort1,gort2} (the default).
 */
@Tag("stress")
class Lang3SuiteStressTest {
    private static final String SUITE_CLASS = "org.apache.commons.lang3.StringUtilsTest";
    /**
     * A bound for one whole run ({@code -Dgort.compat.limit=MIN}), not a timing assertion: a run
     * past it is a hang. Generous: the plain run alone takes over 45 min on a 2-core machine loaded
     * by other builds.
     */
    static final long RUN_LIMIT_MIN = Long.getLong("gort.compat.limit", 180);
    /**
     * commons-lang3's own Surefire flags for Java 16+ (its pom's argLine), plus gort's export, plus a
     * soft-reference policy that clears no soft reference by age within {@link #RUN_LIMIT_MIN} (only
     * when the heap is short), the same in every run. With the JDK's (1 s a free MB) a run as slow as
     * gort2 on a loaded machine lost the JDK's soft caches of zone names that the faster plain run
     * kept, recomputed them with other names (the JDK derives a locale's names from its parent's
     * cached ones) and failed to parse them with commons-lang3's strategy cached from before: 21
     * extra aborts in {@code FastDateParser_TimeZoneStrategyTest} (issue 12,
     * {@link SuiteJvmSoftReferencesTest}).
     */
    static final List<String> JVM_FLAGS = List.of(
            "-Xmx1g",
            "-XX:+UseG1GC",
            "-XX:SoftRefLRUPolicyMSPerMB=" + TimeUnit.MINUTES.toMillis(RUN_LIMIT_MIN),
            "--add-opens",
            "java.base/java.lang.reflect=ALL-UNNAMED",
            "--add-opens",
            "java.base/java.lang=ALL-UNNAMED",
            "--add-opens",
            "java.base/java.util=ALL-UNNAMED",
            "--add-exports",
            "java.base/jdk.internal.vm=ALL-UNNAMED");
    /**
     * Test classes left out ({@code -Dgort.compat.exclude=regex,...}; default none): e.g. the
     * locale-by-time-zone classes {@code org.apache.commons.lang3.time.FastDate(Parser|Printer).*},
     * which take most of the run's time, for a quicker pass.
     */
    private static final String EXCLUDE = System.getProperty("gort.compat.exclude", "");

    @Test
    void commonsLang3sOwnSuiteInGoroutinesUnderTheAgentAddsNoFailure() throws Exception {
        Path out = Path.of(System.getProperty("gort.compat.out", "target/compat"));
        Files.createDirectories(out);
        Path agentJar = manifestOnlyAgentJar(out);
        String runs = System.getProperty("gort.compat.runs", "plain,gort1,gort2");

        Map<String, Properties> summaries = new LinkedHashMap<>();
        Map<String, Set<String>> failures = new LinkedHashMap<>();
        for (String run : runs.split(",")) {
            List<String> cmd = new ArrayList<>();
            cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
            cmd.addAll(JVM_FLAGS);
            if (run.equals("plain")) {
                cmd.add("-Dgort.compat.mode=plain");
            } else if (run.startsWith("gort")) {
                cmd.add("-javaagent:" + agentJar);
                cmd.add("-Dgort.gomaxprocs=" + Integer.parseInt(run.substring(4)));
                cmd.add("-Dgort.agent.include=dev/gort/compat/Hog");
            } else {
                fail("unknown run '" + run + "': want plain or gortN");
            }
            cmd.add("-Dgort.compat.exclude=" + EXCLUDE);
            cmd.add("-cp");
            cmd.add(System.getProperty("surefire.test.class.path", System.getProperty("java.class.path")));
            cmd.add(SuiteMain.class.getName());
            cmd.add(run);
            cmd.add(SUITE_CLASS);
            cmd.add(out.toString());
            Path log = out.resolve(run + ".log");
            System.out.println("compat: running " + run + " (log: " + log + ")");
            Process p = new ProcessBuilder(cmd)
                    .redirectErrorStream(true)
                    .redirectOutput(log.toFile())
                    .start();
            if (!p.waitFor(RUN_LIMIT_MIN, TimeUnit.MINUTES)) {
                p.destroyForcibly();
                fail(run + " did not finish in " + RUN_LIMIT_MIN + " min (a hang?); see " + log);
            }
            assertEquals(0, p.exitValue(), run + " exited with status " + p.exitValue() + "; see " + log);
            Properties s = new Properties();
            try (var r = Files.newBufferedReader(out.resolve(run + ".summary"))) {
                s.load(r);
            }
            summaries.put(run, s);
            failures.put(run, ids(out.resolve(run + ".failures")));
            System.out.println("compat: " + run + " " + s);
        }
        String report = report(summaries, failures);
        Files.writeString(out.resolve("report.md"), report);
        System.out.println(report);

        Properties base = summaries.get("plain");
        for (String run : summaries.keySet()) {
            if (run.equals("plain")) {
                continue;
            }
            Properties s = summaries.get(run);
            if (base != null) {
                assertEquals(base.getProperty("found"), s.getProperty("found"), run + ": tests found");
                Set<String> extra = new TreeSet<>(failures.get(run));
                extra.removeAll(failures.get("plain"));
                assertTrue(extra.isEmpty(), run + ": failures the plain run does not have: " + extra);
            }
            assertEquals("0", s.getProperty("hung"), run + ": bodies that hung");
            assertEquals(s.getProperty("bodies"), s.getProperty("bodiesOnGoroutine"), run + ": bodies on goroutines");
            assertTrue(Long.parseLong(s.getProperty("bodies")) > 10_000, run + ": bodies run");
            assertTrue(Long.parseLong(s.getProperty("preemptHonoured")) > 0, run + ": preemptions");
        }
    }

    /** The "STATUS uniqueId" part of each line of a failures file. */
    private static Set<String> ids(Path failures) throws IOException {
        Set<String> ids = new TreeSet<>();
        for (String line : Files.readAllLines(failures)) {
            int tab = line.indexOf('\t');
            ids.add(tab < 0 ? line : line.substring(0, tab));
        }
        return ids;
    }

    private static String report(Map<String, Properties> summaries, Map<String, Set<String>> failures) {
        StringBuilder sb = new StringBuilder("# commons-lang3 3.17.0's own tests under gort\n\n");
        String[] keys = {
            "found",
            "succeeded",
            "failed",
            "aborted",
            "skipped",
            "containersFailed",
            "bodies",
            "bodiesOnGoroutine",
            "hung",
            "classesInstrumented",
            "preemptRequested",
            "preemptHonoured",
            "preemptSitesInLang3",
            "seconds"
        };
        sb.append("| run |");
        for (String k : keys) {
            sb.append(' ').append(k).append(" |");
        }
        sb.append("\n|---|");
        sb.append("---|".repeat(keys.length)).append('\n');
        summaries.forEach((run, s) -> {
            sb.append("| ").append(run).append(" |");
            for (String k : keys) {
                sb.append(' ').append(s.getProperty(k, "-")).append(" |");
            }
            sb.append('\n');
        });
        failures.forEach((run, f) -> {
            sb.append("\n## ").append(run).append(": ").append(f.size()).append(" failed or aborted\n");
            for (String id : f) {
                boolean extra = !run.equals("plain")
                        && failures.containsKey("plain")
                        && !failures.get("plain").contains(id);
                sb.append("- ").append(extra ? "**extra** " : "").append(id).append('\n');
            }
        });
        return sb.toString();
    }

    /**
     * A jar with only a manifest naming {@code dev.gort.agent.GortAgent} as its {@code Premain-Class}:
     * the class itself (and the ASM it uses) comes from the class path, so the reactor's classes are
     * used as they are, without the shaded jar of {@code package}.
     */
    private static Path manifestOnlyAgentJar(Path dir) throws IOException {
        Manifest m = new Manifest();
        m.getMainAttributes().put(Attributes.Name.MANIFEST_VERSION, "1.0");
        m.getMainAttributes().put(new Attributes.Name("Premain-Class"), "dev.gort.agent.GortAgent");
        m.getMainAttributes().put(new Attributes.Name("Add-Exports"), "java.base/jdk.internal.vm");
        Path jar = dir.resolve("gort-agent-premain.jar");
        try (JarOutputStream j = new JarOutputStream(Files.newOutputStream(jar), m)) {
            // the manifest is all
        }
        return jar.toAbsolutePath();
    }
}
