package dev.gort.agent;

import dev.gort.runtime.SchedTrace;
import dev.gort.runtime.Scheduler;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * Runs a test's main goroutine and, if it has not returned within a bound, fails with what a Go
 * developer reads first on a hang (SIGQUIT's dump): {@code schedtrace} with {@code scheddetail},
 * every goroutine, then every JVM thread's stack. The report is the failure's message, so it
 * reaches the console (surefire sends the test's own output to a file that CI does not print).
 * The stuck runtime is left as JUnit's own timeout leaves it.
 */
final class StallReport {
    private StallReport() {}

    /** Frames shown per JVM thread: a carrier's goroutine and M loop fit; JUnit's own do not. */
    private static final int MAX_FRAMES = 48;

    /** {@code s.run(main)}; after {@code seconds} without a return, fails with the report. */
    static void run(Scheduler s, long seconds, Runnable main) {
        Thread test = Thread.currentThread();
        CountDownLatch returned = new CountDownLatch(1);
        String[] report = new String[1];
        Thread watchdog = new Thread(
                () -> {
                    try {
                        if (!returned.await(seconds, TimeUnit.SECONDS)) {
                            report[0] = report(s);
                            test.interrupt(); // s.run throws "gort: interrupted while waiting for main"
                        }
                    } catch (InterruptedException e) {
                        // the test returned
                    }
                },
                "stall-report");
        watchdog.setDaemon(true);
        watchdog.start();
        try {
            s.run(main);
        } catch (RuntimeException e) {
            if (stopWatchdog(returned, watchdog, report)) {
                throw new AssertionError("main did not return within " + seconds + " s\n" + report[0], e);
            }
            throw e;
        }
        // Returned: a watchdog that fired at the same moment may have interrupted us after all.
        stopWatchdog(returned, watchdog, report);
    }

    /**
     * Stops the watchdog and waits for it (a report is complete before its interrupt); clears the
     * interrupt it sent, if it sent one. Returns whether it wrote a report.
     */
    private static boolean stopWatchdog(CountDownLatch returned, Thread watchdog, String[] report) {
        returned.countDown();
        boolean interrupted = false;
        while (watchdog.isAlive()) {
            try {
                watchdog.join();
            } catch (InterruptedException e) {
                interrupted = true; // the watchdog's own interrupt, or JUnit's: decided below
            }
        }
        if (report[0] != null) {
            Thread.interrupted(); // the watchdog's
            return true;
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
        return false;
    }

    static String report(Scheduler s) {
        ByteArrayOutputStream goroutines = new ByteArrayOutputStream();
        s.dumpGoroutines(new PrintStream(goroutines, true, StandardCharsets.UTF_8));
        StringBuilder sb = new StringBuilder();
        sb.append(SchedTrace.format(s, s.schedtrace.elapsedMs(System.nanoTime()), true))
                .append('\n')
                .append(goroutines.toString(StandardCharsets.UTF_8))
                .append("\nJVM threads:\n");
        Map<Thread, StackTraceElement[]> all = Thread.getAllStackTraces();
        List<Thread> threads = new ArrayList<>(all.keySet());
        threads.sort(Comparator.comparingLong(Thread::threadId));
        for (Thread t : threads) {
            sb.append('"')
                    .append(t.getName())
                    .append("\" ")
                    .append(t.getState())
                    .append('\n');
            StackTraceElement[] frames = all.get(t);
            for (int i = 0; i < Math.min(frames.length, MAX_FRAMES); i++) {
                sb.append("\tat ").append(frames[i]).append('\n');
            }
            if (frames.length > MAX_FRAMES) {
                sb.append("\t... ").append(frames.length - MAX_FRAMES).append(" more\n");
            }
        }
        return sb.toString();
    }
}
