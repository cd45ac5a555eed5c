package dev.gort.runtime.trace;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * One writer's event buffer: a linked list of {@code long[]} chunks of variable-length records.
 * Exactly one thread writes (an M, or one foreign thread such as sysmon); it never locks and
 * allocates only when a chunk is full (every {@link #CHUNK_EVENTS} events of the two-long form, up
 * to {@link #CHUNK_MAX_EVENTS} of the one-long ones). A buffer of a session that keeps everything
 * starts with a small chunk ({@link Chunk#FIRST_LONGS}): most writers (sysmon, the start state, an
 * M that wakes a few times) never fill it, and a full chunk's first touch costs its writer ~5 ms
 * on a virtual machine that backs memory at its first write (~12 us a page here), which used to
 * stall every M at its first event and the trace start itself. A flight-recorder window's chunks
 * are all full-size, since it recycles them as equals.
 *
 * <p>Readers may read at any time: each chunk publishes its length with a release store after the
 * record is complete (the writer's one position field, {@link Chunk#w}: one store per record
 * besides its data and the stamp), and a reader reads only the published prefix (acquire), so a
 * record is never seen half-written; a record never straddles two chunks.
 *
 * <p><b>Records.</b> A record starts with a head long: bits 0-4 code, 5-7 form, 8-15 small, 16-27
 * P+1, 28-39 aux (a 12-bit argument), 40-63 dts, the stamp minus the buffer's previous stamp (the
 * chunk's {@code base} for its first record). The hooks write through {@link #put}, which picks the
 * smallest form the fields fit, the M being the buffer's own ({@link #mid}), starts through
 * {@link #putStart}, stops through {@link #putStop} and unblocks through {@link #putUnblock},
 * which add the one-long forms:
 * <ul>
 *   <li>{@link #FORM_RUNNEXT} (8 bytes): a start from runnext of the G that this buffer last put
 *       there, no goid written: the decoder reads it back from that put ({@link #lastRunnext},
 *       each chunk carrying the value it starts with, {@link Chunk#baseRunnext});
 *   <li>{@link #FORM_PARK1}, {@link #FORM_PARK2} (8 bytes, through {@link #putStop}): a park of the
 *       G this buffer last started on the object of one of its last two distinct parks, no goid
 *       nor object written ({@link #lastStarted}, {@link #park1}, {@link #park2}, likewise);
 *   <li>{@link #FORM_NOARG} with code {@link #CODE_UNBLOCK_LAST} (8 bytes, through {@link
 *       #putUnblock}): an unblock of the G this buffer last stopped by the G it last started
 *       ({@link #lastStopped}, {@link #lastStarted}), decoded as a GO_UNBLOCK;
 *   <li>{@link #FORM_NOARG} (8 bytes): g = x = 0, a = aux (M and P state changes, GOMAXPROCS);
 *   <li>{@link #FORM_GX} (16): one long g | x &lt;&lt; 32, a = aux (starts, stops with their wait
 *       reason and object, creations by a small goid);
 *   <li>{@link #FORM_GA} (16): one long g | a &lt;&lt; 32, x = aux (unblocks by any goid below 2^32);
 *   <li>{@link #FORM_G} (16): one long g, a = aux (a goid of 2^32 or more);
 *   <li>{@link #FORM_FULL} (48): ts, header ({@link Ev}'s layout, any M), g, a, x, for everything
 *       else: a stamp 2^24 clock units (16.7 ms of nanoTime, 6.5 ms of a 2.6 GHz time-stamp counter:
 *       {@link TraceClock}) or more after the previous one or before it, a small field
 *       over 255, a P over 4094, arguments wider than the room above (a steal's -1 victim), and
 *       events written for another M ({@link #emit}: the start state, a retake's syscall).
 * </ul>
 * The ping-pong at GOMAXPROCS=1 writes 48 bytes per round trip, six longs: a one-long start, park
 * and unblock per switch (was 96 with two-long records, 240 with 40-byte ones; {@code
 * TraceClockTest}). {@link #expand} turns a chunk back into the decoder's five-long layout.
 *
 * <p>Flight-recorder mode keeps at most {@code maxChunks} chunks: once it has them, the writer
 * recycles the oldest as the new tail instead of allocating one, so a long traced run allocates
 * nothing after its window fills (a fresh humongous chunk every few ms of ping-pong cost G1 a
 * collection cycle every few hundred ms). Each chunk carries a sequence number, renumbered before
 * it is rewritten; readers check the numbers around their walk and their copy (a seqlock) and keep
 * only the chunks that did not change under them, a suffix of the list (see {@link Trace}'s
 * decoder). Each chunk decodes on its own from its {@code base} and its base state (what the
 * one-long forms leave out), so a suffix needs nothing older.
 *
 * <p>Go: trace.go traceBuf (per-M buffers flushed to a full queue, events with varint arguments
 * and a timestamp delta from the batch's previous event, traceevent.go); here the "full queue" is
 * the chunk list itself, read in place, and the arguments are packed into fixed longs, cheaper to
 * write than varints.
 */
public final class TraceBuf {
    /** Longs per record in the decoder's layout (ts, header, g, a, x), which {@link #expand} produces. */
    static final int REC = 5;

    /** Longs of a full-form record: the head, then ts, header, g, a, x. */
    static final int FULL_LONGS = 6;

    /** Full-form records a chunk holds. */
    static final int CHUNK_FULL_EVENTS = 32768;

    /** Two-long (16-byte) records a chunk holds, the form of nearly every event: three times as many. */
    static final int CHUNK_EVENTS = FULL_LONGS * CHUNK_FULL_EVENTS / 2;

    /** One-long records a chunk holds: the most events it can hold (the ping-pong's every record). */
    static final int CHUNK_MAX_EVENTS = FULL_LONGS * CHUNK_FULL_EVENTS;

    // The head long of a record: bits 0-4 code | 5-7 form | 8-15 small | 16-27 p+1 | 28-39 aux | 40-63 dts.
    static final long FORM_MASK = 0xE0;
    /** Five longs follow: ts (absolute), header ({@link Ev}'s layout, any M), g, a, x; the head's other bits are 0. */
    static final int FORM_FULL = 0;
    /** No long follows: g = 0, a = aux, x = 0. */
    static final int FORM_NOARG = 1 << 5;
    /** One long follows, g; a = aux, x = 0. */
    static final int FORM_G = 2 << 5;
    /** One long follows, g (32 bits) | x << 32; a = aux. */
    static final int FORM_GX = 3 << 5;
    /** One long follows, g (32 bits) | a << 32; x = aux. */
    static final int FORM_GA = 4 << 5;
    /**
     * No long follows: a GO_START of the G this buffer last put in runnext ({@link #lastRunnext}, read
     * back by the decoder from the same records); a = 0, x = aux.
     */
    static final int FORM_RUNNEXT = 5 << 5;
    /**
     * No long follows: a GO_STOP of the G this buffer last started ({@link #lastStarted}) waiting on
     * the object of this buffer's latest distinct park ({@link #park1}); a = aux, small as written.
     */
    static final int FORM_PARK1 = 6 << 5;
    /** As {@link #FORM_PARK1}, the object of the park before that ({@link #park2}). */
    static final int FORM_PARK2 = 7 << 5;
    /**
     * The code (above every {@link Ev} code) of a {@link #FORM_NOARG} record that is a GO_UNBLOCK of
     * the G this buffer last stopped ({@link #lastStopped}) by the G it last started ({@link
     * #lastStarted}); small = where, x = aux.
     */
    static final int CODE_UNBLOCK_LAST = 31;

    static final int AUX_SHIFT = 28;
    static final int DTS_SHIFT = 40;
    /** A compact record's stamp is its buffer's previous stamp plus up to 2^24 - 1 clock units ({@link TraceClock}). */
    static final int DTS_BITS = 24;

    static final class Chunk {
        private static final VarHandle PUB;
        private static final VarHandle SEQ;

        static {
            try {
                PUB = MethodHandles.lookup().findVarHandle(Chunk.class, "w", int.class);
                SEQ = MethodHandles.lookup().findVarHandle(Chunk.class, "seq", long.class);
            } catch (ReflectiveOperationException e) {
                throw new ExceptionInInitializerError(e);
            }
        }

        Chunk(long seq, int longs) {
            this.seq = seq;
            this.d = new long[longs];
        }

        /**
         * {@link #LONGS}, 1.5 MB: large enough to be a G1 humongous object on heaps up to ~8 GB, so
         * chunks are allocated outside the young generation and never copied by the GC. (A direct
         * ByteBuffer through a view VarHandle measured slower per event; Agrona's UnsafeBuffer would
         * need --add-exports java.base/jdk.internal.misc on every traced JVM.) Or {@link
         * #FIRST_LONGS}, a buffer's first chunk outside a window. The writers test the length.
         */
        final long[] d;

        /** A full chunk's longs. */
        static final int LONGS = FULL_LONGS * CHUNK_FULL_EVENTS;

        /**
         * A first chunk's longs outside a window (32 KB: 4,096 one-long records, 682 full ones).
         * Allocated in the young generation; a fan-out of 48 on four Ps writes fewer per M.
         */
        static final int FIRST_LONGS = 4096;
        /**
         * The stamp this chunk's first record is relative to (its buffer's previous stamp when the
         * chunk became the tail). Written plainly by the writer before any record of the chunk is
         * published (after {@link #recycle}'s reset); read by readers after an acquire of
         * {@link #w} that saw a record, then checked with the chunk's number.
         */
        long base;
        /**
         * The buffer's {@link TraceBuf#lastRunnext} when the chunk became the tail: what a
         * {@link TraceBuf#FORM_RUNNEXT} record before any runnext put of this chunk names. Same writer,
         * mode and readers as {@link #base}.
         */
        long baseRunnext;
        /**
         * The buffer's {@link TraceBuf#lastStarted}, {@link TraceBuf#park1}, {@link TraceBuf#park2}
         * and {@link TraceBuf#lastStopped} when the chunk became the tail, likewise.
         */
        long baseStarted, basePark1, basePark2, baseStopped;
        /**
         * Longs written and readable: the writer's next free slot, which it reads plainly (it is the
         * only writer) and advances with a release store once a record is complete (the
         * publication: one store per record, not a private count and a published one); readers
         * read it with getAcquire.
         */
        int w;
        /** Written by the writer (volatile) when the next chunk is linked, and cleared when this one is recycled. */
        volatile Chunk next;
        /**
         * This chunk's place in its buffer (1, 2, ...): set before it is first linked, renumbered by
         * {@link #recycle} before it is rewritten. Written by the writer (opaque, then a release
         * fence); read by readers with acquire around what they read of the chunk.
         */
        @SuppressWarnings("unused")
        private long seq;

        int wAcquire() {
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
            next = null;
            PUB.setRelease(this, 0);
        }

        void setWRelease(int n) {
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
    /**
     * Timestamp of the last event written: what the next compact record's delta is from (and the
     * next chunk's {@code base}), and the stamp events may reuse. Writer only, plain.
     */
    long lastTs;
    /**
     * The session's start ({@code session.t0}, for a session stamped by {@link TraceClock}; else
     * 0): no stamp of this buffer is earlier (the clamp of its first clock read, Tracer's {@code
     * clock}). Immutable.
     */
    final long floor;
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
        this.floor = session.clockUnits ? session.t0 : 0; // a JFR-only session records nothing
        if (session.record) { // a JFR-only buffer never records: no chunk
            Chunk c = new Chunk(1, session.maxChunksPerBuf > 0 ? Chunk.LONGS : Chunk.FIRST_LONGS);
            this.first = c;
            this.cur = c;
        }
    }

    /**
     * Writes a record in the full form (hand-built buffers, the start state, events written on
     * behalf of another M): {@code hdr} in {@link Ev}'s header layout, any M.
     */
    void emit(long ts, long hdr, long g, long a, long x) {
        Chunk c = cur;
        int n = c.w;
        long[] d = c.d;
        if (n > d.length - FULL_LONGS) {
            c = grow();
            n = 0;
            d = c.d;
        }
        d[n] = FORM_FULL;
        d[n + 1] = ts;
        d[n + 2] = hdr;
        d[n + 3] = g;
        d[n + 4] = a;
        d[n + 5] = x;
        c.setWRelease(n + FULL_LONGS);
        lastTs = ts;
        noteState((int) hdr & 0xFF, (int) (hdr >>> 8) & 0xFFFF, g, x);
    }

    /*
     * What the one-long forms leave out, kept from the records themselves, whatever their M or
     * form, by the writer here and by the decoder ({@link #expand}, {@link Ev}'s rules in
     * noteState) alike; writer only, plain; a new tail chunk copies them (Chunk's base fields).
     */
    /**
     * The goid of this buffer's latest GO_UNBLOCK or GO_CREATE record with small W_RUNNEXT (0: none
     * yet): what a {@link #FORM_RUNNEXT} start names.
     */
    long lastRunnext;
    /** The goid of this buffer's latest GO_START record (0: none): what a park form's stop names. */
    long lastStarted;
    /** The goid of this buffer's latest GO_STOP record (0: none): whom a {@link #CODE_UNBLOCK_LAST} unblocks. */
    long lastStopped;
    /**
     * The objects (x) of this buffer's last two distinct GO_STOP S_PARK records with an object,
     * newest first (0: none): what {@link #FORM_PARK1} / {@link #FORM_PARK2} name. A park on one of
     * them leaves them as they are, a park on another shifts them.
     */
    long park1, park2;

    /** Keeps the state above: called for every record written, with its code, small, g and x. */
    private void noteState(int code, int small, long g, long x) {
        if (code == Ev.GO_START) {
            lastStarted = g;
        } else if (code == Ev.GO_STOP) {
            lastStopped = g;
            if (small == Ev.S_PARK && x != 0 && x != park1 && x != park2) {
                park2 = park1;
                park1 = x;
            }
        } else if (small == Ev.W_RUNNEXT && (code == Ev.GO_UNBLOCK || code == Ev.GO_CREATE)) {
            lastRunnext = g;
        }
    }

    /**
     * The decoder's copy of the state above, for one chunk: {lastRunnext, lastStarted, park1,
     * park2, lastStopped}.
     */
    static void noteState(long[] st, long code, long small, long g, long x) {
        if (code == Ev.GO_START) {
            st[1] = g;
        } else if (code == Ev.GO_STOP) {
            st[4] = g;
            if (small == Ev.S_PARK && x != 0 && x != st[2] && x != st[3]) {
                st[3] = st[2];
                st[2] = x;
            }
        } else if (small == Ev.W_RUNNEXT && (code == Ev.GO_UNBLOCK || code == Ev.GO_CREATE)) {
            st[0] = g;
        }
    }

    /**
     * A GO_UNBLOCK of this buffer's own M: of the G this buffer last stopped, by the G it last
     * started (the ping-pong's every unblock: the partner that parked just before on this M), in a
     * {@link #CODE_UNBLOCK_LAST} record of one long; anything else as {@link #put} writes it.
     */
    void putUnblock(long ts, int where, int pid, long g, long waker) {
        long dts = ts - lastTs;
        long p1 = pid + 1L;
        if (g != lastStopped || waker != lastStarted || ((where >>> 8) | (dts >>> DTS_BITS) | (p1 >>> 12)) != 0) {
            put(ts, Ev.GO_UNBLOCK, where, pid, g, waker, 0);
            return;
        }
        if (where == Ev.W_RUNNEXT) {
            lastRunnext = g; // noteState's rule for an unblock, in line
        }
        append1(CODE_UNBLOCK_LAST | FORM_NOARG | ((long) where << 8) | (p1 << 16) | (dts << DTS_SHIFT), ts);
    }

    /**
     * A GO_STOP of this buffer's own M: a park of the G this buffer last started, on one of the two
     * objects of its last distinct parks, with a reason that fits the head, in the one-long
     * {@link #FORM_PARK1} / {@link #FORM_PARK2} (the ping-pong's every stop: it parks on its two
     * channels in turn); anything else as {@link #put} writes it.
     */
    void putStop(long ts, int why, int pid, long g, long reason, long obj) {
        long dts = ts - lastTs;
        long p1 = pid + 1L;
        long form = obj == 0 ? 0 : obj == park1 ? FORM_PARK1 : obj == park2 ? FORM_PARK2 : 0;
        if (form == 0
                || g != lastStarted
                || why != Ev.S_PARK
                || ((reason >>> 12) | (dts >>> DTS_BITS) | (p1 >>> 12)) != 0) {
            put(ts, Ev.GO_STOP, why, pid, g, reason, obj);
            return;
        }
        lastStopped = g; // noteState's rule for a park on park1 or park2, in line: those stay as they are
        append1(
                Ev.GO_STOP | form | ((long) Ev.S_PARK << 8) | (p1 << 16) | (reason << AUX_SHIFT) | (dts << DTS_SHIFT),
                ts);
    }

    /**
     * A GO_START of this buffer's own M: from runnext, of the G this buffer last put there, with no
     * victim and an x that fits the head, in the one-long {@link #FORM_RUNNEXT} (the ping-pong's
     * every start: 8 bytes and one data store less than {@link #put}'s two-long form); anything
     * else as {@link #put} writes it.
     */
    void putStart(long ts, int from, int pid, long g, long a, long x) {
        long dts = ts - lastTs;
        long p1 = pid + 1L;
        if (g != lastRunnext
                || from != Ev.F_RUNNEXT
                || a != 0
                || ((x >>> 12) | (dts >>> DTS_BITS) | (p1 >>> 12)) != 0) {
            put(ts, Ev.GO_START, from, pid, g, a, x);
            return;
        }
        lastStarted = g; // noteState's rule for a start, in line
        append1(
                Ev.GO_START
                        | FORM_RUNNEXT
                        | ((long) Ev.F_RUNNEXT << 8)
                        | (p1 << 16)
                        | (x << AUX_SHIFT)
                        | (dts << DTS_SHIFT),
                ts);
    }

    /**
     * Writes an event of this buffer's own M ({@link #mid}) on P {@code pid} (-1: none), in the
     * smallest form its fields fit (see the class Javadoc), else in the full form.
     */
    void put(long ts, int code, int small, int pid, long g, long a, long x) {
        long dts = ts - lastTs;
        long p1 = pid + 1L;
        if ((dts >>> DTS_BITS) != 0 || (code >>> 5) != 0 || (small >>> 8) != 0 || (p1 >>> 12) != 0) {
            emit(ts, Tracer.hdrM(code, small, pid, mid), g, a, x);
            return;
        }
        noteState(code, small, g, x);
        long h = code | ((long) small << 8) | (p1 << 16) | (dts << DTS_SHIFT);
        long w1;
        if ((a >>> 12) == 0 && ((g >>> 32) | (x >>> 32)) == 0) {
            if (x == 0 && g == 0) {
                append1(h | FORM_NOARG | (a << AUX_SHIFT), ts);
                return;
            }
            h |= FORM_GX | (a << AUX_SHIFT);
            w1 = g | (x << 32);
        } else if ((x >>> 12) == 0 && ((g >>> 32) | (a >>> 32)) == 0) {
            h |= FORM_GA | (x << AUX_SHIFT);
            w1 = g | (a << 32);
        } else if ((a >>> 12) == 0 && x == 0) {
            h |= FORM_G | (a << AUX_SHIFT);
            w1 = g;
        } else {
            emit(ts, Tracer.hdrM(code, small, pid, mid), g, a, x);
            return;
        }
        Chunk c = cur;
        int n = c.w;
        long[] d = c.d;
        if (n > d.length - 2) {
            c = grow();
            n = 0;
            d = c.d;
        }
        d[n] = h;
        d[n + 1] = w1;
        c.setWRelease(n + 2);
        lastTs = ts;
    }

    /**
     * Appends the one-long record {@code h} stamped {@code ts} and publishes it: the one-long
     * writers' common tail, small enough to be compiled into each of them (the hooks' hot path is
     * straight-line: issue 17's cost; a chunk's end is the out-of-line {@link #grow}).
     */
    private void append1(long h, long ts) {
        Chunk c = cur;
        int n = c.w;
        long[] d = c.d;
        if (n == d.length) {
            c = grow();
            n = 0;
            d = c.d;
        }
        d[n] = h;
        c.setWRelease(n + 1);
        lastTs = ts;
    }

    /**
     * Appends the records of {@code d[0, len)}, a copy of one chunk whose first record's stamp is
     * relative to {@code base}, to {@code out} in the decoder's five-long layout ({@link #REC}: ts,
     * header, g, a, x), with {@code mid} as the M of every compact record; {@code st} is the
     * chunk's base state ({@link Chunk#baseRunnext}, baseStarted, basePark1, basePark2,
     * baseStopped), what its one-long records name until its own records change it (updated in
     * place, by {@link #noteState(long[], long, long, long, long)}, the writer's rule).
     */
    static void expand(long[] d, int len, long base, long[] st, long mid, LongList out) {
        long prev = base;
        long m1 = (mid + 1) << 40;
        int i = 0;
        while (i < len) {
            long h = d[i];
            int form = (int) (h & FORM_MASK);
            if (form == FORM_FULL) {
                prev = d[i + 1];
                long fh = d[i + 2];
                noteState(st, fh & 0xFF, (fh >>> 8) & 0xFFFF, d[i + 3], d[i + 5]);
                out.add(prev, fh, d[i + 3], d[i + 4], d[i + 5]);
                i += FULL_LONGS;
                continue;
            }
            prev += h >>> DTS_SHIFT;
            long code = h & 0x1F;
            long small = (h >>> 8) & 0xFF;
            long p1 = (h >>> 16) & 0xFFF;
            long hdr = code | (small << 8) | (p1 << 24) | m1;
            long aux = (h >>> AUX_SHIFT) & 0xFFF;
            long g;
            long a = aux;
            long x = 0;
            switch (form) {
                case FORM_NOARG -> {
                    g = 0;
                    if (code == CODE_UNBLOCK_LAST) {
                        code = Ev.GO_UNBLOCK;
                        hdr = (hdr & ~0xFFL) | code;
                        g = st[4];
                        x = aux;
                        a = st[1];
                    }
                    i += 1;
                }
                case FORM_G -> {
                    g = d[i + 1];
                    i += 2;
                }
                case FORM_GX -> {
                    long w1 = d[i + 1];
                    g = w1 & 0xFFFFFFFFL;
                    x = w1 >>> 32;
                    i += 2;
                }
                case FORM_GA -> {
                    long w1 = d[i + 1];
                    g = w1 & 0xFFFFFFFFL;
                    a = w1 >>> 32;
                    x = aux;
                    i += 2;
                }
                case FORM_RUNNEXT -> {
                    g = st[0];
                    a = 0;
                    x = aux;
                    i += 1;
                }
                case FORM_PARK1, FORM_PARK2 -> {
                    g = st[1];
                    x = form == FORM_PARK1 ? st[2] : st[3];
                    i += 1;
                }
                default -> throw new IllegalStateException("gort: trace record with a bad form (" + form + ") at " + i);
            }
            noteState(st, code, small, g, x);
            out.add(prev, hdr, g, a, x);
        }
    }

    /** A growable list of five-long records (the decoder's layout). */
    static final class LongList {
        long[] d = new long[REC * 64];
        int n;

        void add(long ts, long hdr, long g, long a, long x) {
            if (n + REC > d.length) {
                d = java.util.Arrays.copyOf(d, d.length * 2);
            }
            d[n] = ts;
            d[n + 1] = hdr;
            d[n + 2] = g;
            d[n + 3] = a;
            d[n + 4] = x;
            n += REC;
        }

        long[] toArray() {
            return java.util.Arrays.copyOf(d, n);
        }
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
            c = new Chunk(seq, Chunk.LONGS);
            chunks++;
            allocated++;
        }
        c.base = lastTs;
        c.baseRunnext = lastRunnext;
        c.baseStarted = lastStarted;
        c.basePark1 = park1;
        c.basePark2 = park2;
        c.baseStopped = lastStopped;
        cur.next = c;
        cur = c;
        lastSeq = seq;
        return c;
    }
}
