package dev.gort.compat;

import static org.junit.platform.engine.discovery.ClassNameFilter.excludeClassNamePatterns;
import static org.junit.platform.engine.discovery.ClassNameFilter.includeClassNamePatterns;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClasspathRoots;

import dev.gort.runtime.InstrumentationStats;
import dev.gort.runtime.PreemptStats;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.launcher.Launcher;
import org.junit.platform.launcher.LauncherDiscoveryRequest;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;
import org.junit.platform.launcher.listeners.SummaryGeneratingListener;
import org.junit.platform.launcher.listeners.TestExecutionSummary;

/**
 * Runs the JUnit 5 tests of the class-path root that holds {@code args[1]} (a test class's name), the
 * classes whose names end in {@code Test} (what the library's own Surefire configuration includes),
 * with {@link InGoroutine} registered, and writes what happened to {@code args[2]}:
 * {@code NAME.summary} (counts, one {@code key=value} a line) and {@code NAME.failures} (the unique
 * id of every failed or aborted test, then a tab and the first line of its exception), sorted, so
 * that two runs compare with {@code diff}. Prints one {@code compat:} line with the counts.
 *
 * <p>{@code java ... SuiteMain NAME TEST_CLASS OUT_DIR}; {@code -Dgort.compat.mode=plain} for the
 * baseline (no goroutines), otherwise in goroutines under whatever agent the JVM was started with.
 */
public final class SuiteMain {
    private SuiteMain() {}

    public static void main(String[] args) throws Exception {
        if (args.length != 3) {
            System.err.println("usage: SuiteMain NAME TEST_CLASS OUT_DIR");
            System.exit(2);
        }
        String name = args[0];
        Path root = Path.of(Class.forName(args[1])
                .getProtectionDomain()
                .getCodeSource()
                .getLocation()
                .toURI());
        Path out = Path.of(args[2]);
        Files.createDirectories(out);

        LauncherDiscoveryRequestBuilder b = LauncherDiscoveryRequestBuilder.request()
                .selectors(selectClasspathRoots(Set.of(root)))
                .filters(includeClassNamePatterns(".*Test"));
        String exclude = System.getProperty("gort.compat.exclude", "");
        if (!exclude.isBlank()) {
            b.filters(excludeClassNamePatterns(exclude.split(",")));
        }
        LauncherDiscoveryRequest request = b.configurationParameter(
                        "junit.jupiter.extensions.autodetection.enabled", "true")
                .build();
        SummaryGeneratingListener summary = new SummaryGeneratingListener();
        Failures failures = new Failures(out.resolve(name + ".events"));
        Launcher launcher = LauncherFactory.create();
        long t0 = System.nanoTime();
        launcher.execute(request, summary, failures);
        long seconds = (System.nanoTime() - t0) / 1_000_000_000L;

        Map<String, Object> counts = new TreeMap<>();
        TestExecutionSummary s = summary.getSummary();
        counts.put("found", s.getTestsFoundCount());
        counts.put("started", s.getTestsStartedCount());
        counts.put("succeeded", s.getTestsSucceededCount());
        counts.put("failed", s.getTestsFailedCount());
        counts.put("aborted", s.getTestsAbortedCount());
        counts.put("skipped", s.getTestsSkippedCount());
        counts.put("containersFailed", s.getContainersFailedCount());
        counts.put("seconds", seconds);
        counts.put("mode", InGoroutine.ON ? "gort" : "plain");
        counts.put("excluded", exclude.isBlank() ? "none" : exclude);
        counts.put("bodies", InGoroutine.bodies.get());
        counts.put("bodiesOnGoroutine", InGoroutine.onGoroutine.get());
        counts.put("hung", InGoroutine.hung.get());
        counts.put("classesInstrumented", InstrumentationStats.classesTransformed.get());
        GoroutineHost host = GoroutineHost.started();
        if (host != null) {
            PreemptStats p = host.scheduler().preempt.snapshot();
            counts.put("gomaxprocs", host.scheduler().gomaxprocs());
            counts.put("preemptRequested", p.requested());
            counts.put("preemptHonoured", p.honoured());
            long lang3 = 0;
            for (Map.Entry<String, Long> e : p.sites().entrySet()) {
                if (e.getKey().contains("org.apache.commons.lang3")
                        || e.getKey().contains("org/apache/commons/lang3")) {
                    lang3 += e.getValue();
                }
            }
            counts.put("preemptSitesInLang3", lang3);
            host.stop();
        }
        StringBuilder sb = new StringBuilder();
        counts.forEach((k, v) -> sb.append(k).append('=').append(v).append('\n'));
        Files.writeString(out.resolve(name + ".summary"), sb);
        List<String> f = new ArrayList<>(failures.lines);
        Collections.sort(f);
        Files.write(out.resolve(name + ".failures"), f);
        System.out.println("compat: " + name + " " + counts);
        System.out.flush();
        System.exit(0); // threads the tests started must not keep the JVM
    }

    /**
     * Records each failed or aborted test (and container), and appends every finished test's status
     * and id to {@code NAME.events} as it finishes (flushed), so that a run stopped early still
     * compares with another on the tests both finished. Called by the launcher's thread only.
     */
    private static final class Failures implements TestExecutionListener {
        final List<String> lines = Collections.synchronizedList(new ArrayList<>());
        private final java.io.PrintWriter events;

        Failures(Path events) throws java.io.IOException {
            this.events = new java.io.PrintWriter(Files.newBufferedWriter(events), true);
        }

        @Override
        public void executionFinished(TestIdentifier id, TestExecutionResult result) {
            if (id.isTest()) {
                events.println(result.getStatus() + " " + id.getUniqueId());
            }
            if (result.getStatus() == TestExecutionResult.Status.SUCCESSFUL) {
                return;
            }
            String why = result.getThrowable()
                    .map(t -> {
                        String m = String.valueOf(t.getMessage());
                        int nl = m.indexOf('\n');
                        return t.getClass().getName() + ": " + (nl < 0 ? m : m.substring(0, nl));
                    })
                    .orElse("");
            lines.add(result.getStatus() + " " + id.getUniqueId() + "\t" + why);
        }
    }
}
