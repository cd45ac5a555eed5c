package dev.gort.runtime.trace;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The one-long record forms leave out what the decoder can recover from the buffer's earlier
 * records (the last runnext put, the last started and stopped G, the last two park objects), so
 * writer and decoder must track that state identically, record by record, across chunk boundaries
 * and after the flight-recorder window recycled chunks (each chunk carries the state as its base).
 * A seeded random mix of every writer path (putStart, putStop, putUnblock, put, and emit for
 * another M), biased towards the tracked state so that the one-long forms fire and sometimes
 * forced into their fall-backs (a stamp step over 24 bits, a P of 5000 or -1, a non-park stop, an
 * argument, a large reason); the decoded copy must equal what was written, field by field, at
 * random points and at the end. Deterministic: a failure names its seed and record.
 */
class TraceRecordFormFuzzTest {
    private static final int FIELDS = 5;

    @ParameterizedTest(name = "seed {0}, window of {1} chunks (0: unbounded)")
    @CsvSource({"1, 0", "2, 2", "3, 3", "4, 2"})
    void everyWriterPathDecodesToWhatItWrote(long seed, int maxChunks) {
        Random r = new Random(seed);
        Tracer.Session s = new Tracer.Session(null, maxChunks, true, "fuzz");
        long mid = 3;
        TraceBuf b = s.newBuf(mid, "M3");
        int n = 1_000_000;
        long[] exp = new long[n * FIELDS];
        int k = 0;
        long ts = 1000;
        int checks = 0;
        for (int i = 0; i < n; i++) {
            ts += r.nextInt(10) == 0 ? 0 : (r.nextInt(1000) == 0 ? (1L << 30) : r.nextInt(500));
            int pid = r.nextInt(50) == 0 ? -1 : (r.nextInt(200) == 0 ? 5000 : r.nextInt(3));
            long g = r.nextBoolean() ? tracked(r, b) : 1 + r.nextInt(4);
            int op = r.nextInt(100);
            int code;
            int small;
            long a;
            long x;
            long hdr;
            if (op < 25) {
                small = r.nextInt(4) != 0 ? Ev.F_RUNNEXT : Ev.F_LOCAL;
                a = r.nextInt(10) == 0 ? 7 : 0;
                x = r.nextInt(3) == 0 ? 1 : 0;
                if (r.nextInt(3) != 0 && b.lastRunnext != 0) {
                    g = b.lastRunnext;
                }
                b.putStart(ts, small, pid, g, a, x);
                code = Ev.GO_START;
            } else if (op < 50) {
                small = r.nextInt(5) != 0 ? Ev.S_PARK : Ev.S_GOSCHED;
                a = r.nextInt(20) == 0 ? 5000 : r.nextInt(8);
                x = new long[] {0, 100, 101, 102, 103}[r.nextInt(5)];
                if (r.nextInt(3) != 0 && b.lastStarted != 0) {
                    g = b.lastStarted;
                }
                b.putStop(ts, small, pid, g, a, x);
                code = Ev.GO_STOP;
            } else if (op < 75) {
                small = r.nextInt(2) == 0 ? Ev.W_RUNNEXT : Ev.W_LOCAL;
                a = r.nextInt(4) == 0 ? r.nextInt(5) : b.lastStarted;
                x = 0;
                if (r.nextInt(3) != 0 && b.lastStopped != 0) {
                    g = b.lastStopped;
                }
                b.putUnblock(ts, small, pid, g, a);
                code = Ev.GO_UNBLOCK;
            } else if (op < 85) {
                small = r.nextInt(2) == 0 ? Ev.W_RUNNEXT : Ev.W_LOCAL;
                a = r.nextInt(5);
                x = 0;
                b.put(ts, Ev.GO_CREATE, small, pid, g, a, 0);
                code = Ev.GO_CREATE;
            } else if (op < 92) {
                code = Ev.PROC_START;
                small = 0;
                a = 0;
                x = 0;
                g = 0;
                b.put(ts, code, 0, pid, 0, 0, 0);
            } else {
                // a record for another M (a hand-off written into this buffer): always the full form
                code = new int[] {Ev.GO_START, Ev.GO_STOP, Ev.GO_UNBLOCK, Ev.GO_CREATE}[r.nextInt(4)];
                small = r.nextInt(2);
                a = r.nextInt(3);
                x = new long[] {0, 100, 104}[r.nextInt(3)];
                hdr = Tracer.hdrM(code, small, pid, 9);
                b.emit(ts, hdr, g, a, x);
                k = expect(exp, k, ts, hdr, g, a, x);
                continue;
            }
            k = expect(exp, k, ts, Tracer.hdrM(code, small, pid, mid), g, a, x);
            if (r.nextInt(150_000) == 0 || i == n - 1) {
                check(b, exp, k, seed, i);
                checks++;
            }
        }
        assertTrue(checks >= 2, "checked " + checks + " times");
        assertTrue(b.lastSeq >= 4, "the records filled only " + b.lastSeq + " chunks: too few boundaries crossed");
        if (maxChunks > 0) {
            assertTrue(b.dropped > 0, "a window of " + maxChunks + " chunks recycled none");
        }
    }

    private static int expect(long[] exp, int k, long ts, long hdr, long g, long a, long x) {
        exp[k++] = ts;
        exp[k++] = hdr;
        exp[k++] = g;
        exp[k++] = a;
        exp[k++] = x;
        return k;
    }

    /** One of the Gs the one-long forms leave out (or G1 while none is tracked yet). */
    private static long tracked(Random r, TraceBuf b) {
        long[] c = {b.lastStarted, b.lastStopped, b.lastRunnext};
        long v = c[r.nextInt(3)];
        return v == 0 ? 1 : v;
    }

    /** The decoded copy is the tail of what was written (older chunks may be recycled), field by field. */
    private static void check(TraceBuf b, long[] exp, int k, long seed, int op) {
        long[] d = Trace.copy(b).d();
        int off = k - d.length;
        assertTrue(off >= 0, "decoded " + d.length / FIELDS + " records, more than the " + k / FIELDS + " written");
        for (int j = 0; j < d.length; j++) {
            if (d[j] != exp[off + j]) {
                int rec = j / FIELDS;
                assertEquals(
                        Arrays.toString(Arrays.copyOfRange(exp, off + rec * FIELDS, off + rec * FIELDS + FIELDS)),
                        Arrays.toString(Arrays.copyOfRange(d, rec * FIELDS, rec * FIELDS + FIELDS)),
                        "seed " + seed + ", after op " + op + ": decoded record " + rec + " of " + d.length / FIELDS
                                + " (ts, hdr, g, a, x)");
            }
        }
    }
}
