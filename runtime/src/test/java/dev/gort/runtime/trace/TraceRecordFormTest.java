package dev.gort.runtime.trace;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * TraceBuf's record forms (issue 17's smaller records): an event of the buffer's own M whose fields
 * fit is written in one or two longs, its stamp a delta from the buffer's previous one; anything
 * else in the full form. Whatever the form, the decoder gives back exactly the fields written, the
 * M included, across chunk boundaries and recycled chunks alike. Hand-built buffers, as the other
 * decode tests.
 */
class TraceRecordFormTest {
    /** One event as written and as expected back. */
    record E(long ts, int code, int small, int p, long m, long g, long a, long x) {}

    private static List<E> decoded(Trace t) {
        List<E> out = new ArrayList<>();
        for (int i = 0; i < t.size(); i++) {
            out.add(new E(t.ts(i), t.code(i), t.small(i), t.p(i), t.m(i), t.g(i), t.a(i), t.x(i)));
        }
        return out;
    }

    /**
     * Writes each case ({ts offset, code, small, p, g, a, x, longs expected}) into {@code b}: with
     * {@code viaForms}, GO_START, GO_STOP and GO_UNBLOCK through the writers that may choose a
     * one-long form (putStart, putStop, putUnblock), everything else through put; asserts the longs
     * each case took and returns the events the decoder must give back ({@code b}'s M is {@code m}).
     */
    private static List<E> write(TraceBuf b, long t0, long m, boolean viaForms, Object[][] cases) {
        List<E> want = new ArrayList<>();
        for (int k = 0; k < cases.length; k++) {
            Object[] c = cases[k];
            long ts = t0 + (Long) c[0];
            int code = (Integer) c[1];
            int small = (Integer) c[2];
            int p = (Integer) c[3];
            long g = (Long) c[4];
            long a = (Long) c[5];
            long x = (Long) c[6];
            long before = longsWritten(b);
            if (viaForms && code == Ev.GO_START) {
                b.putStart(ts, small, p, g, a, x);
            } else if (viaForms && code == Ev.GO_STOP) {
                b.putStop(ts, small, p, g, a, x);
            } else if (viaForms && code == Ev.GO_UNBLOCK) {
                b.putUnblock(ts, small, p, g, a);
            } else {
                b.put(ts, code, small, p, g, a, x);
            }
            assertEquals((long) (Long) c[7], longsWritten(b) - before, "longs for case " + k);
            want.add(new E((Long) c[0], code, small, p, m, g, a, x));
        }
        return want;
    }

    /** The longs {@code b}'s kept chunks hold (also TraceClockTest's count per round trip). */
    static long longsWritten(TraceBuf b) {
        long n = 0;
        for (TraceBuf.Chunk c = b.first; c != null; c = c.next) {
            n += c.w;
        }
        return n;
    }

    /**
     * Each compact form, and each reason to fall back to the full form (a stamp gap of 2^24 ns or
     * more, a small field or a P that does not fit, a negative or a wide argument), decodes to the
     * fields written; the compact ones take the longs the layout says.
     */
    @Test
    void everyFormDecodesToTheFieldsWritten() {
        Tracer.Session s = new Tracer.Session(Tracer.NOOP, 0, true, "hand-built");
        TraceBuf b = s.newBuf(4, "M4");
        long t0 = s.t0;
        Object[][] cases = {
            // ts offset, code, small, p, g, a, x, longs expected
            {10L, Ev.GO_CREATE, Ev.W_RUNNEXT, 0, 7L, 1L, 0L, 6L}, // first record: no previous stamp near it
            {11L, Ev.M_PARK, 0, -1, 0L, 0L, 0L, 1L}, // no argument
            {12L, Ev.GOMAXPROCS, 0, -1, 0L, 4095L, 0L, 1L}, // a in aux
            {13L, Ev.GO_START, Ev.F_RUNNEXT, 3, 7L, 0L, 1L, 2L}, // g | x << 32, a in aux
            {14L, Ev.GO_STOP, Ev.S_PARK, 3, 7L, 17L, 0xFFFF_FFFFL, 2L}, // reason in aux, object in x
            {15L, Ev.GO_UNBLOCK, Ev.W_RUNNEXT, 3, 7L, 123_456L, 0L, 2L}, // g | a << 32, x in aux
            {16L, Ev.GO_START, Ev.F_LOCAL, 4094, 1L << 40, 5L, 0L, 2L}, // a wide g alone: form G
            {17L + (1L << 24), Ev.GO_START, Ev.F_LOCAL, 0, 8L, 0L, 0L, 6L}, // stamp gap too wide
            {18L + (1L << 24), Ev.PROC_STATUS, 256, 0, 0L, 0L, 0L, 6L}, // small too wide
            {19L + (1L << 24), Ev.PROC_START, 0, 4095, 0L, 0L, 0L, 6L}, // P too wide
            {20L + (1L << 24), Ev.STEAL, 0, 1, 9L, -1L, 3L, 6L}, // negative a (no victim)
            {21L + (1L << 24), Ev.M_CREATE, 0, 1, 0L, 1L << 33, 1L << 33, 6L}, // wide a and x
            {21L + (1L << 24), Ev.GO_STOP, Ev.S_PARK, 1, 9L, 4096L, 1L << 32, 6L}, // a and x both past their room
        };
        List<E> want = write(b, t0, 4, false, cases);
        // a full-form record naming another M (sysmon writing for a blocked carrier), then compact again
        b.emit(t0 + 30 + (1L << 24), Tracer.hdrM(Ev.SYSCALL_ENTER, 1, 2, 6), 9, 0, 0);
        want.add(new E(30 + (1L << 24), Ev.SYSCALL_ENTER, 1, 2, 6, 9, 0, 0));
        b.put(t0 + 31 + (1L << 24), Ev.GO_STOP, Ev.S_EXIT, 1, 9, 0, 0);
        want.add(new E(31 + (1L << 24), Ev.GO_STOP, Ev.S_EXIT, 1, 4, 9, 0, 0));
        Trace t = Trace.decode(s, null, false);
        assertEquals(want, decoded(t));
    }

    /**
     * The one-long start (FORM_RUNNEXT) names no goid: it starts the G its buffer's latest runnext
     * put named (an unblock or a creation with W_RUNNEXT, in any form). Only such a start takes
     * it; a start of another G, from another place, with a victim, takes the two-long form; and
     * every start decodes to the fields written.
     */
    @Test
    void aStartOfTheLastRunnextPutIsOneLong() {
        Tracer.Session s = new Tracer.Session(Tracer.NOOP, 0, true, "hand-built");
        TraceBuf b = s.newBuf(2, "M2");
        long t0 = s.t0;
        Object[][] cases = {
            // ts offset, code, small, p, g, a, x, longs expected; written through the one-long-capable writers
            {1L, Ev.GO_CREATE, Ev.W_RUNNEXT, 0, 7L, 1L, 0L, 6L}, // first record (wide gap from t0 = 0: full)
            {2L, Ev.GO_START, Ev.F_RUNNEXT, 0, 7L, 0L, 1L, 1L}, // the G just put in runnext
            {3L, Ev.GO_START, Ev.F_RUNNEXT, 0, 8L, 0L, 1L, 2L}, // another G
            {4L, Ev.GO_UNBLOCK, Ev.W_LOCAL, 0, 9L, 7L, 0L, 2L}, // not a runnext put
            {5L, Ev.GO_START, Ev.F_RUNNEXT, 0, 9L, 0L, 0L, 2L}, // so 9 is not "the last runnext G"
            {6L, Ev.GO_UNBLOCK, Ev.W_RUNNEXT, 0, 9L, 7L, 0L, 2L},
            {7L, Ev.GO_START, Ev.F_LOCAL, 0, 9L, 0L, 0L, 2L}, // from elsewhere
            {8L, Ev.GO_START, Ev.F_RUNNEXT, 0, 9L, 0L, 0L, 1L}, // again the last runnext G: one long
            {8L + (1L << 24), Ev.GO_UNBLOCK, Ev.W_RUNNEXT, 0, 10L, 9L, 0L, 6L}, // a full-form put counts
            {9L + (1L << 24), Ev.GO_START, Ev.F_RUNNEXT, 4094, 10L, 0L, 1L, 1L},
            {10L + (1L << 24), Ev.GO_START, Ev.F_RUNNEXT, 0, 10L, 3L, 0L, 2L}, // a victim: two longs
            {10L + (2L << 24), Ev.GO_START, Ev.F_RUNNEXT, 0, 10L, 0L, 0L, 6L}, // stamp gap too wide
        };
        assertEquals(write(b, t0, 2, true, cases), decoded(Trace.decode(s, null, false)));
    }

    /**
     * The one-long parks (FORM_PARK1/2) name neither the G nor the object: the G is the one the
     * buffer's latest start named, the object one of the buffer's last two distinct park objects
     * (kept from the park records, in any form). Only such a park takes it; any other stop, a
     * park of another G, on a third object, with no object, or with a reason too wide, takes the
     * longer forms; and every stop decodes to the fields written.
     */
    @Test
    void aParkOfTheLastStartedGOnARecentObjectIsOneLong() {
        Tracer.Session s = new Tracer.Session(Tracer.NOOP, 0, true, "hand-built");
        TraceBuf b = s.newBuf(3, "M3");
        long t0 = s.t0;
        Object[][] cases = {
            // ts offset, code, small, p, g, a, x, longs expected; GO_START through putStart, GO_STOP through putStop
            {1L, Ev.GO_START, Ev.F_LOCAL, 0, 5L, 0L, 0L, 6L}, // first record: full
            {2L, Ev.GO_STOP, Ev.S_PARK, 0, 5L, 3L, 70L, 2L}, // a first object
            {3L, Ev.GO_START, Ev.F_LOCAL, 0, 5L, 0L, 0L, 2L},
            {4L, Ev.GO_STOP, Ev.S_PARK, 0, 5L, 3L, 70L, 1L}, // park1
            {5L, Ev.GO_START, Ev.F_LOCAL, 0, 6L, 0L, 0L, 2L},
            {6L, Ev.GO_STOP, Ev.S_PARK, 0, 6L, 4L, 71L, 2L}, // a second object: 71, 70
            {7L, Ev.GO_START, Ev.F_LOCAL, 0, 5L, 0L, 0L, 2L},
            {8L, Ev.GO_STOP, Ev.S_PARK, 0, 5L, 3L, 70L, 1L}, // park2
            {9L, Ev.GO_START, Ev.F_LOCAL, 1, 6L, 0L, 0L, 2L},
            {10L, Ev.GO_STOP, Ev.S_PARK, 1, 6L, 4095L, 71L, 1L}, // park1, widest reason
            {11L, Ev.GO_STOP, Ev.S_PARK, 0, 5L, 3L, 70L, 2L}, // not the G last started
            {12L, Ev.GO_START, Ev.F_LOCAL, 0, 5L, 0L, 0L, 2L},
            {13L, Ev.GO_STOP, Ev.S_PARK, 0, 5L, 4096L, 70L, 2L}, // reason too wide for the head: g | a << 32
            {14L, Ev.GO_STOP, Ev.S_GOSCHED, 0, 5L, 0L, 0L, 2L}, // no object
            {15L, Ev.GO_STOP, Ev.S_PARK, 0, 5L, 1L, 0L, 2L}, // a park with no object
            {16L, Ev.GO_STOP, Ev.S_PARK, 0, 5L, 3L, 72L, 2L}, // a third object: 72, 71 (70 forgotten)
            {17L, Ev.GO_STOP, Ev.S_PARK, 0, 5L, 3L, 70L, 2L}, // so 70 is two-long again: 70, 72
            {18L, Ev.GO_STOP, Ev.S_PARK, 0, 5L, 3L, 72L, 1L}, // park2
            {18L + (1L << 24), Ev.GO_STOP, Ev.S_PARK, 0, 5L, 3L, 73L, 6L}, // full form counts: 73, 70
            {19L + (1L << 24), Ev.GO_STOP, Ev.S_PARK, 0, 5L, 3L, 70L, 1L}, // park2
            {20L + (1L << 24), Ev.GO_STOP, Ev.S_PARK, 0, 5L, 3L, 73L, 1L}, // park1
        };
        assertEquals(write(b, t0, 3, true, cases), decoded(Trace.decode(s, null, false)));
    }

    /**
     * The one-long unblock (CODE_UNBLOCK_LAST) names neither the G nor its waker: the G is the one
     * the buffer's latest stop named, the waker the one its latest start named. Only such an
     * unblock takes it; it decodes as a GO_UNBLOCK with the fields written, and a runnext put made
     * by one counts for a one-long start after it.
     */
    @Test
    void anUnblockOfTheLastStoppedGByTheLastStartedIsOneLong() {
        Tracer.Session s = new Tracer.Session(Tracer.NOOP, 0, true, "hand-built");
        TraceBuf b = s.newBuf(1, "M1");
        long t0 = s.t0;
        Object[][] cases = {
            // ts offset, code, small, p, g, a, x, longs expected
            {1L, Ev.GO_START, Ev.F_LOCAL, 0, 5L, 0L, 0L, 6L}, // first record: full
            {2L, Ev.GO_STOP, Ev.S_PARK, 0, 5L, 3L, 70L, 2L},
            {3L, Ev.GO_START, Ev.F_LOCAL, 0, 6L, 0L, 0L, 2L},
            {4L, Ev.GO_UNBLOCK, Ev.W_RUNNEXT, 0, 5L, 6L, 0L, 1L}, // 5 stopped last, 6 started last
            {5L, Ev.GO_STOP, Ev.S_PARK, 0, 6L, 3L, 71L, 2L},
            {6L, Ev.GO_START, Ev.F_RUNNEXT, 0, 5L, 0L, 1L, 1L}, // the one-long unblock's runnext put
            {7L, Ev.GO_UNBLOCK, Ev.W_LOCAL, 2, 6L, 5L, 0L, 1L}, // 6 stopped last, 5 started last
            {8L, Ev.GO_UNBLOCK, Ev.W_LOCAL, 0, 7L, 5L, 0L, 2L}, // not the G last stopped
            {9L, Ev.GO_UNBLOCK, Ev.W_GLOBAL, 0, 6L, 0L, 0L, 2L}, // not by the G last started
            {10L, Ev.GO_STOP, Ev.S_PARK, 0, 5L, 3L, 70L, 1L}, // a one-long park counts as the last stop
            {11L, Ev.GO_START, Ev.F_LOCAL, 0, 6L, 0L, 0L, 2L},
            {12L, Ev.GO_UNBLOCK, Ev.W_RUNNEXT, 0, 5L, 6L, 0L, 1L},
            {13L, Ev.GO_START, Ev.F_RUNNEXT, 0, 5L, 0L, 1L, 1L}, // a one-long start as the last start
            {14L, Ev.GO_UNBLOCK, Ev.W_LOCAL, 0, 5L, 5L, 0L, 1L},
            {14L + (1L << 24), Ev.GO_UNBLOCK, Ev.W_RUNNEXT, 0, 5L, 5L, 0L, 6L}, // stamp gap too wide
        };
        assertEquals(write(b, t0, 1, true, cases), decoded(Trace.decode(s, null, false)));
    }

    /**
     * A chunk decodes on its own: one that starts with a one-long start whose runnext put is the
     * last record of the chunk before it names the right G, and the one-long park after it the
     * right G and object (seen in older chunks), also once those older chunks were recycled by a
     * flight-recorder window (the chunk carries its buffer's runnext G, last started G and last
     * park objects, as it carries its base stamp).
     */
    @Test
    void aOneLongStartAtAChunkStartNamesTheGPutInTheChunkBefore() {
        for (int window : new int[] {0, 2}) {
            Tracer.Session s = new Tracer.Session(Tracer.NOOP, window, true, "hand-built");
            TraceBuf b = s.newBuf(0, "M0");
            long ts = s.t0;
            long goid = 100;
            int firstIsStart = 0;
            List<Long> started = new ArrayList<>();
            for (int chunk = 0; chunk < 4; chunk++) {
                // fill the tail chunk with one-long records until a two-long unblock just fits
                TraceBuf.Chunk tail = b.first;
                while (tail.next != null) {
                    tail = tail.next;
                }
                while (tail.w != tail.d.length - 2) {
                    b.put(++ts, Ev.SPIN_START, 0, 0, 0, 0, 0);
                }
                goid++;
                b.put(++ts, Ev.GO_UNBLOCK, Ev.W_RUNNEXT, 0, goid, 1, 0); // the chunk's last record
                b.putStart(++ts, Ev.F_RUNNEXT, 0, goid, 0, 1); // the next chunk's first
                b.putStop(
                        ++ts, Ev.S_PARK, 0, goid, 2, chunk == 0 ? 50 : 50 + (chunk & 1)); // one long but the first two
                started.add(goid);
                TraceBuf.Chunk next = tail.next;
                if (next != null && (next.d[0] & TraceBuf.FORM_MASK) == TraceBuf.FORM_RUNNEXT) {
                    firstIsStart++;
                }
            }
            assertEquals(4, firstIsStart, "chunks that begin with a one-long start");
            Trace t = Trace.decode(s, null, false);
            List<Long> got = new ArrayList<>();
            for (int i = 0; i < t.size(); i++) {
                if (t.code(i) == Ev.GO_START) {
                    got.add(t.g(i));
                    assertEquals(Ev.F_RUNNEXT, t.small(i));
                    assertEquals(1, t.x(i));
                } else if (t.code(i) == Ev.GO_STOP) {
                    assertEquals(got.get(got.size() - 1), t.g(i), "the park's G");
                    assertEquals(2, t.a(i));
                    int chunk = (int) (t.g(i) - 101);
                    assertEquals(chunk == 0 ? 50 : 50 + (chunk & 1), t.x(i), "the park's object");
                }
            }
            // a window keeps the last chunks only: the starts it keeps are the last ones written
            assertTrue(
                    window == 0
                            ? got.equals(started)
                            : !got.isEmpty()
                                    && started.subList(started.size() - got.size(), started.size())
                                            .equals(got),
                    window + ": " + got + " of " + started);
        }
    }

    /**
     * A buffer that is not an M's ({@code mid} -1: sysmon, a foreign thread) writes compact records
     * too, and they decode as "not an M".
     */
    @Test
    void aForeignBufferDecodesAsNotAnM() {
        Tracer.Session s = new Tracer.Session(Tracer.NOOP, 0, true, "hand-built");
        TraceBuf b = s.newBuf(-1, "sysmon");
        b.put(s.t0 + 1, Ev.PREEMPT_REQ, 0, 0, 5, 0, 0);
        b.put(s.t0 + 2, Ev.PREEMPT_REQ, 0, 1, 6, 0, 0);
        Trace t = Trace.decode(s, null, false);
        assertEquals(
                List.of(new E(1, Ev.PREEMPT_REQ, 0, 0, -1, 5, 0, 0), new E(2, Ev.PREEMPT_REQ, 0, 1, -1, 6, 0, 0)),
                decoded(t));
    }

    /**
     * A session that keeps everything starts each buffer with a 32 KB chunk, then full ones: a
     * writer's first event allocates no 1.5 MB chunk (~5 ms of first-touch page faults on this
     * virtual machine, which every M paid at its first event and the trace start for its start
     * state). A window's chunks are all full-size: it recycles them as equals.
     */
    @Test
    void aBufferStartsWithASmallChunkOutsideAWindow() {
        Tracer.Session all = new Tracer.Session(Tracer.NOOP, 0, true, "hand-built");
        TraceBuf b = all.newBuf(0, "M0");
        assertEquals(TraceBuf.Chunk.FIRST_LONGS, b.first.d.length);
        long ts = all.t0;
        int n = TraceBuf.Chunk.FIRST_LONGS + 10; // one-long records: past the first chunk
        for (int i = 0; i < n; i++) {
            b.put(++ts, Ev.SPIN_START, 0, 0, 0, 0, 0);
        }
        assertEquals(TraceBuf.Chunk.FIRST_LONGS, b.first.w);
        assertEquals(TraceBuf.Chunk.LONGS, b.first.next.d.length);
        assertEquals(n, Trace.decode(all, null, false).size());
        Tracer.Session window = new Tracer.Session(Tracer.NOOP, 2, true, "hand-built");
        assertEquals(TraceBuf.Chunk.LONGS, window.newBuf(0, "M0").first.d.length);
    }

    /**
     * Stamps are deltas, so each chunk carries the stamp its first record is relative to: records
     * on both sides of chunk boundaries, and those of a flight-recorder window that recycled its
     * oldest chunks, decode to their exact stamps, in order.
     */
    @Test
    void stampsSurviveChunkBoundariesAndRecycling() {
        for (int window : new int[] {0, 2}) {
            Tracer.Session s = new Tracer.Session(Tracer.NOOP, window, true, "hand-built");
            TraceBuf b = s.newBuf(0, "M0");
            // two-long records: four chunks (three full and a partial one; with a small first chunk:
            // the small one, two full, a partial one)
            int n = 3 * TraceBuf.CHUNK_EVENTS + 123;
            long ts = s.t0;
            for (int i = 0; i < n; i++) {
                ts += 1 + (i % 7); // uneven steps, so a wrong base shows
                b.put(ts, Ev.GO_START, Ev.F_RUNNEXT, 0, 1 + (i & 1), 0, 1);
            }
            Trace t = Trace.decode(s, null, false);
            int kept = window == 0 ? n : t.size();
            assertEquals(kept, t.size());
            assertTrue(window == 0 || (kept < n && kept >= TraceBuf.CHUNK_EVENTS), "kept " + kept);
            // the kept records are the last ones written: recompute their stamps from the end
            long expect = ts - s.t0;
            for (int i = t.size() - 1, w = n - 1; i >= 0; i--, w--) {
                assertEquals(expect, t.ts(i), "record " + w + " of " + n + " (window " + window + ")");
                assertEquals(1 + (w & 1), t.g(i));
                expect -= 1 + (w % 7);
            }
        }
    }
}
