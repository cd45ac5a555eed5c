package dev.gort.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import jdk.internal.vm.Continuation;
import org.junit.jupiter.api.Test;

/**
 * Issue 19's memory target (a goroutine parked in a channel receive at most 450 bytes): the G, which
 * is its own continuation, must not grow back. Field bytes, not timing and not a heap measurement
 * (the bench's Parked measures the whole; the frozen stack is {@code ParkedStackTest}'s in the api
 * module). A new G field belongs in {@link G.Rare} unless every goroutine uses it.
 */
class ParkedGoroutineSizeTest {
    /**
     * The JDK's Continuation: scope, target, parent, child, tail, yieldInfo, scopedValueCache (7
     * references: 28); done, mounted, preempted (3 booleans): 31 bytes.
     */
    static final int CONTINUATION_FIELD_BYTES = 31;

    /**
     * G's own: goid, parentGoid, waitsince (3 longs: 24; waitsince is also the scheduling-latency
     * stamp while the G is runnable, Go's trackingStamp, which was a fourth long); atomicstatus,
     * monitorDepth (2 ints: 8); sched, fn, waitingOn, m, schedlink, allprev, allnext, param,
     * waiting, rare (10 references: 40); waitreason (a WaitReason's ordinal), yieldReason,
     * trackingSeq, selectDone, syscallImplicit (5 bytes): 77 bytes. With the continuation's 31,
     * 108: a 120-byte object with the 12-byte header (one byte more and it is 128).
     * Before: 116 (128 bytes) with the separate stamp; before that a 112-byte G (99 bytes of
     * fields: a reference to its continuation, traceBuf and parkedOn, now in G.Rare, waitreason a
     * reference and selectDone an int) and a 48-byte continuation object (35: its fn), 160 bytes.
     */
    static final int G_FIELD_BYTES = CONTINUATION_FIELD_BYTES + 77;

    @Test
    void gIsItsOwnContinuation() {
        assertEquals(Continuation.class, G.class.getSuperclass(), "a G is its continuation: no second object");
        assertEquals(
                CONTINUATION_FIELD_BYTES,
                ParkedLayout.fieldBytes(Continuation.class),
                "the JDK's Continuation changed: recount the budget");
    }

    @Test
    void waitReasonFitsItsByte() {
        assertEquals(0, WaitReason.ZERO.ordinal(), "a G's zero waitreason byte must mean ZERO");
        assertTrue(WaitReason.values().length <= Byte.MAX_VALUE, "G keeps a WaitReason's ordinal in a byte");
        for (WaitReason r : WaitReason.values()) {
            assertEquals(r, WaitReason.of((byte) r.ordinal()));
        }
    }

    @Test
    void gFieldsStayWithinIssue19Budget() {
        int n = ParkedLayout.fieldBytes(G.class);
        assertTrue(
                n <= G_FIELD_BYTES,
                "G has " + n + " bytes of fields (its continuation's included), budget " + G_FIELD_BYTES
                        + ": move rarely used ones to G.Rare");
    }
}
