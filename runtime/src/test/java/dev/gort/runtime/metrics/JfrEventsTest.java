package dev.gort.runtime.metrics;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gort.runtime.Scheduler;
import dev.gort.runtime.trace.Workloads;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import jdk.jfr.Configuration;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;
import org.junit.jupiter.api.Test;

/**
 * gort's JFR events as JDK Mission Control would read them: a recording with the shipped gort.jfc
 * settings turns the hooks on; the file holds gort.GoroutineStart/End/Run/Park/Unblock and the
 * periodic gort.SchedStats (read back with jdk.jfr.consumer.RecordingFile).
 */
class JfrEventsTest {
    @Test
    void recordingWithGortSettingsHasGoroutineEvents() throws Exception {
        Configuration gortJfc;
        try (var in = dev.gort.runtime.trace.Tracer.class.getResourceAsStream("gort.jfc")) {
            gortJfc = Configuration.create(new java.io.InputStreamReader(in));
        }
        Path file = Files.createTempFile("gort", ".jfr");
        Workloads.Run run;
        try (Recording rec = new Recording(gortJfc)) {
            // Not a period in ms: the run can end before JFR's periodic thread first wakes (a loaded
            // machine). "endChunk" emits it when the recording's chunk ends, at stop, while the run's
            // runtime is still reachable (the fence below), so it is there however slow the run.
            rec.enable("gort.SchedStats").with("period", "endChunk");
            rec.start();
            // GOMAXPROCS=1: main parks in its wait for the workers, whatever the kernel does (newproc
            // polls before it creates the G, so the last worker cannot have run when main waits). At
            // 2, a main whose carrier stalls 20 ms after the spawns can find every worker done (the
            // other P runs them) and never park: no gort.Park.
            run = Workloads.fanOut(Workloads.config(1, true), 10, 2_000_000);
            rec.stop();
            java.lang.ref.Reference.reachabilityFence(run);
            rec.dump(file);
        }
        List<RecordedEvent> events = RecordingFile.readAllEvents(file);
        Map<String, Integer> counts = new HashMap<>();
        for (RecordedEvent e : events) {
            counts.merge(e.getEventType().getName(), 1, Integer::sum);
        }
        assertEquals(11, counts.getOrDefault("gort.GoroutineStart", 0), counts::toString); // main + 10
        assertTrue(counts.getOrDefault("gort.GoroutineEnd", 0) >= 10, counts::toString);
        assertTrue(counts.getOrDefault("gort.GoroutineRun", 0) >= 11, counts::toString);
        assertTrue(counts.getOrDefault("gort.Park", 0) >= 1, counts::toString);
        assertTrue(counts.getOrDefault("gort.SchedStats", 0) >= 1, counts::toString);
        RecordedEvent runEv = events.stream()
                .filter(e -> e.getEventType().getName().equals("gort.GoroutineRun")
                        && e.getString("stopReason").equals("exit"))
                .findFirst()
                .orElseThrow();
        assertTrue(runEv.getLong("goid") > 1);
        assertFalse(runEv.getString("from").isEmpty());
        assertTrue(runEv.getDuration().toNanos() >= 2_000_000, "a 2 ms run: " + runEv.getDuration());
        assertTrue(
                runEv.getThread().getJavaName().contains("-M"),
                "attributed to the carrier: " + runEv.getThread().getJavaName());
        RecordedEvent park = events.stream()
                .filter(e -> e.getEventType().getName().equals("gort.Park"))
                .findFirst()
                .orElseThrow();
        assertEquals("semacquire", park.getString("reason"));
        Files.deleteIfExists(file);
        // after the recording, the hooks are off again
        Scheduler s = new Scheduler(Workloads.config(1, true));
        assertFalse(s.trace.on);
    }

    @Test
    void defaultSettingsDoNotTurnTheHooksOn() throws Exception {
        try (Recording rec = new Recording(Configuration.getConfiguration("default"))) {
            rec.start();
            Scheduler s = new Scheduler(Workloads.config(1, true));
            assertFalse(s.trace.on, "a default JFR recording must not enable gort's per-goroutine hooks");
            rec.stop();
        }
    }

    /**
     * {@code -Dgort.jfr=true}: the JDK's own default and profile settings record gort's events (no
     * .jfc extracted), and every SyscallHandoff names the M whose syscall lost its P (sysmon's
     * retake used to record -1).
     */
    @Test
    void gortJfrRecordsUnderDefaultAndProfileSettings() throws Exception {
        String old = System.getProperty("gort.jfr");
        System.setProperty("gort.jfr", "true");
        try {
            for (String settings : List.of("default", "profile")) {
                Path file = Files.createTempFile("gort", ".jfr");
                try (Recording rec = new Recording(Configuration.getConfiguration(settings))) {
                    rec.start();
                    syscallRetakenBySysmon();
                    rec.stop();
                    rec.dump(file);
                }
                List<RecordedEvent> events = RecordingFile.readAllEvents(file);
                Map<String, Integer> counts = new HashMap<>();
                for (RecordedEvent e : events) {
                    counts.merge(e.getEventType().getName(), 1, Integer::sum);
                }
                assertTrue(counts.getOrDefault("gort.GoroutineStart", 0) >= 2, settings + ": " + counts);
                assertTrue(counts.getOrDefault("gort.GoroutineRun", 0) >= 2, settings + ": " + counts);
                assertTrue(counts.getOrDefault("gort.Park", 0) >= 1, settings + ": " + counts);
                assertTrue(counts.getOrDefault("gort.SyscallHandoff", 0) >= 1, settings + ": " + counts);
                for (RecordedEvent e : events) {
                    if (e.getEventType().getName().equals("gort.SyscallHandoff")) {
                        assertTrue(e.getLong("fromM") >= 0, "hand-off from an unnamed M: " + e);
                    }
                }
                Files.deleteIfExists(file);
            }
        } finally {
            if (old == null) {
                System.clearProperty("gort.jfr");
            } else {
                System.setProperty("gort.jfr", old);
            }
        }
    }

    /** A goroutine blocks in a syscall until sysmon retakes its P (bounded wait for that hand-off). */
    static void syscallRetakenBySysmon() {
        Scheduler s = new Scheduler(Workloads.config(1, true));
        s.run(() -> {
            dev.gort.runtime.GoSema done = new dev.gort.runtime.GoSema("done", 0);
            long before = s.stats.handoffs.get();
            Scheduler.current().newproc(() -> {
                dev.gort.runtime.G me = dev.gort.runtime.Syscalls.entersyscall();
                long deadline = System.nanoTime() + 10_000_000_000L;
                while (s.stats.handoffs.get() == before && System.nanoTime() < deadline) {
                    java.util.concurrent.locks.LockSupport.parkNanos(100_000); // the "syscall"
                }
                dev.gort.runtime.Syscalls.exitsyscall(me);
                done.release();
            });
            done.acquire();
            assertTrue(s.stats.handoffs.get() > before, "sysmon never retook the P");
        });
    }

    /** The MXBean's latency attributes are numbers before any latency was sampled (JMX consoles plot them). */
    @Test
    void mxbeanLatenciesAreNumbersWithoutSamples() {
        Scheduler s = new Scheduler(Workloads.config(1, true));
        SchedulerMXBeanImpl b = new SchedulerMXBeanImpl(s);
        assertEquals(0.0, b.getSchedLatencyP50Seconds());
        assertEquals(0.0, b.getSchedLatencyP99Seconds());
    }
}
