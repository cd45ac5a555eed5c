package dev.gort.runtime;

import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/**
 * Issue 19's memory target (a goroutine parked in a channel receive at most 450 bytes): the G and
 * its continuation object must not grow back. Field bytes, not timing and not a heap measurement
 * (the bench's Parked measures the whole; the frozen stack is {@code ParkedStackTest}'s in the api
 * module). A new G field belongs in {@link G.Rare} unless every goroutine uses it.
 */
class ParkedGoroutineSizeTest {
    /**
     * G: goid, parentGoid, waitsince, runnableSince (4 longs: 32); atomicstatus, selectDone,
     * monitorDepth (3 ints: 12); sched, cont, traceBuf, waitreason, waitingOn, m, schedlink, allprev,
     * allnext, param, parkedOn, waiting, rare (13 references: 52); yieldReason, trackingSeq,
     * syscallByRetake (3 bytes). 99 bytes, a 112-byte object with the 12-byte header rounded to 8
     * (it was 151 bytes of fields, a 168-byte object).
     */
    static final int G_FIELD_BYTES = 99;

    /**
     * The continuation: the JDK's Continuation (7 references, 3 booleans: 31) and gort's fn (4):
     * 35 bytes, a 48-byte object (it carried its G and the last pinned reason too: 56).
     */
    static final int CONT_FIELD_BYTES = 35;

    @Test
    void gFieldsStayWithinIssue19Budget() {
        int n = ParkedLayout.fieldBytes(G.class);
        assertTrue(
                n <= G_FIELD_BYTES,
                "G has " + n + " bytes of fields, budget " + G_FIELD_BYTES + ": move rarely used ones to G.Rare");
    }

    @Test
    void continuationFieldsStayWithinIssue19Budget() {
        int n = ParkedLayout.fieldBytes(G.GCont.class);
        assertTrue(n <= CONT_FIELD_BYTES, "G.GCont has " + n + " bytes of fields, budget " + CONT_FIELD_BYTES);
    }
}
