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
 * <p>Flight-recorder mode keeps at most {@code maxChunks} chunks: once it has them, the writer
 * recycles the oldest as the new tail instead of allocating one, so a long traced run allocates
 * nothing after its window fills (a fresh 1.3 MB humongous chunk every ~2 ms of ping-pong cost G1
 * a collection cycle every few hundred ms). Each chunk carries a sequence number, renumbered before
 * it is rewritten; readers check the numbers around their walk and their copy (a seqlock) and keep
 * only the chunks that did not change under them, a suffix of the list (see {@link Trace}'s decoder).
 *
 * <p>Go: trace.go traceBuf (per-M buffers flushed to a full queue); here the "full queue" is the
 * chunk list itself, read in place.
 */
public final class TraceBuf {
    static final int REC = 5;

    static final int CHUNK_EVENTS = 32768;

    static final class Chunk {
        private static final VarHandle PUB;
        private static final VarHandle SEQ;

        static {
            try {
                PUB = MethodHandles.lookup().findVarHandle(Chunk.class, "published", int.class);
                SEQ = MethodHandles.lookup().findVarHandle(Chunk.class, "seq", long.class);
            } catch (ReflectiveOperationException e) {
                throw new ExceptionInInitializerError(e);
            }
        }

        Chunk(long seq) {
            this.seq = seq;
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
        /** Written by the writer (volatile) when the next chunk is linked, and cleared when this one is recycled. */
        volatile Chunk next;
        /**
         * This chunk's place in its buffer (1, 2, ...): set before it is first linked, renumbered by
         * {@link #recycle} before it is rewritten. Written by the writer (opaque, then a release
         * fence); read by readers with acquire around what they read of the chunk.
         */
        @SuppressWarnings("unused")
        private long seq;

        int publishedAcquire() {
            return (int) PUB.getAcquire(this);
        }

        long seqAcquire() {
            return (long) SEQ.getAcquire(this);
        }

        /** The writer's own read of its number. */
        long seqPlain() {
            return (long) SEQ.get(this);
        }

        /** Writer only: makes this (the oldest, unlinked) chunk the empty chunk number {@code newSeq}. */
        void recycle(long newSeq) {
            SEQ.setOpaque(this, newSeq);
            // a reader that sees any record written from now on also sees the new number
            VarHandle.releaseFence();
            w = 0;
            next = null;
            PUB.setRelease(this, 0);
        }

        void publishRelease(int n) {
            PUB.setRelease(this, n);
        }
    }

    final Tracer.Session session;
    /** {@code session.record}, one load nearer for the hooks. Immutable. */
    final boolean record;
    /** M id, or -1 for a foreign thread. Immutable. */
    final long mid;

    final String owner;
    /** Oldest chunk still kept: written by the writer (flight mode), read by readers; volatile. */
    volatile Chunk first;
    /** Writer only. */
    private Chunk cur;

    private int chunks = 1;
    /** Chunks ever allocated by this buffer (a window stops allocating once full). Writer only, read by tests. */
    int allocated = 1;
    /** Sequence number of the tail chunk: written by the writer (volatile) after linking it; read by readers. */
    volatile long lastSeq = 1;
    /**
     * Chunks this buffer dropped (flight-recorder window): written by the writer (volatile, after it
     * moved {@link #first}), read by tests. The decoder does not use it: a reader can see the new
     * {@code first} and still an old count; it reads the loss from the chunk numbers it copied.
     */
    volatile int dropped;
    /** Timestamp of the last event written, for events that may reuse it. Writer only. */
    long lastTs;
    /**
     * Clock reads made for this buffer's events (Tracer's {@code clock}): written by the writer,
     * plain; read by tests after the writer stopped (the cost counter of issue 17).
     */
    int clockReads;
    /** The last two object ids described (ping-pong alternates two): checked before the set. Writer only. */
    long seen1, seen2;
    /** Object ids this writer already described to the session (Agrona's open-addressing set; writer only). */
    final org.agrona.collections.LongHashSet seenObjects = new org.agrona.collections.LongHashSet();

    /** The JFR run event of the G now running on this M (JFR mode only). Writer only. */
    Object jfrRun;

    TraceBuf(Tracer.Session session, long mid, String owner) {
        this.session = session;
        this.record = session.record;
        this.mid = mid;
        this.owner = owner;
        if (session.record) { // a JFR-only buffer never records: no chunk
            Chunk c = new Chunk(1);
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
        c.publishRelease(n + REC);
        lastTs = ts;
    }

    private Chunk grow() {
        long seq = cur.seqPlain() + 1;
        int max = session.maxChunksPerBuf;
        Chunk c;
        if (max > 0 && chunks >= max) {
            // the window is full (max >= 2, so the oldest is never the tail): reuse the oldest
            c = first;
            first = c.next;
            dropped++;
            session.droppedChunks.incrementAndGet();
            c.recycle(seq);
        } else {
            c = new Chunk(seq);
            chunks++;
            allocated++;
        }
        cur.next = c;
        cur = c;
        lastSeq = seq;
        return c;
    }
}
