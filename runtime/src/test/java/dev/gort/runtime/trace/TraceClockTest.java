package dev.gort.runtime.trace;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gort.runtime.GoSema;
import dev.gort.runtime.Scheduler;
import org.junit.jupiter.api.Test;

/**
 * Issue 17's cost rule, counted rather than timed: how many clock reads and records a traced
 * switch costs, and the ordering rule that lets an event reuse its M's previous timestamp (Tracer's
 * "Timestamps"): an event may reuse it only when its causes are all earlier in the same buffer.
 */
class TraceClockTest {
    /** A traced run: its session (the buffers, for counting) and its decoded trace. */
    private record Traced(Tracer.Session session, Trace trace) {}

    /** The ping-pong at GOMAXPROCS=1, traced; the trace must validate. */
    private static Traced tracedPingPong(int rounds) {
        Scheduler s = new Scheduler(Workloads.config(1, true));
        s.trace.start(new Tracer.Options().workload("ping-pong"));
        Tracer.Session ses = s.trace.session();
        s.run(() -> Workloads.pingPongBody(rounds));
        Trace t = s.trace.stop();
        TraceValidator.Result res = TraceValidator.validate(t, true, java.util.Map.of());
        assertTrue(res.ok(), res::toString);
        return new Traced(ses, t);
    }

    /**
     * The ping-pong at GOMAXPROCS=1 (the tracer's worst case): per round trip two unblocks, two
     * parks and two starts, six records. The starts (from runnext) and the unblocks (of a G whose
     * park this same M recorded) reuse the M's previous stamp; only the two parks read the clock.
     */
    @Test
    void pingPongAtOneProcReadsTheClockOncePerSwitch() {
        int rounds = 20_000;
        Traced run = tracedPingPong(rounds);
        Trace t = run.trace();
        long reads = 0;
        for (TraceBuf b : run.session().bufs) {
            reads += b.clockReads;
        }
        int unblocks = t.count(Ev.GO_UNBLOCK);
        assertTrue(Math.abs(unblocks - 2 * rounds) <= 3, "unblocks: " + unblocks); // and main's
        // a few hundred for the start, the end and the odd sysmon or preemption event
        long slack = 500;
        assertTrue(t.size() <= 6L * rounds + slack, "records per round trip: " + (double) t.size() / rounds);
        assertTrue(reads <= 2L * rounds + slack, "clock reads per round trip: " + (double) reads / rounds);
        // and the stamps still advance with the run: every park has one of its own
        long parks = 0;
        long prev = -1;
        long distinct = 0;
        for (int i = 0; i < t.size(); i++) {
            if (t.code(i) == Ev.GO_STOP && t.small(i) == Ev.S_PARK) {
                parks++;
                if (t.ts(i) != prev) {
                    distinct++;
                }
                prev = t.ts(i);
            }
        }
        assertTrue(distinct >= parks * 9 / 10, distinct + " distinct park stamps of " + parks);
    }

    /** The longs every buffer of the run's session holds. */
    private static long longsWritten(Traced run) {
        long longs = 0;
        for (TraceBuf b : run.session().bufs) {
            longs += TraceRecordFormTest.longsWritten(b);
        }
        return longs;
    }

    /**
     * Issue 17's memory traffic, counted: the ping-pong's six records per round trip take at most
     * two longs each (TraceBuf's compact forms: 16 bytes, not the five-long 40), so a round trip
     * writes at most about 96 bytes (48 with the one-long forms: the test below), and a
     * flight-recorder window of the same length holds 2.5 times fewer chunks.
     */
    @Test
    void pingPongAtOneProcWritesSixteenBytesPerRecord() {
        int rounds = 20_000;
        Traced run = tracedPingPong(rounds);
        Trace t = run.trace();
        long longs = longsWritten(run);
        long bytes = 8 * longs;
        // a few thousand bytes for the start state, the end and the odd sysmon or preemption event
        assertTrue(bytes <= 6L * 16 * rounds + 20_000, "bytes per round trip: " + (double) bytes / rounds);
        assertTrue(bytes <= 16L * t.size() + 20_000, "bytes per record: " + (double) bytes / t.size());
    }

    /**
     * Issue 17's stores, counted: a start from runnext of the G its own M just put there (every
     * start of the ping-pong at GOMAXPROCS=1) is one long (TraceBuf's FORM_RUNNEXT, the goid read
     * back from the unblock before it), and so is a park of the G the M last started on one of the
     * two objects of its last distinct parks (FORM_PARK1/2: the ping-pong's two channels), and so
     * is an unblock of the G the M last stopped by the G it last started (CODE_UNBLOCK_LAST: the
     * partner that just parked there), so a round trip writes six longs, 48 bytes, not twelve:
     * one long per record, each published by one release store of its chunk's length (the longs
     * are the data stores, the records the publications). Failed before those forms with 12 longs
     * (96 bytes) per round trip, with 10 with the start's only, with 8 without the unblock's.
     */
    @Test
    void pingPongAtOneProcWritesOneLongPerRecord() {
        int rounds = 20_000;
        Traced run = tracedPingPong(rounds);
        Trace t = run.trace();
        long longs = longsWritten(run);
        // a few thousand longs for the start state, the end and the odd sysmon or preemption event
        assertTrue(longs <= 6L * rounds + 2_500, "longs per round trip: " + (double) longs / rounds);
        assertTrue(
                t.size() <= 6L * rounds + 500, "records (publications) per round trip: " + (double) t.size() / rounds);
        int runnextStarts = 0;
        for (int i = 0; i < t.size(); i++) {
            if (t.code(i) == Ev.GO_START && t.small(i) == Ev.F_RUNNEXT) {
                runnextStarts++;
            }
        }
        assertTrue(Math.abs(runnextStarts - 2 * rounds) <= 3, "starts from runnext: " + runnextStarts);
    }

    /**
     * Equal stamps keep their buffer's order, whatever the other buffers hold at that stamp: the
     * decoder's tie rule that stamp reuse relies on. M0 parks G3, unblocks it (reused stamp) and
     * starts it again (reused stamp); M1, created first (so first among equals), records events at
     * the same instant.
     */
    @Test
    void equalStampsKeepTheirBufferOrder() {
        Tracer.Session s = new Tracer.Session(Tracer.NOOP, 0, true, "hand-built");
        TraceBuf m1 = s.newBuf(1, "M1");
        TraceBuf m0 = s.newBuf(0, "M0");
        long t0 = s.t0;
        m0.emit(t0 + 5, hdr(Ev.GO_CREATE, Ev.W_RUNNEXT, 0, 0), 3, 0, 0);
        m0.emit(t0 + 10, hdr(Ev.GO_START, Ev.F_RUNNEXT, 0, 0), 3, 0, 0);
        m0.emit(t0 + 20, hdr(Ev.GO_STOP, Ev.S_PARK, 0, 0), 3, 0, 0);
        m1.emit(t0 + 20, hdr(Ev.M_PARK, 0, -1, 1), 0, 0, 0);
        m0.emit(t0 + 20, hdr(Ev.GO_UNBLOCK, Ev.W_RUNNEXT, 0, 0), 3, 0, 0);
        m1.emit(t0 + 20, hdr(Ev.M_UNPARK, 0, -1, 1), 0, 0, 0);
        m0.emit(t0 + 20, hdr(Ev.GO_START, Ev.F_RUNNEXT, 0, 0), 3, 0, 0);
        m0.emit(t0 + 30, hdr(Ev.GO_STOP, Ev.S_EXIT, 0, 0), 3, 0, 0);
        Trace t = Trace.decode(s, null, false);
        TraceValidator.Result r = TraceValidator.validate(t, true, java.util.Map.of());
        assertTrue(r.ok(), r::toString);
        int stop = -1;
        int unblock = -1;
        int start = -1;
        for (int i = 0; i < t.size(); i++) {
            if (t.code(i) == Ev.GO_STOP && t.small(i) == Ev.S_PARK) {
                stop = i;
            } else if (t.code(i) == Ev.GO_UNBLOCK) {
                unblock = i;
            } else if (t.code(i) == Ev.GO_START && t.ts(i) == 20) {
                start = i;
            }
        }
        assertTrue(stop < unblock && unblock < start, stop + " " + unblock + " " + start);
    }

    /**
     * Why an unblock on another M must read the clock: had M1 reused its own previous stamp (older
     * than M0's park of G3), the merge would put the unblock before the park, and the replay would
     * find G3 running when it is unblocked. The writer never does this (G.traceBuf names M0's
     * buffer, so M1 reads the clock); this shows the validator would catch it.
     */
    @Test
    void anUnblockStampedBeforeAParkOnAnotherMIsCaught() {
        Tracer.Session s = new Tracer.Session(Tracer.NOOP, 0, true, "hand-built");
        TraceBuf m0 = s.newBuf(0, "M0");
        TraceBuf m1 = s.newBuf(1, "M1");
        long t0 = s.t0;
        m0.emit(t0 + 5, hdr(Ev.GO_CREATE, Ev.W_RUNNEXT, 0, 0), 3, 0, 0);
        m0.emit(t0 + 10, hdr(Ev.GO_START, Ev.F_RUNNEXT, 0, 0), 3, 0, 0);
        m1.emit(t0 + 12, hdr(Ev.PROC_START, 0, 1, 1), 0, 0, 0);
        m0.emit(t0 + 20, hdr(Ev.GO_STOP, Ev.S_PARK, 0, 0), 3, 0, 0);
        m1.emit(t0 + 12, hdr(Ev.GO_UNBLOCK, Ev.W_RUNNEXT, 1, 1), 3, 0, 0); // reused: wrong
        Trace t = Trace.decode(s, null, false);
        TraceValidator.Result r = TraceValidator.validate(t);
        assertFalse(r.ok(), "an unblock before its park was not noticed");
    }

    /**
     * The rule on a multi-P run: pairs of goroutines hand a token back and forth on four Ps, so
     * unblocks happen on the M that recorded the partner's park (stamp reused) and, when a thief
     * took the partner, on another M (clock read); every trace validates.
     */
    @Test
    void multiProcHandOffsValidate() {
        for (int iter = 0; iter < 3; iter++) {
            Scheduler s = new Scheduler(Workloads.config(4, true));
            s.trace.start(new Tracer.Options().workload("pairs"));
            s.run(() -> pairs(4, 2000));
            Trace t = s.trace.stop();
            TraceValidator.Result r = TraceValidator.validate(t, true, java.util.Map.of());
            assertTrue(r.ok(), () -> "iteration: " + r);
            assertTrue(t.count(Ev.GO_UNBLOCK) >= 1000, "unblocks: " + t.count(Ev.GO_UNBLOCK));
            // timestamps never go back within one M (the consumers draw each M's events in order)
            java.util.Map<Long, Long> last = new java.util.HashMap<>();
            for (int i = 0; i < t.size(); i++) {
                long m = t.m(i);
                Long prev = last.put(m, t.ts(i));
                assertTrue(prev == null || prev <= t.ts(i), () -> "M" + m + " goes back in time");
            }
        }
    }

    private static void pairs(int n, int rounds) {
        Scheduler rt = Scheduler.current();
        GoSema done = new GoSema("done", 0);
        for (int p = 0; p < n; p++) {
            GoSema ping = new GoSema("ping" + p, 0);
            GoSema pong = new GoSema("pong" + p, 0);
            rt.newproc(() -> {
                for (int i = 0; i < rounds; i++) {
                    ping.acquire();
                    pong.release();
                }
                done.release();
            });
            rt.newproc(() -> {
                for (int i = 0; i < rounds; i++) {
                    ping.release();
                    pong.acquire();
                }
                done.release();
            });
        }
        for (int i = 0; i < 2 * n; i++) {
            done.acquire();
        }
    }

    private static long hdr(int code, int small, int pid, long mid) {
        return (code & 0xFFL) | ((small & 0xFFFFL) << 8) | (((pid + 1) & 0xFFFFL) << 24) | ((mid + 1) << 40);
    }
}
