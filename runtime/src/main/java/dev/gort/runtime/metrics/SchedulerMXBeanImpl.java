package dev.gort.runtime.metrics;

import dev.gort.runtime.Netpoll;
import dev.gort.runtime.P;
import dev.gort.runtime.SchedTrace;
import dev.gort.runtime.Scheduler;
import dev.gort.runtime.Traceback;
import java.lang.management.ManagementFactory;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import javax.management.JMException;
import javax.management.MBeanServer;
import javax.management.ObjectName;

/**
 * Registers a runtime as {@code gort:type=Scheduler,name=<config name>,id=<n>} in the platform MBean
 * server. Opt-in (the platform server costs tens of ms to start): {@link #register} from code, or
 * {@code -Dgort.jmx=true} to register every runtime when it starts (unregistered when it exits).
 */
public final class SchedulerMXBeanImpl implements SchedulerMXBean {
    private static final AtomicInteger IDS = new AtomicInteger();

    private final Scheduler s;
    private final Metrics m;

    SchedulerMXBeanImpl(Scheduler s) {
        this.s = s;
        this.m = new Metrics(s);
    }

    /** Registers {@code s}; returns its name (unregister with {@link #unregister}). */
    public static ObjectName register(Scheduler s) {
        try {
            MBeanServer mbs = ManagementFactory.getPlatformMBeanServer();
            ObjectName name = new ObjectName(
                    "gort:type=Scheduler,name=" + ObjectName.quote(s.config().name()) + ",id=" + IDS.incrementAndGet());
            mbs.registerMBean(new SchedulerMXBeanImpl(s), name);
            return name;
        } catch (JMException e) {
            throw new IllegalStateException("gort: cannot register the scheduler MXBean", e);
        }
    }

    public static void unregister(ObjectName name) {
        try {
            ManagementFactory.getPlatformMBeanServer().unregisterMBean(name);
        } catch (JMException e) {
            // already gone
        }
    }

    /** Whether -Dgort.jmx asks for automatic registration (a runtime uses its {@code Config.Settings.jmx}). */
    public static boolean auto() {
        return dev.gort.runtime.Config.Settings.fromEnvironment().jmx();
    }

    @Override
    public int getGomaxprocs() {
        return s.gomaxprocs();
    }

    @Override
    public int getGoroutines() {
        return s.numGoroutine();
    }

    @Override
    public long getGoroutinesCreated() {
        return s.goroutinesCreated();
    }

    @Override
    public int getGoroutinesWaitingNetwork() {
        return Netpoll.of(s).netpollWaiters();
    }

    @Override
    public long getThreads() {
        return s.mcountPublic();
    }

    @Override
    public int getIdleProcs() {
        return s.npidle();
    }

    @Override
    public int getSpinningThreads() {
        return s.nmspinning();
    }

    @Override
    public int getGlobalRunQueue() {
        return s.globalRunqSize();
    }

    @Override
    public int[] getLocalRunQueues() {
        P[] ps = s.allp();
        int[] r = new int[ps.length];
        for (int i = 0; i < ps.length; i++) {
            r[i] = ps[i].runq.size();
        }
        return r;
    }

    @Override
    public long getSteals() {
        return s.stats.steals.get();
    }

    @Override
    public long getPreemptions() {
        return s.stats.preemptions.get();
    }

    @Override
    public long getHandoffs() {
        return s.stats.handoffs.get();
    }

    @Override
    public double getSchedLatencyP50Seconds() {
        return orZero(s.stats.schedLatencies.quantileSeconds(0.5));
    }

    @Override
    public double getSchedLatencyP99Seconds() {
        return orZero(s.stats.schedLatencies.quantileSeconds(0.99));
    }

    @Override
    public Map<String, Double> getMetrics() {
        Map<String, Double> out = new LinkedHashMap<>();
        for (Metrics.Description d : Metrics.all()) {
            out.put(d.name(), m.value(d.name()));
        }
        return out;
    }

    @Override
    public String dumpGoroutines() {
        return Traceback.dumpAll(s) + Traceback.waitForGraph(s);
    }

    @Override
    public String dumpGoroutinesJson() {
        return Traceback.dumpJson(s);
    }

    @Override
    public String schedtrace(boolean detailed) {
        return SchedTrace.format(s, s.schedtrace.elapsedMs(System.nanoTime()), detailed);
    }

    /** JMX consoles plot numbers: no sample yet reads as 0 s, not NaN. */
    private static double orZero(double v) {
        return Double.isNaN(v) ? 0 : v;
    }
}
