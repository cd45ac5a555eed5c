package dev.gort.runtime.observe;

import dev.gort.runtime.Config;
import dev.gort.runtime.RuntimeObserver;
import dev.gort.runtime.Scheduler;
import dev.gort.runtime.metrics.SchedulerMXBeanImpl;
import dev.gort.runtime.trace.DebugServer;
import dev.gort.runtime.trace.Trace;
import dev.gort.runtime.trace.TraceFiles;
import java.io.IOException;
import java.nio.file.Path;
import javax.management.ObjectName;

/**
 * The runtime's own observers, started when a runtime starts (found by {@link RuntimeObserver}'s
 * ServiceLoader): the MXBean ({@code -Dgort.jmx=true}), the loopback debug server
 * ({@code -Dgort.debug.http}), and the writer of {@code -Dgort.trace}'s file. Each reads its
 * runtime's {@link Config.Settings}.
 */
public final class StandardObserver implements RuntimeObserver {
    @Override
    public Running started(Scheduler s) {
        Config.Settings st = s.config().settings();
        ObjectName mxbean = null;
        if (st.jmx()) {
            try {
                mxbean = SchedulerMXBeanImpl.register(s);
            } catch (RuntimeException e) {
                System.err.println("gort: no MXBean (-Dgort.jmx=true): " + e);
            }
        }
        DebugServer debug = null;
        String http = st.debugHttp();
        if (http != null) {
            try {
                debug = DebugServer.start(s, DebugServer.parsePort(http));
                System.err.println("gort: debug endpoints on http://127.0.0.1:" + debug.port() + "/debug/");
            } catch (IOException | IllegalArgumentException e) {
                System.err.println("gort: no debug endpoints (-Dgort.debug.http=" + http + "): " + e);
            }
        }
        if (mxbean == null && debug == null) {
            return null;
        }
        ObjectName mb = mxbean;
        DebugServer d = debug;
        return new Running() {
            @Override
            public int debugPort() {
                return d == null ? -1 : d.port();
            }

            @Override
            public void close() {
                if (mb != null) {
                    SchedulerMXBeanImpl.unregister(mb);
                }
                if (d != null) {
                    d.close();
                }
            }
        };
    }

    @Override
    public boolean writeTrace(Trace t, Path file) throws IOException {
        TraceFiles.write(t, file);
        return true;
    }
}
