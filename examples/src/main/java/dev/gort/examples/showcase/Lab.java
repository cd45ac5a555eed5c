package dev.gort.examples.showcase;

import dev.gort.Go;
import dev.gort.runtime.Config;
import dev.gort.runtime.PreemptStats;
import dev.gort.runtime.Scheduler;
import dev.gort.runtime.trace.Trace;
import dev.gort.runtime.trace.Tracer;
import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

/**
 * Runs one workload on a fresh gort runtime, the way a user would with
 * {@code GODEBUG=schedtrace=N} and {@code -Dgort.trace}: the runtime's own schedtrace printer
 * writes the SCHED lines (captured here from stderr), and the runtime's execution tracer records
 * the run from the first statement of {@code main} to its last.
 */
final class Lab {
    private Lab() {}

    /** What one run produced. */
    record Outcome<T>(
            T value,
            Trace trace,
            List<String> sched,
            long threads,
            long steals,
            long stolenGs,
            long handoffs,
            long preemptRequests,
            long preemptions,
            long wallNanos,
            PreemptStats preempt,
            long tracedRequestsMin,
            long tracedRequestsMax) {}

    /**
     * Runs {@code body} as the main goroutine of a runtime built from {@code cfg}, with schedtrace
     * every {@code schedtraceMs} ms (and scheddetail) and the tracer on.
     */
    static <T> Outcome<T> run(
            Config cfg, String workload, int schedtraceMs, boolean detail, Function<Scheduler, T> body) {
        // The runtime reads GODEBUG from its Config (read once, at Config.fromEnvironment): this
        // run's schedtrace goes in there, after whatever GODEBUG the user gave.
        String dbg = "schedtrace=" + schedtraceMs + (detail ? ",scheddetail=1" : "");
        Config.Settings st = cfg.settings();
        cfg = cfg.withSettings(st.withGodebug(st.godebug().with(dbg)));
        PrintStream realErr = System.err;
        SchedCapture capture = new SchedCapture(realErr);
        PrintStream tee = new PrintStream(capture, true, StandardCharsets.UTF_8);
        System.setErr(tee);
        Object[] box = new Object[4];
        long[] counters = new long[11];
        try {
            Go.run(cfg, () -> {
                Scheduler s = Scheduler.current();
                box[3] = s;
                counters[7] = s.preempt.requestsTraced(); // the bounds: Preempt.requestsTraced()
                s.trace.start(new Tracer.Options().workload(workload));
                counters[8] = s.preempt.requests();
                long t0 = System.nanoTime();
                long st0 = s.stats.steals.get();
                long sg0 = s.stats.stolenGs.get();
                long h0 = s.stats.handoffs.get();
                long pr0 = s.preempt.requests();
                long p0 = s.stats.preemptions.get();
                T v = body.apply(s);
                counters[6] = System.nanoTime() - t0;
                counters[0] = s.mcountPublic();
                counters[1] = s.stats.steals.get() - st0;
                counters[2] = s.stats.stolenGs.get() - sg0;
                counters[3] = s.stats.handoffs.get() - h0;
                counters[4] = s.preempt.requests() - pr0;
                counters[5] = s.stats.preemptions.get() - p0;
                box[0] = v;
                counters[9] = s.preempt.requestsTraced();
                box[1] = s.trace.stop();
                counters[10] = s.preempt.requests();
            });
            // The preemption figures once every carrier has ended: sysmon raises requests while
            // the runtime runs, so a snapshot taken inside it may hold one not yet answered.
            Scheduler s = (Scheduler) box[3];
            try {
                s.awaitCarriers(30_000_000_000L);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            box[2] = s.preempt.snapshot(); // box[3] is set: Go.run returned, so the body ran
        } finally {
            System.setErr(realErr);
            tee.flush();
        }
        @SuppressWarnings("unchecked")
        T value = (T) box[0];
        return new Outcome<>(
                value,
                (Trace) box[1],
                capture.lines(),
                counters[0],
                counters[1],
                counters[2],
                counters[3],
                counters[4],
                counters[5],
                counters[6],
                (PreemptStats) box[2],
                counters[9] - counters[8],
                counters[10] - counters[7]);
    }

    /** Runs {@code body} as main on a runtime from {@code cfg}, traced, and throws the trace away (warming up). */
    static void warm(Config cfg, Runnable body) {
        Go.run(cfg, () -> {
            Scheduler s = Scheduler.current();
            s.trace.start();
            body.run();
            s.trace.stop();
        });
    }

    /**
     * A stderr replacement that keeps the schedtrace blocks (a {@code SCHED} line and, with
     * scheddetail, the two-space-indented lines after it) and passes every other line through.
     */
    static final class SchedCapture extends OutputStream {
        private final PrintStream real;
        private final ByteArrayOutputStream line = new ByteArrayOutputStream();
        private final List<String> lines = new ArrayList<>();
        private boolean inBlock;

        SchedCapture(PrintStream real) {
            this.real = real;
        }

        @Override
        public synchronized void write(int b) {
            line.write(b);
            if (b == '\n') {
                endLine();
            }
        }

        /**
         * Whole lines at a time: sysmon prints the schedtrace into this stream while the scenario
         * runs, and a scheddetail block of thousands of goroutines copied byte by byte (a monitor
         * and a ByteArrayOutputStream call per byte) kept sysmon from its retakes for milliseconds.
         */
        @Override
        public synchronized void write(byte[] b, int off, int len) {
            int end = off + len;
            int from = off;
            for (int i = off; i < end; i++) {
                if (b[i] == '\n') {
                    line.write(b, from, i + 1 - from);
                    endLine();
                    from = i + 1;
                }
            }
            line.write(b, from, end - from);
        }

        private void endLine() {
            String s = line.toString(StandardCharsets.UTF_8);
            line.reset();
            String body = s.endsWith("\n") ? s.substring(0, s.length() - 1) : s;
            if (body.startsWith("SCHED ")) {
                inBlock = true;
                lines.add(body);
            } else if (inBlock && body.startsWith("  ")) {
                lines.add(body);
            } else {
                inBlock = false;
                real.print(s);
                real.flush();
            }
        }

        @Override
        public synchronized void flush() {
            if (line.size() > 0) {
                endLine();
            }
            real.flush();
        }

        synchronized List<String> lines() {
            return new ArrayList<>(lines);
        }
    }

    /** Spins on the CPU for {@code nanos} (a loop with a back-edge: preemptible when instrumented). */
    static long spin(long nanos) {
        long end = System.nanoTime() + nanos;
        long x = 0;
        while (System.nanoTime() < end) {
            x = x * 31 + 7;
        }
        return x;
    }
}
