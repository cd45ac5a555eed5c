package dev.gort.runtime.trace;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * One writer's event buffer: a linked list of fixed-size chunks of five-long records. Exactly one
 * thread writes (an M, or one foreign thread such as sysmon); it never locks and allocates only
 * when a chunk is full (every {@link #CHUNK_EVENTS} events). Readers may read at any time: each
 * chunk publishes its record count with a release store after the record is complete, and a reader
 * reads only the published prefix (acquire), so a record is never seen half-written.
 *
 * <p>Flight-recorder mode keeps at most {@code maxChunks} chunks: the writer unlinks the oldest
 * when it adds one (readers that still hold it keep a consistent, older view).
 *
 * <p>Go: trace.go traceBuf (per-M buffers flushed to a full queue); here the "full queue" is the
 * chunk list itself, read in place.
 */
public final class TraceBuf {
    static final int REC = 5;

    static final int CHUNK_EVENTS = 32768;

    static final class Chunk {
        private static final VarHandle PUB;

        static {
            try {
                PUB = MethodHandles.lookup().findVarHandle(Chunk.class, "published", int.class);
            } catch (ReflectiveOperationException e) {
                throw new ExceptionInInitializerError(e);
            }
        }

        /**
         * 1.3 MB: large enough to be a G1 humongous object on heaps up to ~8 GB, so chunks are
         * allocated outside the young generation and never copied by the GC. (A direct ByteBuffer
         * through a view VarHandle measured slower per event; Agrona's UnsafeBuffer would need
         * --add-exports java.base/jdk.internal.misc on every traced JVM.)
         */
        final long[] d = new long[LONGS];

        static final int LONGS = REC * CHUNK_EVENTS;
        /** Writer only, plain: next free slot. */
        int w;
        /** Longs readable: written by the writer with setRelease, read with getAcquire. */
        @SuppressWarnings("unused")
        private int published;
        /** Written once by the writer (volatile) when the next chunk is linked. */
        volatile Chunk next;

        int published() {
            return (int) PUB.getAcquire(this);
        }

        void publish(int n) {
            PUB.setRelease(this, n);
        }
    }

    final Tracer.Session session;
    /** M id, or -1 for a foreign thread. Immutable. */
    final long mid;

    final String owner;
    /** Oldest chunk still kept: written by the writer (flight mode), read by readers; volatile. */
    volatile Chunk first;
    /** Writer only. */
    private Chunk cur;

    private int chunks = 1;
    /** Chunks this buffer dropped (flight-recorder window): written by the writer, read by the decoder. */
    volatile int dropped;
    /** Timestamp of the last event written, for events that may reuse it. Writer only. */
    long lastTs;
    /** The last two object ids described (ping-pong alternates two): checked before the set. Writer only. */
    long seen1, seen2;
    /** Object ids this writer already described to the session (Agrona's open-addressing set; writer only). */
    final org.agrona.collections.LongHashSet seenObjects = new org.agrona.collections.LongHashSet();

    /** The JFR run event of the G now running on this M (JFR mode only). Writer only. */
    Object jfrRun;

    TraceBuf(Tracer.Session session, long mid, String owner) {
        this.session = session;
        this.mid = mid;
        this.owner = owner;
        if (session.record) { // a JFR-only buffer never records: no chunk
            Chunk c = new Chunk();
            this.first = c;
            this.cur = c;
        }
    }

    void emit(long ts, long hdr, long g, long a, long x) {
        Chunk c = cur;
        int n = c.w;
        if (n == Chunk.LONGS) {
            c = grow();
            n = 0;
        }
        long[] d = c.d;
        d[n] = ts;
        d[n + 1] = hdr;
        d[n + 2] = g;
        d[n + 3] = a;
        d[n + 4] = x;
        c.w = n + REC;
        c.publish(n + REC);
        lastTs = ts;
    }

    private Chunk grow() {
        Chunk c = new Chunk();
        cur.next = c;
        cur = c;
        chunks++;
        int max = session.maxChunksPerBuf;
        if (max > 0) {
            while (chunks > max) {
                first = first.next;
                chunks--;
                dropped++;
                session.droppedChunks.incrementAndGet();
            }
        }
        return c;
    }
}
