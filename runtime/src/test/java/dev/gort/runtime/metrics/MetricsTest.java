package dev.gort.runtime.metrics;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gort.runtime.GoSema;
import dev.gort.runtime.Scheduler;
import dev.gort.runtime.trace.Workloads;
import java.lang.management.ManagementFactory;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.atomic.AtomicReference;
import javax.management.MBeanServer;
import javax.management.ObjectName;
import org.junit.jupiter.api.Test;

/** runtime/metrics names and values, and the same through the MXBean. */
class MetricsTest {
    @Test
    void namesFollowGosConventionAndAreUnique() {
        Set<String> seen = new HashSet<>();
        for (Metrics.Description d : Metrics.all()) {
            assertTrue(d.name().matches("^(/[a-z0-9\\-]+)+:[a-z\\-]+$"), d.name());
            assertTrue(d.name().startsWith("/sched/") || d.name().startsWith("/gort/"), d.name());
            assertTrue(seen.add(d.name()), "duplicate " + d.name());
        }
        for (String go : new String[] {
            "/sched/gomaxprocs:threads",
            "/sched/goroutines:goroutines",
            "/sched/latencies:seconds",
            "/sched/threads/total:threads",
            "/sched/goroutines-created:goroutines",
            "/sched/goroutines/waiting:goroutines"
        }) {
            assertTrue(seen.contains(go), go);
        }
    }

    @Test
    void valuesReflectTheRuntime() {
        Scheduler s = new Scheduler(Workloads.config(2, true));
        AtomicReference<long[]> during = new AtomicReference<>();
        s.run(() -> {
            Scheduler rt = Scheduler.current();
            GoSema never = new GoSema("never", 0);
            GoSema parked = new GoSema("parked", 0);
            for (int i = 0; i < 5; i++) {
                rt.newproc(() -> {
                    parked.release();
                    never.acquire();
                });
            }
            for (int i = 0; i < 5; i++) {
                parked.acquire();
            }
            // the five are parked or about to: wait until the scheduler says so
            Metrics m = new Metrics(rt);
            while (m.value("/sched/goroutines/waiting:goroutines") < 5) {
                Scheduler.gosched();
            }
            Metrics.Sample gor = new Metrics.Sample("/sched/goroutines:goroutines");
            Metrics.Sample procs = new Metrics.Sample("/sched/gomaxprocs:threads");
            Metrics.Sample created = new Metrics.Sample("/sched/goroutines-created:goroutines");
            Metrics.Sample threads = new Metrics.Sample("/sched/threads/total:threads");
            Metrics.Sample bad = new Metrics.Sample("/no/such:metric");
            m.read(gor, procs, created, threads, bad);
            assertEquals(Metrics.Kind.BAD, bad.value.kind());
            during.set(new long[] {
                gor.value.uint64(),
                procs.value.uint64(),
                created.value.uint64(),
                threads.value.uint64(),
                (long) m.value("/sched/goroutines/waiting:goroutines"),
                rt.mcountPublic()
            });
            for (int i = 0; i < 5; i++) {
                never.release();
            }
        });
        long[] v = during.get();
        assertEquals(6, v[0]); // main + 5
        assertEquals(2, v[1]);
        assertEquals(6, v[2]);
        assertEquals(v[5], v[3]);
        assertEquals(5, v[4]);
    }

    @Test
    void schedLatencyHistogramIsSampledAndGoShaped() {
        Workloads.Run r = Workloads.pingPong(Workloads.config(1, true), 4000);
        Metrics.Sample h = new Metrics.Sample("/sched/latencies:seconds");
        new Metrics(r.sched()).read(h);
        Metrics.Float64Histogram fh = h.value.float64Histogram();
        assertEquals(fh.counts().length + 1, fh.buckets().length);
        assertEquals(Double.NEGATIVE_INFINITY, fh.buckets()[0]);
        assertEquals(Double.POSITIVE_INFINITY, fh.buckets()[fh.buckets().length - 1]);
        for (int i = 1; i < fh.buckets().length; i++) {
            assertTrue(fh.buckets()[i] > fh.buckets()[i - 1]);
        }
        long n = java.util.Arrays.stream(fh.counts()).sum();
        // ~8000 runnable->running transitions, one in 8 timed
        assertTrue(n >= 500 && n <= 2000, "samples: " + n);
    }

    @Test
    void mxbeanExposesTheSameValues() throws Exception {
        Scheduler s = new Scheduler(Workloads.config(3, true));
        ObjectName name = SchedulerMXBeanImpl.register(s);
        try {
            MBeanServer mbs = ManagementFactory.getPlatformMBeanServer();
            AtomicReference<Object[]> seen = new AtomicReference<>();
            s.run(() -> {
                try {
                    seen.set(new Object[] {
                        mbs.getAttribute(name, "Gomaxprocs"),
                        mbs.getAttribute(name, "Goroutines"),
                        mbs.invoke(name, "dumpGoroutines", new Object[0], new String[0]),
                        mbs.invoke(name, "schedtrace", new Object[] {false}, new String[] {"boolean"}),
                        mbs.getAttribute(name, "Metrics")
                    });
                } catch (Exception e) {
                    throw new RuntimeException(e);
                }
            });
            Object[] v = seen.get();
            assertEquals(3, v[0]);
            assertEquals(1, v[1]);
            assertTrue(((String) v[2]).startsWith("goroutine 1 [running]:"), (String) v[2]);
            assertTrue(((String) v[3]).matches("SCHED \\d+ms: gomaxprocs=3 [^\\n]*\\n"), (String) v[3]);
            assertTrue(v[4].toString().contains("/sched/goroutines:goroutines"), v[4].toString());
        } finally {
            SchedulerMXBeanImpl.unregister(name);
        }
    }
}
